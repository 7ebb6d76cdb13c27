//! The engine's layers, checked: every import inside `jaxrs-runtime/src` points down the layer
//! order below, and the only import cycles are the accepted ones (inside `core/`, and between
//! `prims/` and `ops/`, whose rules are written with the Array API as JAX's `lax.py` is).
//!
//! The check reads the source: every `crate::`, `super::` and `self::` path (in `use`
//! statements and inline), and a `mod.rs`'s paths into its own children, each resolved to the
//! file of the longest module prefix it names. Comments are skipped, so doc links do not count.
//! A failure names the files and the path that points the wrong way.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layer of a module, by its path (`core::trace`, `prims`, `error`): lower layers never
/// import higher ones. Layers of one rank may import each other only where the cycle check
/// allows it.
fn layer(module: &[String]) -> (u8, &'static str) {
    match module.first().map(String::as_str) {
        Some("error" | "dtype" | "aval" | "mesh") => (0, "vocabulary"),
        Some("pjrt") => (0, "pjrt"),
        Some("fs_safety") => (0, "fs_safety"),
        Some("core") => (1, "core"),
        Some("coordination") => (1, "coordination"),
        Some("kernels") => (1, "kernels"),
        Some("tree") => (2, "tree"),
        Some("interpreters") => (2, "interpreters"),
        Some("prims") => (3, "prims"),
        Some("ops") => (3, "ops"),
        Some("higher_order") => (4, "higher_order"),
        Some("transforms") => (5, "transforms"),
        Some("random") => (6, "random"),
        Some("export") => (6, "export"),
        other => panic!(
            "jaxrs-runtime/src/{}: a top-level module this test does not know; give it a layer in \
             tests/layers.rs (and DESIGN.md's map)",
            other.unwrap_or("?")
        ),
    }
}

/// Groups inside which import cycles are accepted.
fn cycle_allowed(files: &[&Module]) -> bool {
    let groups: BTreeSet<&str> = files.iter().map(|m| layer(&m.path).1).collect();
    groups.iter().all(|g| *g == "core") || groups.iter().all(|g| matches!(*g, "prims" | "ops"))
}

struct Module {
    /// `["core", "trace"]`; empty for `lib.rs`.
    path: Vec<String>,
    file: PathBuf,
    /// Is it a folder module (`mod.rs` or `lib.rs`), whose children resolve relative to itself?
    is_dir: bool,
    code: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn read_modules(dir: &Path, prefix: &[String], out: &mut Vec<Module>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            let mut path = prefix.to_vec();
            path.push(name);
            read_modules(&p, &path, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let is_dir = name == "mod" || (prefix.is_empty() && name == "lib");
            let mut path = prefix.to_vec();
            if !is_dir {
                path.push(name);
            }
            let text = fs::read_to_string(&p).unwrap();
            // Unit tests inside a file (`#[cfg(test)] mod tests { use super::*; }`) are not
            // part of the architecture, and their `super` is the file itself.
            let code = strip_comments(text.split("#[cfg(test)]\nmod tests").next().unwrap());
            out.push(Module {
                path,
                file: p,
                is_dir,
                code,
            });
        }
    }
}

/// The source without `//` comments (doc comments included) and without string literals.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '"' && !escaped {
                        break;
                    }
                    escaped = c == '\\' && !escaped;
                }
                out.push_str("\"\"");
            }
            // A char literal such as '"' would otherwise open a string.
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                let mut it = rest.chars();
                match (it.next(), it.next(), it.next()) {
                    (Some('\\'), Some(_), Some('\'')) => {
                        chars.nth(2);
                    }
                    (Some(_), Some('\''), _) => {
                        chars.nth(1);
                    }
                    _ => out.push(c),
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path that starts at `crate::`, `super::` or `self::` (or, in a folder module, at one
/// of its children), with `{..}` groups expanded, as segments relative to the crate root.
fn paths_in(m: &Module, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let code = &m.code;
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let at_word_start = i == 0 || !is_ident_char(bytes[i - 1] as char) && bytes[i - 1] != b':';
        if !at_word_start {
            i += 1;
            continue;
        }
        let word_end = code[i..]
            .find(|c: char| !is_ident_char(c))
            .map_or(code.len(), |e| i + e);
        let word = &code[i..word_end];
        let is_path_start = code[word_end..].starts_with("::")
            && (matches!(word, "crate" | "super" | "self")
                || (m.is_dir && children.contains(word)));
        if !is_path_start {
            i = word_end.max(i + 1);
            continue;
        }
        let (tree, end) = path_tree(code, i);
        for segs in expand(&tree) {
            if let Some(abs) = absolute(m, &segs) {
                found.push(abs);
            }
        }
        i = end;
    }
    found
}

/// The text of one path expression starting at `start` (through a balanced `{..}` group),
/// and where it ends.
fn path_tree(code: &str, start: usize) -> (String, usize) {
    let mut depth = 0;
    let mut end = start;
    for (k, c) in code[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            c if depth == 0 && !(is_ident_char(c) || c == ':') => {
                end = start + k;
                break;
            }
            _ => {}
        }
        end = start + k + c.len_utf8();
    }
    (code[start..end].split_whitespace().collect(), end)
}

/// `a::{b::c, d}` -> [[a, b, c], [a, d]].
fn expand(tree: &str) -> Vec<Vec<String>> {
    let Some(open) = tree.find('{') else {
        return vec![tree
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()];
    };
    let head: Vec<String> = tree[..open]
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[from..]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for tail in expand(part.trim()) {
            let mut segs = head.clone();
            segs.extend(tail.into_iter().filter(|s| s != "self"));
            out.push(segs);
        }
    }
    out
}

/// A path made relative to the crate root.
fn absolute(m: &Module, segs: &[String]) -> Option<Vec<String>> {
    let here: Vec<String> = m.path.clone();
    let (mut base, rest) = match segs.first()?.as_str() {
        "crate" => (Vec::new(), &segs[1..]),
        "self" if m.is_dir => (here, &segs[1..]),
        "self" => (here, &segs[1..]),
        "super" => {
            // In `a/b.rs`, `super` is `a`; in `a/b/mod.rs` (module a::b), it is also `a`.
            let mut base = here;
            base.pop();
            let mut rest = &segs[1..];
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
        _ => (here, segs),
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

#[test]
fn imports_point_down_and_cycles_stay_inside_core_and_prims_ops() {
    let mut modules = Vec::new();
    read_modules(&src_dir(), &[], &mut modules);
    let index: BTreeMap<Vec<String>, usize> = modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.path.clone(), i))
        .collect();

    let mut edges: BTreeMap<usize, BTreeMap<usize, String>> = BTreeMap::new();
    let mut problems = BTreeSet::new();
    for (i, m) in modules.iter().enumerate() {
        if m.path.is_empty() {
            continue; // lib.rs: the front door re-exports from every layer
        }
        let children: BTreeSet<String> = modules
            .iter()
            .filter(|c| c.path.len() == m.path.len() + 1 && c.path.starts_with(&m.path))
            .map(|c| c.path.last().unwrap().clone())
            .collect();
        for segs in paths_in(m, &children) {
            let target = (1..=segs.len())
                .rev()
                .find_map(|n| index.get(&segs[..n]).copied());
            let Some(j) = target else { continue };
            if j == i {
                continue;
            }
            let shown = segs.join("::");
            if modules[j].path.is_empty() {
                problems.insert(format!(
                    "{}: `crate::{shown}` goes through the crate root's re-exports; name the \
                     module that defines it",
                    rel(&m.file)
                ));
                continue;
            }
            let (from, to) = (layer(&m.path), layer(&modules[j].path));
            if to.0 > from.0 {
                problems.insert(format!(
                    "{} ({}) imports `{shown}` from {} ({}): arrows point down only",
                    rel(&m.file),
                    from.1,
                    rel(&modules[j].file),
                    to.1
                ));
            }
            edges.entry(i).or_default().entry(j).or_insert(shown);
        }
    }

    for scc in strongly_connected(modules.len(), &edges) {
        let files: Vec<&Module> = scc.iter().map(|&k| &modules[k]).collect();
        if scc.len() > 1 && !cycle_allowed(&files) {
            let mut lines: Vec<String> = Vec::new();
            for &a in &scc {
                for (&b, shown) in edges.get(&a).into_iter().flatten() {
                    if scc.contains(&b) {
                        lines.push(format!(
                            "    {} -> {} (`{shown}`)",
                            rel(&modules[a].file),
                            rel(&modules[b].file)
                        ));
                    }
                }
            }
            problems.insert(format!(
                "import cycle outside core/ and prims<->ops:\n{}",
                lines.join("\n")
            ));
        }
    }
    let problems: Vec<String> = problems.into_iter().collect();
    assert!(
        problems.is_empty(),
        "layering broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_sees_paths_in_groups_relative_paths_and_skips_comments() {
    let m = Module {
        path: vec!["prims".into(), "shape".into()],
        file: PathBuf::from("prims/shape.rs"),
        is_dir: false,
        code: strip_comments(
            "use crate::{core::trace::{bind, Operand}, dtype::DType};\n\
             // crate::transforms::jit in a comment\n\
             let s = \"crate::transforms\";\n\
             let q = '\"'; let x = super::arity(y);\n\
             crate::ops::where_(a, b, c)",
        ),
    };
    let got: Vec<String> = paths_in(&m, &BTreeSet::new())
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        got,
        [
            "core::trace::bind",
            "core::trace::Operand",
            "dtype::DType",
            "prims::arity",
            "ops::where_"
        ]
    );
}

/// Tarjan's strongly connected components.
fn strongly_connected(
    n: usize,
    edges: &BTreeMap<usize, BTreeMap<usize, String>>,
) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a BTreeMap<usize, BTreeMap<usize, String>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let targets: Vec<usize> = s
            .edges
            .get(&v)
            .into_iter()
            .flat_map(|t| t.keys().copied())
            .collect();
        for w in targets {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut scc = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            scc.sort();
            s.out.push(scc);
        }
    }
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(src_dir()).unwrap_or(p).display().to_string()
}
