//! One process of a multi-process program, as `jax.distributed.initialize` starts one:
//!
//! ```sh
//! # two processes on one machine (on XLA's CPU plugin, more than one process is refused
//! # with the reason; point JAXRS_PJRT_PLUGIN at the CUDA plugin for the real thing)
//! cargo run --example distributed -- 127.0.0.1:12345 2 0 &
//! cargo run --example distributed -- 127.0.0.1:12345 2 1
//! ```
//!
//! Each process joins, prints its index, its local devices and every device of the run with
//! the process driving it, publishes a value through the coordination store and reads every
//! other process's, sums an array on its first device, and leaves.

use jaxrs::prelude::*;
use std::time::Duration;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> jaxrs::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (address, num_processes, process_id) = match args.as_slice() {
        [a, n, id] => (
            a.clone(),
            n.parse().expect("num_processes is a number"),
            id.parse().expect("process_id is a number"),
        ),
        [] => ("127.0.0.1:0".to_string(), 1, 0),
        _ => {
            eprintln!("usage: distributed [COORDINATOR_ADDRESS NUM_PROCESSES PROCESS_ID]");
            std::process::exit(2);
        }
    };
    jaxrs::distributed::initialize(&address, num_processes, process_id)?;
    let local = jaxrs::local_devices();
    println!(
        "process {} of {}: {} local device(s) of {} on {}: {local:?}",
        jaxrs::process_index(),
        jaxrs::process_count(),
        local.len(),
        jaxrs::device_count(),
        local[0].platform()
    );
    // Every device of the run, with the process that drives it: the global device ids XLA's
    // plugin agreed on through the key-value store.
    for d in jaxrs::devices() {
        println!("  device {} of process {}", d.id(), d.process_index());
    }
    let store = jaxrs::distributed::key_value_store().expect("initialized");
    store.put(format!("hello/{process_id}"), format!("from {process_id}"))?;
    for other in 0..num_processes {
        let value = store.get(format!("hello/{other}"), Duration::from_secs(60))?;
        println!(
            "process {process_id} read {:?}",
            String::from_utf8_lossy(&value)
        );
    }
    let total = Array::ones(&[4], DType::F32).sum(None, false).item::<f32>();
    println!("process {process_id}: sum of four ones = {total}");
    jaxrs::distributed::shutdown()
}
