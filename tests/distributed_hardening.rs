//! The coordination service against a hostile or failing outside world (issue 19, item 1):
//! frames that announce more than they carry, strangers without the secret, floods of idle
//! connections, workers killed or hung mid-barrier, a coordinator that never answers. All on
//! loopback; the coordinator and the workers are real OS processes where what is measured is
//! a process (its memory, its descriptors, its death).
//!
//! The parent tests re-run this test binary as children: `child` does nothing unless
//! `JAXRS_HARDENING_CHILD` names a role. Every wait is bounded; a child still running when
//! its test ends is killed.

use jaxrs::distributed::{Config, KeyValueStore, Service};
use jaxrs::{Error, ErrorCode};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROLE: &str = "JAXRS_HARDENING_CHILD";
const ARG: &str = "JAXRS_HARDENING_ARG";
const SECRET: &[u8] = b"the right secret";
/// The longest any child may take for a step.
const STEP: Duration = Duration::from_secs(30);

/// A child process, its stdout as lines, killed when dropped.
struct Kid {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    role: String,
    seen: Vec<String>,
}

fn spawn(role: &str, arg: &str, envs: &[(&str, &str)]) -> Kid {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(ARG, arg)
        .env_remove("JAXRS_COORDINATOR_TOKEN")
        .env_remove("JAXRS_HEARTBEAT_TIMEOUT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (k, v) in envs {
        command.env(k, v);
    }
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
            if send.send(line).is_err() {
                return;
            }
        }
    });
    Kid {
        stdin: child.stdin.take(),
        child,
        lines,
        role: role.to_string(),
        seen: Vec::new(),
    }
}

impl Kid {
    /// What follows `tag` on the next line that has it, waiting at most `within`.
    fn expect(&mut self, tag: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    // The harness's "test child ... " may precede it on the same line.
                    if let Some((_, rest)) = line.split_once(tag) {
                        return rest.to_string();
                    }
                    self.seen.push(line);
                }
                Err(_) => panic!(
                    "child {} printed no {tag} within {within:?}; it printed:\n{}",
                    self.role,
                    self.seen.join("\n")
                ),
            }
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes its stdin (the children that wait for the parent then end) and waits for it
    /// to pass, at most `within`.
    fn finish(mut self, within: Duration) {
        drop(self.stdin.take());
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let rest: Vec<String> = self.lines.try_iter().collect();
                assert!(
                    status.success(),
                    "child {} failed:\n{}\n{}",
                    self.role,
                    self.seen.join("\n"),
                    rest.join("\n")
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "child {} did not end within {within:?}",
                self.role
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A field of `/proc/<pid>/status`, in kB.
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Whether the peer has closed `stream`, waiting at most `within`.
fn closed_by_peer(stream: &mut TcpStream, within: Duration) -> bool {
    stream
        .set_read_timeout(Some(within.max(Duration::from_millis(1))))
        .unwrap();
    let mut b = [0u8; 256];
    loop {
        match stream.read(&mut b) {
            Ok(0) => return true,
            // A greeting or a refusal before the close: read on.
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
                )
            }
        }
    }
}

/// Waits until stdin closes: the parent says when a child may go.
fn wait_for_parent() {
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
}

fn describe<T: std::fmt::Debug>(r: &jaxrs::Result<T>) -> String {
    match r {
        Err(Error::PeerFailed {
            process_id,
            message,
        }) => format!("PeerFailed:{process_id}:{message}"),
        other => format!("{other:?}"),
    }
}

// ---- children ----

/// A coordinator with the limits given as `max_connections,io_ms,idle_ms`, serving until
/// the parent is done.
fn coordinator(arg: &str) {
    let n: Vec<u64> = arg.split(',').map(|s| s.parse().unwrap()).collect();
    let config = Config {
        max_connections: n[0] as usize,
        io_timeout: Duration::from_millis(n[1]),
        idle_timeout: Duration::from_millis(n[2]),
        ..Config::default()
    };
    let service = Service::start_with("127.0.0.1:0", &config).unwrap();
    println!("COORDINATOR={}", service.local_addr());
    wait_for_parent();
    service.shutdown();
}

/// Process 0 of 2 behind a secret: serves, joins, publishes a value.
fn secret_coordinator() {
    let config = Config {
        secret: Some(SECRET.to_vec()),
        ..Config::default()
    };
    let service = Service::start_with("127.0.0.1:0", &config).unwrap();
    let address = service.local_addr().to_string();
    println!("COORDINATOR={address}");
    let store = KeyValueStore::connect_with(&address, 2, 0, STEP, &config).unwrap();
    store.put("from0", "hello").unwrap();
    println!("JOINED=0");
    wait_for_parent();
    store.close();
    service.shutdown();
}

/// A worker given `process,count,mode[,address]`: process 0 serves. `victim` connects and then
/// idles until killed; `barrier` and `get` block on what the victim never provides and report
/// how that ended; `connect-victim` and `connect` do the same within the rendezvous.
fn worker(arg: &str) {
    let parts: Vec<&str> = arg.split(',').collect();
    let (me, n, mode) = (
        parts[0].parse::<usize>().unwrap(),
        parts[1].parse::<usize>().unwrap(),
        parts[2],
    );
    let config = Config::from_env().unwrap();
    let service = (me == 0).then(|| {
        let s = Service::start_with("127.0.0.1:0", &config).unwrap();
        println!("COORDINATOR={}", s.local_addr());
        s
    });
    let address = match &service {
        Some(s) => s.local_addr().to_string(),
        None => parts[3].to_string(),
    };
    let connect = || KeyValueStore::connect_with(&address, n, me, STEP, &config);
    match mode {
        "victim" => {
            let _store = connect().unwrap();
            println!("READY=");
            std::thread::sleep(Duration::from_secs(60));
        }
        "connect-victim" => {
            let (address, config) = (address.clone(), config.clone());
            std::thread::spawn(move || {
                let _ = KeyValueStore::connect_with(&address, n, me, STEP, &config);
            });
            std::thread::sleep(Duration::from_millis(500));
            println!("READY=");
            std::thread::sleep(Duration::from_secs(60));
        }
        "connect" => {
            println!("WAITING=");
            let t = Instant::now();
            let r = connect();
            println!(
                "OUTCOME={} AFTER_MS={}",
                describe(&r),
                t.elapsed().as_millis()
            );
        }
        _ => {
            let store = connect().unwrap();
            println!("WAITING=");
            let t = Instant::now();
            let r = match mode {
                "barrier" => store.barrier("never-complete", STEP),
                _ => store.get("never-set", STEP).map(|_| ()),
            };
            println!(
                "OUTCOME={} AFTER_MS={}",
                describe(&r),
                t.elapsed().as_millis()
            );
            // Later requests fail too: the program cannot go on.
            println!("LATER={}", describe(&store.try_get("anything")));
        }
    }
    // Process 0 keeps serving until the parent has every other outcome.
    wait_for_parent();
    drop(service);
}

#[test]
fn child() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let arg = std::env::var(ARG).unwrap_or_default();
    match role.as_str() {
        "coordinator" => coordinator(&arg),
        "secret-coordinator" => secret_coordinator(),
        "worker" => worker(&arg),
        other => panic!("unknown child role {other}"),
    }
}

// ---- the findings ----

/// Frames that announce 4 GiB (and more) but carry nothing: the connection is closed, and
/// the coordinator's memory does not grow (before the fix it reserved each announced length,
/// 12.5 GiB of virtual memory for three frames).
#[test]
fn an_oversized_frame_closes_the_connection_and_the_coordinator_stays_small() {
    let mut coordinator = spawn("coordinator", "64,10000,60000", &[]);
    let address = coordinator.expect("COORDINATOR=", STEP);
    let pid = coordinator.pid();
    let (rss_before, size_before) = (status_kb(pid, "VmRSS:"), status_kb(pid, "VmSize:"));
    let frames: [(u64, u64); 3] = [(0, 1 << 32), (1 << 32, 0), (0, u64::MAX)];
    let mut streams = Vec::new();
    for (key_len, value_len) in frames {
        let mut s =
            jaxrs::distributed::authenticated_connection(&address, &Config::default(), STEP)
                .unwrap();
        let mut frame = vec![1u8]; // a put
        frame.extend_from_slice(&key_len.to_le_bytes());
        frame.extend_from_slice(&value_len.to_le_bytes());
        s.write_all(&frame[..if key_len > 0 { 9 } else { 17 }])
            .unwrap();
        streams.push(s);
    }
    for s in &mut streams {
        assert!(
            closed_by_peer(s, Duration::from_secs(5)),
            "a frame over the limit left its connection open"
        );
    }
    let (rss, size) = (status_kb(pid, "VmRSS:"), status_kb(pid, "VmSize:"));
    assert!(
        rss < rss_before + 32 * 1024,
        "VmRSS {rss_before} -> {rss} kB"
    );
    assert!(
        size < size_before + 1024 * 1024,
        "VmSize {size_before} -> {size} kB"
    );
    // The service still serves.
    let store = KeyValueStore::connect_with(&address, 1, 0, STEP, &Config::default()).unwrap();
    let value = vec![7u8; 3 << 20];
    store.put("big", &value).unwrap();
    assert_eq!(store.get("big", STEP).unwrap(), value);
    store.close();
    coordinator.finish(STEP);
}

fn unauthenticated(r: jaxrs::Result<KeyValueStore>) -> String {
    match r {
        Err(Error::Distributed {
            code: ErrorCode::Unauthenticated,
            message,
        }) => message,
        other => panic!("expected Unauthenticated, got {other:?}"),
    }
}

/// A stranger with a wrong secret, or none, is refused before any request and cannot take a
/// process id; something that does not speak the protocol is closed at once; the real
/// process 1 then joins.
#[test]
fn a_wrong_or_missing_secret_is_refused_and_the_real_process_still_joins() {
    let mut coordinator = spawn("secret-coordinator", "", &[]);
    let address = coordinator.expect("COORDINATOR=", STEP);
    let wrong = Config {
        secret: Some(b"a wrong secret".to_vec()),
        ..Config::default()
    };
    for config in [&wrong, &Config::default()] {
        let t = Instant::now();
        let m = unauthenticated(KeyValueStore::connect_with(&address, 2, 1, STEP, config));
        assert!(m.contains("do not share the same secret"), "{m}");
        assert!(m.contains("JAXRS_COORDINATOR_TOKEN"), "{m}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
    // Not the protocol at all: closed as soon as it is read, not at the next connection.
    let mut http = TcpStream::connect(&address).unwrap();
    http.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    assert!(closed_by_peer(&mut http, Duration::from_secs(2)));
    let right = Config {
        secret: Some(SECRET.to_vec()),
        ..Config::default()
    };
    let store = KeyValueStore::connect_with(&address, 2, 1, STEP, &right).unwrap();
    assert_eq!(coordinator.expect("JOINED=", STEP), "0");
    assert_eq!(store.get("from0", STEP).unwrap(), b"hello");
    store.close();
    coordinator.finish(STEP);
}

/// 200 connections that never say anything: the ones past the cap are closed at once, the
/// rest by the handshake timeout, the coordinator's descriptors stay bounded, and a real
/// client gets in.
#[test]
fn two_hundred_idle_connections_neither_lock_out_a_client_nor_exhaust_descriptors() {
    const CAP: usize = 32;
    let mut coordinator = spawn("coordinator", &format!("{CAP},3000,60000"), &[]);
    let address = coordinator.expect("COORDINATOR=", STEP);
    let pid = coordinator.pid();
    let fds_before = open_fds(pid);
    let mut idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(&address).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let fds = open_fds(pid);
    assert!(
        fds <= fds_before + 2 * CAP + 8,
        "{fds_before} -> {fds} descriptors"
    );
    // Those past the cap were closed as soon as they were accepted, long before the
    // handshake timeout (3 s).
    let deadline = Instant::now() + Duration::from_millis(1500);
    let closed_early = idle
        .iter_mut()
        .map(|s| closed_by_peer(s, deadline.saturating_duration_since(Instant::now())))
        .filter(|&closed| closed)
        .count();
    assert!(
        closed_early >= 200 - CAP - 8,
        "{closed_early} of 200 closed early"
    );
    let t = Instant::now();
    let store = KeyValueStore::connect_with(&address, 1, 0, STEP, &Config::default()).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    store.put("in", "yes").unwrap();
    assert_eq!(store.try_get("in").unwrap(), Some(b"yes".to_vec()));
    let deadline = Instant::now() + Duration::from_secs(10);
    for s in &mut idle {
        assert!(closed_by_peer(
            s,
            deadline.saturating_duration_since(Instant::now())
        ));
    }
    store.close();
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(10);
    while open_fds(pid) > fds_before + 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let fds = open_fds(pid);
    assert!(
        fds <= fds_before + 2,
        "{fds_before} -> {fds} descriptors at the end"
    );
    coordinator.finish(STEP);
}

/// What the processes blocked on the victim reported: `(outcome, ms it took)`.
fn outcome(kid: &mut Kid) -> (String, u64) {
    let line = kid.expect("OUTCOME=", STEP);
    let (what, ms) = line.rsplit_once(" AFTER_MS=").unwrap();
    (what.to_string(), ms.parse().unwrap())
}

/// A worker killed with SIGKILL while the others wait in a barrier and a get (each with a
/// 30 s timeout, and the default heartbeat timeout of 100 s): they fail at once with
/// `PeerFailed` naming it.
#[test]
fn a_worker_killed_mid_barrier_fails_the_others_at_once_naming_it() {
    let mut p0 = spawn("worker", "0,3,barrier", &[]);
    let address = p0.expect("COORDINATOR=", STEP);
    let mut p1 = spawn("worker", &format!("1,3,get,{address}"), &[]);
    let mut victim = spawn("worker", &format!("2,3,victim,{address}"), &[]);
    victim.expect("READY=", STEP);
    p0.expect("WAITING=", STEP);
    p1.expect("WAITING=", STEP);
    std::thread::sleep(Duration::from_millis(300));
    let killed = Instant::now();
    victim.child.kill().unwrap(); // SIGKILL
    for p in [&mut p0, &mut p1] {
        let (what, _) = outcome(p);
        assert!(
            killed.elapsed() < Duration::from_secs(5),
            "{:?}",
            killed.elapsed()
        );
        assert!(what.starts_with("PeerFailed:2:"), "{what}");
        assert!(what.contains("without a goodbye"), "{what}");
        assert!(p.expect("LATER=", STEP).starts_with("PeerFailed:2:"));
    }
    p1.finish(STEP);
    p0.finish(STEP);
}

/// A worker that stops (SIGSTOP: alive, connected, silent) is declared dead after the
/// heartbeat timeout, here 1 s through `JAXRS_HEARTBEAT_TIMEOUT`.
#[test]
fn a_hung_worker_is_declared_dead_after_the_heartbeat_timeout() {
    let env = [("JAXRS_HEARTBEAT_TIMEOUT", "1")];
    let mut p0 = spawn("worker", "0,2,barrier", &env);
    let address = p0.expect("COORDINATOR=", STEP);
    let mut victim = spawn("worker", &format!("1,2,victim,{address}"), &env);
    victim.expect("READY=", STEP);
    p0.expect("WAITING=", STEP);
    std::thread::sleep(Duration::from_millis(300));
    let stopped = Instant::now();
    let status = Command::new("kill")
        .args(["-STOP", &victim.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (what, _) = outcome(&mut p0);
    let took = stopped.elapsed();
    assert!(what.starts_with("PeerFailed:1:"), "{what}");
    assert!(what.contains("sent no heartbeat for 1s"), "{what}");
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(6),
        "{took:?}"
    );
    drop(victim); // SIGKILL ends a stopped process too
    p0.finish(STEP);
}

/// A process killed while the others wait for the rest to connect: their connect (what
/// `initialize` waits in) fails at once naming it, not after its 30 s timeout.
#[test]
fn a_worker_killed_during_the_rendezvous_fails_connect_naming_it() {
    let mut p0 = spawn("worker", "0,3,connect", &[]);
    let address = p0.expect("COORDINATOR=", STEP);
    p0.expect("WAITING=", STEP);
    let mut victim = spawn("worker", &format!("1,3,connect-victim,{address}"), &[]);
    victim.expect("READY=", STEP);
    std::thread::sleep(Duration::from_millis(500));
    let killed = Instant::now();
    victim.child.kill().unwrap();
    let (what, _) = outcome(&mut p0);
    assert!(
        killed.elapsed() < Duration::from_secs(5),
        "{:?}",
        killed.elapsed()
    );
    assert!(what.starts_with("PeerFailed:1:"), "{what}");
    p0.finish(STEP);
}

/// Listeners on loopback that accept and never answer, or never accept: `connect` with a 2 s
/// timeout returns after about 2 s (it took 61.8 s).
#[test]
fn connect_to_a_hung_coordinator_honours_its_timeout() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_address = silent.local_addr().unwrap().to_string();
    silent.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let holder = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            let until = Instant::now() + Duration::from_secs(60);
            while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                match silent.accept() {
                    Ok((s, _)) => held.push(s),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        })
    };
    let deaf = TcpListener::bind("127.0.0.1:0").unwrap();
    let deaf_address = deaf.local_addr().unwrap().to_string();
    for address in [&silent_address, &deaf_address] {
        let t = Instant::now();
        let r = KeyValueStore::connect(address, 1, 0, Duration::from_secs(2));
        let took = t.elapsed();
        match r {
            Err(Error::Distributed {
                code: ErrorCode::Unavailable,
                message,
            }) => assert!(
                message.contains("could not reach the coordinator"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(
            took >= Duration::from_millis(1900) && took < Duration::from_secs(4),
            "{address}: {took:?}"
        );
    }
    stop.store(true, Ordering::SeqCst);
    holder.join().unwrap();
    drop(deaf);
}

/// Values over the limit are refused before they are sent, the store's memory is capped,
/// and `delete` frees room (the key can then be set again).
#[test]
fn the_store_caps_value_size_and_memory_and_delete_frees_room() {
    let config = Config {
        max_value_bytes: 1 << 20,
        max_store_bytes: 3 << 20,
        ..Config::default()
    };
    let service = Service::start_with("127.0.0.1:0", &config).unwrap();
    let address = service.local_addr().to_string();
    let store = KeyValueStore::connect_with(&address, 1, 0, STEP, &config).unwrap();
    let exhausted = |r: jaxrs::Result<()>| match r {
        Err(Error::Distributed {
            code: ErrorCode::ResourceExhausted,
            message,
        }) => message,
        other => panic!("expected ResourceExhausted, got {other:?}"),
    };
    let m = exhausted(store.put("too-big", vec![0u8; (1 << 20) + 1]));
    assert!(
        m.contains("a value of 1048577 bytes is over the coordination service's limit of 1048576"),
        "{m}"
    );
    let mib = |b: u8| vec![b; 1 << 20];
    store.put("a", mib(1)).unwrap();
    store.put("b", mib(2)).unwrap();
    let m = exhausted(store.put("c", mib(3)));
    assert!(m.contains("would pass its limit of 3145728"), "{m}");
    store.delete("a").unwrap();
    store.delete("never-set").unwrap();
    assert_eq!(store.try_get("a").unwrap(), None);
    store.put("c", mib(3)).unwrap();
    assert_eq!(store.get("c", STEP).unwrap(), mib(3));
    store.delete("b").unwrap();
    store.put("a", mib(4)).unwrap();
    assert_eq!(store.get("a", STEP).unwrap(), mib(4));
    store.close();
    service.shutdown();
}

/// The service closes connections idle past its idle timeout; the client's pool drops them
/// first, and the heartbeat connection is not taken for idle.
#[test]
fn a_client_outlives_the_idle_timeout_of_its_pooled_connections() {
    let config = Config {
        idle_timeout: Duration::from_millis(400),
        ..Config::default()
    };
    let service = Service::start_with("127.0.0.1:0", &config).unwrap();
    let address = service.local_addr().to_string();
    let store = KeyValueStore::connect_with(&address, 1, 0, STEP, &config).unwrap();
    store.put("k", "v").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(store.get("k", STEP).unwrap(), b"v");
    store.barrier("after-idle", STEP).unwrap();
    store.close();
    service.shutdown();
}

/// A stranger who sends its greeting a byte at a time cannot hold a connection past the I/O
/// timeout: the limit is on the whole handshake, not on each read.
#[test]
fn a_stranger_trickling_its_handshake_is_cut_off_at_the_io_timeout() {
    let config = Config {
        io_timeout: Duration::from_millis(1000),
        ..Config::default()
    };
    let service = Service::start_with("127.0.0.1:0", &config).unwrap();
    let mut slow = TcpStream::connect(service.local_addr()).unwrap();
    let t = Instant::now();
    let mut cut_off = false;
    for b in b"JXKV\x02".iter().cycle().take(40) {
        if slow.write_all(&[*b]).is_err() {
            cut_off = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(150));
        if closed_by_peer(&mut slow, Duration::from_millis(1)) {
            cut_off = true;
            break;
        }
    }
    assert!(cut_off, "still open after {:?}", t.elapsed());
    assert!(
        t.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t.elapsed()
    );
    service.shutdown();
}
