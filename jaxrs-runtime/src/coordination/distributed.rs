//! Many processes, in the style of `jax.distributed.initialize`: process 0 serves the
//! coordination key-value store ([`crate::coordination::kv_store`]), every process connects to it,
//! and the process-wide PJRT client is created for process `process_id` of `num_processes`,
//! with the store behind the plugin's key-value callbacks (how XLA's GPU client exchanges its
//! topology and NCCL ids).

use crate::coordination::kv_store::{check_process, Config, KeyValueStore, Service};
use crate::error::Error;
use crate::error::ErrorCode;
use crate::error::Result;
use crate::pjrt;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long [`initialize`] waits for every process to connect, as JAX's
/// `initialization_timeout` (300 s).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// The plugin's keys live under this prefix, apart from the user's (the header makes the
/// caller responsible for keeping the plugin's keys from colliding with others').
const PLUGIN_PREFIX: &[u8] = b"jaxrs/pjrt/";

/// This process's part in a multi-process program, from [`initialize`] to [`shutdown`].
struct Distributed {
    store: KeyValueStore,
    /// Process 0's service.
    service: Option<Service>,
    timeout: Duration,
}

static STATE: Mutex<Option<Distributed>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<Distributed>> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The store as the plugin sees it: its keys under [`PLUGIN_PREFIX`].
struct PluginKeys(KeyValueStore);

impl PluginKeys {
    fn key(key: &[u8]) -> Vec<u8> {
        [PLUGIN_PREFIX, key].concat()
    }
}

impl pjrt::KeyValueStore for PluginKeys {
    fn get(&self, key: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        self.0.get(Self::key(key), timeout)
    }
    fn try_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.0.try_get(Self::key(key))
    }
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.0.put(Self::key(key), value)
    }
}

/// Joins this process to a program of `num_processes` processes, as
/// `jax.distributed.initialize(coordinator_address, num_processes, process_id)` does, waiting
/// up to 300 s for all of them to connect ([`initialize_with_timeout`] chooses).
///
/// Process 0 serves the coordination key-value store at `coordinator_address` (`"host:port"`;
/// it listens on exactly that address, so give it an address the other hosts reach, with a
/// shared secret in `JAXRS_COORDINATOR_TOKEN` on every process: without one, anyone who
/// reaches the port can join and read or write every key); every process, 0 included, connects to it and waits for the others. Then
/// the process-wide PJRT client is created for this process: on a plugin with multi-process
/// support (XLA's CUDA plugin, chosen by `JAXRS_PJRT_PLUGIN`) with the create options
/// `num_nodes` and `node_id` and the store behind the plugin's key-value callbacks, through
/// which XLA shares the processes' topology and NCCL ids. [`key_value_store`] gives the store
/// to the program too.
///
/// Call it first, before any array operation (which would create a client for this process
/// alone: then this is [`Error::DistributedAfterClient`]); `jaxrs::set_cpu_device_count`
/// goes before it.
///
/// XLA's CPU plugin has no cross-process collectives: there, more than one process is
/// [`Error::MultiProcessUnsupported`], returned at once, before anything connects (and the
/// process can still go on alone); one process works, store included. Other errors are
/// [`Error::Distributed`]: a `process_id` out of range or taken twice, processes started with
/// different `num_processes`, a process that did not connect in time, a coordinator that
/// cannot be reached.
///
/// ```
/// use jaxrs::prelude::*;
///
/// // One process: a coordinator on a free port of this machine.
/// jaxrs::distributed::initialize("127.0.0.1:0", 1, 0)?;
/// let store = jaxrs::distributed::key_value_store().expect("initialized");
/// store.put("config", b"lr=0.1")?;
/// assert_eq!(store.try_get("config")?, Some(b"lr=0.1".to_vec()));
/// assert_eq!(jaxrs::devices()[0].process_index(), 0);
/// assert_eq!(Array::ones(&[2], DType::F32).sum(None, false).item::<f32>(), 2.0);
/// match jaxrs::distributed::initialize("127.0.0.1:0", 1, 0) {
///     Err(jaxrs::Error::Distributed { .. }) => {} // once per process
///     other => panic!("{other:?}"),
/// }
/// jaxrs::distributed::shutdown()?;
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn initialize(
    coordinator_address: &str,
    num_processes: usize,
    process_id: usize,
) -> Result<()> {
    initialize_with_timeout(
        coordinator_address,
        num_processes,
        process_id,
        DEFAULT_TIMEOUT,
    )
}

/// [`initialize`], waiting at most `timeout` for every process to connect (JAX's
/// `initialization_timeout`); [`shutdown`]'s wait for the others is bounded by it too. The
/// service's secret, limits and heartbeat timeout come from [`Config::from_env`].
///
/// ```
/// use std::time::Duration;
///
/// // A process that says there are 3 processes, when no other ever connects, finds out.
/// match jaxrs::distributed::initialize_with_timeout("127.0.0.1:0", 3, 0, Duration::from_millis(200)) {
///     // On XLA's CPU plugin, refused at once.
///     Err(jaxrs::Error::MultiProcessUnsupported { num_processes: 3, .. }) => {}
///     // On a plugin with multi-process support, after the timeout.
///     Err(jaxrs::Error::Distributed { message, .. }) => {
///         assert!(message.contains("is num_processes right?"), "{message}")
///     }
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn initialize_with_timeout(
    coordinator_address: &str,
    num_processes: usize,
    process_id: usize,
    timeout: Duration,
) -> Result<()> {
    let config = Config::from_env()?;
    initialize_with_config(
        coordinator_address,
        num_processes,
        process_id,
        timeout,
        &config,
    )
}

/// [`initialize_with_timeout`] with the given [`Config`]: the shared secret every connection
/// proves (JAX has no such thing: its coordination service trusts the network), the store's
/// limits, and the heartbeat timeout after which a silent process is declared dead. While a
/// process waits for the others, one that dies makes it return [`Error::PeerFailed`] naming
/// that process, at once.
///
/// ```
/// use jaxrs::distributed::Config;
/// use std::time::Duration;
///
/// let config = Config {
///     secret: Some(b"shared by every process".to_vec()),
///     heartbeat_timeout: Duration::from_secs(60),
///     ..Config::from_env()?
/// };
/// jaxrs::distributed::initialize_with_config("127.0.0.1:0", 1, 0, Duration::from_secs(30), &config)?;
/// jaxrs::distributed::shutdown()?;
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn initialize_with_config(
    coordinator_address: &str,
    num_processes: usize,
    process_id: usize,
    timeout: Duration,
    config: &Config,
) -> Result<()> {
    check_process(num_processes, process_id)?;
    let mut state = state();
    if let Some(d) = state.as_ref() {
        return Err(Error::Distributed {
            code: ErrorCode::FailedPrecondition,
            message: format!(
                "already initialized, as process {} of {}",
                d.store.process_id(),
                d.store.num_processes()
            ),
        });
    }
    let mut service = None;
    let mut store = None;
    pjrt::create_default_client_for_processes(num_processes, process_id, || {
        let address = if process_id == 0 {
            let s = Service::start_with(coordinator_address, config)?;
            let address = reachable(s.local_addr());
            service = Some(s);
            address
        } else {
            coordinator_address.to_string()
        };
        let s = KeyValueStore::connect_with(&address, num_processes, process_id, timeout, config)?;
        store = Some(s.clone());
        Ok(Arc::new(PluginKeys(s)) as Arc<dyn pjrt::KeyValueStore>)
    })?;
    let store = store.ok_or_else(|| Error::Distributed {
        code: ErrorCode::Internal,
        message: "the client was created without connecting the processes".into(),
    })?;
    *state = Some(Distributed {
        store,
        service,
        timeout,
    });
    Ok(())
}

/// Where process 0 reaches its own service: the address it listens on (with the port it
/// picked for port 0), or the loopback for a wildcard one.
fn reachable(listening: SocketAddr) -> String {
    if listening.ip().is_unspecified() {
        SocketAddr::from((Ipv4Addr::LOCALHOST, listening.port())).to_string()
    } else {
        listening.to_string()
    }
}

/// The coordination key-value store shared by the processes, once [`initialize`] has
/// connected them (`None` before, and after [`shutdown`]).
///
/// ```
/// use std::time::Duration;
///
/// assert!(jaxrs::distributed::key_value_store().is_none());
/// jaxrs::distributed::initialize("127.0.0.1:0", 1, 0)?;
/// let store = jaxrs::distributed::key_value_store().unwrap();
/// assert_eq!((store.process_id(), store.num_processes()), (0, 1));
/// // Each process would publish its part, then read the others'.
/// store.put(format!("rank/{}", store.process_id()), [0u8, 1, 2])?;
/// assert_eq!(store.get("rank/0", Duration::from_secs(10))?, [0u8, 1, 2]);
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn key_value_store() -> Option<KeyValueStore> {
    state().as_ref().map(|d| d.store.clone())
}

/// Leaves the multi-process program: waits (at most the initialization timeout) until every
/// process has called `shutdown`, says goodbye and closes this process's connections, and on
/// process 0 stops the service once the others are done with it (joining its threads).
/// Without [`initialize`], or a second time, it does nothing. A process that ends without it
/// (or without dropping its store) is taken for dead by the others.
///
/// The PJRT client stays: arrays keep working, but a plugin that needs the store later (a
/// first collective over new devices) gets an error from it.
///
/// ```
/// jaxrs::distributed::shutdown()?; // not initialized: nothing to do
/// jaxrs::distributed::initialize("127.0.0.1:0", 1, 0)?;
/// let store = jaxrs::distributed::key_value_store().unwrap();
/// jaxrs::distributed::shutdown()?;
/// assert!(jaxrs::distributed::key_value_store().is_none());
/// assert!(store.try_get("anything").is_err()); // closed
/// # Ok::<(), jaxrs::Error>(())
/// ```
pub fn shutdown() -> Result<()> {
    let Some(d) = state().take() else {
        return Ok(());
    };
    let result = leave(&d.store, d.timeout);
    d.store.close();
    if let Some(service) = d.service {
        service.shutdown();
    }
    result
}

/// The shutdown barrier; then process 0 waits for every other process to say it no longer
/// needs the service (it may still be reading the barrier's last keys when process 0 is done).
fn leave(store: &KeyValueStore, timeout: Duration) -> Result<()> {
    let (me, n) = (store.process_id(), store.num_processes());
    if n == 1 {
        return Ok(());
    }
    let start = Instant::now();
    store.barrier("shutdown", timeout)?;
    if me != 0 {
        return store.put(format!("jaxrs/shutdown/done/{me}"), []);
    }
    for other in 1..n {
        let left = timeout.saturating_sub(start.elapsed());
        store.get(format!("jaxrs/shutdown/done/{other}"), left)?;
    }
    Ok(())
}
