//! The macros' compile-time behaviour: accepted forms compile (`tests/ui/pass`), and each
//! mistake in `tests/ui/fail` is reported at its token with the message in its `.stderr`.
//!
//! Regenerate the expected output after an intended change with
//! `TRYBUILD=overwrite cargo test --test compiletest`, then read every changed `.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
