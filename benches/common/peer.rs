//! What the benches share: timing by best of rounds, and JAX's figures from a peer script.
// Each bench includes this file and uses part of it.
#![allow(dead_code)]

use std::time::Instant;

/// µs per call: the best of `rounds` rounds of `calls` calls.
pub fn best_us(rounds: usize, calls: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// JAX's figures, by name, from `benches/peer/<script>` run with `args` by the Python in
/// `JAXRS_BENCH_PYTHON` (default `python3`); empty when that Python or JAX is missing. The
/// script prints one `name: value` line per figure.
pub fn jax_figures(script: &str, args: &[String]) -> Vec<(String, f64)> {
    let python = std::env::var("JAXRS_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let path = format!("{}/benches/peer/{script}", env!("CARGO_MANIFEST_DIR"));
    let Ok(out) = std::process::Command::new(python)
        .arg(path)
        .args(args)
        .output()
    else {
        return vec![];
    };
    if !out.status.success() {
        return vec![];
    }
    parse_figures(&out.stdout)
}

/// The `name: value` lines of a process's output (the peer scripts' and the benches' own
/// child processes'), by name; other lines are skipped.
pub fn parse_figures(stdout: &[u8]) -> Vec<(String, f64)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(": ")?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The figure called `name`, if the peer printed it.
pub fn figure(figures: &[(String, f64)], name: &str) -> Option<f64> {
    figures.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}
