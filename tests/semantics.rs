//! Where jaxrs follows JAX's semantics rather than XLA's or Rust's: `take`'s modes and
//! donation. Expected values are what JAX 0.10.2 returns, written beside each case (integer
//! division and remainder are golden-tested in `ops_elementwise.json`).

use jaxrs::prelude::*;

fn same(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(g == w || (g.is_nan() && w.is_nan()), "{got:?} vs {want:?}");
    }
}

fn indices() -> Array {
    Array::from_vec(vec![0i32, 4, 5, -1, -6, 10], &[6])
}

#[test]
fn take_fills_out_of_range_by_default_as_jax() {
    let x = Array::arange(0.0, 5.0, 1.0, DType::F32);
    let nan = f32::NAN;
    // jnp.take(jnp.arange(5.), jnp.array([0, 4, 5, -1, -6, 10])) = [0, 4, nan, 4, nan, nan]
    let want = [0.0, 4.0, nan, 4.0, nan, nan];
    same(&x.take(&indices(), 0).to_vec::<f32>(), &want);
    same(
        &x.take_with(&indices(), 0, TakeMode::Fill).to_vec::<f32>(),
        &want,
    );
    let jitted = jit(|(x, i): (Array, Array)| x.take(&i, 0));
    same(
        &jitted
            .call::<_, Array>((x.clone(), indices()))
            .to_vec::<f32>(),
        &want,
    );
    // ints take the minimum, unsigned ints the maximum, bools true
    let xi = Array::from_vec((0..5).collect::<Vec<i32>>(), &[5]);
    let m = i32::MIN;
    assert_eq!(
        xi.take(&indices(), 0).to_vec::<i32>(),
        vec![0, 4, m, 4, m, m]
    );
    let xu = Array::from_vec((0..5).collect::<Vec<u32>>(), &[5]);
    let u = u32::MAX;
    assert_eq!(
        xu.take(&indices(), 0).to_vec::<u32>(),
        vec![0, 4, u, 4, u, u]
    );
    // jnp.take(jnp.arange(6.).reshape(2, 3), jnp.array([0, 3, -1, -4]), axis=1)
    let m = Array::arange(0.0, 6.0, 1.0, DType::F32).reshape([2, 3]);
    let i = Array::from_vec(vec![0i32, 3, -1, -4], &[4]);
    let got = m.take(&i, 1);
    assert_eq!(got.shape(), &[2, 4]);
    same(
        &got.to_vec::<f32>(),
        &[0.0, nan, 2.0, nan, 3.0, nan, 5.0, nan],
    );
}

#[test]
fn take_counts_negative_narrow_indices_from_the_end_of_a_long_axis() {
    // -1 counted from the end of 200 is 199, which does not fit in an i8. (JAX 0.10.2's
    // `jnp.take(jnp.arange(200.), jnp.array([-1, -128, 127, 5], jnp.int8))` gives
    // [nan, 72, 127, 5]: its range check computes -200 in int8, which wraps. jaxrs gives the
    // documented meaning, x[199], as JAX does for the same index as an int32.)
    let x = Array::arange(0.0, 200.0, 1.0, DType::F32);
    let i8s = Array::from_vec(vec![-1i8, -128, 127, 5], &[4]);
    same(&x.take(&i8s, 0).to_vec::<f32>(), &[199.0, 72.0, 127.0, 5.0]);
    // jnp.take(.., jnp.array([199, 255, 0], jnp.uint8)) = [199, nan, 0].
    let u8s = Array::from_vec(vec![199u8, 255, 0], &[3]);
    same(&x.take(&u8s, 0).to_vec::<f32>(), &[199.0, f32::NAN, 0.0]);
}

#[test]
fn take_clip_and_wrap_as_jax() {
    let x = Array::arange(0.0, 5.0, 1.0, DType::F32);
    // mode="clip": [0, 4, 4, 0, 0, 4] (a negative index clamps to 0)
    same(
        &x.take_with(&indices(), 0, TakeMode::Clip).to_vec::<f32>(),
        &[0.0, 4.0, 4.0, 0.0, 0.0, 4.0],
    );
    // mode="wrap": [0, 4, 0, 4, 4, 0]
    same(
        &x.take_with(&indices(), 0, TakeMode::Wrap).to_vec::<f32>(),
        &[0.0, 4.0, 0.0, 4.0, 4.0, 0.0],
    );
}

#[test]
fn take_gradients_as_jax() {
    let x = Array::arange(0.0, 5.0, 1.0, DType::F32);
    let grad_of = |mode: TakeMode| {
        grad(move |x: Array| {
            let y = x.take_with(&indices(), 0, mode);
            // zero the fills, whose NaN would poison the sum
            where_(y.ne(&y), 0.0, &y).sum(None, false)
        })(x.clone())
        .to_vec::<f32>()
    };
    // jax.grad of the sum: fill [1, 0, 0, 0, 2]; clip and wrap [3, 0, 0, 0, 3]
    same(&grad_of(TakeMode::Fill), &[1.0, 0.0, 0.0, 0.0, 2.0]);
    same(&grad_of(TakeMode::Clip), &[3.0, 0.0, 0.0, 0.0, 3.0]);
    same(&grad_of(TakeMode::Wrap), &[3.0, 0.0, 0.0, 0.0, 3.0]);
    check_grads(
        |x: Array| {
            x.take_with(&Array::from_vec(vec![1i32, 7, -2], &[3]), 0, TakeMode::Clip)
                .sin()
        },
        &x,
        2,
    );
}

#[test]
fn take_fill_under_vmap() {
    // per example: x[b] taken at i[b]; out-of-range rows fill
    let x = Array::arange(0.0, 6.0, 1.0, DType::F32).reshape([2, 3]);
    let i = Array::from_vec(vec![2i32, 3, -4, -1], &[2, 2]);
    let f = vmap(|(x, i): (Array, Array)| x.take(&i, 0), 0, 0);
    let nan = f32::NAN;
    same(&f((x, i)).to_vec::<f32>(), &[2.0, nan, nan, 5.0]);
}

#[jit(donate = (a, b))]
fn add_donating_both(a: Array, b: Array) -> Array {
    &a + &b
}

#[jit(donate = a)]
fn add_donating_first(a: Array, b: &Array) -> Array {
    &a + b
}

#[test]
fn donating_the_same_array_twice_is_an_error_naming_both_parameters() {
    // JAX: jit(f, donate_argnums=(0, 1))(x, x) and jit(f, donate_argnums=0)(x, x) raise
    // "Attempt to use a buffer that was previously donated in the same call".
    let x = Array::from_vec(vec![1.0f32; 4], &[4]);
    let err = try_run(|| add_donating_both(x.clone(), x.clone())).expect_err("donated twice");
    let msg = err.to_string();
    assert!(matches!(err, jaxrs::Error::DonatedBufferUsed(_)), "{msg}");
    assert!(msg.contains("`a`") && msg.contains("`b`"), "{msg}");
    let err = try_run(|| add_donating_first(x.clone(), &x)).expect_err("donated and read");
    let msg = err.to_string();
    assert!(msg.contains("`a`") && msg.contains("`b`"), "{msg}");
    // The array is untouched and the functions still work with distinct arguments.
    assert_eq!(x.to_vec::<f32>(), vec![1.0; 4]);
    let y = Array::from_vec(vec![2.0f32; 4], &[4]);
    assert_eq!(
        add_donating_first(x.clone(), &y).to_vec::<f32>(),
        vec![3.0; 4]
    );
    let z = Array::from_vec(vec![3.0f32; 4], &[4]);
    assert_eq!(add_donating_both(y, z).to_vec::<f32>(), vec![5.0; 4]);
}

/// Records the warnings of jaxrs's jit.
struct Warnings(std::sync::Mutex<Vec<String>>);

impl log::Log for Warnings {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn && m.target() == "jaxrs::jit"
    }
    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            self.0.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

static WARNINGS: Warnings = Warnings(std::sync::Mutex::new(Vec::new()));

#[jit(donate = x)]
fn scale_donated(x: Array) -> Array {
    &x * 2.0
}

#[test]
fn a_skipped_donation_warns_once_per_function() {
    log::set_logger(&WARNINGS).expect("the only logger of this test binary");
    log::set_max_level(log::LevelFilter::Warn);
    let x = Array::from_vec(vec![1.0f32; 4], &[4]);
    for _ in 0..3 {
        // `x` stays alive: the clone's buffer cannot be donated.
        assert_eq!(scale_donated(x.clone()).to_vec::<f32>(), vec![2.0; 4]);
    }
    let ours: Vec<String> = WARNINGS
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|w| w.contains("scale_donated"))
        .cloned()
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert!(
        ours[0].contains("`x`") && ours[0].contains("not donated"),
        "{ours:?}"
    );
}

/// `jnp.sum`, `jnp.mean` and `jnp.prod` of float16 and bfloat16 accumulate in float32 and
/// round once. Expected values from JAX 0.10.2:
/// `jnp.sum(jnp.full((1000,), 0.1, jnp.bfloat16))` is 100.0 and its mean 0.10009765625; the
/// float16 ones are 100.0 and 0.0999755859375; `jnp.prod(jnp.full((3,), 1.01, jnp.float16))`
/// is 1.029296875. Accumulating in bfloat16 gave 98.0.
#[test]
fn half_precision_reductions_accumulate_in_f32_as_jax() {
    let read = |x: Array| f64::from(x.astype(DType::F32).item::<f32>());
    for (dtype, mean) in [(DType::BF16, 0.10009765625), (DType::F16, 0.0999755859375)] {
        let x = Array::full(&[1000], 0.1, dtype);
        assert_eq!(read(x.sum(None, false)), 100.0, "{dtype:?} sum");
        assert_eq!(read(x.mean(None, false)), mean, "{dtype:?} mean");
        let jitted = jit(|x: Array| (x.sum(None, false), x.mean(None, false))).call(x);
        assert_eq!(
            (read(jitted.0), read(jitted.1)),
            (100.0, mean),
            "{dtype:?} jit"
        );
    }
    let y = Array::full(&[3], 1.01, DType::F16);
    assert_eq!(y.prod(None, false).dtype(), DType::F16);
    assert_eq!(read(y.prod(None, false)), 1.029296875);
}

#[test]
fn take_along_axis_fills_out_of_range_and_gives_it_no_gradient_as_jax() {
    let x = Array::arange(0.0, 6.0, 1.0, DType::F32).reshape([2, 3]);
    let i = Array::from_vec(vec![0i32, 3, -1, -4, 2, 2, -3, 5], &[2, 4]);
    let nan = f32::NAN;
    // jnp.take_along_axis(jnp.arange(6.).reshape(2, 3), i, axis=1)
    let want = [0.0, nan, 2.0, nan, 5.0, 5.0, 3.0, nan];
    same(&x.take_along_axis(&i, 1).to_vec::<f32>(), &want);
    let jitted = jit(|(x, i): (Array, Array)| x.take_along_axis(&i, 1));
    same(
        &jitted
            .call::<_, Array>((x.clone(), i.clone()))
            .to_vec::<f32>(),
        &want,
    );
    // jax.grad(lambda x: (jnp.take_along_axis(x, i, axis=1) * w).sum())(x), w = 1..8: the
    // repeated index accumulates, the out-of-range ones give nothing.
    let w = Array::arange(1.0, 9.0, 1.0, DType::F32).reshape([2, 4]);
    let g = grad(move |x: Array| (x.take_along_axis(&i, 1) * &w).sum(None, false))(x);
    same(&g.to_vec::<f32>(), &[1.0, 0.0, 3.0, 7.0, 0.0, 11.0]);
}
