//! An OpenAI-style completions server for a Hugging Face model folder.
//!
//! ```text
//! cargo run --release --example serve -- --model jaxrs-models/assets/shakespeare-gpt2
//! curl -s localhost:8000/v1/completions -d '{"prompt": "ROMEO:", "max_tokens": 32}'
//! curl -sN localhost:8000/v1/completions -d '{"prompt": "ROMEO:", "max_tokens": 32, "stream": true}'
//! curl -s localhost:8000/health
//! ```
//!
//! Flags (defaults in brackets): `--model DIR` [jaxrs-models/assets/shakespeare-gpt2],
//! `--name NAME` [the folder's name], `--addr HOST:PORT` [127.0.0.1:8000], `--slots N`
//! (requests decoded together) [8], `--capacity N` (tokens per request, prompt included)
//! [the model's context], `--queue N` (requests waiting; one more gets 429) [64],
//! `--timeout-ms N` (per request) [60000], `--max-body N` (bytes) [1048576],
//! `--dtype f32|bf16|int8` [f32]. SIGTERM or ctrl-c stops accepting, lets in-flight requests
//! finish, and exits.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use jaxrs_serve::engine::{serve, Config};
use jaxrs_serve::shutdown_signal;

fn parse(args: &[String]) -> Result<(SocketAddr, Config), String> {
    let mut config = Config::new("jaxrs-models/assets/shakespeare-gpt2");
    let mut addr: SocketAddr = "127.0.0.1:8000".parse().map_err(|e| format!("{e}"))?;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--model" => config.model_dir = value.into(),
            "--name" => config.model_name = Some(value.clone()),
            "--addr" => addr = value.parse().map_err(|e| format!("--addr {value}: {e}"))?,
            "--slots" => config.slots = number()?,
            "--capacity" => config.capacity = Some(number()?),
            "--queue" => config.limits.queue = number()?,
            "--timeout-ms" => config.limits.timeout = Duration::from_millis(number()? as u64),
            "--max-body" => config.limits.max_body_bytes = number()?,
            "--dtype" => config.dtype = value.parse()?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok((addr, config))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, config) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("serve: {e}");
            }
            eprintln!(
                "usage: serve [--model DIR] [--name NAME] [--addr HOST:PORT] [--slots N] [--capacity N] [--queue N] [--timeout-ms N] [--max-body N] [--dtype f32|bf16|int8]"
            );
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("serve: starting tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!(
            "serve: listening on http://{}; loading {} ({:?}, {} slots); GET /health answers once it is ready",
            listener.local_addr()?,
            config.model_dir.display(),
            config.dtype,
            config.slots
        );
        serve(listener, config, async {
            shutdown_signal().await;
            eprintln!("serve: shutting down; finishing in-flight requests");
        })
        .await
    });
    match result {
        Ok(()) => {
            eprintln!("serve: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("serve: {e}");
            ExitCode::FAILURE
        }
    }
}
