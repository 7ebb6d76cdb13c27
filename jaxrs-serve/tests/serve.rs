//! The completions server with the real engine and a real model, on loopback: answers,
//! streams, hostile input, a full queue, a timeout, a client that leaves mid-stream, a
//! graceful shutdown, and a short load test (8 concurrent clients) in which greedy
//! completions equal those served alone.
//!
//! The model is `JAXRS_SERVE_TEST_MODEL` if set, else the committed tiny GPT-2 golden (2
//! layers, 128 positions) with the golden byte-level BPE (`JAXRS_SERVE_TEST_TOKENIZER`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use jaxrs_serve::client::Client;
use jaxrs_serve::engine::{serve, Config};
use serde_json::{json, Value};

fn model_dir() -> PathBuf {
    std::env::var_os("JAXRS_SERVE_TEST_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../jaxrs-models/tests/golden/hf/gpt2")
        })
}

fn tokenizer_dir() -> PathBuf {
    std::env::var_os("JAXRS_SERVE_TEST_TOKENIZER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../jaxrs-models/tests/golden/hf/tokenizer")
        })
}

fn config() -> Config {
    let mut c = Config::new(model_dir());
    c.tokenizer_dir = Some(tokenizer_dir());
    c.model_name = Some("tiny".into());
    c.slots = 4;
    c.limits.queue = 64;
    c.limits.timeout = Duration::from_secs(120);
    c.limits.max_body_bytes = 64 * 1024;
    c
}

/// A server on its own runtime thread (so it outlives any one test's runtime).
struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<Result<(), String>>,
}

fn start(config: Config) -> Running {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let result = runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|e| e.to_string())?;
            addr_tx
                .send(listener.local_addr().map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            serve(listener, config, async {
                let _ = stopped.await;
            })
            .await
            .map_err(|e| e.to_string())
        });
        let _ = done_tx.send(result);
    });
    let addr = addr_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the server's address");
    Running {
        addr,
        stop: Some(stop),
        done,
    }
}

impl Running {
    /// Signals shutdown; returns the server's result once it has drained.
    fn shutdown(&mut self) -> std::sync::mpsc::Receiver<Result<(), String>> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        std::mem::replace(&mut self.done, std::sync::mpsc::channel().1)
    }
}

/// The server most tests share: loading and compiling once.
fn shared() -> SocketAddr {
    static SHARED: OnceLock<SocketAddr> = OnceLock::new();
    *SHARED.get_or_init(|| {
        let running = start(config());
        let addr = running.addr;
        // Never shut down: the process's end takes it.
        std::mem::forget(running);
        addr
    })
}

fn client(addr: SocketAddr) -> Client {
    // Long enough for the model to load and compile on a busy machine.
    Client::new(addr, Duration::from_secs(300))
}

async fn post(c: &mut Client, body: &Value) -> (StatusCode, Value) {
    post_raw(c, &body.to_string()).await
}

async fn post_raw(c: &mut Client, body: &str) -> (StatusCode, Value) {
    let (status, bytes) = c
        .post("/v1/completions", body.to_string())
        .await
        .expect("a response");
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    (status, v)
}

async fn health(c: &mut Client) -> Value {
    let (status, body) = c.get("/health").await.expect("health");
    assert_eq!(status, StatusCode::OK);
    serde_json::from_slice(&body).expect("health JSON")
}

async fn wait_for(c: &mut Client, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let h = health(c).await;
        if pred(&h["stats"]) {
            return h["stats"].clone();
        }
        assert!(Instant::now() < until, "timed out waiting for {what}: {h}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A streamed completion: (text, finish reason, usage, chunks).
async fn stream(c: &mut Client, body: &Value) -> (String, Value, Value, usize) {
    let (status, mut events) = c
        .post_stream("/v1/completions", body.to_string())
        .await
        .expect("a stream");
    assert_eq!(status, StatusCode::OK);
    let (mut text, mut finish, mut usage, mut chunks, mut done) =
        (String::new(), Value::Null, Value::Null, 0, false);
    while let Some(data) = events.next_data().await.expect("an event") {
        assert!(!done, "data after [DONE]");
        if data == "[DONE]" {
            done = true;
            continue;
        }
        let v: Value = serde_json::from_str(&data).expect("a JSON chunk");
        assert!(v.get("error").is_none(), "{v}");
        assert_eq!(v["object"], "text_completion");
        chunks += 1;
        text.push_str(v["choices"][0]["text"].as_str().expect("text"));
        if !v["choices"][0]["finish_reason"].is_null() {
            finish = v["choices"][0]["finish_reason"].clone();
            usage = v["usage"].clone();
        }
    }
    assert!(done, "no [DONE]");
    (text, finish, usage, chunks)
}

#[tokio::test]
async fn completes_and_streams_the_same_greedy_text() {
    let mut c = client(shared());
    let h = health(&mut c).await;
    assert_eq!(h["model"], "tiny");
    let body = json!({"model": "tiny", "prompt": "Hello there, my friend", "max_tokens": 12, "temperature": 0});
    let (status, v) = post(&mut c, &body).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["choices"][0]["finish_reason"], "length", "{v}");
    assert_eq!(v["usage"]["completion_tokens"], 12);
    let prompt_tokens = v["usage"]["prompt_tokens"].as_u64().unwrap();
    assert!(prompt_tokens > 0);
    let text = v["choices"][0]["text"].as_str().unwrap().to_string();
    let mut streamed = body.clone();
    streamed["stream"] = json!(true);
    let (stext, finish, usage, chunks) = stream(&mut c, &streamed).await;
    assert_eq!(stext, text);
    assert_eq!(finish, "length");
    assert_eq!(usage["prompt_tokens"].as_u64(), Some(prompt_tokens));
    assert!(chunks >= 2, "{chunks} chunks");
    // The same prompt as token ids gives the same completion.
    let (s, v) = post(
        &mut c,
        &json!({"prompt": [0, 1, 2, 3], "max_tokens": 4, "temperature": 0}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    // Sampling with a seed is reproducible.
    let sampled =
        json!({"prompt": "Hello", "max_tokens": 8, "temperature": 1.0, "top_p": 0.9, "seed": 7});
    let a = post(&mut c, &sampled).await.1["choices"][0]["text"].clone();
    let b = post(&mut c, &sampled).await.1["choices"][0]["text"].clone();
    assert_eq!(a, b);
}

#[tokio::test]
async fn hostile_input_gets_json_4xx_and_the_server_goes_on() {
    let mut c = client(shared());
    let capacity = health(&mut c).await["capacity"].as_u64().unwrap();
    let long_prompt: Vec<u32> = vec![1; capacity as usize];
    let cases: Vec<(String, u16, &str)> = vec![
        ("{\"prompt\": \"a\"".into(), 400, "invalid_json"),
        ("\u{0}\u{1}garbage".into(), 400, "invalid_json"),
        (
            r#"{"prompt": {"text": "a"}}"#.into(),
            400,
            "invalid_request",
        ),
        (
            r#"{"prompt": "a", "max_tokens": "3"}"#.into(),
            400,
            "invalid_request",
        ),
        (
            r#"{"prompt": "a", "temperature": "hot"}"#.into(),
            400,
            "invalid_request",
        ),
        (
            r#"{"prompt": "a", "stop": 3}"#.into(),
            400,
            "invalid_request",
        ),
        (r#"{"max_tokens": 3}"#.into(), 400, "invalid_request"),
        (
            r#"{"prompt": "a", "model": "gpt-4"}"#.into(),
            404,
            "model_not_found",
        ),
        (
            json!({"prompt": long_prompt}).to_string(),
            400,
            "context_length_exceeded",
        ),
        (
            json!({"prompt": "a", "max_tokens": capacity}).to_string(),
            400,
            "context_length_exceeded",
        ),
        (
            r#"{"prompt": "a", "max_tokens": 0}"#.into(),
            400,
            "invalid_value",
        ),
        (
            r#"{"prompt": "a", "max_tokens": 99999999999999}"#.into(),
            400,
            "context_length_exceeded",
        ),
        (r#"{"prompt": [4294967295]}"#.into(), 400, "invalid_value"),
        (
            r#"{"prompt": "a", "top_p": 0}"#.into(),
            400,
            "invalid_value",
        ),
    ];
    for (body, status, code) in &cases {
        let (s, v) = post_raw(&mut c, body).await;
        assert_eq!(
            (s.as_u16(), v["error"]["code"].as_str()),
            (*status, Some(*code)),
            "{body}: {v}"
        );
    }
    // A 413 closes its connection (the body is never read), and says so: the next request,
    // sent at once, goes on a new connection. Repeated, since the race it prevents (the next
    // request written into the closing connection) is a matter of timing.
    let huge = json!({"prompt": "a".repeat(100 * 1024)}).to_string();
    for _ in 0..20 {
        let (s, v) = post_raw(&mut c, &huge).await;
        assert_eq!(
            (s.as_u16(), v["error"]["code"].as_str()),
            (413, Some("body_too_large")),
            "{v}"
        );
        let (s, v) = post_raw(&mut c, r#"{"max_tokens": 3}"#).await;
        assert_eq!(s.as_u16(), 400, "{v}");
    }
    // A prompt of text that is within the body limit but longer than the context.
    let words = "the quick brown fox ".repeat(capacity as usize);
    let (s, v) = post(&mut c, &json!({"prompt": words})).await;
    assert_eq!(
        (s.as_u16(), v["error"]["code"].as_str()),
        (400, Some("context_length_exceeded")),
        "{v}"
    );
    let (s, v) = post(&mut c, &json!({"prompt": "still serving", "max_tokens": 2})).await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

#[tokio::test]
async fn a_full_queue_answers_429() {
    let mut config = config();
    config.slots = 1;
    config.limits.queue = 1;
    let mut server = start(config);
    let addr = server.addr;
    let capacity = health(&mut client(addr)).await["capacity"]
        .as_u64()
        .unwrap();
    // Far more long requests at once than one slot and one queue place hold.
    let body = json!({"prompt": "a", "max_tokens": capacity - 2, "temperature": 0});
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let body = body.clone();
        tasks.push(tokio::spawn(
            async move { post(&mut client(addr), &body).await },
        ));
    }
    let (mut ok, mut refused) = (0, 0);
    for t in tasks {
        let (s, v) = t.await.unwrap();
        match s.as_u16() {
            200 => ok += 1,
            429 => {
                assert_eq!(v["error"]["code"], "queue_full", "{v}");
                refused += 1;
            }
            other => panic!("{other}: {v}"),
        }
    }
    assert!(ok >= 1 && refused >= 1, "{ok} served, {refused} refused");
    assert_eq!(
        health(&mut client(addr)).await["stats"]["rejected"],
        refused
    );
    server
        .shutdown()
        .recv_timeout(Duration::from_secs(60))
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_request_past_its_deadline_times_out_cleanly() {
    let mut config = config();
    config.limits.timeout = Duration::from_millis(30);
    let mut server = start(config);
    let mut c = client(server.addr);
    let capacity = health(&mut c).await["capacity"].as_u64().unwrap();
    let body = json!({"prompt": "a", "max_tokens": capacity - 2});
    for stream in [false, true] {
        let mut body = body.clone();
        body["stream"] = json!(stream);
        let (s, mut events) = c
            .post_stream("/v1/completions", body.to_string())
            .await
            .unwrap();
        // Either refused before any text (504) or, once streaming, an error event and [DONE].
        let error = if s == StatusCode::GATEWAY_TIMEOUT {
            serde_json::from_str::<Value>(&events.rest().await.unwrap()).unwrap()
        } else {
            let mut last = Vec::new();
            while let Some(d) = events.next_data().await.unwrap() {
                last.push(d);
            }
            assert_eq!(
                (s, stream, last.last().map(String::as_str)),
                (StatusCode::OK, true, Some("[DONE]"))
            );
            serde_json::from_str::<Value>(&last[last.len() - 2]).unwrap()
        };
        assert_eq!(error["error"]["code"], "timeout", "{error}");
    }
    let stats = wait_for(&mut c, "the slots back", |s| {
        s["active"] == 0 && s["queued"] == 0
    })
    .await;
    assert_eq!(stats["completed"], 0, "{stats}");
    server
        .shutdown()
        .recv_timeout(Duration::from_secs(60))
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_client_that_leaves_mid_stream_frees_its_slot_and_shutdown_drains() {
    let mut server = start(config());
    let addr = server.addr;
    let mut c = client(addr);
    let capacity = health(&mut c).await["capacity"].as_u64().unwrap();
    let long = json!({"prompt": "a", "max_tokens": capacity - 2, "stream": true});
    let mut leaver = client(addr);
    let (_, mut events) = leaver
        .post_stream("/v1/completions", long.to_string())
        .await
        .unwrap();
    events.next_data().await.unwrap().unwrap();
    drop(events);
    drop(leaver);
    let stats = wait_for(&mut c, "the leaver's slot", |s| s["active"] == 0).await;
    assert_eq!(stats["cancelled"], 1, "{stats}");
    assert!(stats["tokens"].as_u64().unwrap() < capacity, "{stats}");

    // A request in flight when the shutdown signal comes is finished, then the server ends.
    let (status, mut events) = client(addr)
        .post_stream(
            "/v1/completions",
            json!({"prompt": "a", "max_tokens": 24, "stream": true}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK);
    events.next_data().await.unwrap().unwrap();
    let done = server.shutdown();
    let mut last = String::new();
    while let Some(d) = events.next_data().await.unwrap() {
        last = d;
    }
    assert_eq!(last, "[DONE]");
    done.recv_timeout(Duration::from_secs(60)).unwrap().unwrap();
    assert!(Client::new(addr, Duration::from_secs(2))
        .get("/health")
        .await
        .is_err());
}

#[tokio::test]
async fn load_8_clients_all_answered_and_greedy_unchanged_by_batching() {
    let addr = shared();
    let greedy = |p: &str| json!({"prompt": p, "max_tokens": 16, "temperature": 0});
    let prompts = [
        "The king",
        "Once upon a time",
        "a b c d e f g",
        "What is it",
    ];
    let mut alone = Vec::new();
    for p in prompts {
        let (s, v) = post(&mut client(addr), &greedy(p)).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        alone.push(v["choices"][0]["text"].as_str().unwrap().to_string());
    }
    let until = Instant::now() + Duration::from_secs(3);
    let mut tasks = Vec::new();
    for i in 0..8usize {
        let alone = alone.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = client(addr);
            let mut n = 0;
            let mut k = i;
            while Instant::now() < until || n == 0 {
                let p = prompts[k % prompts.len()];
                let (s, v) = if k % 3 == 0 {
                    // Sampled requests in the same batches as the greedy ones.
                    post(
                        &mut c,
                        &json!({"prompt": p, "max_tokens": 8, "temperature": 0.9, "seed": k}),
                    )
                    .await
                } else {
                    let mut body = greedy(p);
                    body["stream"] = json!(k % 2 == 0);
                    if k % 2 == 0 {
                        let (text, finish, _, _) = stream(&mut c, &body).await;
                        assert_eq!(
                            (text.as_str(), finish.as_str()),
                            (alone[k % prompts.len()].as_str(), Some("length"))
                        );
                        n += 1;
                        k += 8;
                        continue;
                    }
                    let (s, v) = post(&mut c, &body).await;
                    assert_eq!(
                        v["choices"][0]["text"],
                        alone[k % prompts.len()].as_str(),
                        "batched greedy text differs"
                    );
                    (s, v)
                };
                assert_eq!(s, StatusCode::OK, "{v}");
                n += 1;
                k += 8;
            }
            n
        }));
    }
    let mut answered = 0;
    for t in tasks {
        answered += t.await.expect("a client panicked");
    }
    let stats = health(&mut client(addr)).await["stats"].clone();
    assert!(answered >= 8, "{answered}");
    assert_eq!(stats["failed"], 0, "{stats}");
    assert!(
        stats["batched"].as_u64().unwrap() > stats["steps"].as_u64().unwrap(),
        "never batched: {stats}"
    );
}
