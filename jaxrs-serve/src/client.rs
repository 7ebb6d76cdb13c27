//! A minimal HTTP/1.1 client for this server over loopback, shared by the tests and the load
//! bench: one keep-alive connection per client, plain bodies and server-sent events.
//!
//! It is not a general client (no TLS, no redirects, no pooling); a bench that used a
//! heavyweight one would measure that as much as the server.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{header, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::scheduler::BoxError;

/// A connection to the server, reopened when the server closes it.
pub struct Client {
    addr: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
    timeout: Duration,
}

/// A streaming response's body, read one server-sent event at a time.
pub struct EventStream {
    body: Incoming,
    buffer: Vec<u8>,
    timeout: Duration,
}

impl Client {
    /// A client of the server at `addr`; every wait is bounded by `timeout`.
    pub fn new(addr: SocketAddr, timeout: Duration) -> Self {
        Client {
            addr,
            sender: None,
            timeout,
        }
    }

    async fn sender(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, BoxError> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream =
                tokio::time::timeout(self.timeout, TcpStream::connect(self.addr)).await??;
            stream.set_nodelay(true)?;
            let (sender, conn) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            self.sender = Some(sender);
        }
        let sender = self.sender.as_mut().ok_or("no connection")?;
        tokio::time::timeout(self.timeout, sender.ready()).await??;
        Ok(sender)
    }

    async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Bytes,
    ) -> Result<hyper::Response<Incoming>, BoxError> {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, self.addr.to_string())
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(body))?;
        let timeout = self.timeout;
        let mut resent = false;
        loop {
            let sender = self.sender().await?;
            let response = tokio::time::timeout(timeout, sender.try_send_request(request)).await;
            match response {
                Ok(Ok(r)) => {
                    // A server that will close the connection says so: the next request goes
                    // on a new one, not into this one as it closes (its race, seen in CI:
                    // `IncompleteMessage` for a request written after a 413).
                    let closing = r
                        .headers()
                        .get(header::CONNECTION)
                        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
                    if closing {
                        self.sender = None;
                    }
                    return Ok(r);
                }
                Ok(Err(mut e)) => {
                    self.sender = None;
                    // The server may close a connection after an answer (a 413 whose body it
                    // did not read) while the next request waits to be written: a request
                    // that never left is sent once more on a new connection.
                    match e.take_message() {
                        Some(unsent) if !resent => {
                            request = unsent;
                            resent = true;
                        }
                        _ => return Err(e.into_error().into()),
                    }
                }
                Err(e) => {
                    self.sender = None;
                    return Err(e.into());
                }
            }
        }
    }

    /// A request with a whole body back.
    pub async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<(StatusCode, Bytes), BoxError> {
        let response = self.send(method, path, body.into()).await?;
        let status = response.status();
        let body = tokio::time::timeout(self.timeout, response.into_body().collect())
            .await??
            .to_bytes();
        Ok((status, body))
    }

    /// `GET path`.
    pub async fn get(&mut self, path: &str) -> Result<(StatusCode, Bytes), BoxError> {
        self.request(Method::GET, path, Bytes::new()).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(
        &mut self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<(StatusCode, Bytes), BoxError> {
        self.request(Method::POST, path, body).await
    }

    /// `POST path`, returning once the headers arrive; the body is read event by event.
    pub async fn post_stream(
        &mut self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<(StatusCode, EventStream), BoxError> {
        let response = self.send(Method::POST, path, body.into()).await?;
        let status = response.status();
        Ok((
            status,
            EventStream {
                body: response.into_body(),
                buffer: Vec::new(),
                timeout: self.timeout,
            },
        ))
    }
}

impl EventStream {
    /// The rest of the body as text (for an error answered instead of a stream).
    pub async fn rest(mut self) -> Result<String, BoxError> {
        while let Some(frame) = tokio::time::timeout(self.timeout, self.body.frame()).await? {
            if let Ok(data) = frame?.into_data() {
                self.buffer.extend_from_slice(&data);
            }
        }
        Ok(String::from_utf8(self.buffer)?)
    }

    /// The next event's `data` (the lines joined), skipping comments such as keep-alives;
    /// `None` at the end of the body.
    pub async fn next_data(&mut self) -> Result<Option<String>, BoxError> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let event = String::from_utf8(event)?;
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.strip_prefix(' ').unwrap_or(d))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return Ok(Some(data.join("\n")));
            }
            match tokio::time::timeout(self.timeout, self.body.frame()).await? {
                None => return Ok(None),
                Some(frame) => {
                    if let Ok(data) = frame?.into_data() {
                        self.buffer.extend_from_slice(&data);
                    }
                }
            }
        }
    }
}
