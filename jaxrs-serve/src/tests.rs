//! The whole HTTP stack over the deterministic stand-in engine: timing-sensitive cases (a
//! full queue, a timeout, a disconnect, a drain) are made certain here by a slow stand-in;
//! `tests/serve.rs` repeats them with the real engine.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{json, Value};
use tokio::sync::oneshot;

use crate::client::Client;
use crate::server::{serve_backend, Limits};
use crate::testing::{ByteCodec, MockBackend};

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(mock: impl FnOnce() -> MockBackend + Send + 'static, limits: Limits) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, rx) = oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            serve_backend(
                listener,
                move || Ok(mock()),
                Arc::new(ByteCodec),
                "mock".into(),
                limits,
                async {
                    let _ = rx.await;
                },
            )
            .await
            .unwrap();
        });
        Server {
            addr,
            stop: Some(stop),
            done,
        }
    }

    fn client(&self) -> Client {
        Client::new(self.addr, Duration::from_secs(10))
    }

    async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        tokio::time::timeout(Duration::from_secs(10), self.done)
            .await
            .unwrap()
            .unwrap();
    }
}

fn limits() -> Limits {
    Limits {
        queue: 4,
        timeout: Duration::from_secs(5),
        max_body_bytes: 4096,
        drain_timeout: Duration::from_secs(5),
        warmup: false,
        ..Limits::default()
    }
}

async fn post(c: &mut Client, body: &str) -> (StatusCode, Value) {
    let (status, body) = c.post("/v1/completions", body.to_string()).await.unwrap();
    let v = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (status, v)
}

async fn stats(c: &mut Client) -> Value {
    let (status, body) = c.get("/health").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    serde_json::from_slice::<Value>(&body).unwrap()["stats"].clone()
}

async fn wait_for(c: &mut Client, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..500 {
        let s = stats(c).await;
        if pred(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}: {}", stats(c).await);
}

#[tokio::test]
async fn completes_streams_and_reports_health() {
    let server = Server::start(|| MockBackend::new(2, 32), limits()).await;
    let mut c = server.client();
    let (status, v) = post(
        &mut c,
        r#"{"prompt": "hi", "max_tokens": 5, "temperature": 0}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["object"], "text_completion");
    assert_eq!(v["model"], "mock");
    assert_eq!(v["choices"][0]["finish_reason"], "length");
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 2, "completion_tokens": 5, "total_tokens": 7})
    );
    let text = v["choices"][0]["text"].as_str().unwrap().to_string();
    assert_eq!(text.len(), 5);

    let (status, mut events) = c
        .post_stream(
            "/v1/completions",
            r#"{"prompt": "hi", "max_tokens": 5, "temperature": 0, "stream": true}"#,
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    let mut streamed = String::new();
    let mut finish = Value::Null;
    let mut chunks = Vec::new();
    while let Some(data) = events.next_data().await.unwrap() {
        chunks.push(data.clone());
        if data == "[DONE]" {
            continue;
        }
        let v: Value = serde_json::from_str(&data).unwrap();
        streamed.push_str(v["choices"][0]["text"].as_str().unwrap());
        if !v["choices"][0]["finish_reason"].is_null() {
            finish = v["choices"][0]["finish_reason"].clone();
            assert_eq!(v["usage"]["completion_tokens"], 5);
        }
    }
    assert_eq!(chunks.last().map(String::as_str), Some("[DONE]"));
    assert_eq!(streamed, text);
    assert_eq!(finish, "length");

    let (status, body) = c.get("/v1/models").await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["data"][0]["id"],
        "mock"
    );
    let s = stats(&mut c).await;
    assert_eq!(
        (
            s["completed"].as_u64(),
            s["active"].as_u64(),
            s["queued"].as_u64()
        ),
        (Some(2), Some(0), Some(0))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn hostile_requests_get_json_4xx() {
    let server = Server::start(|| MockBackend::new(1, 16), limits()).await;
    let mut c = server.client();
    let cases: &[(&str, u16, &str)] = &[
        ("{\"prompt\": \"a\"", 400, "invalid_json"),
        ("not json at all", 400, "invalid_json"),
        ("", 400, "invalid_json"),
        (r#"{"prompt": 5}"#, 400, "invalid_request"),
        (
            r#"{"prompt": "a", "max_tokens": "3"}"#,
            400,
            "invalid_request",
        ),
        (
            r#"{"prompt": "a", "stream": "yes"}"#,
            400,
            "invalid_request",
        ),
        (r#"{"max_tokens": 3}"#, 400, "invalid_request"),
        (
            r#"{"prompt": "a", "model": "gpt-4"}"#,
            404,
            "model_not_found",
        ),
        (
            r#"{"prompt": "aaaaaaaaaaaaaaaa"}"#,
            400,
            "context_length_exceeded",
        ),
        (r#"{"prompt": "a", "max_tokens": 0}"#, 400, "invalid_value"),
        (r#"{"prompt": "a", "max_tokens": -1}"#, 400, "invalid_value"),
        (
            r#"{"prompt": "a", "max_tokens": 1000000000000}"#,
            400,
            "context_length_exceeded",
        ),
        (
            r#"{"prompt": "a", "max_tokens": 1e30}"#,
            400,
            "invalid_request",
        ),
        (r#"{"prompt": "a", "temperature": 9}"#, 400, "invalid_value"),
        (r#"{"prompt": ["a", "b"]}"#, 400, "invalid_value"),
        (r#"{"prompt": [1, 99999]}"#, 400, "invalid_value"),
        (r#"{"prompt": []}"#, 400, "invalid_value"),
        (
            r#"{"prompt": "a", "stop": ["x","x","x","x","x"]}"#,
            400,
            "invalid_value",
        ),
    ];
    for (body, status, code) in cases {
        let (s, v) = post(&mut c, body).await;
        assert_eq!(
            (s.as_u16(), v["error"]["code"].as_str()),
            (*status, Some(*code)),
            "{body}: {v}"
        );
        assert!(v["error"]["message"].is_string());
    }
    let big = format!(r#"{{"prompt": "{}"}}"#, "a".repeat(5000));
    let (s, v) = post(&mut c, &big).await;
    assert_eq!(
        (s.as_u16(), v["error"]["code"].as_str()),
        (413, Some("body_too_large"))
    );
    let (s, body) = c.get("/nope").await.unwrap();
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(serde_json::from_slice::<Value>(&body).is_ok());
    let (s, body) = c.get("/v1/completions").await.unwrap();
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    assert!(serde_json::from_slice::<Value>(&body).is_ok());
    // After all that, the server still serves.
    let (s, v) = post(&mut c, r#"{"prompt": "a", "max_tokens": 2}"#).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    server.shutdown().await;
}

#[tokio::test]
async fn stop_strings_and_end_of_sequence_finish_with_stop() {
    let server = Server::start(
        || {
            let mut m = MockBackend::new(1, 64);
            m.eos_after = Some(6);
            m
        },
        limits(),
    )
    .await;
    let mut c = server.client();
    let (_, v) = post(&mut c, r#"{"prompt": "xy", "max_tokens": 20}"#).await;
    assert_eq!(v["choices"][0]["finish_reason"], "stop", "{v}");
    let text = v["choices"][0]["text"].as_str().unwrap().to_string();
    assert_eq!(text.len(), 6);
    assert_eq!(v["usage"]["completion_tokens"], 7);
    // Stopping on the text's third character leaves the first two.
    let stop = &text[2..3];
    let (_, v) = post(
        &mut c,
        &format!(r#"{{"prompt": "xy", "max_tokens": 20, "stop": "{stop}"}}"#),
    )
    .await;
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    let cut = &text[..text.find(stop).unwrap()];
    assert_eq!(v["choices"][0]["text"], cut);
    server.shutdown().await;
}

#[tokio::test]
async fn capacity_ends_a_completion_with_length() {
    let server = Server::start(|| MockBackend::new(1, 8), limits()).await;
    let mut c = server.client();
    let (s, v) = post(&mut c, r#"{"prompt": "abc", "max_tokens": 5}"#).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["usage"]["completion_tokens"], 5);
    // Default max_tokens is capped by the room left.
    let (s, v) = post(&mut c, r#"{"prompt": "abcdef"}"#).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (
            v["usage"]["completion_tokens"].as_u64(),
            v["choices"][0]["finish_reason"].as_str()
        ),
        (Some(2), Some("length"))
    );
    server.shutdown().await;
}

fn slow(slots: usize) -> impl FnOnce() -> MockBackend + Send + 'static {
    move || {
        let mut m = MockBackend::new(slots, 512);
        m.step_delay = Duration::from_millis(20);
        m
    }
}

#[tokio::test]
async fn a_full_queue_is_429_and_the_rest_are_served() {
    let server = Server::start(
        slow(1),
        Limits {
            queue: 1,
            ..limits()
        },
    )
    .await;
    let addr = server.addr;
    let mut c = server.client();
    // One request holds the slot, one waits in the queue: the third is refused.
    let long = r#"{"prompt": "a", "max_tokens": 40}"#;
    let (s, mut first) = c
        .post_stream(
            "/v1/completions",
            r#"{"prompt": "a", "max_tokens": 40, "stream": true}"#,
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    first.next_data().await.unwrap().unwrap();
    let queued =
        tokio::spawn(
            async move { post(&mut Client::new(addr, Duration::from_secs(10)), long).await },
        );
    let mut probe = server.client();
    wait_for(&mut probe, "a queued request", |s| s["queued"] == 1).await;
    let (s, v) = post(&mut server.client(), long).await;
    assert_eq!(
        (s.as_u16(), v["error"]["code"].as_str()),
        (429, Some("queue_full")),
        "{v}"
    );
    while first.next_data().await.unwrap().is_some() {}
    let (s, v) = queued.await.unwrap();
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(stats(&mut probe).await["rejected"], 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_slow_request_times_out_cleanly_and_frees_its_slot() {
    let server = Server::start(
        slow(1),
        Limits {
            timeout: Duration::from_millis(300),
            ..limits()
        },
    )
    .await;
    let mut c = server.client();
    let (s, v) = post(&mut c, r#"{"prompt": "a", "max_tokens": 200}"#).await;
    assert_eq!(
        (s.as_u16(), v["error"]["code"].as_str()),
        (504, Some("timeout")),
        "{v}"
    );
    // Streaming: the error arrives as an event, then [DONE].
    let (s, mut events) = c
        .post_stream(
            "/v1/completions",
            r#"{"prompt": "a", "max_tokens": 200, "stream": true}"#,
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    let mut last_two = Vec::new();
    while let Some(d) = events.next_data().await.unwrap() {
        last_two.push(d);
    }
    let n = last_two.len();
    assert_eq!(last_two[n - 1], "[DONE]");
    assert_eq!(
        serde_json::from_str::<Value>(&last_two[n - 2]).unwrap()["error"]["code"],
        "timeout"
    );
    let s = wait_for(&mut c, "the slots back", |s| s["active"] == 0).await;
    assert_eq!(s["timed_out"], 2, "{s}");
    let (status, _) = post(&mut c, r#"{"prompt": "a", "max_tokens": 3}"#).await;
    assert_eq!(status, StatusCode::OK);
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_that_disconnects_mid_stream_releases_its_slot() {
    let server = Server::start(slow(1), limits()).await;
    let mut c = server.client();
    let (_, mut events) = c
        .post_stream(
            "/v1/completions",
            r#"{"prompt": "a", "max_tokens": 200, "stream": true}"#,
        )
        .await
        .unwrap();
    events.next_data().await.unwrap().unwrap();
    drop(events);
    drop(c);
    let mut probe = server.client();
    let s = wait_for(&mut probe, "the cancelled request's slot", |s| {
        s["active"] == 0
    })
    .await;
    assert_eq!(s["cancelled"], 1, "{s}");
    assert!(s["tokens"].as_u64().unwrap() < 200, "{s}");
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_drains_an_in_flight_request() {
    let server = Server::start(slow(1), limits()).await;
    let addr = server.addr;
    let (s, mut events) = server
        .client()
        .post_stream(
            "/v1/completions",
            r#"{"prompt": "a", "max_tokens": 20, "stream": true}"#,
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    events.next_data().await.unwrap().unwrap();
    let done = server.done;
    let _ = server.stop.unwrap().send(());
    // The stream still ends properly...
    let mut last = String::new();
    while let Some(d) = events.next_data().await.unwrap() {
        last = d;
    }
    assert_eq!(last, "[DONE]");
    // ...then the server returns, and no longer accepts connections.
    tokio::time::timeout(Duration::from_secs(10), done)
        .await
        .unwrap()
        .unwrap();
    assert!(Client::new(addr, Duration::from_secs(1))
        .get("/health")
        .await
        .is_err());
}

#[tokio::test]
async fn greedy_completions_do_not_depend_on_batching() {
    let server = Server::start(
        || {
            let mut m = MockBackend::new(4, 64);
            // Slow enough that the eight requests overlap.
            m.step_delay = Duration::from_millis(5);
            m
        },
        Limits {
            queue: 8,
            ..limits()
        },
    )
    .await;
    let body = |p: &str| format!(r#"{{"prompt": "{p}", "max_tokens": 12, "temperature": 0}}"#);
    let alone = post(&mut server.client(), &body("same")).await.1["choices"][0]["text"].clone();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let addr = server.addr;
        let b = body(if i % 2 == 0 { "same" } else { "other prompt" });
        tasks.push(tokio::spawn(async move {
            post(&mut Client::new(addr, Duration::from_secs(10)), &b).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let (s, v) = t.await.unwrap();
        assert_eq!(s, StatusCode::OK);
        if i % 2 == 0 {
            assert_eq!(v["choices"][0]["text"], alone);
        }
    }
    let s = stats(&mut server.client()).await;
    assert!(
        s["batched"].as_u64().unwrap() > s["steps"].as_u64().unwrap(),
        "no step ran more than one request: {s}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn slow_headers_and_surplus_connections_are_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = Server::start(
        || MockBackend::new(1, 16),
        Limits {
            header_timeout: Duration::from_millis(200),
            max_connections: 2,
            ..limits()
        },
    )
    .await;
    let read_to_end = |mut s: tokio::net::TcpStream| async move {
        let mut buf = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf))
            .await
            .expect("the server should close the connection")
            .ok();
        buf
    };
    // A client that never finishes its headers is dropped after the header timeout.
    let mut slow = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let answer = read_to_end(slow).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        answer.is_empty() || answer.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    // Two idle connections use up the cap: a third is closed at once, unanswered.
    let _a = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let _b = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut third = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let _ = third
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await;
    assert!(read_to_end(third).await.is_empty());
    drop((_a, _b));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        server.client().get("/health").await.unwrap().0,
        StatusCode::OK
    );
    server.shutdown().await;
}
