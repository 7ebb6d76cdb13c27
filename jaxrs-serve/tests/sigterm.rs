//! SIGTERM drains the server: a request in flight when the signal arrives is finished, then
//! `serve` returns. A file of its own, because the signal goes to the whole test process.

use std::path::PathBuf;
use std::time::Duration;

use axum::http::StatusCode;
use jaxrs_serve::client::Client;
use jaxrs_serve::engine::{serve, Config};
use jaxrs_serve::shutdown_signal;

fn golden(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(default))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_in_flight_requests_then_stops() {
    let mut config = Config::new(golden(
        "JAXRS_SERVE_TEST_MODEL",
        "../jaxrs-models/tests/golden/hf/gpt2",
    ));
    config.tokenizer_dir = Some(golden(
        "JAXRS_SERVE_TEST_TOKENIZER",
        "../jaxrs-models/tests/golden/hf/tokenizer",
    ));
    config.slots = 2;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(listener, config, shutdown_signal()));
    let mut c = Client::new(addr, Duration::from_secs(300));
    // Answered once the model is loaded: by then the accept loop is polling the signal
    // future, so its handler is installed and SIGTERM cannot take the default action.
    assert_eq!(c.get("/health").await.unwrap().0, StatusCode::OK);

    let body = r#"{"prompt": "a", "max_tokens": 100, "stream": true}"#;
    let (status, mut events) = c.post_stream("/v1/completions", body).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    events.next_data().await.unwrap().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut last = String::new();
    while let Some(d) = events.next_data().await.unwrap() {
        last = d;
    }
    assert_eq!(last, "[DONE]");
    tokio::time::timeout(Duration::from_secs(60), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(Client::new(addr, Duration::from_secs(2))
        .get("/health")
        .await
        .is_err());
}
