//! Helpers shared by the integration tests.

pub mod cases;
pub mod golden;

/// The panic message of `f`, which must panic (a programmer-error test).
#[allow(dead_code)]
pub fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("should panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
