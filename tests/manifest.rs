//! The manifest of JAX's names (`API.md`), held to the truth.
//!
//! - every public name JAX 0.10.2 and optax 0.2.8 have (`tests/golden/jax_names.json`, written
//!   by `tests/golden/gen_manifest.py`) has exactly one row of API.md, in its namespace's
//!   section, sorted, with JAX's kind, and API.md has no other rows;
//! - every implemented row names a `use`-able jaxrs path, and the compiler checks each one
//!   exists: `tests/manifest/items.rs` holds one `use PATH as _;` per implemented row and is
//!   compiled into this test;
//! - every implemented row names a test that compares its values with JAX: `golden:OP` (some
//!   case of `tests/golden/*.json` has `"op": "OP"`) or `tests/FILE.rs::FN` (a `#[test] fn FN`
//!   of that file);
//! - the README's table of percentages is the one computed from API.md.
//!
//! `JAXRS_UPDATE_MANIFEST=1 cargo test --test manifest` rewrites `tests/manifest/items.rs` and
//! the README's table from API.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The compiler's check that every implemented row's item exists.
#[allow(unused_imports)]
// JAX's deprecated aliases are listed too: they exist, and warn where used.
#[allow(deprecated)]
mod items {
    include!("manifest/items.rs");
}

const UPDATE_VAR: &str = "JAXRS_UPDATE_MANIFEST";
const REGENERATE: &str = "regenerate with `JAXRS_UPDATE_MANIFEST=1 cargo test --test manifest`";
const README_BEGIN: &str = "<!-- manifest:begin (written by tests/manifest.rs from API.md) -->";
const README_END: &str = "<!-- manifest:end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn updating() -> bool {
    std::env::var_os(UPDATE_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// What a row says of its JAX name.
#[derive(Debug, Clone, PartialEq)]
enum Status {
    /// A `use`-able path.
    Implemented(String),
    /// `not yet: Array::NAME exists; ...`: only a method has it today.
    MethodOnly,
    NotYet,
    NotApplicable,
}

#[derive(Debug, Clone)]
struct Row {
    /// 1-based line in API.md.
    line: usize,
    namespace: String,
    /// The full JAX name, `jax.numpy.concatenate`.
    name: String,
    status: Status,
    tests: Vec<String>,
    kind: String,
}

/// API.md's rows, section by section, and the problems that stopped a line from reading as a
/// row.
fn parse_api_md(text: &str) -> (Vec<String>, Vec<Row>, Vec<String>) {
    let mut sections = Vec::new();
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if let Some(heading) = raw.strip_prefix("## ") {
            sections.push(heading.trim().to_string());
            continue;
        }
        if !raw.starts_with('|') {
            continue;
        }
        let Some(namespace) = sections.last().cloned() else {
            errors.push(format!(
                "API.md:{line}: a table row before any `## namespace` heading"
            ));
            continue;
        };
        let inner = raw.trim_end();
        if !inner.ends_with('|') || inner.len() < 2 {
            errors.push(format!(
                "API.md:{line}: a row must start and end with `|`: {raw}"
            ));
            continue;
        }
        let cells: Vec<&str> = inner[1..inner.len() - 1]
            .split('|')
            .map(str::trim)
            .collect();
        if cells.len() != 4 {
            errors.push(format!(
                "API.md:{line}: a row has 4 cells (JAX name, jaxrs, test, kind), this one {}: {raw}",
                cells.len()
            ));
            continue;
        }
        if cells[0] == "JAX name" || cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            continue;
        }
        let status = if let Some(path) =
            cells[1].strip_prefix('`').and_then(|c| c.strip_suffix('`'))
        {
            if !is_jaxrs_path(path) {
                errors.push(format!(
                    "API.md:{line}: `{path}` is not a path of jaxrs (`jaxrs::a::b`, identifiers only)"
                ));
            }
            Status::Implemented(path.to_string())
        } else if cells[1].starts_with("not yet: Array::") {
            Status::MethodOnly
        } else if reason(cells[1], "not yet:") {
            Status::NotYet
        } else if reason(cells[1], "not applicable:") {
            Status::NotApplicable
        } else {
            errors.push(format!(
                "API.md:{line}: the jaxrs cell is `` `jaxrs::PATH` ``, `not yet: WHY` or \
                 `not applicable: WHY`, not `{}`",
                cells[1]
            ));
            continue;
        };
        let tests = cells[2]
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect();
        rows.push(Row {
            line,
            namespace,
            name: cells[0].to_string(),
            status,
            tests,
            kind: cells[3].to_string(),
        });
    }
    (sections, rows, errors)
}

fn reason(cell: &str, prefix: &str) -> bool {
    cell.strip_prefix(prefix)
        .is_some_and(|r| !r.trim().is_empty())
}

fn is_jaxrs_path(path: &str) -> bool {
    let mut segments = path.split("::");
    segments.next() == Some("jaxrs")
        && path.contains("::")
        && segments.all(|s| {
            let mut chars = s.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// `jax_names.json`: namespace -> (name -> kind), in the file's namespace order.
fn jax_names() -> Vec<(String, BTreeMap<String, String>)> {
    let path = root().join("tests/golden/jax_names.json");
    let json: Value = serde_json::from_str(&read(&path)).expect("jax_names.json parses");
    let namespaces = json["namespaces"].as_object().expect("`namespaces` object");
    let order = read(&path);
    let mut out: Vec<(String, BTreeMap<String, String>)> = namespaces
        .iter()
        .map(|(ns, names)| {
            let names = names
                .as_object()
                .expect("names object")
                .iter()
                .map(|(n, k)| (n.clone(), k.as_str().expect("kind").to_string()))
                .collect();
            (ns.clone(), names)
        })
        .collect();
    // serde_json's map is sorted; the sections follow the file's (the generator's) order.
    out.sort_by_key(|(ns, _)| {
        order
            .find(&format!("\n    \"{ns}\": {{"))
            .unwrap_or(usize::MAX)
    });
    out
}

fn api_rows() -> (Vec<String>, Vec<Row>, Vec<String>) {
    parse_api_md(&read(&root().join("API.md")))
}

fn fail_with(what: &str, errors: &[String]) {
    if !errors.is_empty() {
        let shown: Vec<&str> = errors.iter().take(60).map(String::as_str).collect();
        panic!(
            "{what}: {} problem(s){}\n{}",
            errors.len(),
            if errors.len() > shown.len() {
                " (the first 60)"
            } else {
                ""
            },
            shown.join("\n")
        );
    }
}

#[test]
fn api_md_has_one_row_per_jax_name_with_its_kind() {
    let names = jax_names();
    let (sections, rows, mut errors) = api_rows();
    let want_sections: Vec<&str> = names.iter().map(|(ns, _)| ns.as_str()).collect();
    if sections != want_sections {
        errors.push(format!(
            "API.md's `## ` sections are {sections:?}; jax_names.json's namespaces are {want_sections:?}"
        ));
    }
    let mut by_section: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for row in &rows {
        by_section
            .entry(row.namespace.as_str())
            .or_default()
            .push(row);
    }
    for (ns, want) in &names {
        let got = by_section.remove(ns.as_str()).unwrap_or_default();
        let mut seen = BTreeSet::new();
        for pair in got.windows(2) {
            if pair[0].name.as_bytes() >= pair[1].name.as_bytes() {
                errors.push(format!(
                    "API.md:{}: rows are sorted by name and unique: `{}` comes after `{}`",
                    pair[1].line, pair[1].name, pair[0].name
                ));
            }
        }
        for row in &got {
            let Some(short) = row
                .name
                .strip_prefix(ns.as_str())
                .and_then(|r| r.strip_prefix('.'))
            else {
                errors.push(format!(
                    "API.md:{}: `{}` is in the section `{ns}` but is not one of its names",
                    row.line, row.name
                ));
                continue;
            };
            seen.insert(short);
            match want.get(short) {
                None => errors.push(format!(
                    "API.md:{}: JAX has no `{}` (not in jax_names.json); remove the row",
                    row.line, row.name
                )),
                Some(kind) if *kind != row.kind => errors.push(format!(
                    "API.md:{}: the kind of `{}` is `{kind}` in jax_names.json, not `{}`",
                    row.line, row.name, row.kind
                )),
                Some(_) => {}
            }
        }
        for (short, kind) in want {
            if !seen.contains(short.as_str()) {
                errors.push(format!(
                    "API.md has no row for `{ns}.{short}`; add it to the `## {ns}` section, \
                     sorted: | {ns}.{short} | not yet: WHY |  | {kind} |"
                ));
            }
        }
    }
    for (ns, rows) in by_section {
        errors.push(format!(
            "API.md's section `{ns}` ({} rows) is not a namespace of jax_names.json",
            rows.len()
        ));
    }
    fail_with("API.md and tests/golden/jax_names.json disagree", &errors);
}

/// Every `"op"` string anywhere in the golden files.
fn golden_ops() -> BTreeSet<String> {
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(op)) = map.get("op") {
                    out.insert(op.clone());
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut ops = BTreeSet::new();
    let dir = root().join("tests/golden");
    for entry in std::fs::read_dir(&dir).expect("tests/golden") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let json: Value = serde_json::from_str(&read(&path))
                .unwrap_or_else(|e| panic!("{} parses: {e}", path.display()));
            walk(&json, &mut ops);
        }
    }
    ops
}

/// Whether `source` defines a test function `name`: `fn name(` whose attributes (the lines
/// just above it) include `#[test]`, so a helper of the file does not pass for a test.
fn defines_test_fn(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    lines.iter().enumerate().any(|(i, line)| {
        let line = line.trim_start();
        let line = line.strip_prefix("pub ").unwrap_or(line);
        let Some(rest) = line.strip_prefix("fn ").and_then(|r| r.strip_prefix(name)) else {
            return false;
        };
        if !rest.starts_with('(') {
            return false;
        }
        lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("#[") || l.starts_with("//") || l.is_empty())
            .any(|l| l == "#[test]")
    })
}

#[test]
fn implemented_rows_name_a_test_against_jax_that_exists() {
    let (_, rows, mut errors) = api_rows();
    let ops = golden_ops();
    let mut sources: BTreeMap<String, Option<String>> = BTreeMap::new();
    for row in &rows {
        if matches!(row.status, Status::Implemented(_)) && row.tests.is_empty() {
            errors.push(format!(
                "API.md:{}: `{}` is implemented but names no test of its values against JAX \
                 (`golden:OP` or `tests/FILE.rs::FN`)",
                row.line, row.name
            ));
        }
        for test in &row.tests {
            if let Some(op) = test.strip_prefix("golden:") {
                if !ops.contains(op) {
                    errors.push(format!(
                        "API.md:{}: `{test}`: no case of tests/golden/*.json has \"op\": \"{op}\"",
                        row.line
                    ));
                }
            } else if let Some((file, func)) = test.split_once("::") {
                let ok_file = file.starts_with("tests/") && file.ends_with(".rs");
                let source = sources
                    .entry(file.to_string())
                    .or_insert_with(|| std::fs::read_to_string(root().join(file)).ok());
                match source {
                    _ if !ok_file => errors.push(format!(
                        "API.md:{}: `{test}`: a test is `tests/FILE.rs::FN`",
                        row.line
                    )),
                    None => errors.push(format!("API.md:{}: `{test}`: no file {file}", row.line)),
                    Some(src) if !defines_test_fn(src, func) => errors.push(format!(
                        "API.md:{}: `{test}`: {file} has no `#[test] fn {func}`",
                        row.line
                    )),
                    Some(_) => {}
                }
            } else {
                errors.push(format!(
                    "API.md:{}: `{test}` is neither `golden:OP` nor `tests/FILE.rs::FN`",
                    row.line
                ));
            }
        }
    }
    fail_with("API.md's test column", &errors);
}

/// The text of `tests/manifest/items.rs` for these rows.
fn items_file(rows: &[Row]) -> String {
    let paths: BTreeSet<&str> = rows
        .iter()
        .filter_map(|r| match &r.status {
            Status::Implemented(p) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    let mut out = String::from(
        "// Written by `JAXRS_UPDATE_MANIFEST=1 cargo test --test manifest` from API.md: one `use`\n\
         // per implemented row, so that the compiler checks every listed item exists. Do not\n\
         // edit by hand. If an item was removed and this file no longer compiles, empty it and\n\
         // run the command again.\n",
    );
    for p in paths {
        writeln!(out, "use {p} as _;").unwrap();
    }
    out
}

#[test]
fn the_items_file_matches_api_md() {
    let (_, rows, errors) = api_rows();
    fail_with("API.md does not read as a table", &errors);
    let path = root().join("tests/manifest/items.rs");
    let want = items_file(&rows);
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        if updating() {
            std::fs::write(&path, &want).expect("writing tests/manifest/items.rs");
            eprintln!("rewrote {}; build again to check the items", path.display());
        } else {
            panic!(
                "tests/manifest/items.rs is out of date with API.md's jaxrs column; {REGENERATE}"
            );
        }
    }
}

/// Counts per namespace: [countable names, implemented, only as a method, not applicable].
fn counts(names: &[(String, BTreeMap<String, String>)], rows: &[Row]) -> Vec<(String, [usize; 4])> {
    let counted = |kind: &str| matches!(kind, "function" | "class" | "constant");
    names
        .iter()
        .map(|(ns, _)| {
            let mut c = [0; 4];
            for row in rows
                .iter()
                .filter(|r| &r.namespace == ns && counted(&r.kind))
            {
                c[0] += 1;
                match row.status {
                    Status::Implemented(_) => c[1] += 1,
                    Status::MethodOnly => c[2] += 1,
                    Status::NotApplicable => c[3] += 1,
                    Status::NotYet => {}
                }
            }
            (ns.clone(), c)
        })
        .collect()
}

fn percent(part: usize, whole: usize) -> usize {
    if whole == 0 {
        0
    } else {
        (200 * part + whole) / (2 * whole)
    }
}

/// The README's table, markers included.
fn readme_table(names: &[(String, BTreeMap<String, String>)], rows: &[Row]) -> String {
    let mut out = format!(
        "{README_BEGIN}\n| namespace | names | in jaxrs | only as an `Array` method | not applicable |\n\
         |---|---|---|---|---|\n"
    );
    let line = |out: &mut String, label: &str, c: [usize; 4]| {
        writeln!(
            out,
            "| {label} | {} | {} ({}%) | {} | {} |",
            c[0],
            c[1],
            percent(c[1], c[0]),
            c[2],
            c[3]
        )
        .unwrap();
    };
    let mut total = [0; 4];
    for (ns, c) in counts(names, rows) {
        // GitHub's anchor of a `## jax.numpy` heading drops the dots.
        line(
            &mut out,
            &format!("[`{ns}`](API.md#{})", ns.replace('.', "")),
            c,
        );
        for (t, n) in total.iter_mut().zip(c) {
            *t += n;
        }
    }
    line(&mut out, "all", total);
    out.push_str(README_END);
    out.push('\n');
    out
}

#[test]
fn the_readme_percentages_are_api_mds() {
    let names = jax_names();
    let (_, rows, errors) = api_rows();
    fail_with("API.md does not read as a table", &errors);
    let want = readme_table(&names, &rows);
    let path = root().join("README.md");
    let readme = read(&path);
    let (Some(begin), Some(end)) = (readme.find(README_BEGIN), readme.find(README_END)) else {
        panic!(
            "README.md has no table of JAX's names between `{README_BEGIN}` and `{README_END}`; \
             paste this under its \"JAX's names\" heading:\n{want}"
        );
    };
    let got = &readme[begin..end + README_END.len() + 1];
    if got != want {
        if updating() {
            let text = format!(
                "{}{want}{}",
                &readme[..begin],
                &readme[end + README_END.len() + 1..]
            );
            std::fs::write(&path, text).expect("writing README.md");
            eprintln!("rewrote the table of JAX's names in README.md");
        } else {
            panic!(
                "README.md's table of JAX's names differs from API.md's counts; {REGENERATE}, \
                 or paste:\n{want}"
            );
        }
    }
}

#[test]
fn the_table_reader_reads_rows_and_refuses_malformed_ones() {
    let text = "## jax.numpy\n\n| JAX name | jaxrs | test | kind |\n|---|---|---|---|\n\
                | jax.numpy.add | `jaxrs::numpy::add` | golden:add, tests/x.rs::f | function |\n\
                | jax.numpy.pi | not applicable: Rust's PI |  | constant |\n\
                | jax.numpy.cos | not yet: pending |  | function |\n\
                | jax.numpy.sin | maybe | | function |\n\
                | jax.numpy.tan | `std::f64::tan` | | function |\n\
                | jax.numpy.x | not yet: | | function |\n\
                | jax.numpy.y | three | cells |\n";
    let (sections, rows, errors) = parse_api_md(text);
    assert_eq!(sections, ["jax.numpy"]);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(
        rows[0].status,
        Status::Implemented("jaxrs::numpy::add".into())
    );
    assert_eq!(rows[0].tests, ["golden:add", "tests/x.rs::f"]);
    assert_eq!(rows[0].line, 5);
    assert_eq!(rows[1].status, Status::NotApplicable);
    assert_eq!(rows[2].status, Status::NotYet);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].contains("API.md:8") && errors[0].contains("maybe"));
    assert!(errors[1].contains("std::f64::tan"));
    assert!(errors[2].contains("API.md:10"));
    assert!(errors[3].contains("4 cells"));
    let (_, rows, errors) = parse_api_md(
        "## jax.lax\n| jax.lax.add | not yet: Array::add exists; lax free function pending |  | function |\n",
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(rows[0].status, Status::MethodOnly);
    let source = "#[test]\nfn a() {}\n\nfn ab() {}\n#[test]\n#[ignore]\n/// doc\nfn abc() {}\n";
    assert!(defines_test_fn(source, "a"));
    assert!(!defines_test_fn(source, "ab"), "a helper is not a test");
    assert!(defines_test_fn(source, "abc"));
    assert!(!defines_test_fn(source, "b"));
    assert_eq!(percent(1, 3), 33);
    assert_eq!(percent(2, 3), 67);
    assert_eq!(percent(1, 8), 13);
}
