//! The coordination key-value service of `jaxrs::distributed`: process 0 serves it over TCP
//! ([`Service`]); every process, 0 included, is a client ([`KeyValueStore`]).
//!
//! Plain `std::net` and threads: one thread accepts, one thread serves each connection. The
//! service is written as untrusted-input code, since anything that reaches its port can talk
//! to it:
//!
//! - **Authentication.** A connection opens with a challenge-response both ways before any
//!   request: the client sends `JXKV` and a version with a fresh nonce, the server answers
//!   with its own nonce and an HMAC-SHA256 over both under the shared secret ([`Config`]'s
//!   `secret`, `JAXRS_COORDINATOR_TOKEN`), the client checks it and answers with its own
//!   HMAC, which the server checks (constant time) before it reads a request. Without a
//!   secret both sides use the empty key: the exchange still tells a jaxrs service from
//!   something else, but proves nothing.
//! - **Bounded frames.** Each request is
//!
//!   ```text
//!   op: u8 | key_len: u64 LE | key | value_len: u64 LE | value | timeout_ms: u64 LE
//!   ```
//!
//!   and gets one answer `status: u8 | len: u64 LE | payload`. Lengths are checked against
//!   the limits before anything is allocated, and bytes are read in chunks that grow only as
//!   data arrives, so a lying length costs nothing; a frame over a limit closes the
//!   connection (logged). The client checks the server's lengths the same way.
//! - **Bounded resources.** A cap on connections (the excess are closed at once), a time
//!   limit on the handshake and on each frame, an idle timeout between requests, a cap on
//!   the bytes the store holds, and [`KeyValueStore::delete`].
//! - **Failure detection.** Every client registers its process on a connection of its own
//!   and sends heartbeats on it. A process whose connection ends without a goodbye (it was
//!   killed or crashed), or that sends no heartbeat for the heartbeat timeout, is declared
//!   dead: every blocked request of every other process is answered at once with
//!   [`Error::PeerFailed`] naming it, and so is every later one. The coordinator's own death
//!   closes every connection, which clients notice at once.
//!
//! A client keeps a pool of connections and takes one per request, so a get that blocks on
//! one thread does not hold up a put on another thread of the same process (the put it waits
//! for may be that one). A key is set once (until deleted): a second put of it is an error,
//! as in XLA's own coordination service. [`Service::shutdown`] (or dropping the service)
//! stops and joins every thread it started.

use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use crate::pjrt::key_text;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Version 2: the authenticated handshake (version 1 had none).
const GREETING: &[u8; 5] = b"JXKV\x02";
const NONCE_LEN: usize = 32;
const TAG_LEN: usize = 32;
/// What the server says after the greeting: its nonce, its proof, then its idle timeout and
/// limits (three u64) so the client can keep to them.
const SERVER_HELLO_LEN: usize = NONCE_LEN + TAG_LEN + 24;

const PUT: u8 = 1;
const GET: u8 = 2;
const TRY_GET: u8 = 3;
const DELETE: u8 = 4;
/// Claims a process id for this connection: from now on it carries heartbeats.
const REGISTER: u8 = 5;
const HEARTBEAT: u8 = 6;
/// The clean end of a registered connection: its process is leaving, not dying.
const GOODBYE: u8 = 7;

const OK: u8 = 0;
const NOT_FOUND: u8 = 1;
const TIMED_OUT: u8 = 2;
const EXISTS: u8 = 3;
const FAILED: u8 = 4;
const TOO_LARGE: u8 = 5;
/// Payload: the dead process's id (u64 LE), then why it was declared dead.
const PEER_FAILED: u8 = 6;
const REFUSED: u8 = 7;

/// Bytes are read in pieces that start at this size and double as data arrives, so that the
/// memory a frame costs follows the bytes actually received, not the length it announces.
const CHUNK: usize = 64 << 10;

/// An answer the client reads is at most its own value limit, or this much for an error
/// message when its limit is smaller.
const MIN_ANSWER_LIMIT: usize = 64 << 10;

/// How long the accept loop sleeps when nobody is connecting; it checks for shutdown between.
const ACCEPT_POLL: Duration = Duration::from_millis(5);

/// How long after a connect's deadline the client still waits for the answer to its last
/// request (the server answers a timed-out get at the deadline itself).
const DEADLINE_SLACK: Duration = Duration::from_millis(250);

/// The longest a goodbye may hold up closing a store (or dropping it) when the coordinator
/// does not answer.
const GOODBYE_WAIT: Duration = Duration::from_secs(2);

/// JAX's default (`heartbeat_timeout` of `jax.distributed.initialize`: 100 s).
const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(100);

/// The environment variables [`Config::from_env`] reads.
const TOKEN_VAR: &str = "JAXRS_COORDINATOR_TOKEN";
const HEARTBEAT_VAR: &str = "JAXRS_HEARTBEAT_TIMEOUT";
const MAX_VALUE_VAR: &str = "JAXRS_KV_MAX_VALUE_BYTES";

type HmacSha256 = Hmac<Sha256>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked while holding it; what it guards
    // stays consistent (every update is a few field writes with no early return).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn distributed(code: ErrorCode, message: String) -> Error {
    Error::Distributed { code, message }
}

/// How the coordination service and its clients are set up: the shared secret, the limits
/// and the timeouts. [`Config::default`] holds the documented defaults; [`Config::from_env`]
/// (what [`Service::start`], [`KeyValueStore::connect`] and `initialize` use) lets
/// environment variables override some. Every process should be given the same config (the
/// service tells its clients its idle timeout and limits; the secret must match).
///
/// ```
/// use jaxrs::distributed::{Config, KeyValueStore, Service};
/// use std::time::Duration;
///
/// let config = Config {
///     secret: Some(b"a long random shared secret".to_vec()),
///     heartbeat_timeout: Duration::from_secs(30),
///     ..Config::default()
/// };
/// let service = Service::start_with("127.0.0.1:0", &config)?;
/// let address = service.local_addr().to_string();
/// let store = KeyValueStore::connect_with(&address, 1, 0, Duration::from_secs(10), &config)?;
/// store.put("k", "v")?;
/// // Without the secret a process is refused before it can send a request.
/// let stranger = KeyValueStore::connect_with(&address, 1, 0, Duration::from_secs(10), &Config::default());
/// assert!(matches!(
///     stranger,
///     Err(jaxrs::Error::Distributed { code: jaxrs::ErrorCode::Unauthenticated, .. })
/// ));
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone)]
pub struct Config {
    /// The secret every connection proves it knows (HMAC-SHA256 challenge-response) before
    /// any request. `None` (the default, unless `JAXRS_COORDINATOR_TOKEN` is set and not
    /// empty): anyone who reaches the port is let in, and a service listening beyond the
    /// loopback logs a warning saying so.
    pub secret: Option<Vec<u8>>,
    /// The longest key, in bytes (default 64 KiB).
    pub max_key_bytes: usize,
    /// The largest value, in bytes (default 64 MiB; `JAXRS_KV_MAX_VALUE_BYTES`). A larger put
    /// is refused before it is sent; a frame announcing more closes its connection.
    pub max_value_bytes: usize,
    /// The most bytes (keys and values) the service holds at once (default 1 GiB); a put past
    /// it is refused with `ResourceExhausted`. [`KeyValueStore::delete`] frees room.
    pub max_store_bytes: usize,
    /// The most connections the service serves at once (default 1024, fewer when the
    /// process's file-descriptor limit is low: each costs two descriptors and a thread). More
    /// are closed as soon as they are accepted.
    pub max_connections: usize,
    /// How long the service keeps a connection that sends no request (default 300 s); a
    /// client drops its pooled connections before that.
    pub idle_timeout: Duration,
    /// How long the handshake, and each frame once it has started, may take (default 10 s);
    /// also how long a client waits for the answer to a request that does not block.
    pub io_timeout: Duration,
    /// How long a process may go without a heartbeat before it is declared dead (default
    /// 100 s, as JAX's; `JAXRS_HEARTBEAT_TIMEOUT`, in seconds). Heartbeats go every tenth of
    /// it (at most every 10 s). A process that is killed is caught at once anyway: its
    /// connection ends without a goodbye.
    pub heartbeat_timeout: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            secret: None,
            max_key_bytes: 64 << 10,
            max_value_bytes: 64 << 20,
            max_store_bytes: 1 << 30,
            max_connections: default_max_connections(),
            idle_timeout: Duration::from_secs(300),
            io_timeout: Duration::from_secs(10),
            heartbeat_timeout: DEFAULT_HEARTBEAT_TIMEOUT,
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
            .field("max_key_bytes", &self.max_key_bytes)
            .field("max_value_bytes", &self.max_value_bytes)
            .field("max_store_bytes", &self.max_store_bytes)
            .field("max_connections", &self.max_connections)
            .field("idle_timeout", &self.idle_timeout)
            .field("io_timeout", &self.io_timeout)
            .field("heartbeat_timeout", &self.heartbeat_timeout)
            .finish()
    }
}

/// 1024, or fewer when the descriptor limit would run out first (two per connection, with
/// room left for the rest of the process).
fn default_max_connections() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we pass, nothing else.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if !known || limit.rlim_cur == libc::RLIM_INFINITY {
        return 1024;
    }
    let descriptors = usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX);
    (descriptors.saturating_sub(64) / 2).clamp(8, 1024)
}

impl Config {
    /// The defaults, with `JAXRS_COORDINATOR_TOKEN` (the secret; empty means none),
    /// `JAXRS_HEARTBEAT_TIMEOUT` (seconds, e.g. `100` or `2.5`) and `JAXRS_KV_MAX_VALUE_BYTES`
    /// applied. A variable that does not parse is an [`Error::Distributed`] with code
    /// `InvalidArgument` naming it.
    pub fn from_env() -> Result<Config> {
        let mut config = Config::default();
        if let Some(token) = std::env::var_os(TOKEN_VAR) {
            let token = token.into_encoded_bytes();
            config.secret = (!token.is_empty()).then_some(token);
        }
        if let Ok(text) = std::env::var(HEARTBEAT_VAR) {
            config.heartbeat_timeout = text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0)
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| bad_var(HEARTBEAT_VAR, &text, "a positive number of seconds"))?;
        }
        if let Ok(text) = std::env::var(MAX_VALUE_VAR) {
            config.max_value_bytes = text
                .trim()
                .parse::<usize>()
                .ok()
                .ok_or_else(|| bad_var(MAX_VALUE_VAR, &text, "a number of bytes"))?;
        }
        Ok(config)
    }

    /// How often a client sends a heartbeat: ten per timeout, as JAX's 10 s of 100 s.
    fn heartbeat_interval(&self) -> Duration {
        (self.heartbeat_timeout / 10).clamp(Duration::from_millis(10), Duration::from_secs(10))
    }

    fn key(&self) -> &[u8] {
        self.secret.as_deref().unwrap_or(&[])
    }
}

fn bad_var(name: &str, text: &str, wanted: &str) -> Error {
    distributed(
        ErrorCode::InvalidArgument,
        format!("{name}={text:?} is not {wanted}"),
    )
}

/// The key-value service that process 0 runs for `jaxrs::distributed` (and that
/// [`KeyValueStore::connect`] reaches). Stopped, with every thread it started joined, by
/// [`Service::shutdown`] or on drop; clients then get `Unavailable` errors.
///
/// ```
/// use jaxrs::distributed::{KeyValueStore, Service};
/// use std::time::Duration;
///
/// let service = Service::start("127.0.0.1:0")?; // port 0: any free port
/// let address = service.local_addr().to_string();
/// let store = KeyValueStore::connect(&address, 1, 0, Duration::from_secs(10))?;
/// store.put("greeting", b"hello\0world")?;
/// assert_eq!(store.get("greeting", Duration::from_secs(1))?, b"hello\0world");
/// service.shutdown();
/// assert!(store.try_get("greeting").is_err()); // the service is gone
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub struct Service {
    local_addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

struct Shared {
    config: Config,
    store: Mutex<Store>,
    changed: Condvar,
    stopping: AtomicBool,
    connections: Mutex<Connections>,
    next_connection: AtomicU64,
}

#[derive(Default)]
struct Store {
    values: HashMap<Box<[u8]>, Arc<[u8]>>,
    /// Keys and values held, in bytes.
    bytes: usize,
    /// Each registered process and the connection that carries its heartbeats.
    processes: HashMap<usize, u64>,
    /// The first process declared dead, and why: from then on every request fails.
    failed: Option<(usize, String)>,
}

#[derive(Default)]
struct Connections {
    /// A handle on each open connection's socket, to shut it down when the service stops.
    /// Its serve thread removes it as it ends, so a closed connection costs no descriptor.
    open: HashMap<u64, TcpStream>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("local_addr", &self.local_addr)
            .finish()
    }
}

impl Service {
    /// Listens on `address` (`"host:port"`; port 0 picks a free one, see
    /// [`Service::local_addr`]) and serves until shut down, with [`Config::from_env`].
    /// Listening on exactly the given address keeps the service off other interfaces unless
    /// asked for (`"0.0.0.0:port"`, which wants a secret).
    pub fn start(address: &str) -> Result<Service> {
        Service::start_with(address, &Config::from_env()?)
    }

    /// [`Service::start`] with the given secret, limits and timeouts.
    pub fn start_with(address: &str, config: &Config) -> Result<Service> {
        let listener = TcpListener::bind(address).map_err(|e| {
            distributed(
                ErrorCode::Unavailable,
                format!("cannot listen on {address} for the coordination service: {e}"),
            )
        })?;
        let local_addr = listener.local_addr()?;
        if config.secret.is_none() && !local_addr.ip().is_loopback() {
            log::warn!(
                "jaxrs::distributed: the coordination service listens on {local_addr} without \
                 a secret: anyone who can reach that address can take a process id, read and \
                 overwrite every key (the topology and NCCL ids XLA's plugin exchanges \
                 included) and stop the program; set {TOKEN_VAR} to the same secret on every \
                 process (or Config::secret)"
            );
        }
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            config: config.clone(),
            store: Mutex::new(Store::default()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            connections: Mutex::new(Connections::default()),
            next_connection: AtomicU64::new(0),
        });
        let acceptor = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("jaxrs-kv-accept".into())
                .spawn(move || accept_loop(listener, &shared))?
        };
        Ok(Service {
            local_addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// The address the service listens on (with the port it picked, if asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops serving: pending gets are answered with an error, connections are closed, and
    /// every thread of the service is joined. Dropping the service does the same.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some(acceptor) = self.acceptor.take() else {
            return;
        };
        self.shared.stopping.store(true, Ordering::SeqCst);
        {
            // Under the lock, so that no get is between its check of `stopping` and its wait.
            let _store = lock(&self.shared.store);
            self.shared.changed.notify_all();
        }
        let _ = acceptor.join();
        // The acceptor is gone, so no connection is added any more.
        let (open, threads) = {
            let mut c = lock(&self.shared.connections);
            (std::mem::take(&mut c.open), std::mem::take(&mut c.threads))
        };
        for stream in open.values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        drop(open);
        for thread in threads {
            let _ = thread.join();
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: &Arc<Shared>) {
    while !shared.stopping.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, peer)) => {
                if let Err(e) = serve_in_thread(stream, peer, shared) {
                    log::warn!("jaxrs::distributed: cannot serve a connection from {peer}: {e}");
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(ACCEPT_POLL),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                // Out of file descriptors and the like: wait for things to improve.
                log::warn!("jaxrs::distributed: accept failed: {e}");
                std::thread::sleep(ACCEPT_POLL * 10);
            }
        }
    }
}

fn serve_in_thread(
    stream: TcpStream,
    peer: SocketAddr,
    shared: &Arc<Shared>,
) -> std::io::Result<()> {
    let mut connections = lock(&shared.connections);
    let (ended, running): (Vec<_>, Vec<_>) = std::mem::take(&mut connections.threads)
        .into_iter()
        .partition(|t| t.is_finished());
    connections.threads = running;
    for t in ended {
        let _ = t.join();
    }
    let max = shared.config.max_connections;
    if connections.open.len() >= max {
        // Dropping the stream closes it now: a flood costs one descriptor for an instant.
        log::warn!(
            "jaxrs::distributed: refused a connection from {peer}: {max} connections are open, \
             the most allowed (Config::max_connections)"
        );
        return Ok(());
    }
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
    connections.open.insert(id, stream.try_clone()?);
    let spawned = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("jaxrs-kv-serve".into())
            .spawn(move || {
                serve(stream, peer, id, &shared);
                lock(&shared.connections).open.remove(&id);
            })
    };
    match spawned {
        Ok(thread) => {
            connections.threads.push(thread);
            Ok(())
        }
        Err(e) => {
            connections.open.remove(&id);
            Err(e)
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Serves one connection until the client leaves, the connection breaks, times out or sends
/// something out of bounds, or the service stops. A registered process whose connection ends
/// any way but with a goodbye is declared dead.
fn serve(mut stream: TcpStream, peer: SocketAddr, id: u64, shared: &Shared) {
    let config = &shared.config;
    if let Err(why) = server_handshake(&stream, config) {
        log::warn!("jaxrs::distributed: refused a connection from {peer}: {why}");
        return;
    }
    let mut registered: Option<usize> = None;
    let ended = loop {
        let wait = match registered {
            Some(_) => config.heartbeat_timeout,
            None => config.idle_timeout,
        };
        match next_request(&mut stream, wait, config) {
            Ok(Some(request)) => {
                let answer = shared.answer(request, id, &mut registered);
                if let Err(e) = write_answer(&mut stream, answer.0, answer.1.bytes()) {
                    break format!("its answer could not be sent ({e})");
                }
            }
            Ok(None) => break "its connection closed without a goodbye".to_string(),
            Err(e) if is_timeout(&e) && registered.is_some() => {
                break format!("it sent no heartbeat for {:?}", config.heartbeat_timeout)
            }
            Err(e) if is_timeout(&e) => {
                log::debug!("jaxrs::distributed: closing an idle connection from {peer}");
                break String::new();
            }
            Err(e) if e.kind() == ErrorKind::InvalidData => {
                log::warn!("jaxrs::distributed: closing the connection from {peer}: {e}");
                break format!("it sent a malformed request ({e})");
            }
            Err(e) => break format!("its connection broke ({e})"),
        }
    };
    if let Some(process_id) = registered {
        if !shared.stopping.load(Ordering::SeqCst) {
            shared.declare_dead(process_id, id, ended);
        }
    }
}

/// Waits up to `idle` for a request to start, then up to the I/O timeout for the rest of it.
fn next_request(
    stream: &mut TcpStream,
    idle: Duration,
    config: &Config,
) -> std::io::Result<Option<Request>> {
    stream.set_read_timeout(at_least_1ms(idle))?;
    let mut op = [0u8; 1];
    loop {
        match stream.read(&mut op) {
            Ok(0) => return Ok(None),
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut rest = By::after(stream, config.io_timeout);
    read_request_body(op[0], &mut rest, &Limits::of(config)).map(Some)
}

/// A socket that must deliver by a deadline: each read waits only for the time left, so a
/// peer that trickles bytes cannot stretch a handshake or a frame past its time limit (a
/// socket's own timeout applies to each read alone).
struct By<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl<'a> By<'a> {
    fn after(stream: &'a TcpStream, time: Duration) -> By<'a> {
        By {
            stream,
            deadline: deadline_after(time),
        }
    }
}

impl Read for By<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(ErrorKind::TimedOut, "out of time"));
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

/// The bytes of the HMAC both sides compute: who proves (`role`) and both nonces.
fn proof(secret: &[u8], role: &[u8], client: &[u8], server: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length, the empty one included.
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC accepts any key length");
    mac.update(role);
    mac.update(client);
    mac.update(server);
    mac
}

fn nonce() -> std::io::Result<[u8; NONCE_LEN]> {
    let mut n = [0u8; NONCE_LEN];
    getrandom::fill(&mut n).map_err(|e| std::io::Error::other(format!("no random nonce: {e}")))?;
    Ok(n)
}

/// The server's half of the handshake, within the I/O timeout; the reason it failed, for the
/// log.
fn server_handshake(stream: &TcpStream, config: &Config) -> std::result::Result<(), String> {
    stream
        .set_write_timeout(at_least_1ms(config.io_timeout))
        .map_err(|e| e.to_string())?;
    let mut r = By::after(stream, config.io_timeout);
    let mut w = stream;
    let mut hello = [0u8; 5 + NONCE_LEN];
    r.read_exact(&mut hello[..5])
        .map_err(|e| format!("no greeting ({e})"))?;
    if &hello[..5] != GREETING {
        // Ours tells a client of another version why it is turned away.
        let _ = w.write_all(GREETING);
        return Err("not a jaxrs client of this version".into());
    }
    r.read_exact(&mut hello[5..])
        .map_err(|e| format!("no nonce ({e})"))?;
    let client_nonce = &hello[5..];
    let server_nonce = nonce().map_err(|e| e.to_string())?;
    let mut answer = Vec::with_capacity(5 + SERVER_HELLO_LEN);
    answer.extend_from_slice(GREETING);
    answer.extend_from_slice(&server_nonce);
    answer.extend_from_slice(
        &proof(
            config.key(),
            b"jaxrs-kv server",
            client_nonce,
            &server_nonce,
        )
        .finalize()
        .into_bytes(),
    );
    let idle_ms = u64::try_from(config.idle_timeout.as_millis()).unwrap_or(u64::MAX);
    answer.extend_from_slice(&idle_ms.to_le_bytes());
    answer.extend_from_slice(&(config.max_key_bytes as u64).to_le_bytes());
    answer.extend_from_slice(&(config.max_value_bytes as u64).to_le_bytes());
    w.write_all(&answer).map_err(|e| e.to_string())?;
    let mut tag = [0u8; TAG_LEN];
    r.read_exact(&mut tag)
        .map_err(|e| format!("no proof of the secret ({e})"))?;
    let expected = proof(
        config.key(),
        b"jaxrs-kv client",
        client_nonce,
        &server_nonce,
    );
    if expected.verify_slice(&tag).is_err() {
        let _ = w.write_all(&[REFUSED]);
        return Err("it does not know the secret".into());
    }
    w.write_all(&[OK]).map_err(|e| e.to_string())
}

struct Request {
    op: u8,
    key: Vec<u8>,
    value: Vec<u8>,
    timeout: Duration,
}

/// An answer's payload; a stored value is sent straight from the store's own bytes.
enum Payload {
    Empty,
    Owned(Vec<u8>),
    Value(Arc<[u8]>),
}

impl Payload {
    fn bytes(&self) -> &[u8] {
        match self {
            Payload::Empty => &[],
            Payload::Owned(v) => v,
            Payload::Value(v) => v,
        }
    }
}

fn peer_failed((process_id, reason): &(usize, String)) -> (u8, Payload) {
    let mut payload = (*process_id as u64).to_le_bytes().to_vec();
    payload.extend_from_slice(reason.as_bytes());
    (PEER_FAILED, Payload::Owned(payload))
}

impl Shared {
    fn answer(&self, r: Request, connection: u64, registered: &mut Option<usize>) -> (u8, Payload) {
        let mut store = lock(&self.store);
        if r.op == GOODBYE {
            if let Some(p) = registered.take() {
                store.processes.remove(&p);
            }
            return (OK, Payload::Empty);
        }
        if let Some(failure) = &store.failed {
            return peer_failed(failure);
        }
        match r.op {
            REGISTER => {
                let Some(p) = r.value.try_into().ok().map(u64::from_le_bytes) else {
                    return (FAILED, Payload::Owned(b"a malformed registration".to_vec()));
                };
                let Ok(p) = usize::try_from(p) else {
                    return (
                        FAILED,
                        Payload::Owned(b"a process id out of range".to_vec()),
                    );
                };
                if registered.is_some() || store.processes.contains_key(&p) {
                    return (EXISTS, Payload::Empty);
                }
                store.processes.insert(p, connection);
                *registered = Some(p);
                (OK, Payload::Empty)
            }
            HEARTBEAT => (OK, Payload::Empty),
            PUT => {
                if store.values.contains_key(r.key.as_slice()) {
                    return (EXISTS, Payload::Empty);
                }
                let size = r.key.len() + r.value.len();
                let limit = self.config.max_store_bytes;
                if store.bytes.saturating_add(size) > limit {
                    let message = format!(
                        "the store holds {} bytes; {size} more would pass its limit of {limit} \
                         (Config::max_store_bytes; delete keys that are no longer needed)",
                        store.bytes
                    );
                    return (TOO_LARGE, Payload::Owned(message.into_bytes()));
                }
                store.bytes += size;
                store.values.insert(r.key.into(), r.value.into());
                self.changed.notify_all();
                (OK, Payload::Empty)
            }
            DELETE => match store.values.remove(r.key.as_slice()) {
                Some(v) => {
                    store.bytes -= r.key.len() + v.len();
                    (OK, Payload::Empty)
                }
                None => (NOT_FOUND, Payload::Empty),
            },
            TRY_GET => match store.values.get(r.key.as_slice()) {
                Some(v) => (OK, Payload::Value(v.clone())),
                None => (NOT_FOUND, Payload::Empty),
            },
            GET => {
                let deadline = Instant::now().checked_add(r.timeout);
                loop {
                    if let Some(v) = store.values.get(r.key.as_slice()) {
                        return (OK, Payload::Value(v.clone()));
                    }
                    if let Some(failure) = &store.failed {
                        return peer_failed(failure);
                    }
                    if self.stopping.load(Ordering::SeqCst) {
                        let message = b"the coordination service is shutting down";
                        return (FAILED, Payload::Owned(message.to_vec()));
                    }
                    // No deadline: a timeout too long to add to now; wait in day-long steps.
                    let left = match deadline {
                        Some(d) => d.saturating_duration_since(Instant::now()),
                        None => Duration::from_secs(86_400),
                    };
                    if left.is_zero() {
                        return (TIMED_OUT, Payload::Empty);
                    }
                    store = self
                        .changed
                        .wait_timeout(store, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            op => (
                FAILED,
                Payload::Owned(format!("unknown request {op}").into_bytes()),
            ),
        }
    }

    /// Marks `process_id` dead (when `connection` still carries its heartbeats) and wakes
    /// every blocked request to say so.
    fn declare_dead(&self, process_id: usize, connection: u64, why: String) {
        let mut store = lock(&self.store);
        if store.processes.get(&process_id) != Some(&connection) {
            return;
        }
        store.processes.remove(&process_id);
        if store.failed.is_none() {
            log::error!(
                "jaxrs::distributed: process {process_id} is declared dead: {why}; every \
                 process is told"
            );
            store.failed = Some((process_id, why));
        }
        self.changed.notify_all();
    }
}

/// The most a frame may announce; checked before anything is allocated.
#[derive(Clone, Copy, Debug)]
struct Limits {
    key: usize,
    value: usize,
}

impl Limits {
    fn of(config: &Config) -> Limits {
        Limits {
            key: config.max_key_bytes,
            value: config.max_value_bytes,
        }
    }
}

fn read_u64(r: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// A length prefix and that many bytes, refused (`InvalidData`) when the length passes
/// `limit`. The buffer grows with the bytes that arrive, never ahead of them by more than
/// what has arrived (or one [`CHUNK`]).
fn read_bytes(r: &mut impl Read, limit: usize, what: &str) -> std::io::Result<Vec<u8>> {
    let len = read_u64(r)?;
    let len = match usize::try_from(len) {
        Ok(n) if n <= limit => n,
        _ => {
            return Err(std::io::Error::new(
                ErrorKind::InvalidData,
                format!("{what} of {len} bytes, over the limit of {limit}"),
            ))
        }
    };
    let mut bytes = Vec::new();
    while bytes.len() < len {
        let start = bytes.len();
        let end = len.min(start.max(CHUNK / 2) * 2);
        bytes.reserve_exact(end - start);
        bytes.resize(end, 0);
        r.read_exact(&mut bytes[start..])?;
    }
    Ok(bytes)
}

/// The rest of a request whose op byte was `op`.
fn read_request_body(op: u8, r: &mut impl Read, limits: &Limits) -> std::io::Result<Request> {
    let key = read_bytes(r, limits.key, "a key")?;
    let value = read_bytes(r, limits.value, "a value")?;
    let timeout = Duration::from_millis(read_u64(r)?);
    Ok(Request {
        op,
        key,
        value,
        timeout,
    })
}

/// The next request, or `None` when the peer closed the connection between requests.
#[cfg(test)]
fn read_request(r: &mut impl Read, limits: &Limits) -> std::io::Result<Option<Request>> {
    let mut op = [0u8; 1];
    loop {
        match r.read(&mut op) {
            Ok(0) => return Ok(None),
            Ok(_) => return read_request_body(op[0], r, limits).map(Some),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// An answer: `status | len | payload`, one write for small payloads; a large one is written
/// from where it lies.
fn write_answer(w: &mut impl Write, status: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(9 + payload.len().min(CHUNK));
    head.push(status);
    head.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    if payload.len() <= CHUNK {
        head.extend_from_slice(payload);
        return w.write_all(&head);
    }
    w.write_all(&head)?;
    w.write_all(payload)
}

/// The answer to a request, its payload refused when longer than `limit`.
fn read_answer(r: &mut impl Read, limit: usize) -> std::io::Result<(u8, Vec<u8>)> {
    let mut status = [0u8; 1];
    r.read_exact(&mut status)?;
    Ok((status[0], read_bytes(r, limit, "an answer")?))
}

/// A client of the coordination service: a key-value store shared by the processes of one
/// program. Keys and values are bytes (text works too: anything `AsRef<[u8]>`); a key is set
/// once (until deleted). Cloning is cheap (one shared pool of connections) and every method
/// may be called from several threads at once.
///
/// While connected, the store sends heartbeats for its process; [`KeyValueStore::close`] (or
/// dropping the last clone) says goodbye, so that leaving is not taken for dying. When any
/// process of the program dies, every request of every process fails with
/// [`Error::PeerFailed`] naming it.
///
/// Keys that start with `jaxrs/` are jaxrs's own (the start-up rendezvous, barriers, and the
/// PJRT plugin's keys).
///
/// ```
/// use jaxrs::distributed::{KeyValueStore, Service};
/// use std::time::Duration;
///
/// let service = Service::start("127.0.0.1:0")?;
/// let store = KeyValueStore::connect(&service.local_addr().to_string(), 1, 0, Duration::from_secs(10))?;
/// assert_eq!(store.try_get("step")?, None);
/// store.put("step", 7u32.to_le_bytes())?;
/// assert_eq!(store.try_get("step")?, Some(7u32.to_le_bytes().to_vec()));
/// match store.get("missing", Duration::from_millis(50)) {
///     Err(jaxrs::Error::KeyValueTimeout { key, .. }) => assert_eq!(key, "missing"),
///     other => panic!("{other:?}"),
/// }
/// store.delete("step")?;
/// assert_eq!(store.try_get("step")?, None);
/// # Ok::<(), jaxrs::Error>(())
/// ```
#[derive(Clone)]
pub struct KeyValueStore {
    inner: Arc<Client>,
}

struct Client {
    /// The coordinator's address as given (for messages).
    address: String,
    targets: Vec<SocketAddr>,
    config: Config,
    /// Connections not in use by a request.
    idle: Mutex<Vec<Connection>>,
    closed: AtomicBool,
    process_id: usize,
    num_processes: usize,
    heartbeat: Mutex<Option<Heartbeat>>,
}

/// An authenticated connection and what the server said of itself in the handshake.
struct Connection {
    stream: TcpStream,
    server: ServerTerms,
    idle_since: Instant,
}

#[derive(Clone, Copy, Debug)]
struct ServerTerms {
    idle_timeout: Duration,
    limits: Limits,
}

impl std::fmt::Debug for KeyValueStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyValueStore")
            .field("coordinator", &self.inner.address)
            .field("process_id", &self.inner.process_id)
            .field("num_processes", &self.inner.num_processes)
            .finish()
    }
}

/// Why opening a connection failed: worth retrying while the coordinator may still be
/// starting, or not (something else answers at that address, or the secret is wrong).
enum OpenError {
    Retry(std::io::Error),
    Fatal(Error),
}

impl KeyValueStore {
    /// Connects process `process_id` of `num_processes` to the coordination service at
    /// `coordinator_address`, and waits until all `num_processes` processes have connected,
    /// for at most `timeout` in all (the service may start after the others: connecting is
    /// retried until then), with [`Config::from_env`].
    ///
    /// Errors ([`Error::Distributed`]) say what is wrong: a `process_id` out of range or
    /// taken by another process, processes started with different `num_processes`, a process
    /// that never connected (is `num_processes` right?), no service at the address, a secret
    /// the service does not share (`Unauthenticated`). A process that dies while the others
    /// wait is [`Error::PeerFailed`].
    pub fn connect(
        coordinator_address: &str,
        num_processes: usize,
        process_id: usize,
        timeout: Duration,
    ) -> Result<KeyValueStore> {
        let config = Config::from_env()?;
        KeyValueStore::connect_with(
            coordinator_address,
            num_processes,
            process_id,
            timeout,
            &config,
        )
    }

    /// [`KeyValueStore::connect`] with the given secret, limits and timeouts. Every wait,
    /// each connection attempt and handshake included, ends by `timeout`.
    pub fn connect_with(
        coordinator_address: &str,
        num_processes: usize,
        process_id: usize,
        timeout: Duration,
        config: &Config,
    ) -> Result<KeyValueStore> {
        check_process(num_processes, process_id)?;
        let deadline = deadline_after(timeout);
        let targets: Vec<SocketAddr> = coordinator_address
            .to_socket_addrs()
            .map_err(|e| {
                distributed(
                    ErrorCode::InvalidArgument,
                    format!("cannot resolve the coordinator address {coordinator_address:?}: {e}"),
                )
            })?
            .collect();
        let store = KeyValueStore {
            inner: Arc::new(Client {
                address: coordinator_address.to_string(),
                targets,
                config: config.clone(),
                idle: Mutex::new(Vec::new()),
                closed: AtomicBool::new(false),
                process_id,
                num_processes,
                heartbeat: Mutex::new(None),
            }),
        };
        let mut pause = Duration::from_millis(10);
        let first = loop {
            match store.inner.open(deadline) {
                Ok(connection) => break connection,
                Err(OpenError::Fatal(e)) => return Err(e),
                Err(OpenError::Retry(e)) if Instant::now() >= deadline => {
                    return Err(distributed(
                        ErrorCode::Unavailable,
                        format!(
                            "process {process_id} could not reach the coordinator at \
                             {coordinator_address} within {timeout:?} ({e}); is process 0 \
                             running, and is the address right?"
                        ),
                    ))
                }
                Err(OpenError::Retry(_)) => {
                    std::thread::sleep(
                        pause.min(deadline.saturating_duration_since(Instant::now())),
                    );
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
            }
        };
        store.register(first, deadline)?;
        store.rendezvous(deadline, timeout)?;
        Ok(store)
    }

    /// Claims the process id on the first connection and makes it the heartbeat connection,
    /// so that this process's death is noticed from here on (the rendezvous included).
    fn register(&self, mut first: Connection, deadline: Instant) -> Result<()> {
        let me = self.inner.process_id;
        let within = deadline.saturating_duration_since(Instant::now()) + DEADLINE_SLACK;
        let answer = exchange(
            &mut first.stream,
            REGISTER,
            &[],
            &(me as u64).to_le_bytes(),
            Duration::ZERO,
            within.min(self.inner.config.io_timeout),
            answer_limit(&self.inner.config),
        )
        .map_err(|e| self.inner.lost("registration", b"", e))?;
        match answer {
            (OK, _) => {}
            (EXISTS, _) => return Err(self.taken()),
            other => return Err(self.inner.unexpected(other, "registration", b"")),
        }
        let heartbeat = Heartbeat::start(first.stream, me, &self.inner.config)?;
        *lock(&self.inner.heartbeat) = Some(heartbeat);
        Ok(())
    }

    fn taken(&self) -> Error {
        let (me, n) = (self.inner.process_id, self.inner.num_processes);
        distributed(
            ErrorCode::AlreadyExists,
            format!(
                "process_id {me} is taken: another process connected to {} with the same \
                 process_id (each process needs its own, 0 to {})",
                self.inner.address,
                n - 1
            ),
        )
    }

    /// Announces this process and waits for the others; each announcement carries its
    /// `num_processes`, so processes started with different counts find out.
    fn rendezvous(&self, deadline: Instant, timeout: Duration) -> Result<()> {
        let (me, n) = (self.inner.process_id, self.inner.num_processes);
        let by = Some(deadline + DEADLINE_SLACK);
        let key = format!("jaxrs/connect/{me}");
        match self.inner.request(
            PUT,
            key.as_bytes(),
            n.to_string().as_bytes(),
            Duration::ZERO,
            by,
        ) {
            Ok((OK, _)) => {}
            Ok((EXISTS, _)) => return Err(self.taken()),
            Ok(other) => return Err(self.inner.unexpected(other, "put", key.as_bytes())),
            Err(e) => return Err(e),
        }
        for other in 0..n {
            let left = deadline.saturating_duration_since(Instant::now());
            let key = format!("jaxrs/connect/{other}");
            let theirs = match self.inner.request(GET, key.as_bytes(), &[], left, by)? {
                (OK, v) => v,
                (TIMED_OUT, _) => {
                    return Err(distributed(
                        ErrorCode::DeadlineExceeded,
                        format!(
                            "process {me}: process {other} of {n} did not connect to the \
                             coordinator at {} within {timeout:?}; are all {n} processes \
                             started, and is num_processes right?",
                            self.inner.address
                        ),
                    ))
                }
                other => return Err(self.inner.unexpected(other, "get", key.as_bytes())),
            };
            if theirs != n.to_string().as_bytes() {
                return Err(distributed(
                    ErrorCode::InvalidArgument,
                    format!(
                        "process {other} was started with num_processes = {}, this process \
                         (process_id {me}) with {n}: every process must be given the same \
                         num_processes",
                        String::from_utf8_lossy(&theirs)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// This process's id, `0..num_processes`.
    pub fn process_id(&self) -> usize {
        self.inner.process_id
    }

    /// How many processes share the store.
    pub fn num_processes(&self) -> usize {
        self.inner.num_processes
    }

    /// Sets `key` to `value`. A key is set once: setting it again is an
    /// [`Error::Distributed`] with code `AlreadyExists`. A key or value over the service's
    /// limits, or a store that is full, is `ResourceExhausted`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        match self
            .inner
            .request(PUT, key, value.as_ref(), Duration::ZERO, None)?
        {
            (OK, _) => Ok(()),
            (EXISTS, _) => Err(distributed(
                ErrorCode::AlreadyExists,
                format!("key {:?} is already set (a key is set once)", key_text(key)),
            )),
            other => Err(self.inner.unexpected(other, "put", key)),
        }
    }

    /// The value of `key`, waiting up to `timeout` for some process to set it;
    /// [`Error::KeyValueTimeout`] (naming the key) after that, [`Error::PeerFailed`] at once
    /// when a process dies meanwhile.
    pub fn get(&self, key: impl AsRef<[u8]>, timeout: Duration) -> Result<Vec<u8>> {
        let key = key.as_ref();
        match self.inner.request(GET, key, &[], timeout, None)? {
            (OK, value) => Ok(value),
            (TIMED_OUT, _) => Err(Error::KeyValueTimeout {
                key: key_text(key),
                timeout,
            }),
            other => Err(self.inner.unexpected(other, "get", key)),
        }
    }

    /// The value of `key`, or `None` at once when no process has set it yet.
    pub fn try_get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        match self
            .inner
            .request(TRY_GET, key, &[], Duration::ZERO, None)?
        {
            (OK, value) => Ok(Some(value)),
            (NOT_FOUND, _) => Ok(None),
            other => Err(self.inner.unexpected(other, "try_get", key)),
        }
    }

    /// Removes `key` and frees the room it took in the store (the service holds at most
    /// [`Config::max_store_bytes`]); the key may then be set again. Removing a key that has
    /// no value is not an error.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        match self.inner.request(DELETE, key, &[], Duration::ZERO, None)? {
            (OK | NOT_FOUND, _) => Ok(()),
            other => Err(self.inner.unexpected(other, "delete", key)),
        }
    }

    /// Waits until every process has reached the barrier `name`, for at most `timeout`. Each
    /// barrier name is used once. A process that dies meanwhile is [`Error::PeerFailed`], at
    /// once.
    pub fn barrier(&self, name: &str, timeout: Duration) -> Result<()> {
        let deadline = deadline_after(timeout);
        let (me, n) = (self.inner.process_id, self.inner.num_processes);
        match self.put(format!("jaxrs/barrier/{name}/{me}"), []) {
            Err(Error::Distributed {
                code: ErrorCode::AlreadyExists,
                ..
            }) => {
                return Err(distributed(
                    ErrorCode::AlreadyExists,
                    format!("barrier {name:?} was already passed (each barrier name is used once)"),
                ))
            }
            other => other?,
        }
        for other in 0..n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.get(format!("jaxrs/barrier/{name}/{other}"), left) {
                Ok(_) => {}
                Err(Error::KeyValueTimeout { .. }) => {
                    return Err(distributed(
                        ErrorCode::DeadlineExceeded,
                        format!(
                            "barrier {name:?}: process {other} of {n} did not arrive within \
                             {timeout:?}"
                        ),
                    ))
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Says goodbye (this process is leaving, not dying) and closes the connections; every
    /// later call is an error. Requests in flight on other threads finish (their
    /// connections close after them). Dropping the last clone does the same.
    pub fn close(&self) {
        self.inner.close();
    }
}

impl crate::pjrt::KeyValueStore for KeyValueStore {
    fn get(&self, key: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        KeyValueStore::get(self, key, timeout)
    }
    fn try_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        KeyValueStore::try_get(self, key)
    }
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        KeyValueStore::put(self, key, value)
    }
}

/// Now plus `timeout`, or a year from now for a timeout too long to add.
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 86_400)))
        .unwrap_or(now)
}

/// `process_id` must be in `0..num_processes`.
pub(crate) fn check_process(num_processes: usize, process_id: usize) -> Result<()> {
    if num_processes == 0 {
        return Err(distributed(
            ErrorCode::InvalidArgument,
            "num_processes must be at least 1".into(),
        ));
    }
    if process_id >= num_processes {
        return Err(distributed(
            ErrorCode::InvalidArgument,
            format!(
                "process_id {process_id} is out of range for num_processes = {num_processes} \
                 (ids are 0 to {})",
                num_processes - 1
            ),
        ));
    }
    Ok(())
}

/// The longest answer this client reads.
fn answer_limit(config: &Config) -> usize {
    config.max_value_bytes.max(MIN_ANSWER_LIMIT)
}

/// A socket timeout of at least a millisecond (std refuses a zero one).
fn at_least_1ms(d: Duration) -> Option<Duration> {
    Some(d.max(Duration::from_millis(1)))
}

/// Sends one request and reads its answer, waiting at most `within` for the answer.
fn exchange(
    stream: &mut TcpStream,
    op: u8,
    key: &[u8],
    value: &[u8],
    wait: Duration,
    within: Duration,
    limit: usize,
) -> std::io::Result<(u8, Vec<u8>)> {
    let by = deadline_after(within);
    stream.set_write_timeout(at_least_1ms(within))?;
    let timeout_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
    let mut frame = Vec::with_capacity(25 + key.len() + value.len());
    frame.push(op);
    frame.extend_from_slice(&(key.len() as u64).to_le_bytes());
    frame.extend_from_slice(key);
    frame.extend_from_slice(&(value.len() as u64).to_le_bytes());
    frame.extend_from_slice(value);
    frame.extend_from_slice(&timeout_ms.to_le_bytes());
    stream.write_all(&frame)?;
    read_answer(
        &mut By {
            stream,
            deadline: by,
        },
        limit,
    )
}

impl Client {
    /// A new authenticated connection; every step ends by `deadline`.
    fn open(&self, deadline: Instant) -> std::result::Result<Connection, OpenError> {
        let mut last = std::io::Error::new(ErrorKind::NotFound, "the address resolved to nothing");
        for target in &self.targets {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                last = std::io::Error::new(ErrorKind::TimedOut, "out of time");
                break;
            }
            let within = left.min(self.config.io_timeout);
            match TcpStream::connect_timeout(target, within) {
                Ok(stream) => return self.greet(stream, Instant::now() + within),
                Err(e) => last = e,
            }
        }
        Err(OpenError::Retry(last))
    }

    fn greet(
        &self,
        mut stream: TcpStream,
        by: Instant,
    ) -> std::result::Result<Connection, OpenError> {
        let left = || at_least_1ms(by.saturating_duration_since(Instant::now()));
        let not_ours = || {
            OpenError::Fatal(distributed(
                ErrorCode::InvalidArgument,
                format!(
                    "{} is not a jaxrs coordination service (or another version of it)",
                    self.address
                ),
            ))
        };
        let unauthenticated = |who: &str| {
            OpenError::Fatal(distributed(
                ErrorCode::Unauthenticated,
                format!(
                    "{who} the coordinator at {} do not share the same secret; give every \
                     process the same {TOKEN_VAR} (or Config::secret)",
                    self.address
                ),
            ))
        };
        let retry = OpenError::Retry;
        let client_nonce = nonce().map_err(retry)?;
        let setup = |s: &TcpStream| -> std::io::Result<()> {
            s.set_nodelay(true)?;
            s.set_write_timeout(left())
        };
        setup(&stream).map_err(retry)?;
        stream
            .write_all(&[GREETING.as_slice(), &client_nonce].concat())
            .map_err(retry)?;
        let mut greeting = [0u8; 5];
        let mut r = By {
            stream: &stream,
            deadline: by,
        };
        r.read_exact(&mut greeting).map_err(retry)?;
        if &greeting != GREETING {
            return Err(not_ours());
        }
        let mut hello = [0u8; SERVER_HELLO_LEN];
        r.read_exact(&mut hello).map_err(retry)?;
        let (server_nonce, rest) = hello.split_at(NONCE_LEN);
        let (tag, terms) = rest.split_at(TAG_LEN);
        let theirs = proof(
            self.config.key(),
            b"jaxrs-kv server",
            &client_nonce,
            server_nonce,
        );
        if theirs.verify_slice(tag).is_err() {
            return Err(unauthenticated("this process and"));
        }
        let mine = proof(
            self.config.key(),
            b"jaxrs-kv client",
            &client_nonce,
            server_nonce,
        );
        stream
            .write_all(&mine.finalize().into_bytes())
            .map_err(retry)?;
        let mut verdict = [0u8; 1];
        By {
            stream: &stream,
            deadline: by,
        }
        .read_exact(&mut verdict)
        .map_err(retry)?;
        if verdict[0] != OK {
            return Err(unauthenticated("the coordinator says this process and"));
        }
        let term = |i: usize| u64::from_le_bytes(terms[8 * i..8 * i + 8].try_into().unwrap());
        let size = |i: usize| usize::try_from(term(i)).unwrap_or(usize::MAX);
        Ok(Connection {
            stream,
            server: ServerTerms {
                idle_timeout: Duration::from_millis(term(0)),
                limits: Limits {
                    key: size(1),
                    value: size(2),
                },
            },
            idle_since: Instant::now(),
        })
    }

    fn lost(&self, what: &str, key: &[u8], e: impl std::fmt::Display) -> Error {
        distributed(
            ErrorCode::Unavailable,
            format!(
                "lost the connection to the coordinator at {} during {what} of key {:?}: {e}",
                self.address,
                key_text(key)
            ),
        )
    }

    fn unexpected(&self, (status, payload): (u8, Vec<u8>), what: &str, key: &[u8]) -> Error {
        if status == PEER_FAILED && payload.len() >= 8 {
            let (id, why) = payload.split_at(8);
            let id = u64::from_le_bytes(id.try_into().unwrap());
            return Error::PeerFailed {
                process_id: usize::try_from(id).unwrap_or(usize::MAX),
                message: format!(
                    "{} (seen by process {} during {what} of key {:?})",
                    String::from_utf8_lossy(why),
                    self.process_id,
                    key_text(key)
                ),
            };
        }
        let message = String::from_utf8_lossy(&payload);
        let code = match status {
            FAILED => ErrorCode::Unavailable,
            TOO_LARGE => ErrorCode::ResourceExhausted,
            _ => ErrorCode::Internal,
        };
        distributed(
            code,
            format!(
                "the coordinator at {} refused the {what} of key {:?}: {}",
                self.address,
                key_text(key),
                if message.is_empty() {
                    format!("unexpected answer {status}")
                } else {
                    message.into_owned()
                }
            ),
        )
    }

    /// A pooled connection the server has not yet closed for idleness, or a new one.
    fn connection(&self, deadline: Instant, what: &str, key: &[u8]) -> Result<Connection> {
        let mut idle = lock(&self.idle);
        while let Some(c) = idle.pop() {
            // Well before the server's idle timeout, so that it never closes one under us.
            if c.idle_since.elapsed() < c.server.idle_timeout / 2 {
                return Ok(c);
            }
        }
        drop(idle);
        self.open(deadline).map_err(|e| match e {
            OpenError::Retry(e) => self.lost(what, key, e),
            OpenError::Fatal(e) => e,
        })
    }

    /// Sends one request on an idle connection (or a new one) and reads its answer. A get
    /// may block for `wait` on the server; the answer is awaited that long plus the I/O
    /// timeout, and never past `by` when given.
    fn request(
        &self,
        op: u8,
        key: &[u8],
        value: &[u8],
        wait: Duration,
        by: Option<Instant>,
    ) -> Result<(u8, Vec<u8>)> {
        let what = match op {
            PUT => "put",
            GET => "get",
            DELETE => "delete",
            _ => "try_get",
        };
        if self.closed.load(Ordering::SeqCst) {
            return Err(distributed(
                ErrorCode::FailedPrecondition,
                format!(
                    "the key-value store was shut down ({what} of key {:?})",
                    key_text(key)
                ),
            ));
        }
        let io = self.config.io_timeout;
        let mut within = wait.saturating_add(io);
        if let Some(by) = by {
            within = within.min(by.saturating_duration_since(Instant::now()));
        }
        let mut c = self.connection(deadline_after(within.min(io)), what, key)?;
        let limits = c.server.limits;
        for (len, limit, name) in [
            (key.len(), limits.key, "key"),
            (value.len(), limits.value, "value"),
        ] {
            if len > limit {
                lock(&self.idle).push(c);
                return Err(distributed(
                    ErrorCode::ResourceExhausted,
                    format!(
                        "a {name} of {len} bytes is over the coordination service's limit of \
                         {limit} ({what} of key {:?}; Config::max_{name}_bytes)",
                        key_text(&key[..key.len().min(64)])
                    ),
                ));
            }
        }
        let answer = exchange(
            &mut c.stream,
            op,
            key,
            value,
            wait,
            within,
            answer_limit(&self.config),
        );
        match answer {
            Ok(answer) => {
                if !self.closed.load(Ordering::SeqCst) {
                    c.idle_since = Instant::now();
                    lock(&self.idle).push(c);
                }
                Ok(answer)
            }
            Err(e) => Err(self.lost(what, key, e)),
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(heartbeat) = lock(&self.heartbeat).take() {
            heartbeat.stop();
        }
        for c in std::mem::take(&mut *lock(&self.idle)) {
            let _ = c.stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.close();
    }
}

/// The thread that sends this process's heartbeats on its registered connection, and says
/// goodbye on it when the store closes.
struct Heartbeat {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl Heartbeat {
    fn start(mut stream: TcpStream, process_id: usize, config: &Config) -> Result<Heartbeat> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let interval = config.heartbeat_interval();
        let io = config.io_timeout;
        let limit = answer_limit(config);
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("jaxrs-kv-heartbeat".into())
                .spawn(move || {
                    loop {
                        // Not held across the exchange, so that stopping never waits for a
                        // heartbeat the coordinator is slow to answer.
                        let stopped = *stop
                            .1
                            .wait_timeout_while(lock(&stop.0), interval, |s| !*s)
                            .unwrap_or_else(|p| p.into_inner())
                            .0;
                        if stopped {
                            let _ = exchange(
                                &mut stream,
                                GOODBYE,
                                &[],
                                &[],
                                Duration::ZERO,
                                io.min(GOODBYE_WAIT),
                                limit,
                            );
                            let _ = stream.shutdown(Shutdown::Both);
                            return;
                        }
                        if let Err(e) =
                            exchange(&mut stream, HEARTBEAT, &[], &[], Duration::ZERO, io, limit)
                        {
                            // The coordinator is gone: every request says so; nothing to beat for.
                            log::debug!(
                                "jaxrs::distributed: process {process_id}'s heartbeats stop: {e}"
                            );
                            return;
                        }
                    }
                })?
        };
        Ok(Heartbeat { stop, thread })
    }

    fn stop(self) {
        *lock(&self.stop.0) = true;
        self.stop.1.notify_all();
        let _ = self.thread.join();
    }
}

/// For jaxrs's own tests of hostile peers: a connection to the service at `address` that has
/// passed the handshake with `config`'s secret, on which the caller writes raw frames. Not
/// part of the public API.
#[doc(hidden)]
pub fn authenticated_connection(
    address: &str,
    config: &Config,
    timeout: Duration,
) -> Result<TcpStream> {
    let client = Client {
        address: address.to_string(),
        targets: address.to_socket_addrs()?.collect(),
        config: config.clone(),
        idle: Mutex::new(Vec::new()),
        closed: AtomicBool::new(false),
        process_id: 0,
        num_processes: 1,
        heartbeat: Mutex::new(None),
    };
    match client.open(deadline_after(timeout)) {
        Ok(c) => Ok(c.stream),
        Err(OpenError::Fatal(e)) => Err(e),
        Err(OpenError::Retry(e)) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An in-memory peer that records the largest buffer the decoder asks it to fill: the
    /// decoder reads into what it has just allocated, so this bounds its allocations.
    struct Recording<'a> {
        data: &'a [u8],
        largest_read: usize,
    }

    impl Read for Recording<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.largest_read = self.largest_read.max(buf.len());
            self.data.read(buf)
        }
    }

    const LIMITS: Limits = Limits {
        key: 1 << 10,
        value: 1 << 20,
    };

    fn frame(op: u8, key: &[u8], value: &[u8], timeout_ms: u64) -> Vec<u8> {
        let mut f = vec![op];
        f.extend_from_slice(&(key.len() as u64).to_le_bytes());
        f.extend_from_slice(key);
        f.extend_from_slice(&(value.len() as u64).to_le_bytes());
        f.extend_from_slice(value);
        f.extend_from_slice(&timeout_ms.to_le_bytes());
        f
    }

    /// Decodes `bytes` as a stream of requests, checking every property on the way; the
    /// count of requests decoded.
    fn decode_all(bytes: &[u8]) -> usize {
        let mut peer = Recording {
            data: bytes,
            largest_read: 0,
        };
        let mut decoded = 0;
        // Each request consumes at least 17 bytes, so this ends; the bound makes it sure.
        for _ in 0..=bytes.len() {
            let before = peer.data.len();
            match read_request(&mut peer, &LIMITS) {
                Ok(Some(r)) => {
                    assert!(r.key.len() <= LIMITS.key && r.key.capacity() <= LIMITS.key);
                    assert!(r.value.len() <= LIMITS.value && r.value.capacity() <= LIMITS.value);
                    assert!(before - peer.data.len() >= 25);
                    decoded += 1;
                }
                Ok(None) | Err(_) => break,
            }
        }
        assert!(
            peer.largest_read <= CHUNK.max(2 * bytes.len()),
            "asked for {} bytes of a {}-byte input",
            peer.largest_read,
            bytes.len()
        );
        decoded
    }

    #[test]
    fn a_frame_that_announces_4_gib_is_refused_before_any_allocation() {
        let mut f = vec![PUT];
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(&(1u64 << 32).to_le_bytes());
        let e = read_request(&mut f.as_slice(), &LIMITS)
            .err()
            .expect("refused");
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        assert!(
            e.to_string()
                .contains("a value of 4294967296 bytes, over the limit of 1048576"),
            "{e}"
        );
        // Within the limit but with the data missing: only what arrived was allocated.
        let mut f = vec![PUT];
        f.extend_from_slice(&0u64.to_le_bytes());
        f.extend_from_slice(&(LIMITS.value as u64).to_le_bytes());
        f.extend_from_slice(&[7; 10]);
        let mut peer = Recording {
            data: &f,
            largest_read: 0,
        };
        let e = read_request(&mut peer, &LIMITS).err().expect("truncated");
        assert_eq!(e.kind(), ErrorKind::UnexpectedEof);
        assert_eq!(peer.largest_read, CHUNK);
    }

    #[test]
    fn the_client_refuses_an_answer_longer_than_its_limit() {
        let mut answer = vec![OK];
        answer.extend_from_slice(&(u64::MAX).to_le_bytes());
        let e = read_answer(&mut answer.as_slice(), 1 << 20).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        assert!(
            e.to_string()
                .contains("an answer of 18446744073709551615 bytes"),
            "{e}"
        );
        let mut ok = Vec::new();
        write_answer(&mut ok, OK, &[1, 2, 3]).unwrap();
        assert_eq!(
            read_answer(&mut ok.as_slice(), 3).unwrap(),
            (OK, vec![1, 2, 3])
        );
        let mut big = Vec::new();
        write_answer(&mut big, OK, &vec![9; CHUNK * 3 + 1]).unwrap();
        assert_eq!(
            read_answer(&mut big.as_slice(), 1 << 20).unwrap().1,
            vec![9; CHUNK * 3 + 1]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn random_bytes_never_panic_hang_or_overallocate(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            decode_all(&bytes);
        }

        #[test]
        fn truncated_frames_are_refused(
            key in proptest::collection::vec(any::<u8>(), 0..64),
            value in proptest::collection::vec(any::<u8>(), 0..512),
            cut in any::<prop::sample::Index>(),
        ) {
            let f = frame(GET, &key, &value, 5);
            prop_assert_eq!(decode_all(&f), 1);
            let cut = cut.index(f.len());
            prop_assert_eq!(decode_all(&f[..cut]), 0);
        }

        #[test]
        fn bit_flipped_frames_never_panic_or_overallocate(
            key in proptest::collection::vec(any::<u8>(), 0..64),
            value in proptest::collection::vec(any::<u8>(), 0..512),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..6),
        ) {
            let mut f = frame(PUT, &key, &value, 1);
            f.extend(frame(TRY_GET, &value, &key, 2));
            for (at, bit) in flips {
                let at = at.index(f.len());
                f[at] ^= 1 << bit;
            }
            // A flipped length may cut the bytes into other frames, each at least 25 bytes.
            prop_assert!(decode_all(&f) <= f.len() / 25);
        }
    }
}
