//! `jaxrs::distributed` across real OS processes: the coordination store (process 0 serves,
//! three processes put and get binary values, a blocking get waits for a later put, timeouts
//! name their key, a lost coordinator is an error), `initialize`'s rendezvous errors, and
//! `initialize` on the CPU plugin (one process works; more are refused with the reason; after
//! the client exists it is too late).
//!
//! The parent tests re-run this test binary as children: `child` does nothing unless
//! `JAXRS_TEST_CHILD` names a role. `initialize` is once per process, so every test of it runs
//! in a child of its own.

use jaxrs::distributed::{KeyValueStore, Service};
use jaxrs::{Error, ErrorCode};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ROLE: &str = "JAXRS_TEST_CHILD";
const ADDRESS: &str = "JAXRS_TEST_COORDINATOR";
const LONG: Duration = Duration::from_secs(20);

fn spawn(role: &str, address: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(ADDRESS, address)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// Waits for a child and asserts it passed, showing its output otherwise.
fn expect_success(child: Child, role: &str) {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child {role} failed:\n{stdout}");
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "child {role} did not run:\n{stdout}"
    );
}

fn run_alone(role: &str) {
    expect_success(spawn(role, ""), role);
}

/// The value each process puts: empty, zero bytes and 0xff, and 4 MiB.
fn payload(process: usize) -> Vec<u8> {
    match process {
        0 => Vec::new(),
        1 => b"\0one\0\xff\0".to_vec(),
        _ => (0..4 << 20).map(|i: u32| (i * 7 + 3) as u8).collect(),
    }
}

fn key(process: usize) -> Vec<u8> {
    [b"value\0\xfe/".as_slice(), &[process as u8]].concat()
}

#[test]
fn three_processes_share_the_store() {
    let started = Instant::now();
    // Process 0 binds a free port and says which; the others are given it.
    let mut first = spawn("store:0", "127.0.0.1:0");
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    let address = loop {
        let line = lines
            .next()
            .expect("process 0 printed its address")
            .unwrap();
        // The harness's "test child ... " precedes it on the same line.
        if let Some((_, a)) = line.split_once("COORDINATOR=") {
            break a.to_string();
        }
    };
    let rest: Vec<_> = (1..3)
        .map(|p| (p, spawn(&format!("store:{p}"), &address)))
        .collect();
    for (p, child) in rest {
        expect_success(child, &format!("store:{p}"));
    }
    let status = first.wait().unwrap();
    let stdout: Vec<String> = lines.map_while(|l| l.ok()).collect();
    assert!(status.success(), "process 0 failed:\n{}", stdout.join("\n"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

fn store_process(process: usize, address: &str) {
    let service = (process == 0).then(|| {
        let service = Service::start(address).unwrap();
        println!("COORDINATOR={}", service.local_addr());
        service
    });
    let address = match &service {
        Some(s) => s.local_addr().to_string(),
        None => address.to_string(),
    };
    let store = KeyValueStore::connect(&address, 3, process, LONG).unwrap();
    assert_eq!((store.process_id(), store.num_processes()), (process, 3));

    store.put(key(process), payload(process)).unwrap();
    for other in 0..3 {
        assert_eq!(store.get(key(other), LONG).unwrap(), payload(other));
    }
    match store.put(key(process), b"again") {
        Err(Error::Distributed {
            code: ErrorCode::AlreadyExists,
            message,
        }) => assert!(message.contains("already set"), "{message}"),
        other => panic!("{other:?}"),
    }

    match process {
        // A blocking get that starts before the put it waits for.
        1 => {
            assert_eq!(store.try_get("late").unwrap(), None);
            store.barrier("get-started", LONG).unwrap();
            let t = Instant::now();
            assert_eq!(store.get("late", LONG).unwrap(), b"later");
            assert!(
                t.elapsed() >= Duration::from_millis(150),
                "{:?}",
                t.elapsed()
            );
        }
        2 => {
            store.barrier("get-started", LONG).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            store.put("late", "later").unwrap();
        }
        _ => {
            store.barrier("get-started", LONG).unwrap();
            let t = Instant::now();
            let e = store
                .get(b"never\0set", Duration::from_millis(100))
                .unwrap_err();
            assert!(t.elapsed() >= Duration::from_millis(100));
            match &e {
                Error::KeyValueTimeout { key, timeout } => {
                    assert_eq!(key, "never\0set");
                    assert_eq!(*timeout, Duration::from_millis(100));
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(
                e.to_string(),
                "no value for key \"never\\0set\" in the distributed key-value store after 100ms"
            );
        }
    }
    store.barrier("end", LONG).unwrap();
    // Process 2 put it before the barrier.
    assert_eq!(store.try_get("late").unwrap(), Some(b"later".to_vec()));

    // Process 0 stops the service once the others are done; they leave first.
    if process != 0 {
        store.put(format!("done/{process}"), []).unwrap();
        return;
    }
    for other in 1..3 {
        store.get(format!("done/{other}"), LONG).unwrap();
    }
    service.unwrap().shutdown();
    match store.try_get("late") {
        Err(Error::Distributed {
            code: ErrorCode::Unavailable,
            message,
        }) => assert!(message.contains("lost the connection"), "{message}"),
        other => panic!("{other:?}"),
    }
}

/// `initialize` with one process on the CPU plugin: the store works, arrays work, a second
/// call is refused, `shutdown` closes the store.
fn initialize_alone() {
    jaxrs::set_cpu_device_count(2).unwrap();
    jaxrs::distributed::initialize("127.0.0.1:0", 1, 0).unwrap();
    assert_eq!(jaxrs::local_device_count(), 2);
    let store = jaxrs::distributed::key_value_store().unwrap();
    store.put([0u8, 0], [0u8; 3]).unwrap();
    assert_eq!(store.get([0u8, 0], LONG).unwrap(), [0u8; 3]);
    let x = jaxrs::Array::ones(&[3], jaxrs::DType::F32);
    assert_eq!(x.sum(None, false).item::<f32>(), 3.0);
    match jaxrs::distributed::initialize("127.0.0.1:0", 1, 0) {
        Err(Error::Distributed {
            code: ErrorCode::FailedPrecondition,
            message,
        }) => assert!(message.contains("already initialized"), "{message}"),
        other => panic!("{other:?}"),
    }
    jaxrs::distributed::shutdown().unwrap();
    assert!(jaxrs::distributed::key_value_store().is_none());
    assert!(store.try_get([0u8, 0]).is_err());
    // The client outlives the store.
    assert_eq!(x.sum(None, false).item::<f32>(), 3.0);
}

/// More than one process on the CPU plugin is refused at once, with the reason; the process
/// can still go on alone.
fn initialize_refused() {
    let t = Instant::now();
    let e = jaxrs::distributed::initialize("127.0.0.1:0", 2, 0).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    match &e {
        Error::MultiProcessUnsupported {
            platform,
            num_processes: 2,
        } => assert_eq!(platform, "cpu"),
        other => panic!("{other:?}"),
    }
    let message = e.to_string();
    for part in [
        "cannot run 2 processes on the cpu PJRT plugin",
        "no cross-process collectives",
        "JAXRS_PJRT_PLUGIN",
    ] {
        assert!(message.contains(part), "{message}");
    }
    assert!(jaxrs::distributed::key_value_store().is_none());
    // Nothing was created: one process still works.
    jaxrs::distributed::initialize("127.0.0.1:0", 1, 0).unwrap();
    assert_eq!(jaxrs::devices()[0].process_index(), 0);
}

/// After the first array operation the client exists: too late.
fn initialize_too_late() {
    assert_eq!(
        jaxrs::Array::ones(&[1], jaxrs::DType::F32).item::<f32>(),
        1.0
    );
    let e = jaxrs::distributed::initialize("127.0.0.1:0", 1, 0).unwrap_err();
    assert!(matches!(e, Error::DistributedAfterClient), "{e:?}");
    assert!(
        e.to_string()
            .contains("must be called before the first array operation"),
        "{e}"
    );
    assert!(jaxrs::distributed::key_value_store().is_none());
}

#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let address = std::env::var(ADDRESS).unwrap_or_default();
    match role.split_once(':') {
        Some(("store", p)) => store_process(p.parse().unwrap(), &address),
        _ => match role.as_str() {
            "initialize_alone" => initialize_alone(),
            "initialize_refused" => initialize_refused(),
            "initialize_too_late" => initialize_too_late(),
            other => panic!("unknown child role {other}"),
        },
    }
}

#[test]
fn initialize_with_one_process_works_on_cpu() {
    run_alone("initialize_alone");
}

#[test]
fn initialize_with_two_processes_on_cpu_says_why_not() {
    run_alone("initialize_refused");
}

#[test]
fn initialize_after_the_client_exists_is_an_error() {
    run_alone("initialize_too_late");
}

// Rendezvous errors, with processes as threads (the store is not process-wide state).

fn service() -> (Service, String) {
    let s = Service::start("127.0.0.1:0").unwrap();
    let a = s.local_addr().to_string();
    (s, a)
}

fn distributed_message(r: jaxrs::Result<KeyValueStore>, code: ErrorCode) -> String {
    match r {
        Err(Error::Distributed { code: c, message }) if c == code => message,
        other => panic!("expected {code:?}, got {other:?}"),
    }
}

#[test]
fn a_missing_process_is_named_with_a_hint() {
    let (_service, address) = service();
    let m = distributed_message(
        KeyValueStore::connect(&address, 3, 0, Duration::from_millis(300)),
        ErrorCode::DeadlineExceeded,
    );
    assert!(
        m.contains("process 0: process 1 of 3 did not connect")
            && m.contains("is num_processes right?"),
        "{m}"
    );
}

#[test]
fn processes_that_disagree_on_their_number_are_told() {
    let (_service, address) = service();
    let other = {
        let address = address.clone();
        std::thread::spawn(move || KeyValueStore::connect(&address, 3, 1, LONG))
    };
    let m = distributed_message(
        KeyValueStore::connect(&address, 2, 0, Duration::from_secs(10)),
        ErrorCode::InvalidArgument,
    );
    assert!(
        m.contains(
            "process 1 was started with num_processes = 3, this process (process_id 0) with 2"
        ),
        "{m}"
    );
    let m = distributed_message(other.join().unwrap(), ErrorCode::InvalidArgument);
    assert!(
        m.contains("process 0 was started with num_processes = 2"),
        "{m}"
    );
}

#[test]
fn a_process_id_taken_twice_or_out_of_range_is_refused() {
    let (_service, address) = service();
    // Two processes both say they are process 1: whichever announces itself second is told;
    // the first waits in vain for process 0.
    let both: Vec<_> = (0..2)
        .map(|_| {
            let address = address.clone();
            std::thread::spawn(move || {
                KeyValueStore::connect(&address, 2, 1, Duration::from_millis(500))
            })
        })
        .collect();
    let mut outcomes: Vec<_> = both.into_iter().map(|t| t.join().unwrap()).collect();
    outcomes.sort_by_key(|r| {
        !matches!(
            r,
            Err(Error::Distributed {
                code: ErrorCode::AlreadyExists,
                ..
            })
        )
    });
    let mut outcomes = outcomes.into_iter();
    let m = distributed_message(outcomes.next().unwrap(), ErrorCode::AlreadyExists);
    assert!(m.contains("process_id 1 is taken"), "{m}");
    distributed_message(outcomes.next().unwrap(), ErrorCode::DeadlineExceeded);
    let m = distributed_message(
        KeyValueStore::connect(&address, 2, 2, Duration::from_secs(1)),
        ErrorCode::InvalidArgument,
    );
    assert!(
        m.contains("process_id 2 is out of range for num_processes = 2"),
        "{m}"
    );
}

#[test]
fn no_coordinator_is_an_error_after_the_timeout() {
    // A port nobody listens on: bind one, then free it.
    let address = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let t = Instant::now();
    let m = distributed_message(
        KeyValueStore::connect(&address, 1, 0, Duration::from_millis(300)),
        ErrorCode::Unavailable,
    );
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert!(m.contains("could not reach the coordinator"), "{m}");
}

#[test]
fn something_else_at_the_address_is_not_taken_for_a_coordinator() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        let mut b = [0u8; 5];
        s.read_exact(&mut b).unwrap();
        s.write_all(b"HTTP/").unwrap();
    });
    let m = distributed_message(
        KeyValueStore::connect(&address, 1, 0, Duration::from_secs(5)),
        ErrorCode::InvalidArgument,
    );
    assert!(m.contains("is not a jaxrs coordination service"), "{m}");
    server.join().unwrap();
}

#[test]
fn a_blocking_get_is_answered_when_the_service_stops_and_threads_end() {
    let (service, address) = service();
    let store = KeyValueStore::connect(&address, 1, 0, LONG).unwrap();
    let waiting = {
        let store = store.clone();
        std::thread::spawn(move || store.get("never", LONG))
    };
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    service.shutdown(); // joins every thread of the service
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    match waiting.join().unwrap() {
        Err(Error::Distributed {
            code: ErrorCode::Unavailable,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn threads_of_one_process_share_a_store_without_holding_each_other_up() {
    let (_service, address) = service();
    let store = KeyValueStore::connect(&address, 1, 0, LONG).unwrap();
    // Every thread first waits for a key the next thread puts: with one connection per
    // process this would deadlock; the pool gives each request its own.
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let waited = std::thread::spawn({
                    let store = store.clone();
                    move || store.get(format!("ring/{t}"), LONG)
                });
                store
                    .put(format!("ring/{}", (t + 1) % 8), [t as u8])
                    .unwrap();
                assert_eq!(waited.join().unwrap().unwrap(), [((t + 7) % 8) as u8]);
                for i in 0..50 {
                    store.put(format!("k/{t}/{i}"), vec![t as u8; i]).unwrap();
                }
                for i in 0..50 {
                    let other = (t + 3) % 8;
                    assert_eq!(
                        store.get(format!("k/{other}/{i}"), LONG).unwrap(),
                        vec![other as u8; i]
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
