//! The profiler (`jaxrs::profiler`, as `jax.profiler`): the trace file parses as a Chrome /
//! Perfetto trace and holds each jitted function's spans in order (trace, lower, compile once,
//! then one execute per call), the transfers with their bytes, and the user's annotations; the
//! summary counts the same; `train_mnist --profile DIR` writes such a trace. The profiler is
//! process-wide, so this file's tests take turns.

#[path = "../examples/train_mnist.rs"]
mod train_mnist;

use jaxrs::prelude::*;
use jaxrs::profiler::{self, StepTraceAnnotation, TraceAnnotation};
use serde_json::Value;

#[jit]
fn step(w: &Array, x: &Array) -> Array {
    (x.matmul(w)).tanh().sum(None, false)
}

fn events(path: &std::path::Path) -> Vec<Value> {
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(trace["otherData"]["producer"], "jaxrs");
    trace["traceEvents"].as_array().unwrap().clone()
}

fn named<'a>(events: &'a [Value], prefix: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
        .collect()
}

/// Held by each test: one trace at a time in the process.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn time_order(spans: &mut [&Value]) {
    spans.sort_by(|a, b| {
        a["ts"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["ts"].as_f64().unwrap())
    });
}

#[test]
fn a_trace_holds_each_functions_spans_in_order_and_the_summary_counts_them() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    jaxrs::set_cpu_device_count(2).unwrap();
    let dir = std::env::temp_dir().join(format!("jaxrs-profiler-{}", std::process::id()));
    // Nothing to stop yet; and a second start while one runs is refused.
    assert!(profiler::stop_trace().is_err());
    profiler::start_trace(&dir).unwrap();
    assert!(profiler::start_trace(&dir).is_err());

    let w = Array::ones(&[16, 4], DType::F32); // uploads 256 bytes
    let mut losses = Vec::new();
    for i in 0..5 {
        let _step = StepTraceAnnotation::new("train", i);
        let x = Array::full(&[8, 16], 0.01 * i as f64, DType::F32); // 512 bytes
        losses.push(step(&w, &x).item::<f32>()); // downloads 4 bytes
    }
    {
        let _eval = TraceAnnotation::new("evaluate");
        let _ = step(&w, &Array::zeros(&[8, 16], DType::F32)).item::<f32>();
    }
    let doubled: Array = pmap(|x: Array| &x * 2.0).call(Array::ones(&[2, 3], DType::F32));
    let summary = profiler::stop_trace().unwrap();
    assert!(profiler::stop_trace().is_err(), "stopped twice");
    assert_eq!(doubled.to_vec::<f32>(), vec![2.0; 6]);
    let pmapped = &summary.sites
        ["pmap `a_trace_holds_each_functions_spans_in_order_and_the_summary_counts_them::{{closure}}`"];
    assert_eq!(
        (pmapped.traces, pmapped.compiles, pmapped.executes),
        (1, 1, 1)
    );

    // The summary.
    let site = &summary.sites["jit `step`"];
    assert_eq!((site.traces, site.compiles, site.executes), (1, 1, 6));
    assert!(site.execute_ms > 0.0 && site.compile_ms > 0.0 && site.trace_ms > 0.0);
    assert_eq!(summary.steps, 5);
    assert!(summary.uploads >= 7, "{summary}");
    assert!(summary.upload_bytes >= 256 + 6 * 512, "{summary}");
    assert!(
        summary.downloads >= 6 && summary.download_bytes >= 6 * 4,
        "{summary}"
    );
    assert!(summary.to_string().contains("jit `step`"));

    // The file: Chrome's trace event format, every span a complete event.
    let events = events(&summary.path);
    for e in &events {
        match e["ph"].as_str().unwrap() {
            "M" => {}
            "X" => {
                assert!(e["ts"].as_f64().unwrap() >= 0.0);
                assert!(e["dur"].as_f64().unwrap() >= 0.0);
                assert!(e["tid"].as_u64().is_some() && e["pid"].as_u64().is_some());
            }
            other => panic!("an event of phase {other}"),
        }
    }
    // The function's spans, in time order: trace, lower, compile, then six executes.
    let mut spans: Vec<&Value> = events
        .iter()
        .filter(|e| e["args"]["subject"] == "jit `step`")
        .collect();
    spans.sort_by(|a, b| {
        a["ts"]
            .as_f64()
            .unwrap()
            .total_cmp(&b["ts"].as_f64().unwrap())
    });
    let kinds: Vec<&str> = spans
        .iter()
        .map(|e| e["name"].as_str().unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "trace", "lower", "compile", "execute", "execute", "execute", "execute", "execute",
            "execute"
        ]
    );
    let compile = spans[2];
    assert!(["hit", "miss", "off"].contains(&compile["args"]["cache"].as_str().unwrap()));
    // Each step annotation encloses that step's execute.
    let steps = named(&events, "train");
    assert_eq!(steps.len(), 5);
    let executes = &spans[3..];
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["args"]["step_num"], i.to_string());
        let (start, end) = (
            s["ts"].as_f64().unwrap(),
            s["ts"].as_f64().unwrap() + s["dur"].as_f64().unwrap(),
        );
        let e = executes[i]["ts"].as_f64().unwrap();
        assert!(start <= e && e <= end, "step {i}'s execute lies outside it");
    }
    assert_eq!(named(&events, "evaluate").len(), 1);
    let uploads = named(&events, "upload");
    assert!(uploads.iter().any(|u| u["args"]["bytes"] == "256"));
    assert!(named(&events, "download")
        .iter()
        .any(|d| d["args"]["bytes"] == "4" && d["args"]["subject"] == "f32[]"));

    // A guard stops the trace when dropped; a trace records nothing after it stopped.
    {
        let _trace = profiler::trace(&dir).unwrap();
        let _ = step(&w, &Array::ones(&[8, 16], DType::F32));
    }
    assert!(profiler::stop_trace().is_err(), "the guard stopped it");
    let written: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(written.len(), 2, "one file per trace");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(losses.iter().all(|l| l.is_finite()));
}

#[test]
fn a_profiled_training_run_compiles_once_then_executes_each_step() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    jaxrs::set_cpu_device_count(2).unwrap();
    let root = std::env::temp_dir().join(format!("jaxrs-profiled-mnist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let argv = vec![
        "--steps".to_string(),
        "20".to_string(),
        "--out".to_string(),
        root.display().to_string(),
        "--profile".to_string(),
        root.join("profile").display().to_string(),
    ];
    let args = train_mnist::harness::Args::parse_from("train_mnist", train_mnist::EPOCHS, argv)
        .expect("arguments");
    let profile = args.start_profile().expect("--profile was given");
    let report = train_mnist::run(&args);
    let summary = profile.stop().unwrap();
    assert_eq!(report.end_step, 20);

    let site = &summary.sites["jit `train_step`"];
    assert_eq!((site.traces, site.compiles, site.executes), (1, 1, 20));
    assert_eq!(summary.steps, 20);
    // Every step uploads its batch (images and labels).
    assert!(summary.uploads >= 40, "{summary}");
    assert!(summary.upload_bytes >= 20 * 100 * 784 * 4, "{summary}");
    assert!(summary.downloads >= 1, "{summary}");

    let events = events(&summary.path);
    let mut spans: Vec<&Value> = events
        .iter()
        .filter(|e| e["args"]["subject"] == "jit `train_step`")
        .collect();
    time_order(&mut spans);
    let kinds: Vec<&str> = spans
        .iter()
        .map(|e| e["name"].as_str().unwrap().split(' ').next().unwrap())
        .collect();
    let mut expected = vec!["trace", "lower", "compile"];
    expected.extend(["execute"; 20]);
    assert_eq!(kinds, expected);
    // Step i's annotation holds the i-th execute, and its batch's uploads come before it.
    let mut steps = named(&events, "train");
    time_order(&mut steps);
    assert_eq!(steps.len(), 20);
    let uploads = named(&events, "upload");
    for (i, (s, e)) in steps.iter().zip(&spans[3..]).enumerate() {
        assert_eq!(s["args"]["step_num"], i.to_string());
        let start = s["ts"].as_f64().unwrap();
        let end = start + s["dur"].as_f64().unwrap();
        let execute = e["ts"].as_f64().unwrap();
        assert!(start <= execute && execute <= end, "step {i}");
        assert!(
            uploads.iter().any(|u| u["ts"].as_f64().unwrap() < execute),
            "no upload before step {i}'s execute"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}
