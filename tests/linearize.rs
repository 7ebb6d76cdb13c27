//! `linearize` and `eval_shape` against JAX 0.10.2 (x64). The expected values were printed by
//! `jax.linearize` and `jax.eval_shape` on the same functions and inputs:
//!
//! ```text
//! f = lambda x, w: (jnp.tanh(w @ x), jnp.sum(jnp.sin(x) ** 2))
//! y, f_jvp = jax.linearize(f, x, w); f_jvp(tx, tw)
//! def g(x):
//!     def body(c, xi): c = c * jnp.cos(xi) + xi; return c, c * c
//!     return jax.lax.scan(body, 1.0, x)
//! ```

use jaxrs::prelude::*;
use jaxrs::{eval_shape, linearize, make_jaxpr, ShapeDtypeStruct, TreeDef};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_vec(v.to_vec(), shape)
}

fn close(got: &Array, want: &[f64]) {
    let got = got.to_vec::<f64>();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-12 + 1e-7 * w.abs(),
            "{got:?} vs {want:?}"
        );
    }
}

fn x() -> Array {
    f64s(&[0.5, -1.0, 2.0], &[3])
}

fn tx() -> Array {
    f64s(&[1.0, 0.5, -2.0], &[3])
}

fn f((x, w): (Array, Array)) -> (Array, Array) {
    ((w.matmul(&x)).tanh(), (x.sin() * x.sin()).sum(None, false))
}

#[test]
fn linearize_gives_jaxs_values_and_tangents_over_trees() {
    let w = f64s(&[1.0, 2.0, 0.5, -0.5, 0.25, 1.5], &[2, 3]);
    let tw = f64s(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
    let ((y0, y1), f_jvp) = linearize(f, &(x(), w.clone()));
    close(&y0, &[-0.46211716, 0.9866143]);
    close(&y1, &[1.76474408]);
    let (t0, t1) = f_jvp.call(&(tx(), tw.clone()));
    close(&t0, &[1.14034921, -0.06581576]);
    close(&t1, &[1.90042726]);
    // The same as jvp along every tangent, and linear: twice the tangent, twice the output.
    let (_, (j0, j1)) = jvp(f, &(x(), w.clone()), &(tx(), tw.clone()));
    assert_eq!(t0.to_vec::<f64>(), j0.to_vec::<f64>());
    assert_eq!(t1.to_vec::<f64>(), j1.to_vec::<f64>());
    let (d0, _) = f_jvp.call(&(&tx() * 2.0, &tw * 2.0));
    close(&d0, &[2.0 * 1.14034921, 2.0 * -0.06581576]);
}

#[test]
fn linearize_through_scan() {
    let g = |x: Array| {
        scan(
            |c: Array, xi: Array| {
                let c = &c * &xi.cos() + &xi;
                (c.clone(), &c * &c)
            },
            Array::scalar(1.0f64),
            x,
        )
    };
    let ((c, ys), g_jvp) = linearize(g, &x());
    close(&c, &[2.10640415]);
    close(&ys, &[1.89773371, 0.06537685, 4.43693846]);
    let (dc, dys) = g_jvp.call(&tx());
    close(&dc, &[-3.03131449]);
    close(&dys, &[1.4342686, -0.69591656, -12.77034688]);
}

/// The primal part runs once, at `linearize`: the linear map's program has no `sin`, only
/// the tangent rule's multiplications by the saved `cos`.
#[test]
fn the_linear_map_does_not_recompute_the_primal() {
    let (_, f_jvp) = linearize(|x: Array| x.sin() * 2.0, &x());
    let tangent_program = make_jaxpr(|t: Array| f_jvp.call(&t), &tx()).to_string();
    assert!(!tangent_program.contains("sin"), "{tangent_program}");
    assert!(!tangent_program.contains("cos"), "{tangent_program}");
    assert!(tangent_program.contains("mul"), "{tangent_program}");
    close(
        &f_jvp.call(&tx()),
        &(x().cos() * tx() * 2.0).to_vec::<f64>(),
    );
    // An output that does not depend on the input has a zero tangent.
    let (_, const_jvp) = linearize(|x: Array| (x.clone(), Array::scalar(3.0f64)), &x());
    let (_, dz) = const_jvp.call(&tx());
    assert_eq!(dz.item::<f64>(), 0.0);
}

#[test]
fn linearize_checks_the_tangents() {
    let (_, f_jvp) = linearize(|x: Array| x.sin(), &x());
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        f_jvp.call(&Array::ones(&[2], DType::F64))
    }));
    let msg = err.expect_err("wrong shape");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("linearize: a tangent is f64[2] but its primal is f64[3]"),
        "{msg}"
    );
}

#[test]
fn eval_shape_traces_without_running() {
    // jax.eval_shape(lambda a, b: (a @ b, a.sum(0)), SDS((3, 4), f32), SDS((4, 5), f32))
    let args = jaxrs::tree::TreeOf::new(
        TreeDef::Tuple(vec![TreeDef::Leaf; 2]),
        vec![
            ShapeDtypeStruct::new([3, 4], DType::F32),
            ShapeDtypeStruct::new([4, 5], DType::F32),
        ],
    );
    let out = eval_shape(
        |(a, b): (Array, Array)| (a.matmul(&b), a.sum(0, false)),
        &args,
    );
    assert_eq!(
        out.leaves(),
        &[
            ShapeDtypeStruct::new([3, 5], DType::F32),
            ShapeDtypeStruct::new([4], DType::F32)
        ]
    );
    assert_eq!(out.structure(), &TreeDef::Tuple(vec![TreeDef::Leaf; 2]));
    // int32 * 2.0 is a weak float64, as JAX's ShapeDtypeStruct(dtype=float64, weak_type=True).
    let ints = jaxrs::tree::TreeOf::leaf(ShapeDtypeStruct::new([3], DType::I32));
    let out = eval_shape(|a: Array| a * 2.0, &ints);
    assert_eq!(
        out.leaves(),
        &[ShapeDtypeStruct::new([3], DType::F64).weak(true)]
    );
    let out = eval_shape(|a: Array| a * 2, &ints);
    assert_eq!(out.leaves(), &[ShapeDtypeStruct::new([3], DType::I32)]);
    // Arrays work as their own abstract values, and trees of them.
    let out = eval_shape(|(a, b): (Array, Array)| &a + &b, &(x(), x()));
    assert_eq!(out.as_leaf(), Some(&ShapeDtypeStruct::new([3], DType::F64)));
}

/// `jax.linear_transpose` of a linear function of a tuple, through a matmul, a cumsum and a
/// fori_loop, against JAX (x64):
///
/// ```text
/// A = [[1, -2, 0.5], [3, 0.25, -1]]
/// f = lambda args: (A @ args[0] - args[1][:2], jnp.cumsum(args[1]) * 2.0,
///                   lax.fori_loop(0, 3, lambda i, c: c * 0.5 + args[0], args[0]))
/// jax.linear_transpose(f, (zeros(3), zeros(4)))(([1, -2], [0.5, 1, -1, 2], [1, 2, 3]))
/// ```
#[test]
fn linear_transpose_matches_jax() {
    let a = f64s(&[1.0, -2.0, 0.5, 3.0, 0.25, -1.0], &[2, 3]);
    let f = |(x, y): (Array, Array)| {
        let looped = fori_loop(0, 3, |_, c: Array| &c * 0.5 + &x, x.clone());
        (
            a.matmul(&x) - y.slice_axis(0, 0, 2),
            jaxrs::numpy::cumsum(&y, 0) * 2.0,
            looped,
        )
    };
    let example = (
        Array::zeros(&[3], DType::F64),
        Array::zeros(&[4], DType::F64),
    );
    let f_t = jaxrs::linear_transpose(f, &example);
    let ct = (
        f64s(&[1.0, -2.0], &[2]),
        f64s(&[0.5, 1.0, -1.0, 2.0], &[4]),
        f64s(&[1.0, 2.0, 3.0], &[3]),
    );
    let (gx, gy) = f_t.call(&ct);
    close(&gx, &[-3.125, 1.25, 8.125]);
    close(&gy, &[4.0, 6.0, 2.0, 4.0]);
    // A cotangent not shaped like the output is refused, naming both.
    let msg = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        f_t.call(&(
            f64s(&[1.0, -2.0, 0.0], &[3]),
            f64s(&[0.5, 1.0, -1.0, 2.0], &[4]),
            f64s(&[1.0, 2.0, 3.0], &[3]),
        ))
    }))
    .expect_err("a wrong cotangent shape");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("linear_transpose"), "{msg}");
}
