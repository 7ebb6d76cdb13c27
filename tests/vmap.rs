//! `vmap`: every primitive's batching rule against stacking per-example results (batch dims
//! 0, 1, last and unbatched, mixed across operands), composition with jit, grad and itself,
//! in/out axes over trees, the `#[vmap]` macro, and the error messages.

use jaxrs::prelude::*;
use jaxrs::{grad, jit, stablehlo, stop_gradient, where_, DotDims};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The batch size of the per-primitive cases: no per-example dim has this size, so a rule
/// that confuses the batch dim with another fails on shapes.
const B: usize = 3;

/// How an operand's values are drawn.
#[derive(Clone, Copy)]
enum Values {
    /// Floats in [-2, 2].
    Floats,
    /// Integers in `lo..hi`.
    Ints(i64, i64),
    Bools,
}

/// One operand of a case: its per-example shape and dtype, and where its examples are
/// stacked (`None`: one value shared by every example).
#[derive(Clone)]
struct Spec {
    shape: Vec<usize>,
    dtype: DType,
    values: Values,
    dim: Option<usize>,
}

fn f32s(shape: &[usize], dim: Option<usize>) -> Spec {
    Spec {
        shape: shape.to_vec(),
        dtype: DType::F32,
        values: Values::Floats,
        dim,
    }
}

fn ints(shape: &[usize], lo: i64, hi: i64, dim: Option<usize>) -> Spec {
    Spec {
        shape: shape.to_vec(),
        dtype: DType::I32,
        values: Values::Ints(lo, hi),
        dim,
    }
}

fn bools(shape: &[usize], dim: Option<usize>) -> Spec {
    Spec {
        shape: shape.to_vec(),
        dtype: DType::Bool,
        values: Values::Bools,
        dim,
    }
}

/// A deterministic pseudo-random stream (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    fn values(&mut self, n: usize, v: Values) -> Vec<f64> {
        (0..n)
            .map(|_| match v {
                Values::Floats => ((self.next() * 4.0 - 2.0) * 64.0).round() / 64.0,
                Values::Ints(lo, hi) => (lo + (self.next() * (hi - lo) as f64) as i64) as f64,
                Values::Bools => (self.next() < 0.5) as u8 as f64,
            })
            .collect()
    }
}

/// Stacks per-example row-major buffers of `shape` along a new axis `dim`.
fn stack(examples: &[Vec<f64>], shape: &[usize], dim: usize) -> (Vec<f64>, Vec<usize>) {
    let mut batched = shape.to_vec();
    batched.insert(dim, examples.len());
    let outer: usize = batched[..dim].iter().product();
    let inner: usize = batched[dim + 1..].iter().product();
    let mut data = Vec::with_capacity(outer * examples.len() * inner);
    for o in 0..outer {
        for e in examples {
            data.extend_from_slice(&e[o * inner..(o + 1) * inner]);
        }
    }
    (data, batched)
}

fn close(got: &[f64], want: &[f64], rtol: f64) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-6 + rtol * w.abs()
        })
}

/// Checks `vmap(f)` on operands stacked as `specs` say against `f` run on each example,
/// the results stacked along 0. `f` runs eagerly in both, so each primitive's rule runs
/// op by op; `jit` also runs the batched program compiled.
fn check_with(name: &str, specs: &[Spec], jit_too: bool, f: impl Fn(&[Array]) -> Array) {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (name.len() as u64 * 0x9e37_79b9));
    let examples: Vec<Vec<Vec<f64>>> = specs
        .iter()
        .map(|s| {
            let n: usize = s.shape.iter().product();
            let count = if s.dim.is_some() { B } else { 1 };
            (0..count).map(|_| rng.values(n, s.values)).collect()
        })
        .collect();
    let batched: Vec<Array> = specs
        .iter()
        .zip(&examples)
        .map(|(s, ex)| match s.dim {
            Some(d) => {
                let (data, shape) = stack(ex, &s.shape, d);
                Array::from_f64s(&data, &shape, s.dtype)
            }
            None => Array::from_f64s(&ex[0], &s.shape, s.dtype),
        })
        .collect();
    let axes: Vec<Option<i64>> = specs.iter().map(|s| s.dim.map(|d| d as i64)).collect();

    let mut want = Vec::new();
    let mut want_shape = None;
    let mut want_dtype = None;
    for e in 0..B {
        let args: Vec<Array> = specs
            .iter()
            .zip(&examples)
            .map(|(s, ex)| {
                Array::from_f64s(&ex[if s.dim.is_some() { e } else { 0 }], &s.shape, s.dtype)
            })
            .collect();
        let y = f(&args);
        want.extend(y.to_f64_vec());
        want_shape = Some(y.shape().to_vec());
        want_dtype = Some(y.dtype());
    }
    let mut want_shape = want_shape.expect("examples");
    want_shape.insert(0, B);

    let batched_f = vmap(|xs: Vec<Array>| f(&xs), axes.clone(), 0);
    let got = batched_f(batched.clone());
    let what = format!("{name} with in_axes {axes:?}");
    assert_eq!(got.shape(), &want_shape[..], "{what}: shape");
    assert_eq!(Some(got.dtype()), want_dtype, "{what}: dtype");
    let got_values = got.to_f64_vec();
    assert!(
        close(&got_values, &want, 1e-5),
        "{what}:\n got {got_values:?}\nwant {want:?}"
    );
    if jit_too {
        let compiled = jit(|xs: Vec<Array>| vmap(|xs: Vec<Array>| f(&xs), axes.clone(), 0)(xs));
        let got: Array = compiled.call(batched);
        assert!(
            close(&got.to_f64_vec(), &want, 1e-5),
            "{what} under jit:\n got {:?}\nwant {want:?}",
            got.to_f64_vec()
        );
    }
}

fn check(name: &str, specs: &[Spec], f: impl Fn(&[Array]) -> Array) {
    check_with(name, specs, false, f)
}

/// The batch dims a rank-`r` operand is tried with: first, second and last.
fn dims(r: usize) -> Vec<usize> {
    let mut d = vec![0, 1.min(r), r];
    d.dedup();
    d
}

// ---------------------------------------------------------------------------------------
// Elementwise

#[test]
fn unary_ops_keep_the_batch_dim() {
    for d in dims(2) {
        let x = [f32s(&[2, 4], Some(d))];
        check("exp_tanh", &x, |x| x[0].exp().tanh());
        check("neg_abs_floor", &x, |x| (-&x[0]).abs().floor());
        check("integer_pow", &x, |x| x[0].powi(3));
        check("convert", &x, |x| (&x[0] * 3.0).astype(DType::I32));
        check("stop_gradient", &x, |x| stop_gradient(&x[0]));
    }
    for d in dims(1) {
        check("not", &[bools(&[4], Some(d))], |x| x[0].logical_not());
        check("integer_pow_neg", &[f32s(&[4], Some(d))], |x| {
            (x[0].abs() + 1.0).powi(-2)
        });
        check("convert_bool", &[ints(&[4], -2, 2, Some(d))], |x| {
            x[0].astype(DType::Bool)
        });
    }
}

#[test]
fn binary_ops_align_mixed_batch_dims() {
    let cases: [(Option<usize>, Option<usize>); 6] = [
        (Some(0), Some(0)),
        (Some(1), Some(1)),
        (Some(2), Some(0)),
        (Some(0), None),
        (None, Some(2)),
        (Some(1), Some(2)),
    ];
    for (dx, dy) in cases {
        check("add", &[f32s(&[2, 4], dx), f32s(&[2, 4], dy)], |x| {
            &x[0] + &x[1]
        });
        check("atan2", &[f32s(&[2, 4], dx), f32s(&[2, 4], dy)], |x| {
            x[0].atan2(&x[1])
        });
    }
    check(
        "max_min",
        &[f32s(&[2, 4], Some(1)), f32s(&[2, 4], None)],
        |x| x[0].maximum(&x[1]) - x[0].minimum(&x[1]),
    );
    check(
        "div_rem",
        &[f32s(&[4], Some(0)), f32s(&[4], Some(1))],
        |x| (&x[0] / (x[1].abs() + 1.0)) + x[0].rem(x[1].abs() + 0.5),
    );
    // numpy broadcasting inside the example: [2, 4] + [4] and a Rust scalar.
    check(
        "broadcasting",
        &[f32s(&[2, 4], Some(2)), f32s(&[4], Some(0))],
        |x| &x[0] * 2.0 + &x[1],
    );
    check(
        "scalar_example",
        &[f32s(&[], Some(0)), f32s(&[], None)],
        |x| &x[0] * &x[1] + 1.0,
    );
    check(
        "int_ops",
        &[ints(&[4], -5, 5, Some(0)), ints(&[4], 1, 5, None)],
        |x| &x[0] * &x[1] - x[0].rem(&x[1]),
    );
    check(
        "and_or",
        &[bools(&[4], Some(1)), bools(&[4], Some(0))],
        |x| x[0].logical_and(&x[1]).logical_or(x[0].logical_not()),
    );
}

#[test]
fn compare_and_select() {
    for (dc, dx, dy) in [
        (Some(0), Some(0), Some(0)),
        (Some(1), None, Some(0)),
        (None, Some(2), None),
        (Some(2), Some(1), None),
    ] {
        check(
            "where",
            &[f32s(&[2, 4], dc), f32s(&[2, 4], dx), f32s(&[2, 4], dy)],
            |x| where_(x[0].gt(0.0), &x[1], &x[2]),
        );
    }
    check(
        "compare",
        &[f32s(&[2, 4], Some(1)), f32s(&[4], None)],
        |x| x[0].le(&x[1]),
    );
    check("where_scalar", &[f32s(&[4], Some(0))], |x| {
        where_(x[0].lt(0.0), 0.0, &x[0])
    });
}

// ---------------------------------------------------------------------------------------
// Reductions

#[test]
fn reductions_shift_their_axes() {
    for d in dims(2) {
        let x = [f32s(&[2, 4], Some(d))];
        check("sum_all", &x, |x| x[0].sum(None, false));
        check("sum_0", &x, |x| x[0].sum(0, false));
        check("sum_1_keep", &x, |x| x[0].sum(1, true));
        check("max_1", &x, |x| x[0].max(-1, false));
        check("prod_0", &x, |x| x[0].prod(0, false));
        check("mean", &x, |x| x[0].mean(None, false));
        check("argmax_0", &x, |x| x[0].argmax(0, false));
        check("argmin_1", &x, |x| x[0].argmin(1, false));
        check("cumsum_1", &x, |x| x[0].cumsum(1));
        check("cummax_0_reverse", &x, |x| {
            use jaxrs::internals::prims::{Cumulative, ReduceOp};
            let prim = Cumulative {
                op: ReduceOp::Max,
                axis: 0,
                reverse: true,
            };
            jaxrs::internals::bind1(prim, &[jaxrs::internals::Operand::from(&x[0])])
        });
        check("logsumexp", &x, |x| x[0].logsumexp(1, false));
    }
    check("sum_3d", &[f32s(&[2, 4, 5], Some(2))], |x| {
        x[0].sum([0, 2], false)
    });
}

// ---------------------------------------------------------------------------------------
// Shapes

#[test]
fn reshape_and_transpose() {
    for d in dims(2) {
        let x = [f32s(&[2, 4], Some(d))];
        check("reshape_flat", &x, |x| x[0].reshape([-1]));
        check("reshape_4x2", &x, |x| x[0].reshape([4, 1, 2]));
        check("transpose", &x, |x| x[0].t());
        check("expand_squeeze", &x, |x| {
            x[0].expand_dims(1).squeeze([1]).expand_dims(0)
        });
    }
    for d in dims(3) {
        check("transpose_3d", &[f32s(&[2, 4, 5], Some(d))], |x| {
            x[0].transpose([2, 0, 1])
        });
    }
}

#[test]
fn broadcast_in_dim() {
    for d in dims(2) {
        check("broadcast_to", &[f32s(&[2, 4], Some(d))], |x| {
            x[0].broadcast_to(&[5, 2, 4])
        });
        check("broadcast_ones", &[f32s(&[1, 4], Some(d))], |x| {
            x[0].broadcast_to(&[2, 4])
        });
    }
    check("broadcast_scalar", &[f32s(&[], Some(0))], |x| {
        x[0].broadcast_to(&[2, 4])
    });
    check("broadcast_vec", &[f32s(&[4], Some(1))], |x| {
        x[0].broadcast_to(&[2, 5, 4])
    });
}

#[test]
fn concatenate_mixed() {
    for (dx, dy) in [
        (Some(0), Some(0)),
        (Some(1), None),
        (None, Some(2)),
        (Some(2), Some(1)),
    ] {
        check("concat_0", &[f32s(&[2, 4], dx), f32s(&[1, 4], dy)], |x| {
            Array::concatenate(&[x[0].clone(), x[1].clone()], 0)
        });
        check("stack_1", &[f32s(&[2, 4], dx), f32s(&[2, 4], dy)], |x| {
            Array::stack(&[x[0].clone(), x[1].clone()], 1)
        });
    }
}

#[test]
fn slice_pad_rev_iota() {
    for d in dims(2) {
        let x = [f32s(&[4, 5], Some(d))];
        check("slice", &x, |x| x[0].slice(&[1, 0], &[4, 5], &[2, 2]));
        check("slice_axis", &x, |x| x[0].slice_axis(-1, 1, 3));
        check("pad", &x, |x| x[0].pad(&[1, -1], &[0, 2], &[1, 0], 7.0));
        check("flip", &x, |x| x[0].flip([0, 1]));
        check("iota_plus", &x, |x| {
            &x[0] + Array::iota(DType::F32, &[4, 5], 1)
        });
    }
    // A padding value per example.
    for (dx, dv) in [(Some(0), Some(0)), (None, Some(0)), (Some(1), None)] {
        check("pad_value", &[f32s(&[4, 5], dx), f32s(&[], dv)], |x| {
            x[0].pad(&[1, 0], &[0, 1], &[0, 1], &x[1])
        });
    }
}

// ---------------------------------------------------------------------------------------
// Contractions

#[test]
fn dot_general_folds_the_batch_dim() {
    // [2, 3] @ [3, 4], every pairing of batch dims.
    for (dl, dr) in [
        (Some(0), None),
        (Some(1), None),
        (Some(2), None),
        (None, Some(0)),
        (None, Some(1)),
        (None, Some(2)),
        (Some(0), Some(0)),
        (Some(1), Some(2)),
        (Some(2), Some(1)),
    ] {
        check("matmul", &[f32s(&[2, 3], dl), f32s(&[3, 4], dr)], |x| {
            x[0].matmul(&x[1])
        });
    }
    check("vecmat", &[f32s(&[3], Some(0)), f32s(&[3, 4], None)], |x| {
        x[0].matmul(&x[1])
    });
    check("matvec", &[f32s(&[2, 3], None), f32s(&[3], Some(0))], |x| {
        x[0].matmul(&x[1])
    });
    check("dot", &[f32s(&[3], Some(0)), f32s(&[3], Some(1))], |x| {
        x[0].matmul(&x[1])
    });
    for (dl, dr) in [(Some(0), Some(0)), (Some(3), None), (None, Some(1))] {
        check("bmm", &[f32s(&[5, 2, 3], dl), f32s(&[5, 3, 4], dr)], |x| {
            x[0].matmul(&x[1])
        });
    }
    let dims = DotDims {
        lhs_contract: vec![0],
        rhs_contract: vec![1],
        lhs_batch: vec![2],
        rhs_batch: vec![0],
    };
    check(
        "dot_general",
        &[f32s(&[3, 2, 5], Some(1)), f32s(&[5, 3, 4], Some(3))],
        |x| x[0].dot_general(&x[1], &dims),
    );
}

// ---------------------------------------------------------------------------------------
// Indexing

#[test]
fn dynamic_slice_with_shared_and_per_example_starts() {
    let starts = |x: &[Array]| vec![x[1].clone(), x[2].clone()];
    for (dx, ds0, ds1) in [
        (Some(0), None, None),
        (Some(2), None, None),
        (Some(1), Some(0), None),
        (None, Some(0), Some(0)),
        (Some(2), None, Some(0)),
        (Some(0), Some(0), Some(0)),
    ] {
        check(
            "dynamic_slice",
            &[
                f32s(&[4, 5], dx),
                ints(&[], -6, 6, ds0),
                ints(&[], -6, 6, ds1),
            ],
            |x| x[0].dynamic_slice(&starts(x), &[2, 3]),
        );
    }
}

#[test]
fn dynamic_update_slice_with_shared_and_per_example_starts() {
    let starts = |x: &[Array]| vec![x[2].clone(), x[3].clone()];
    for (dx, du, ds0, ds1) in [
        (Some(0), Some(0), None, None),
        (None, Some(2), None, None),
        (Some(1), None, None, None),
        (Some(0), Some(0), Some(0), None),
        (None, Some(1), None, Some(0)),
        (Some(2), None, Some(0), Some(0)),
        (None, None, Some(0), Some(0)),
    ] {
        check(
            "dynamic_update_slice",
            &[
                f32s(&[4, 5], dx),
                f32s(&[2, 3], du),
                ints(&[], -6, 6, ds0),
                ints(&[], -6, 6, ds1),
            ],
            |x| x[0].dynamic_update_slice(&x[1], &starts(x)),
        );
    }
}

#[test]
fn take_along_axis_and_its_gradient_with_batched_operand_and_or_indices() {
    for (dx, di) in [
        (Some(0), None),
        (Some(3), None),
        (None, Some(0)),
        (None, Some(2)),
        (Some(0), Some(0)),
        (Some(1), Some(3)),
        (Some(2), Some(1)),
    ] {
        for axis in 0..3 {
            let mut ishape = vec![2, 3, 4];
            ishape[axis] = 5;
            let n = [2, 3, 4][axis] as i64;
            // Negative indices count from the end per example; repeated ones accumulate in
            // the gradient (the scatter's batching rule).
            let specs = [f32s(&[2, 3, 4], dx), ints(&ishape, -n, n - 1, di)];
            check_with("take_along_axis", &specs, true, |x| {
                x[0].take_along_axis(&x[1], axis as i64)
            });
            check_with("take_along_axis_grad", &specs, true, |x| {
                let idx = x[1].clone();
                let loss =
                    move |x: Array| x.take_along_axis(&idx, axis as i64).sin().sum(None, false);
                grad(loss)(x[0].clone())
            });
        }
    }
    // Sorting differentiates through take_along_axis: its jvp and vjp under vmap.
    check_with("sort_grad", &[f32s(&[3, 4], Some(1))], true, |x| {
        grad(|x: Array| (x.sort(1) * Array::arange(0.0, 4.0, 1.0, DType::F32)).sum(None, false))(
            x[0].clone(),
        )
    });
}

#[test]
fn take_with_batched_operand_and_or_indices() {
    for (dx, di) in [
        (Some(0), None),
        (Some(2), None),
        (None, Some(0)),
        (None, Some(1)),
        (Some(0), Some(0)),
        (Some(1), Some(2)),
        (Some(2), Some(1)),
    ] {
        // Negative and out-of-range indices too: they wrap and clamp per example.
        check(
            "take_0",
            &[f32s(&[4, 5], dx), ints(&[2, 3], -6, 6, di)],
            |x| x[0].take(&x[1], 0),
        );
        check(
            "take_1",
            &[f32s(&[4, 5], dx), ints(&[2, 3], -7, 7, di)],
            |x| x[0].take(&x[1], 1),
        );
    }
    check(
        "take_scalar_index",
        &[f32s(&[4, 5], Some(1)), ints(&[], 0, 5, Some(0))],
        |x| x[0].take(&x[1], 1),
    );
    check("one_hot", &[ints(&[4], 0, 6, Some(1))], |x| {
        Array::one_hot(&x[0], 5, DType::F32)
    });
}

#[test]
fn index_add_with_batched_operands() {
    use jaxrs::internals::prims::IndexAdd;
    use jaxrs::internals::{bind1, Operand};
    let f = |axis: usize| {
        move |x: &[Array]| {
            bind1(
                IndexAdd { axis },
                &[
                    Operand::from(&x[0]),
                    Operand::from(&x[1]),
                    Operand::from(&x[2]),
                ],
            )
        }
    };
    for (dx, di, du) in [
        (Some(0), None, Some(0)),
        (None, None, Some(2)),
        (Some(1), None, None),
        (None, Some(0), None),
        (Some(2), Some(1), Some(0)),
        (Some(0), Some(0), Some(3)),
    ] {
        // Repeated indices accumulate within each example.
        check(
            "index_add_1",
            &[
                f32s(&[4, 5], dx),
                ints(&[2, 3], -5, 5, di),
                f32s(&[4, 2, 3], du),
            ],
            f(1),
        );
    }
}

/// The L2 norm as a `custom_vjp` function (reverse mode only, as in JAX), with the gradient
/// `x / |x|` and 0 at `x = 0`.
fn custom_norm(x: Array) -> Array {
    custom_vjp(
        "norm",
        |x: Array| {
            let n = (&x * &x).sum(None, false).sqrt();
            (n.clone(), (x, n))
        },
        |(x, n): (Array, Array), g: Array| {
            let safe = where_(n.eq(0.0), 1.0, &n);
            where_(n.eq(0.0), 0.0, &x * (g / safe))
        },
    )
    .call(x)
}

#[test]
fn custom_vjp_calls_batch_and_keep_their_rule() {
    for d in dims(2) {
        check("custom_norm", &[f32s(&[2, 4], Some(d))], |x| {
            custom_norm(x[0].clone())
        });
        check("norm", &[f32s(&[2, 4], Some(d))], |x| x[0].norm());
    }
    // Per-example gradients through the batched call use the user's backward rule.
    let x = Array::from_vec(vec![3.0f32, 4.0, 0.0, 0.0, 1.0, 0.0], &[3, 2]);
    let per_example = vmap(grad(custom_norm), 0, 0)(x.clone());
    assert_eq!(
        per_example.to_vec::<f32>(),
        vec![0.6, 0.8, 0.0, 0.0, 1.0, 0.0]
    );
    // And the gradient of a batched call maps the backward rule over the examples.
    let total = grad(|x: Array| vmap(custom_norm, 0, 0)(x).sum(None, false))(x);
    assert_eq!(total.to_vec::<f32>(), vec![0.6, 0.8, 0.0, 0.0, 1.0, 0.0]);
}

#[test]
fn rules_move_batch_dims_only_when_needed() {
    // Examples stacked along axis 1 stay there: no rule below transposes.
    let x = Array::zeros(&[2, 3, 4], DType::F32);
    let w = Array::zeros(&[4, 5], DType::F32);
    let program = |f: &dyn Fn(&Array, &Array) -> Array| {
        make_jaxpr(
            |(x, w): (Array, Array)| vmap(|(x, w): (Array, Array)| f(&x, &w), (1, None), 1)((x, w)),
            &(x.clone(), w.clone()),
        )
        .to_string()
    };
    for (what, f) in [
        (
            "elementwise",
            &(|x: &Array, _: &Array| (x.exp() + x).maximum(0.0))
                as &dyn Fn(&Array, &Array) -> Array,
        ),
        ("reductions", &|x: &Array, _: &Array| {
            // Axes after the batch dim (axis 0 would move it: the result is one rank less).
            x.sum(-1, true).cumsum(0) - x.max(-1, true) + x.argmax(1, true).astype(DType::F32)
        }),
        ("matmul", &|x: &Array, w: &Array| x.matmul(w).tanh()),
        ("shapes", &|x: &Array, _: &Array| {
            x.slice_axis(1, 1, 3)
                .flip([0])
                .pad(&[1, 0], &[0, 0], &[], 0.0)
        }),
    ] {
        let jaxpr = program(f);
        assert!(!jaxpr.contains("transpose"), "{what}: {jaxpr}");
    }
}

// ---------------------------------------------------------------------------------------
// Control flow

#[test]
fn scan_batches_its_carry_xs_and_captured_values() {
    // A leaky accumulator: carry [4], xs [5 steps, 4], a captured weight [4].
    let step = |x: &[Array]| {
        let w = x[2].clone();
        let (c, ys) = scan(
            |c: Array, x: Array| {
                let c = &c * &w + &x;
                (c.clone(), c.tanh())
            },
            x[0].clone(),
            x[1].clone(),
        );
        Array::concatenate(&[c.expand_dims(0), ys], 0)
    };
    for (dc, dx, dw) in [
        (Some(0), Some(0), None),
        (None, Some(1), None),
        (None, Some(2), Some(0)),
        (Some(1), None, None),
        (None, None, Some(1)),
    ] {
        check(
            "scan",
            &[f32s(&[4], dc), f32s(&[5, 4], dx), f32s(&[4], dw)],
            step,
        );
    }
    check("fori_loop", &[f32s(&[4], Some(1))], |x| {
        fori_loop(
            0,
            3,
            |i, c: Array| &c * 2.0 + i.astype(DType::F32),
            x[0].clone(),
        )
    });
}

#[test]
fn while_loop_runs_each_example_its_own_number_of_steps() {
    let f = |x: &[Array]| {
        let limit = x[1].clone();
        let (_, acc) = while_loop(
            |c: &(Array, Array)| c.0.lt(&limit),
            |(i, acc): (Array, Array)| (&i + 1, &acc * 1.5 + 1.0),
            (Array::scalar(0i32), x[0].clone()),
        );
        acc
    };
    // The limit per example: a batched predicate. Shared: one loop for the batch.
    check(
        "while_batched_pred",
        &[f32s(&[2], Some(1)), ints(&[], 0, 5, Some(0))],
        f,
    );
    check(
        "while_shared_pred",
        &[f32s(&[2], Some(0)), ints(&[], 0, 5, None)],
        f,
    );
}

#[test]
fn cond_and_switch_with_shared_and_per_example_predicates() {
    let f = |x: &[Array]| {
        cond(
            &x[0].sum(None, false).gt(0.0),
            |(a, b): (Array, Array)| (&a * &b).exp(),
            |(a, b): (Array, Array)| &a - &b,
            (x[0].clone(), x[1].clone()),
        )
    };
    for (da, db) in [(Some(0), None), (None, Some(0)), (Some(1), Some(0))] {
        check("cond", &[f32s(&[2, 3], da), f32s(&[2, 3], db)], f);
    }
    let g = |x: &[Array]| {
        let b0 = |v: Array| v.sin();
        let b1 = |v: Array| &v * 2.0;
        let b2 = |v: Array| v.sum(None, true).broadcast_to(&[3]);
        switch(&x[0], &[&b0, &b1, &b2], x[1].clone())
    };
    // Out-of-range indices clamp, per example too.
    check(
        "switch_batched_index",
        &[ints(&[], -1, 4, Some(0)), f32s(&[3], None)],
        g,
    );
    check(
        "switch_shared_index",
        &[ints(&[], 0, 3, None), f32s(&[3], Some(1))],
        g,
    );
}

#[test]
fn gradients_flow_through_a_batched_scan() {
    let w = arr(&seq(4, 0.25), &[4]);
    let xs = arr(&seq(3 * 5 * 4, 0.1), &[3, 5, 4]);
    let rnn = |w: &Array, x: &Array| {
        let (c, _) = scan(
            |c: Array, x: Array| ((&c * w + &x).tanh(), ()),
            Array::zeros(&[4], DType::F32),
            x.clone(),
        );
        c.sum(None, false)
    };
    let batched = grad(|w: Array| {
        vmap(|(w, x): (Array, Array)| rnn(&w, &x), (None, 0), 0)((w, xs.clone())).sum(None, false)
    })(w.clone());
    let per_example: Array = vmap(
        |(w, x): (Array, Array)| grad(|w: Array| rnn(&w, &x))(w),
        (None, 0),
        0,
    )((w.clone(), xs.clone()));
    let mut want = vec![0.0; 4];
    for e in 0..3 {
        let x = arr(&xs.to_vec::<f32>()[e * 20..(e + 1) * 20], &[5, 4]);
        let g = grad(|w: Array| rnn(&w, &x))(w.clone()).to_f64_vec();
        assert!(close(
            &per_example.to_f64_vec()[e * 4..(e + 1) * 4],
            &g,
            1e-5
        ));
        for (a, b) in want.iter_mut().zip(g) {
            *a += b;
        }
    }
    assert!(close(&batched.to_f64_vec(), &want, 1e-5));
}

#[test]
fn remat_calls_batch_and_still_recompute() {
    use jaxrs::{checkpoint_name, remat, RematPolicy};
    let block =
        |(x, w): (Array, Array)| checkpoint_name(&x.matmul(&w), "h").tanh().sum(None, false);
    for policy in [
        RematPolicy::NothingSaveable,
        RematPolicy::save_only_these_names(["h"]),
    ] {
        let r = remat(block).policy(policy);
        check("remat", &[f32s(&[3], Some(1)), f32s(&[3, 2], None)], |x| {
            r.call((x[0].clone(), x[1].clone()))
        });
        // Per-example gradients, and the gradient of the batch, through the batched call.
        let xs = arr(&seq(12, 0.2), &[4, 3]);
        let w = arr(&seq(6, 0.3), &[3, 2]);
        let per_example: Array = vmap(
            |(x, w): (Array, Array)| grad(|w: Array| r.call((x.clone(), w)))(w),
            (0, None),
            0,
        )((xs.clone(), w.clone()));
        let total = grad(|w: Array| {
            vmap(|(x, w): (Array, Array)| r.call((x, w)), (0, None), 0)((xs.clone(), w))
                .sum(None, false)
        })(w.clone());
        let want = grad(|w: Array| xs.matmul(&w).tanh().sum(None, false))(w);
        assert!(close(&total.to_f64_vec(), &want.to_f64_vec(), 1e-5));
        assert!(close(
            &per_example.sum(0, false).to_f64_vec(),
            &want.to_f64_vec(),
            1e-5
        ));
    }
}

// ---------------------------------------------------------------------------------------
// Composition

fn arr(v: &[f32], shape: &[usize]) -> Array {
    Array::from_slice(v, shape)
}

fn seq(n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7 % 11) as f32 - 5.0) * scale)
        .collect()
}

#[test]
fn jit_of_vmap_runs_the_batched_program_compiled() {
    check_with(
        "mlp_layer",
        &[f32s(&[3], Some(0)), f32s(&[3, 4], None), f32s(&[4], None)],
        true,
        |x| (x[0].matmul(&x[1]) + &x[2]).tanh().sum(None, false),
    );
    check_with(
        "mixed",
        &[f32s(&[2, 4], Some(1)), ints(&[2], 0, 4, Some(0))],
        true,
        |x| x[0].take(&x[1], 1).cumsum(0).max(None, false),
    );
}

#[test]
fn nested_vmap_maps_two_axes() {
    let w = arr(&seq(6, 0.5), &[3, 2]);
    let xs = arr(&seq(4 * 5 * 3, 0.25), &[4, 5, 3]);
    let f = |(w, x): (Array, Array)| x.matmul(&w).tanh().sum(None, false);
    let inner = |a: (Array, Array)| vmap(f, (None, 0), 0)(a);
    let got: Array = vmap(inner, (None, 0), 0)((w.clone(), xs.clone()));
    assert_eq!(got.shape(), &[4, 5]);
    let want = (xs.matmul(&w)).tanh().sum(-1, false);
    assert!(close(&got.to_f64_vec(), &want.to_f64_vec(), 1e-5));
    // The inner axis first: out_axes moves it.
    let swapped: Array = vmap(|a: (Array, Array)| vmap(f, (None, 0), 0)(a), (None, 1), 1)((w, xs));
    assert!(close(&swapped.to_f64_vec(), &want.to_f64_vec(), 1e-5));
}

#[test]
fn captured_outer_tracers_are_unbatched() {
    // The inner function captures `x`, a tracer of the outer vmap: the same for every
    // example of the inner one.
    let xs = arr(&[1.0, 2.0, 3.0], &[3]);
    let ys = arr(&[10.0, 20.0], &[2]);
    let outer = vmap(
        |(x, ys): (Array, Array)| vmap(|y: Array| &x * &y + 1.0, 0, 0)(ys),
        (0, None),
        0,
    );
    let got: Array = outer((xs, ys));
    assert_eq!(
        got.to_vec::<f32>(),
        vec![11.0, 21.0, 21.0, 41.0, 31.0, 61.0]
    );
    // A concrete array captured by the function is unbatched too.
    let bias = arr(&[0.5, -0.5], &[2]);
    let got: Array =
        vmap(|x: Array| &x + &bias, 1, 1)(arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]));
    assert_eq!(got.to_vec::<f32>(), vec![1.5, 2.5, 3.5, 3.5, 4.5, 5.5]);
}

fn loss(w: &Array, x: &Array, y: &Array) -> Array {
    (x.matmul(w).tanh() - y).powi(2).sum(None, false)
}

#[test]
fn vmap_of_grad_gives_per_example_gradients() {
    let w = arr(&seq(6, 0.3), &[3, 2]);
    let xs = arr(&seq(12, 0.2), &[4, 3]);
    let ys = arr(&seq(8, 0.1), &[4, 2]);
    let per_example = vmap(
        |(w, x, y): (Array, Array, Array)| grad(|w: Array| loss(&w, &x, &y))(w),
        (None, 0, 0),
        0,
    );
    let got: Array = per_example((w.clone(), xs.clone(), ys.clone()));
    assert_eq!(got.shape(), &[4, 3, 2]);
    let mut want = Vec::new();
    for e in 0..4 {
        let x = arr(&xs.to_vec::<f32>()[e * 3..e * 3 + 3], &[3]);
        let y = arr(&ys.to_vec::<f32>()[e * 2..e * 2 + 2], &[2]);
        want.extend(grad(|w: Array| loss(&w, &x, &y))(w.clone()).to_f64_vec());
    }
    assert!(close(&got.to_f64_vec(), &want, 1e-5));
    // The same compiled, in one program.
    let compiled = jit(|a: (Array, Array, Array)| per_example(a));
    let got: Array = compiled.call((w, xs, ys));
    assert!(close(&got.to_f64_vec(), &want, 1e-5));
}

#[test]
fn grad_of_vmap_is_the_gradient_of_the_batch() {
    let w = arr(&seq(6, 0.3), &[3, 2]);
    let xs = arr(&seq(12, 0.2), &[4, 3]);
    let ys = arr(&seq(8, 0.1), &[4, 2]);
    let batched = grad(|w: Array| {
        vmap(
            |(w, x, y): (Array, Array, Array)| loss(&w, &x, &y),
            (None, 0, 0),
            0,
        )((w, xs.clone(), ys.clone()))
        .sum(None, false)
    })(w.clone());
    let whole = grad(|w: Array| (xs.matmul(&w).tanh() - &ys).powi(2).sum(None, false))(w);
    assert!(close(&batched.to_f64_vec(), &whole.to_f64_vec(), 1e-5));
}

// ---------------------------------------------------------------------------------------
// Axes over trees, out_axes, axis_size

#[derive(Tree, Clone)]
struct Linear {
    w: Array,
    b: Array,
}

#[test]
fn one_axis_maps_a_whole_tree_and_negative_axes_count_from_the_end() {
    // A batch of 2 models, each w: [3, 2], b: [2]; their examples along the last axis.
    let models = Linear {
        w: arr(&seq(12, 0.5), &[2, 3, 2]),
        b: arr(&[1.0, 2.0, 3.0, 4.0], &[2, 2]),
    };
    let x = arr(&seq(6, 1.0), &[3, 2]);
    let apply = |(m, x): (Linear, Array)| x.matmul(&m.w) + &m.b;
    let got: Array = vmap(apply, (0, -1), 0)((models.clone(), x.clone()));
    assert_eq!(got.shape(), &[2, 2]);
    let xt = x.t();
    for e in 0..2 {
        let w = arr(&models.w.to_vec::<f32>()[e * 6..e * 6 + 6], &[3, 2]);
        let b = arr(&models.b.to_vec::<f32>()[e * 2..e * 2 + 2], &[2]);
        let xe = arr(&xt.to_vec::<f32>()[e * 3..e * 3 + 3], &[3]);
        let want = xe.matmul(&w) + &b;
        assert_eq!(
            got.to_vec::<f32>()[e * 2..e * 2 + 2],
            want.to_vec::<f32>()[..]
        );
    }
}

#[test]
fn out_axes_place_each_output() {
    let x = arr(&seq(6, 1.0), &[3, 2]);
    let f = |x: Array| (x.clone(), x.sum(None, false), Array::ones(&[2], DType::F32));
    let (a, s, ones): (Array, Array, Array) = vmap(f, 0, (1, 0, -1))(x.clone());
    assert_eq!(a.to_vec::<f32>(), x.t().to_vec::<f32>());
    assert_eq!(s.to_vec::<f32>(), x.sum(1, false).to_vec::<f32>());
    // An unbatched output with an out axis is repeated for every example.
    assert_eq!(ones.shape(), &[2, 3]);
    // out_axes None keeps an output that is the same for every example unbatched.
    let (y, c): (Array, Array) = vmap(
        |x: Array| (&x * 2.0, Array::ones(&[2], DType::F32)),
        0,
        (0, None),
    )(x);
    assert_eq!(y.shape(), &[3, 2]);
    assert_eq!(c.shape(), &[2]);
}

#[test]
fn unmapped_arguments_reach_the_function_as_they_are() {
    // A Rust scalar stays a Rust scalar; an unmapped array is the caller's array.
    let table = arr(&[1.0, 2.0, 3.0], &[3]);
    let f = vmap(
        |(x, lr, n, t): (Array, f32, i32, Array)| {
            assert_eq!((lr, n), (0.5, 3));
            assert!(t.is_concrete());
            &x * lr + t.sum(None, false) * n as f32
        },
        (0, None, None, None),
        0,
    );
    let y: Array = f((arr(&[2.0, 4.0], &[2]), 0.5, 3, table));
    assert_eq!(y.to_vec::<f32>(), vec![19.0, 20.0]);
}

#[test]
fn axis_size_when_nothing_is_mapped() {
    let w = arr(&[1.0, 2.0], &[2]);
    let got: Array = vmap_sized(|w: Array| w.exp(), None, 0, 4)(w);
    assert_eq!(got.shape(), &[4, 2]);
}

// ---------------------------------------------------------------------------------------
// The macro

/// The loss of one example; #[vmap] makes it the losses of a batch.
#[vmap(in_axes = (None, 0, 0))]
fn example_loss(params: &Linear, x: &Array, y: &Array) -> Array {
    let pred = x.matmul(&params.w) + &params.b;
    (pred - y).powi(2).mean(None, false)
}

#[vmap(in_axes = (0, None), out_axes = (0, 1))]
fn scale_and_shift(x: Array, s: f32) -> (Array, Array) {
    // An unmapped Rust scalar stays a Rust scalar.
    let s: f32 = s;
    (&x * s, x.expand_dims(0))
}

#[jit]
#[vmap(in_axes = (None, 0, 0))]
fn jitted_loss(params: &Linear, x: &Array, y: &Array) -> Array {
    let pred = x.matmul(&params.w) + &params.b;
    (pred - y).powi(2).mean(None, false)
}

#[vmap(in_axes = (None, 0))]
#[jit]
fn vmap_of_jit(params: &Linear, x: &Array) -> Array {
    x.matmul(&params.w) + &params.b
}

#[jit]
#[vmap(in_axes = (0, None))]
fn jit_vmap_scalar(x: &Array, lr: f32) -> Array {
    // Under #[jit] a traced scalar is an &Array, stacked or not.
    let lr: &Array = lr;
    x * lr
}

fn params() -> Linear {
    Linear {
        w: arr(&seq(6, 0.5), &[3, 2]),
        b: arr(&[0.25, -0.5], &[2]),
    }
}

#[test]
fn the_macro_batches_its_function() {
    let p = params();
    let xs = arr(&seq(12, 0.25), &[4, 3]);
    let ys = arr(&seq(8, 0.5), &[4, 2]);
    let got = example_loss(&p, &xs, &ys);
    let want = ((xs.matmul(&p.w) + &p.b) - &ys).powi(2).mean(1, false);
    assert!(close(&got.to_f64_vec(), &want.to_f64_vec(), 1e-6));
    let jitted = jitted_loss(&p, &xs, &ys);
    assert!(close(&jitted.to_f64_vec(), &want.to_f64_vec(), 1e-6));
    assert_eq!(jitted_loss::jit_site().cache_misses(), 1);
    let pred = vmap_of_jit(&p, &xs);
    assert!(close(
        &pred.to_f64_vec(),
        &(xs.matmul(&p.w) + &p.b).to_f64_vec(),
        1e-6
    ));
    let (scaled, moved) = scale_and_shift(xs.clone(), 2.0);
    assert_eq!(scaled.to_vec::<f32>(), (&xs * 2.0).to_vec::<f32>());
    assert_eq!(moved.shape(), &[1, 4, 3]);
    let z = jit_vmap_scalar(&xs, 0.5);
    assert_eq!(z.to_vec::<f32>(), (&xs * 0.5).to_vec::<f32>());
}

#[test]
fn the_stablehlo_of_jit_vmap_is_batched() {
    // `#[jit] #[vmap]` is jit(vmap(f)): one program over the batch, one dot_general.
    let p = params();
    let xs = arr(&seq(12, 0.25), &[4, 3]);
    let ys = arr(&seq(8, 0.5), &[4, 2]);
    let text = stablehlo(
        |(p, x, y): (Linear, Array, Array)| jitted_loss(&p, &x, &y),
        &(p, xs, ys),
    );
    assert_eq!(text.matches("stablehlo.dot_general").count(), 1, "{text}");
    assert!(
        text.contains("tensor<4x3xf32>") && text.contains("-> tensor<4xf32>"),
        "{text}"
    );
    assert!(
        !text.contains("gather") && !text.contains("while"),
        "{text}"
    );
}

/// A two-layer MLP's loss on one example.
fn mlp_loss(layers: &[Linear], x: &Array, y: &Array) -> Array {
    let mut h = x.clone();
    for (i, l) in layers.iter().enumerate() {
        h = h.matmul(&l.w) + &l.b;
        if i + 1 < layers.len() {
            h = h.tanh();
        }
    }
    (h - y).powi(2).mean(None, false)
}

#[test]
fn a_batched_mlp_is_one_dot_general_per_layer() {
    let layers = vec![
        Linear {
            w: arr(&seq(8 * 16, 0.1), &[8, 16]),
            b: arr(&seq(16, 0.1), &[16]),
        },
        Linear {
            w: arr(&seq(16 * 4, 0.1), &[16, 4]),
            b: arr(&seq(4, 0.1), &[4]),
        },
    ];
    let xs = arr(&seq(32 * 8, 0.05), &[32, 8]);
    let ys = arr(&seq(32 * 4, 0.05), &[32, 4]);
    let batched = vmap(
        |(l, x, y): (Vec<Linear>, Array, Array)| mlp_loss(&l, &x, &y),
        (None, 0, 0),
        0,
    );
    let text = stablehlo(
        |a: (Vec<Linear>, Array, Array)| batched(a),
        &(layers.clone(), xs.clone(), ys.clone()),
    );
    assert_eq!(text.matches("stablehlo.dot_general").count(), 2, "{text}");
    for banned in ["gather", "while", "transpose", "tensor<8xf32>"] {
        assert!(!text.contains(banned), "`{banned}` in\n{text}");
    }
    // The layer products take the whole batch.
    assert!(
        text.contains("tensor<32x8xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>"),
        "{text}"
    );
    let compiled = jit(|a: (Vec<Linear>, Array, Array)| batched(a));
    let got: Array = compiled.call((layers.clone(), xs.clone(), ys.clone()));
    let want = {
        let h = (xs.matmul(&layers[0].w) + &layers[0].b).tanh();
        (h.matmul(&layers[1].w) + &layers[1].b - &ys)
            .powi(2)
            .mean(1, false)
    };
    assert!(close(&got.to_f64_vec(), &want.to_f64_vec(), 1e-5));
}

// ---------------------------------------------------------------------------------------
// Errors

fn panic_message(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("should panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn mismatched_sizes_list_every_mapped_argument() {
    let p = params();
    let xs = arr(&seq(12, 0.25), &[4, 3]);
    let ys = arr(&seq(10, 0.5), &[5, 2]);
    let line = line!() + 1;
    let msg = panic_message(|| drop(example_loss(&p, &xs, &ys)));
    assert!(msg.contains("vmap `example_loss`"), "{msg}");
    assert!(msg.contains("sizes 4, 5"), "{msg}");
    assert!(msg.contains("x  axis 0 of f32[4,3] has size 4"), "{msg}");
    assert!(msg.contains("y  axis 0 of f32[5,2] has size 5"), "{msg}");
    assert!(msg.contains(&format!("tests/vmap.rs:{line}:")), "{msg}");

    // Three arguments, one odd: the message says which.
    let line = line!() + 1;
    let f = vmap(
        |(a, b, c): (Array, Array, Array)| &a + &b + &c,
        (0, 0, 1),
        0,
    );
    let msg = panic_message(|| {
        drop(f((
            Array::zeros(&[3, 2], DType::F32),
            Array::zeros(&[3, 2], DType::F32),
            Array::zeros(&[2, 2], DType::F32),
        )))
    });
    assert!(
        msg.contains("args.2  axis 1 of f32[2,2] has size 2"),
        "{msg}"
    );
    assert!(
        msg.contains("size 3 is the batch size; args.2 differs"),
        "{msg}"
    );
    assert!(msg.contains(&format!("tests/vmap.rs:{line}:")), "{msg}");
}

#[test]
fn an_axis_out_of_range_names_the_argument() {
    let f = vmap(|(p, x): (Linear, Array)| x.matmul(&p.w), (0, 2), 0);
    let line = line!() - 1;
    let msg = panic_message(|| drop(f((params(), Array::zeros(&[4, 3], DType::F32)))));
    assert!(msg.contains("in_axes maps args.1 along axis 2"), "{msg}");
    assert!(
        msg.contains("args.1 is f32[4,3] (rank 2), whose axes are -2 to 1"),
        "{msg}"
    );
    assert!(msg.contains(&format!("tests/vmap.rs:{line}:")), "{msg}");

    // One axis for a whole tree: each leaf needs it.
    let g = vmap(|(p, x): (Linear, Array)| x.matmul(&p.w), (1, 0), 0);
    let msg = panic_message(|| drop(g((params(), Array::zeros(&[2, 3], DType::F32)))));
    assert!(msg.contains("in_axes maps args.0.b along axis 1"), "{msg}");
    assert!(
        msg.contains("args.0.b is f32[2] (rank 1), whose axes are -1 to 0"),
        "{msg}"
    );

    let msg = panic_message(|| drop(vmap(|x: Array| x, 0, 0)(Array::scalar(1.0f32))));
    assert!(msg.contains("args is f32[] (a scalar, rank 0)"), "{msg}");
}

#[test]
fn other_misuses_say_what_to_do() {
    let x = Array::zeros(&[3, 2], DType::F32);
    let msg = panic_message(|| drop(vmap(|x: Array| x, None, 0)(x.clone())));
    assert!(
        msg.contains("no argument is mapped") && msg.contains("axis_size"),
        "{msg}"
    );
    let msg = panic_message(|| drop(vmap(|x: Array| x, 0, None)(x.clone())));
    assert!(msg.contains("out_axes is None for output"), "{msg}");
    let msg = panic_message(|| {
        drop(vmap(|(a, b): (Array, Array)| a + b, (0, 0, 0), 0)((
            x.clone(),
            x.clone(),
        )))
    });
    assert!(msg.contains("in_axes does not fit the arguments"), "{msg}");
    let msg = panic_message(|| drop(vmap_sized(|x: Array| x, 0, 0, 5)(x)));
    assert!(
        msg.contains("axis_size is 5") && msg.contains("has size 3"),
        "{msg}"
    );
}
