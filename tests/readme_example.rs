//! The README's code: every ```` ```rust ```` block of README.md is compiled and run as a
//! doctest of the facade (`ReadmeDoctests` in `src/lib.rs` includes the README), with no
//! import but its own `use jaxrs::prelude::*;`. This file checks what rustdoc cannot: that
//! the blocks rustdoc skips are skipped on purpose, and that the names the README's tables
//! show are in the prelude.

// Each name the README's table of JAX equivalents shows resolves through the prelude alone;
// a name missing from the prelude fails this file's compilation.
#[allow(unused_imports)]
use jaxrs::prelude::{
    check_grads, checkpoint_name, cond, custom_vjp, fori_loop, grad, jit, jvp, make_jaxpr, remat,
    scan, stablehlo, switch, tree_map, tree_map2, value_and_grad, value_and_grad_argnums,
    value_and_grad_aux, vjp, vmap, while_loop, Argnum, Array, Tree,
};

const README: &str = include_str!("../README.md");

/// The languages of the README's non-Rust blocks, which rustdoc does not test.
const OTHER_LANGUAGES: &[&str] = &["sh", "text", "toml", "console", "json", "python"];

/// Each fenced block: its info string and its lines.
fn fenced_blocks(markdown: &str) -> Vec<(String, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, open.take()) {
            (Some(info), None) => open = Some((info.trim().to_string(), Vec::new())),
            (Some(_), Some(block)) => blocks.push(block),
            (None, Some((info, mut lines))) => {
                lines.push(line);
                open = Some((info, lines));
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md ends inside a fenced block");
    blocks
}

#[test]
fn every_block_names_its_language() {
    let blocks = fenced_blocks(README);
    let rust = blocks.iter().filter(|(info, _)| info == "rust").count();
    assert!(
        rust >= 2,
        "README.md has {rust} ```rust blocks, expected the examples"
    );
    for (info, lines) in &blocks {
        // A bare fence would be tested as Rust by rustdoc, but not highlighted on GitHub; any
        // other language must be one rustdoc is known to skip.
        assert!(
            info == "rust" || OTHER_LANGUAGES.contains(&info.as_str()),
            "README.md has a block fenced as ```{info}: write ```rust for Rust (it is then \
             compiled as a doctest) or one of {OTHER_LANGUAGES:?}:\n{}",
            lines.join("\n")
        );
    }
}

#[test]
fn rust_blocks_read_as_they_run() {
    for (info, lines) in fenced_blocks(README) {
        if info != "rust" {
            continue;
        }
        let text = lines.join("\n");
        // rustdoc hides `# ` lines from its output, GitHub does not: a README block compiles as
        // it is shown.
        assert!(
            !lines.iter().any(|l| l.trim_start().starts_with("# ")),
            "hidden `# ` line in a README block:\n{text}"
        );
        assert!(
            text.contains("use jaxrs::prelude::*;"),
            "a README block starts from the prelude:\n{text}"
        );
    }
}
