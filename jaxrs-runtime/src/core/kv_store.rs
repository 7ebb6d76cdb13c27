//! The coordination key-value service of `jaxrs::distributed`: process 0 serves it over TCP
//! ([`Service`]); every process, 0 included, is a client ([`KeyValueStore`]).
//!
//! Plain `std::net` and threads: one thread accepts, one thread serves each connection. The
//! protocol is length-prefixed frames, so keys and values are any bytes. A connection opens
//! with a 5-byte greeting both ways (`JXKV` and a version), so pointing a process at some
//! other server is an error rather than garbage. Then each request
//!
//! ```text
//! op: u8 (1 put, 2 get, 3 try_get) | key_len: u64 LE | key | value_len: u64 LE | value | timeout_ms: u64 LE
//! ```
//!
//! gets one response `status: u8 | len: u64 LE | payload` (the value, or an error message).
//! A client keeps a pool of connections and takes one per request, so a get that blocks on one
//! thread does not hold up a put on another thread of the same process (the put it waits for
//! may be that one). A key is set once: a second put of it is an error, as in XLA's own
//! coordination service.
//!
//! Failures are [`Error`]s, never panics: a lost connection is [`Error::Distributed`] with code
//! `Unavailable`, a get that runs out of time is [`Error::KeyValueTimeout`] naming the key.
//! [`Service::shutdown`] (or dropping the service) stops and joins every thread it started.

use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use crate::pjrt::key_text;
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const GREETING: &[u8; 5] = b"JXKV\x01";

const PUT: u8 = 1;
const GET: u8 = 2;
const TRY_GET: u8 = 3;

const OK: u8 = 0;
const NOT_FOUND: u8 = 1;
const TIMED_OUT: u8 = 2;
const EXISTS: u8 = 3;
const FAILED: u8 = 4;

/// The largest key or value a frame may carry: a bound on what a corrupt length can make the
/// other side allocate.
const MAX_LEN: u64 = 1 << 32;

/// How long the accept loop sleeps when nobody is connecting; it checks for shutdown between.
const ACCEPT_POLL: Duration = Duration::from_millis(5);

/// How long a client waits for an answer beyond the request's own timeout before it calls the
/// connection lost.
const ANSWER_GRACE: Duration = Duration::from_secs(60);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked while holding it; the map it guards
    // stays consistent (every update is a single insert).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn distributed(code: ErrorCode, message: String) -> Error {
    Error::Distributed { code, message }
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
    values: Mutex<HashMap<Vec<u8>, Vec<u8>>>,
    changed: Condvar,
    stopping: AtomicBool,
    /// Each served connection (a handle to shut its socket down) and its thread.
    connections: Mutex<Vec<(TcpStream, JoinHandle<()>)>>,
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
    /// [`Service::local_addr`]) and serves until shut down. Listening on exactly the given
    /// address keeps the unauthenticated service off other interfaces unless asked for
    /// (`"0.0.0.0:port"`).
    pub fn start(address: &str) -> Result<Service> {
        let listener = TcpListener::bind(address).map_err(|e| {
            distributed(
                ErrorCode::Unavailable,
                format!("cannot listen on {address} for the coordination service: {e}"),
            )
        })?;
        let local_addr = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            values: Mutex::new(HashMap::new()),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            connections: Mutex::new(Vec::new()),
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
            let _values = lock(&self.shared.values);
            self.shared.changed.notify_all();
        }
        let _ = acceptor.join();
        // The acceptor is gone, so the list no longer grows.
        let connections = std::mem::take(&mut *lock(&self.shared.connections));
        for (stream, thread) in connections {
            let _ = stream.shutdown(Shutdown::Both);
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
            Ok((stream, _)) => {
                if let Err(e) = serve_in_thread(stream, shared) {
                    log::warn!("jaxrs::distributed: cannot serve a connection: {e}");
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

fn serve_in_thread(stream: TcpStream, shared: &Arc<Shared>) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    let handle = stream.try_clone()?;
    let thread = {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("jaxrs-kv-serve".into())
            .spawn(move || serve(stream, &shared))?
    };
    let mut connections = lock(&shared.connections);
    // Forget the connections that ended (their threads have returned).
    let (ended, open): (Vec<_>, Vec<_>) = std::mem::take(&mut *connections)
        .into_iter()
        .partition(|(_, t)| t.is_finished());
    for (_, t) in ended {
        let _ = t.join();
    }
    *connections = open;
    connections.push((handle, thread));
    Ok(())
}

/// Serves one connection until the client leaves, the connection breaks or the service stops.
fn serve(mut stream: TcpStream, shared: &Shared) {
    let mut greeting = [0u8; 5];
    if stream.read_exact(&mut greeting).is_err() || &greeting != GREETING {
        return;
    }
    if stream.write_all(GREETING).is_err() {
        return;
    }
    while let Ok(Some(request)) = read_request(&mut stream) {
        let (status, payload) = shared.answer(request);
        if write_frame(&mut stream, status, &payload).is_err() {
            return;
        }
    }
}

struct Request {
    op: u8,
    key: Vec<u8>,
    value: Vec<u8>,
    timeout: Duration,
}

impl Shared {
    fn answer(&self, r: Request) -> (u8, Vec<u8>) {
        match r.op {
            PUT => {
                let mut values = lock(&self.values);
                if values.contains_key(&r.key) {
                    return (EXISTS, Vec::new());
                }
                values.insert(r.key, r.value);
                self.changed.notify_all();
                (OK, Vec::new())
            }
            TRY_GET => match lock(&self.values).get(&r.key) {
                Some(v) => (OK, v.clone()),
                None => (NOT_FOUND, Vec::new()),
            },
            GET => {
                let deadline = Instant::now().checked_add(r.timeout);
                let mut values = lock(&self.values);
                loop {
                    if let Some(v) = values.get(&r.key) {
                        return (OK, v.clone());
                    }
                    if self.stopping.load(Ordering::SeqCst) {
                        return (
                            FAILED,
                            b"the coordination service is shutting down".to_vec(),
                        );
                    }
                    // No deadline: a timeout too long to add to now; wait in day-long steps.
                    let left = match deadline {
                        Some(d) => d.saturating_duration_since(Instant::now()),
                        None => Duration::from_secs(86_400),
                    };
                    if left.is_zero() {
                        return (TIMED_OUT, Vec::new());
                    }
                    values = self
                        .changed
                        .wait_timeout(values, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            op => (FAILED, format!("unknown request {op}").into_bytes()),
        }
    }
}

fn read_u64(stream: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    stream.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_bytes(stream: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let len = read_u64(stream)?;
    if len > MAX_LEN {
        return Err(std::io::Error::new(
            ErrorKind::InvalidData,
            format!("a frame of {len} bytes (at most {MAX_LEN})"),
        ));
    }
    let mut bytes = vec![0u8; len as usize];
    stream.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// The next request, or `None` when the client closed the connection between requests.
fn read_request(stream: &mut impl Read) -> std::io::Result<Option<Request>> {
    let mut op = [0u8; 1];
    if stream.read(&mut op)? == 0 {
        return Ok(None);
    }
    let key = read_bytes(stream)?;
    let value = read_bytes(stream)?;
    let timeout = Duration::from_millis(read_u64(stream)?);
    Ok(Some(Request {
        op: op[0],
        key,
        value,
        timeout,
    }))
}

fn write_frame(stream: &mut impl Write, status: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(9 + payload.len());
    frame.push(status);
    frame.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    frame.extend_from_slice(payload);
    stream.write_all(&frame)
}

/// A client of the coordination service: a key-value store shared by the processes of one
/// program. Keys and values are bytes (text works too: anything `AsRef<[u8]>`); a key is set
/// once. Cloning is cheap (one shared pool of connections) and every method may be called
/// from several threads at once.
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
    /// Connections not in use by a request.
    idle: Mutex<Vec<TcpStream>>,
    closed: AtomicBool,
    process_id: usize,
    num_processes: usize,
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
/// starting, or not (something else answers at that address).
enum OpenError {
    Retry(std::io::Error),
    Fatal(Error),
}

impl KeyValueStore {
    /// Connects process `process_id` of `num_processes` to the coordination service at
    /// `coordinator_address`, and waits until all `num_processes` processes have connected,
    /// for at most `timeout` in all (the service may start after the others: connecting is
    /// retried until then).
    ///
    /// Errors ([`Error::Distributed`]) say what is wrong: a `process_id` out of range or
    /// taken by another process, processes started with different `num_processes`, a process
    /// that never connected (is `num_processes` right?), no service at the address.
    pub fn connect(
        coordinator_address: &str,
        num_processes: usize,
        process_id: usize,
        timeout: Duration,
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
                idle: Mutex::new(Vec::new()),
                closed: AtomicBool::new(false),
                process_id,
                num_processes,
            }),
        };
        let mut pause = Duration::from_millis(10);
        let first = loop {
            match store.inner.open() {
                Ok(stream) => break stream,
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
        lock(&store.inner.idle).push(first);
        store.rendezvous(deadline, timeout)?;
        Ok(store)
    }

    /// Announces this process and waits for the others; each announcement carries its
    /// `num_processes`, so processes started with different counts find out.
    fn rendezvous(&self, deadline: Instant, timeout: Duration) -> Result<()> {
        let (me, n) = (self.inner.process_id, self.inner.num_processes);
        match self.put(format!("jaxrs/connect/{me}"), n.to_string()) {
            Err(Error::Distributed {
                code: ErrorCode::AlreadyExists,
                ..
            }) => {
                return Err(distributed(
                    ErrorCode::AlreadyExists,
                    format!(
                        "process_id {me} is taken: another process connected to {} with the \
                         same process_id (each process needs its own, 0 to {})",
                        self.inner.address,
                        n - 1
                    ),
                ))
            }
            other => other?,
        }
        for other in 0..n {
            let left = deadline.saturating_duration_since(Instant::now());
            let theirs = match self.get(format!("jaxrs/connect/{other}"), left) {
                Ok(v) => v,
                Err(Error::KeyValueTimeout { .. }) => {
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
                Err(e) => return Err(e),
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
    /// [`Error::Distributed`] with code `AlreadyExists`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        match self
            .inner
            .request(PUT, key, value.as_ref(), Duration::ZERO)?
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
    /// [`Error::KeyValueTimeout`] (naming the key) after that.
    pub fn get(&self, key: impl AsRef<[u8]>, timeout: Duration) -> Result<Vec<u8>> {
        let key = key.as_ref();
        match self.inner.request(GET, key, &[], timeout)? {
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
        match self.inner.request(TRY_GET, key, &[], Duration::ZERO)? {
            (OK, value) => Ok(Some(value)),
            (NOT_FOUND, _) => Ok(None),
            other => Err(self.inner.unexpected(other, "try_get", key)),
        }
    }

    /// Waits until every process has reached the barrier `name`, for at most `timeout`. Each
    /// barrier name is used once.
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

    /// Closes the connections; every later call is an error. Requests in flight on other
    /// threads finish (their connections close after them). Dropping the last clone closes
    /// the connections too.
    pub fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        for stream in std::mem::take(&mut *lock(&self.inner.idle)) {
            let _ = stream.shutdown(Shutdown::Both);
        }
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

impl Client {
    fn open(&self) -> std::result::Result<TcpStream, OpenError> {
        let mut last = std::io::Error::new(ErrorKind::NotFound, "the address resolved to nothing");
        for target in &self.targets {
            match TcpStream::connect_timeout(target, Duration::from_secs(10)) {
                Ok(stream) => return self.greet(stream),
                Err(e) => last = e,
            }
        }
        Err(OpenError::Retry(last))
    }

    fn greet(&self, mut stream: TcpStream) -> std::result::Result<TcpStream, OpenError> {
        let io = |stream: &mut TcpStream| -> std::io::Result<[u8; 5]> {
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            stream.write_all(GREETING)?;
            let mut answer = [0u8; 5];
            stream.read_exact(&mut answer)?;
            Ok(answer)
        };
        match io(&mut stream) {
            Ok(answer) if &answer == GREETING => Ok(stream),
            Ok(_) => Err(OpenError::Fatal(distributed(
                ErrorCode::InvalidArgument,
                format!(
                    "{} is not a jaxrs coordination service (or another version of it)",
                    self.address
                ),
            ))),
            Err(e) => Err(OpenError::Retry(e)),
        }
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
        let message = String::from_utf8_lossy(&payload);
        let code = if status == FAILED {
            ErrorCode::Unavailable
        } else {
            ErrorCode::Internal
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

    /// Sends one request on an idle connection (or a new one) and reads its answer.
    fn request(
        &self,
        op: u8,
        key: &[u8],
        value: &[u8],
        timeout: Duration,
    ) -> Result<(u8, Vec<u8>)> {
        let what = match op {
            PUT => "put",
            GET => "get",
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
        let pooled = lock(&self.idle).pop();
        let mut stream = match pooled {
            Some(s) => s,
            None => self.open().map_err(|e| match e {
                OpenError::Retry(e) => self.lost(what, key, e),
                OpenError::Fatal(e) => e,
            })?,
        };
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let exchange = |stream: &mut TcpStream| -> std::io::Result<(u8, Vec<u8>)> {
            stream.set_read_timeout(Some(timeout.saturating_add(ANSWER_GRACE)))?;
            let mut frame = Vec::with_capacity(25 + key.len() + value.len());
            frame.push(op);
            frame.extend_from_slice(&(key.len() as u64).to_le_bytes());
            frame.extend_from_slice(key);
            frame.extend_from_slice(&(value.len() as u64).to_le_bytes());
            frame.extend_from_slice(value);
            frame.extend_from_slice(&timeout_ms.to_le_bytes());
            stream.write_all(&frame)?;
            let mut status = [0u8; 1];
            stream.read_exact(&mut status)?;
            let payload = read_bytes(stream)?;
            Ok((status[0], payload))
        };
        match exchange(&mut stream) {
            Ok(answer) => {
                if !self.closed.load(Ordering::SeqCst) {
                    lock(&self.idle).push(stream);
                }
                Ok(answer)
            }
            Err(e) => Err(self.lost(what, key, e)),
        }
    }
}
