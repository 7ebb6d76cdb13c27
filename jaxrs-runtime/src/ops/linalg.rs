//! Contractions: `dot_general` and numpy's `matmul`.

use crate::aval::broadcast_shapes;
use crate::core::array::Array;
use crate::core::trace::{bind1, op_error, Operand};
use crate::dtype::DType;
use crate::prims::{DotGeneral, Transpose};
use std::panic::Location;

/// The dimension numbers of [`Array::dot_general`]: which axes are contracted and which are
/// batch axes, on each side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DotDims {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
}

/// Promotes two operands to one dtype.
#[track_caller]
pub(super) fn promoted(a: &Array, b: &Array) -> (Array, Array) {
    let (dt, _) = DType::promote(a.dtype(), a.is_weak(), b.dtype(), b.is_weak());
    (a.astype_keep_weak(dt), b.astype_keep_weak(dt))
}

impl Array {
    #[track_caller]
    fn astype_keep_weak(&self, dtype: DType) -> Array {
        if self.dtype() == dtype {
            self.clone()
        } else {
            bind1(
                crate::prims::Convert {
                    dtype,
                    weak: self.is_weak(),
                },
                &[Operand::from(self)],
            )
        }
    }

    /// A general contraction (`lax.dot_general`). The result's axes are the batch axes, then
    /// the free axes of `self`, then those of `other`.
    #[track_caller]
    pub fn dot_general(&self, other: &Array, dims: &DotDims) -> Array {
        let (a, b) = promoted(self, other);
        let prim = DotGeneral {
            lhs_contract: dims.lhs_contract.clone(),
            rhs_contract: dims.rhs_contract.clone(),
            lhs_batch: dims.lhs_batch.clone(),
            rhs_batch: dims.rhs_batch.clone(),
        };
        bind1(prim, &[Operand::from(&a), Operand::from(&b)])
    }

    /// The matrix product with numpy's rules: 1-D operands are vectors, leading axes are
    /// batch axes and broadcast.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]); // [batch, in]
    /// let w = Array::from_vec(vec![1.0f32, 0.0, 1.0, 0.0, 1.0, 1.0], &[2, 3]); // [in, out]
    /// let b = Array::full(&[3], 0.5, DType::F32);
    /// let logits = x.matmul(&w) + &b; // [batch, out]
    /// assert_eq!(logits.shape(), &[2, 3]);
    /// assert_eq!(logits.to_vec::<f32>(), vec![1.5, 2.5, 3.5, 3.5, 4.5, 7.5]);
    /// ```
    #[track_caller]
    pub fn matmul(&self, other: &Array) -> Array {
        let loc = Location::caller();
        let (a, b) = promoted(self, other);
        let (ra, rb) = (a.rank(), b.rank());
        if ra == 0 || rb == 0 {
            op_error(
                "matmul",
                "operands must have at least one axis",
                &[a.aval().clone(), b.aval().clone()],
                loc,
            );
        }
        let k_a = a.shape()[ra - 1];
        let k_b = if rb == 1 {
            b.shape()[0]
        } else {
            b.shape()[rb - 2]
        };
        if k_a != k_b {
            op_error(
                "matmul",
                &format!("contracting dimensions differ ({k_a} vs {k_b})"),
                &[a.aval().clone(), b.aval().clone()],
                loc,
            );
        }
        let contract = |lc: usize, rc: usize, lb: Vec<usize>, rb_: Vec<usize>| DotGeneral {
            lhs_contract: vec![lc],
            rhs_contract: vec![rc],
            lhs_batch: lb,
            rhs_batch: rb_,
        };
        if rb <= 2 {
            // No batch axes on the right: contract directly; a's leading axes stay in front.
            return bind1(
                contract(ra - 1, 0, vec![], vec![]),
                &[Operand::from(&a), Operand::from(&b)],
            );
        }
        if ra == 1 {
            // [k] @ [..., k, m]: contract, giving [..., m].
            return bind1(
                contract(0, rb - 2, vec![], vec![]),
                &[Operand::from(&a), Operand::from(&b)],
            );
        }
        if ra == 2 {
            // [n, k] @ [..., k, m] gives [n, ..., m]: move n behind the batch axes.
            let y = bind1(
                contract(1, rb - 2, vec![], vec![]),
                &[Operand::from(&a), Operand::from(&b)],
            );
            let mut perm: Vec<usize> = (1..rb - 1).collect();
            perm.push(0);
            perm.push(rb - 1);
            return bind1(Transpose { perm }, &[Operand::from(&y)]);
        }
        // Both batched: broadcast the batch axes, then one batched contraction.
        let batch =
            broadcast_shapes(&a.shape()[..ra - 2], &b.shape()[..rb - 2]).unwrap_or_else(|| {
                op_error(
                    "matmul",
                    "batch dimensions cannot be broadcast together",
                    &[a.aval().clone(), b.aval().clone()],
                    loc,
                )
            });
        let nb = batch.len();
        let full = |x: &Array, tail: &[usize]| {
            let mut s = batch.clone();
            s.extend_from_slice(tail);
            x.broadcast_to(&s)
        };
        let a = full(&a, &a.shape()[ra - 2..]);
        let b = full(&b, &b.shape()[rb - 2..]);
        let bd: Vec<usize> = (0..nb).collect();
        bind1(
            contract(nb + 1, nb, bd.clone(), bd),
            &[Operand::from(&a), Operand::from(&b)],
        )
    }
}

/// Sums products of the operands' elements over the labels `spec` names (`jnp.einsum`), for
/// one or two operands: `"ij,jk->ik"` (matmul), `"bij,bjk->bik"` (batched), `"i,j->ij"`
/// (outer), `"ij->ji"` (transpose), `"ij->i"` (a sum), and the implicit form `"ij,jk"` (the
/// output: the labels seen once, in alphabetical order). Built on `dot_general`, `transpose`
/// and sums, so it differentiates and batches as they do. A label repeated within one operand
/// (traces, diagonals), `...` and three or more operands are refused with an error naming the
/// spec.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// let b = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], &[2, 2]);
/// assert_eq!(jaxrs::einsum("ij,jk->ik", &[&a, &b]).to_vec::<f32>(), a.to_vec::<f32>());
/// assert_eq!(jaxrs::einsum("ij->j", &[&a]).to_vec::<f32>(), vec![4.0, 6.0]);
/// assert_eq!(jaxrs::einsum("ij,ij->", &[&a, &a]).item::<f32>(), 30.0);
/// ```
#[track_caller]
pub fn einsum(spec: &str, operands: &[&Array]) -> Array {
    let loc = Location::caller();
    let avals: Vec<_> = operands.iter().map(|x| x.aval().clone()).collect();
    let fail =
        |why: &str| -> ! { op_error("einsum", &format!("{why} (spec {spec:?})"), &avals, loc) };
    let text: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    if text.contains("...") {
        fail("`...` (ellipsis) is not supported");
    }
    let (lhs, out) = match text.split_once("->") {
        Some((l, o)) => (l, Some(o)),
        None => (text.as_str(), None),
    };
    let inputs: Vec<Vec<char>> = lhs.split(',').map(|s| s.chars().collect()).collect();
    if inputs.len() != operands.len() {
        fail(&format!(
            "the spec names {} operands but {} were given",
            inputs.len(),
            operands.len()
        ));
    }
    if inputs.len() > 2 {
        fail("only specs with one or two operands are supported");
    }
    let mut sizes: Vec<(char, usize)> = Vec::new();
    for (i, (labels, x)) in inputs.iter().zip(operands).enumerate() {
        if labels.len() != x.rank() {
            fail(&format!(
                "operand {i} has rank {} but the spec gives it {} labels",
                x.rank(),
                labels.len()
            ));
        }
        for (k, &c) in labels.iter().enumerate() {
            if !c.is_ascii_alphabetic() {
                fail(&format!("{c:?} is not a label (labels are letters)"));
            }
            if labels[..k].contains(&c) {
                fail(&format!(
                    "label {c:?} repeats within operand {i} (a trace or diagonal): not supported"
                ));
            }
            match sizes.iter().find(|(l, _)| *l == c) {
                Some(&(_, n)) if n != x.shape()[k] => fail(&format!(
                    "label {c:?} has size {n} in one operand and {} in another",
                    x.shape()[k]
                )),
                Some(_) => {}
                None => sizes.push((c, x.shape()[k])),
            }
        }
    }
    let out: Vec<char> = match out {
        Some(o) => {
            let o: Vec<char> = o.chars().collect();
            for (k, &c) in o.iter().enumerate() {
                if o[..k].contains(&c) {
                    fail(&format!("output label {c:?} repeats"));
                }
                if !sizes.iter().any(|(l, _)| *l == c) {
                    fail(&format!("output label {c:?} is in no operand"));
                }
            }
            o
        }
        None => {
            let mut once: Vec<char> = sizes
                .iter()
                .map(|(c, _)| *c)
                .filter(|c| inputs.iter().flatten().filter(|l| *l == c).count() == 1)
                .collect();
            once.sort_unstable();
            once
        }
    };
    // Labels of one operand that are neither in the other nor in the output: summed first.
    let sum_own = |x: &Array, labels: &[char], other: &[char]| -> (Array, Vec<char>) {
        let (drop, keep): (Vec<usize>, Vec<usize>) = (0..labels.len())
            .partition(|&k| !other.contains(&labels[k]) && !out.contains(&labels[k]));
        let kept: Vec<char> = keep.iter().map(|&k| labels[k]).collect();
        if drop.is_empty() {
            return (x.clone(), kept);
        }
        let axes: Vec<i64> = drop.iter().map(|&k| k as i64).collect();
        (x.sum(axes, false), kept)
    };
    let (result, labels) = if operands.len() == 1 {
        sum_own(operands[0], &inputs[0], &[])
    } else {
        let (a, la) = sum_own(operands[0], &inputs[0], &inputs[1]);
        let (b, lb) = sum_own(operands[1], &inputs[1], &inputs[0]);
        let pos = |labels: &[char], c: char| labels.iter().position(|&l| l == c).unwrap();
        let shared: Vec<char> = la.iter().copied().filter(|c| lb.contains(c)).collect();
        let (batch, contract): (Vec<char>, Vec<char>) =
            shared.iter().partition(|c| out.contains(c));
        let dims = DotDims {
            lhs_contract: contract.iter().map(|&c| pos(&la, c)).collect(),
            rhs_contract: contract.iter().map(|&c| pos(&lb, c)).collect(),
            lhs_batch: batch.iter().map(|&c| pos(&la, c)).collect(),
            rhs_batch: batch.iter().map(|&c| pos(&lb, c)).collect(),
        };
        let mut labels = batch.clone();
        labels.extend(la.iter().filter(|c| !shared.contains(c)));
        labels.extend(lb.iter().filter(|c| !shared.contains(c)));
        (a.dot_general(&b, &dims), labels)
    };
    let perm: Vec<usize> = out
        .iter()
        .map(|&c| labels.iter().position(|&l| l == c).unwrap())
        .collect();
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        result
    } else {
        result.transpose(perm)
    }
}
