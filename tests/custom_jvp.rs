//! `jaxrs::custom_jvp` (`jax.custom_jvp`): the user's rule is used in forward mode, and its
//! transpose in reverse mode, through jit, vmap and higher orders. The values are JAX's:
//! `jax.custom_jvp` of the same function and rule gives the numbers written here (the
//! scipy.special functions built on it are checked against JAX's goldens in
//! `tests/scipy_special.rs`).

use jaxrs::prelude::*;
use jaxrs::CustomJvp;

type Unary = CustomJvp<fn(Array) -> Array, fn(Array, Array) -> (Array, Array)>;

/// `f(x) = log(1 + e^x)` with the rule `df = sigmoid(x) dx`, as in JAX's custom_jvp docs.
fn softplus() -> Unary {
    fn f(x: Array) -> Array {
        x.exp().log1p()
    }
    fn rule(x: Array, dx: Array) -> (Array, Array) {
        (f(x.clone()), x.sigmoid() * dx)
    }
    custom_jvp(
        "softplus",
        f as fn(Array) -> Array,
        rule as fn(Array, Array) -> _,
    )
}

/// A function whose rule differs from autodiff of its body: `f(x) = x` with `df = 2 dx`.
fn doubled_derivative() -> Unary {
    fn f(x: Array) -> Array {
        x
    }
    fn rule(x: Array, dx: Array) -> (Array, Array) {
        (x, dx * 2.0)
    }
    custom_jvp(
        "doubled",
        f as fn(Array) -> Array,
        rule as fn(Array, Array) -> _,
    )
}

#[test]
fn forward_and_reverse_mode_use_the_rule() {
    let f = doubled_derivative();
    let x = Array::from_vec(vec![1.0f32, -3.0], &[2]);
    let (y, t) = jvp(
        |x: Array| f.call::<Array, Array>(x),
        &x,
        &Array::ones(&[2], DType::F32),
    );
    assert_eq!(y.to_vec::<f32>(), vec![1.0, -3.0]);
    assert_eq!(t.to_vec::<f32>(), vec![2.0, 2.0]);
    let g = grad(|x: Array| (f.call::<Array, Array>(x) * 3.0).sum(None, false))(x.clone());
    assert_eq!(g.to_vec::<f32>(), vec![6.0, 6.0]);
    let (_, pullback) = vjp(|x: Array| f.call::<Array, Array>(x), &x);
    let ct = pullback.call(&Array::from_vec(vec![1.0f32, 10.0], &[2]));
    assert_eq!(ct.to_vec::<f32>(), vec![2.0, 20.0]);
}

#[test]
fn the_rule_composes_with_jit_vmap_and_second_order() {
    let f = softplus();
    let x = Array::from_vec(vec![-2.0f64, 0.0, 3.0], &[3]);
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    // jit(grad): the rule's sigmoid.
    let g = jit(|x: Array| grad(|x: Array| softplus().call::<Array, Array>(x).sum(None, false))(x))
        .call(x.clone())
        .to_vec::<f64>();
    for (gi, xi) in g.iter().zip([-2.0, 0.0, 3.0]) {
        assert!((gi - sigmoid(xi)).abs() < 1e-15, "{gi} vs {}", sigmoid(xi));
    }
    // grad of grad: the derivative of the rule, sigmoid * (1 - sigmoid).
    let second =
        |x: Array| grad(|x: Array| grad(|x: Array| softplus().call::<Array, Array>(x))(x))(x);
    for xi in [-2.0, 0.0, 3.0] {
        let h = second(Array::scalar(xi)).item::<f64>();
        let s = sigmoid(xi);
        assert!(
            (h - s * (1.0 - s)).abs() < 1e-15,
            "{h} vs {}",
            s * (1.0 - s)
        );
    }
    // vmap of the call and of its gradient.
    let y = vmap(|x: Array| f.call::<Array, Array>(x), 0, 0)(x.clone()).to_vec::<f64>();
    for (yi, xi) in y.iter().zip([-2.0f64, 0.0, 3.0]) {
        assert!((yi - xi.exp().ln_1p()).abs() < 1e-15);
    }
    let per_example = vmap(
        |x: Array| grad(|x: Array| softplus().call::<Array, Array>(x))(x),
        0,
        0,
    )(x.clone())
    .to_vec::<f64>();
    assert_eq!(per_example, g);
    let (_, t) = jvp(
        |x: Array| vmap(|x: Array| softplus().call::<Array, Array>(x), 0, 0)(x),
        &x,
        &Array::ones(&[3], DType::F64),
    );
    assert_eq!(t.to_vec::<f64>(), g);
}

#[test]
fn integer_arguments_get_zero_tangents() {
    // f(x, n) = x * n with the rule d = n dx; the int argument has no derivative.
    let f = custom_jvp(
        "scale",
        |(x, n): (Array, Array)| &x * &n.astype(DType::F32),
        |(x, n): (Array, Array), (dx, _dn): (Array, Array)| {
            let nf = n.astype(DType::F32);
            (&x * &nf, &dx * &nf)
        },
    );
    let n = Array::scalar(3i32);
    let g = grad(|x: Array| f.call::<(Array, Array), Array>((x, n.clone())))(Array::scalar(2.0f32));
    assert_eq!(g.item::<f32>(), 3.0);
}

#[test]
#[should_panic(
    expected = "custom_jvp `captures`: the function closes over a value that is being differentiated"
)]
fn differentiating_a_captured_value_is_refused() {
    grad(|y: Array| {
        let f = custom_jvp(
            "captures",
            move |x: Array| &x * &y,
            |x: Array, dx: Array| (x, dx),
        );
        f.call::<Array, Array>(Array::scalar(2.0f32))
    })(Array::scalar(1.0f32));
}

#[test]
#[should_panic(expected = "custom_jvp `pair`: jvp returned a tangent")]
fn a_rule_returning_the_wrong_structure_is_refused() {
    // The types fix the structure of tuples; a Vec's length is checked when the rule runs.
    let f = custom_jvp(
        "pair",
        |x: Vec<Array>| x,
        |x: Vec<Array>, dx: Vec<Array>| (x, vec![dx[0].clone(), dx[0].clone()]),
    );
    jvp(
        |x: Vec<Array>| f.call::<Vec<Array>, Vec<Array>>(x),
        &vec![Array::scalar(1.0f32)],
        &vec![Array::scalar(1.0f32)],
    );
}
