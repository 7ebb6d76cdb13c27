//! Helpers shared by the integration tests.

pub mod cases;
pub mod golden;

/// A child process's stdout lines, on a channel (so that a read cannot block a test forever:
/// receive with a timeout).
#[allow(dead_code)]
pub fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::{BufRead, BufReader};
    let stdout = child.stdout.take().expect("the child's stdout is piped");
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    receive
}

/// The panic message of `f`, which must panic (a programmer-error test).
#[allow(dead_code)]
pub fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("should panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// `got` equals `want`, computed another way (`how_want`: "one device", "pmap"), to 1e-5
/// relative (absolute below 1), element by element.
#[allow(dead_code)]
pub fn assert_agree(what: &str, got: &jaxrs::Array, want: &jaxrs::Array, how_want: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs().max(1.0),
            "{what}: element {i} is {a}, {how_want} gives {b}"
        );
    }
}

/// An array's elements as the golden files of `jax.random` store them: floats as the
/// integers of their bit patterns, integers and bools as integers (u64 wrapped to i64).
#[allow(dead_code)]
pub fn bits_of(x: &jaxrs::Array) -> Vec<i64> {
    use jaxrs::DType;
    match x.dtype() {
        DType::F64 => x
            .to_vec::<f64>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::F32 => x
            .to_vec::<f32>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::BF16 => x
            .to_vec::<half::bf16>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::F16 => x
            .to_vec::<half::f16>()
            .iter()
            .map(|v| v.to_bits() as i64)
            .collect(),
        DType::U64 => x.to_vec::<u64>().iter().map(|&v| v as i64).collect(),
        DType::U32 => x.to_vec::<u32>().iter().map(|&v| v as i64).collect(),
        DType::U16 => x.to_vec::<u16>().iter().map(|&v| v as i64).collect(),
        DType::U8 => x.to_vec::<u8>().iter().map(|&v| v as i64).collect(),
        DType::I32 => x.to_vec::<i32>().iter().map(|&v| v as i64).collect(),
        DType::I8 => x.to_vec::<i8>().iter().map(|&v| v as i64).collect(),
        DType::Bool => x.to_vec::<bool>().iter().map(|&v| v as i64).collect(),
        other => panic!("unexpected dtype {other:?}"),
    }
}
