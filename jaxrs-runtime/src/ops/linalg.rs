//! Contractions: `dot_general` and numpy's `matmul`.

use super::arith::where_;
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
        a.dot_general_preferred(&b, dims, None)
    }

    /// `lax.dot_general` as JAX's primitive takes it: the operands are not promoted (an f32
    /// activation times an int8 kernel is one product, whose result has the wider dtype), and
    /// `preferred_element_type` is the dtype the products are accumulated and returned in
    /// (bf16 x bf16 -> f32, int8 x int8 -> int32). XLA computes it without widening the
    /// operands where it can; mixed operand dtypes are converted to the result's in the
    /// program, as JAX's lowering does.
    ///
    /// ```
    /// use jaxrs::prelude::*;
    ///
    /// let x = Array::from_vec(vec![100i8, 100, -100], &[1, 3]);
    /// let w = Array::from_vec(vec![100i8, 100, 1], &[3, 1]);
    /// let dims = jaxrs::DotDims { lhs_contract: vec![1], rhs_contract: vec![0], ..Default::default() };
    /// let y = x.dot_general_preferred(&w, &dims, Some(DType::I32));
    /// assert_eq!((y.dtype(), y.to_vec::<i32>()), (DType::I32, vec![19_900]));
    /// ```
    #[track_caller]
    pub fn dot_general_preferred(
        &self,
        other: &Array,
        dims: &DotDims,
        preferred_element_type: Option<DType>,
    ) -> Array {
        let prim = DotGeneral {
            lhs_contract: dims.lhs_contract.clone(),
            rhs_contract: dims.rhs_contract.clone(),
            lhs_batch: dims.lhs_batch.clone(),
            rhs_batch: dims.rhs_batch.clone(),
            preferred_element_type,
        };
        bind1(prim, &[Operand::from(self), Operand::from(other)])
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
            preferred_element_type: None,
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
/// any number of operands: `"ij,jk->ik"` (matmul), `"bij,bjk->bik"` (batched), `"i,j->ij"`
/// (outer), `"ij->ji"` (transpose), `"ii->i"` (a diagonal), `"ii"` (a trace),
/// `"...ij,...jk->...ik"` (`...` stands for the axes no label names, broadcast across the
/// operands), `"ij,jk,kl->il"` (contracted left to right), and the implicit form `"ij,jk"`
/// (the output: the `...` axes, then the labels seen once, in alphabetical order). A label
/// of size 1 in one operand broadcasts against its size elsewhere. Built on `dot_general`,
/// `transpose`, masks and sums, so it differentiates and batches as they do.
///
/// ```
/// use jaxrs::prelude::*;
///
/// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
/// let b = Array::from_vec(vec![1.0f32, 0.0, 0.0, 1.0], &[2, 2]);
/// assert_eq!(jaxrs::einsum("ij,jk->ik", &[&a, &b]).to_vec::<f32>(), a.to_vec::<f32>());
/// assert_eq!(jaxrs::einsum("ij->j", &[&a]).to_vec::<f32>(), vec![4.0, 6.0]);
/// assert_eq!(jaxrs::einsum("ij,ij->", &[&a, &a]).item::<f32>(), 30.0);
/// assert_eq!(jaxrs::einsum("ii", &[&a]).item::<f32>(), 5.0);
/// assert_eq!(jaxrs::einsum("...j,j", &[&a, &b.sum(0, false)]).to_vec::<f32>(), vec![3.0, 7.0]);
/// ```
#[track_caller]
pub fn einsum(spec: &str, operands: &[&Array]) -> Array {
    let loc = Location::caller();
    let avals: Vec<_> = operands.iter().map(|x| x.aval().clone()).collect();
    let fail =
        |why: &str| -> ! { op_error("einsum", &format!("{why} (spec {spec:?})"), &avals, loc) };
    let text: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    // A term's labels, with `...` as `None`.
    let parse = |term: &str| -> Vec<Option<char>> {
        let mut out = Vec::new();
        let mut rest = term;
        while let Some(c) = rest.chars().next() {
            if let Some(r) = rest.strip_prefix("...") {
                if out.contains(&None) {
                    fail("`...` appears twice in one term");
                }
                out.push(None);
                rest = r;
            } else if c.is_ascii_alphabetic() {
                out.push(Some(c));
                rest = &rest[1..];
            } else {
                fail(&format!(
                    "{c:?} is not a label (labels are letters, `...` the unnamed axes)"
                ));
            }
        }
        out
    };
    let (lhs, out_term) = match text.split_once("->") {
        Some((l, o)) => (l, Some(o)),
        None => (text.as_str(), None),
    };
    let terms: Vec<Vec<Option<char>>> = lhs.split(',').map(parse).collect();
    if terms.len() != operands.len() {
        fail(&format!(
            "the spec names {} operands but {} were given",
            terms.len(),
            operands.len()
        ));
    }
    // `...` becomes fresh labels (private-use characters, never letters), right-aligned so
    // the operands' unnamed axes broadcast as numpy's do.
    let ellipsis_label = |k: usize| char::from_u32(0xE000 + k as u32).expect("a label");
    let mut n_ellipsis = 0;
    let mut ellipsis_ranks = Vec::with_capacity(terms.len());
    for (i, (term, x)) in terms.iter().zip(operands).enumerate() {
        let named = term.iter().filter(|l| l.is_some()).count();
        let has = term.contains(&None);
        if (!has && named != x.rank()) || named > x.rank() {
            fail(&format!(
                "operand {i} has rank {} but the spec gives it {named} labels",
                x.rank()
            ));
        }
        let e = x.rank() - named;
        n_ellipsis = n_ellipsis.max(e);
        ellipsis_ranks.push(e);
    }
    let inputs: Vec<Vec<char>> = terms
        .iter()
        .zip(&ellipsis_ranks)
        .map(|(term, &e)| {
            term.iter()
                .flat_map(|l| match l {
                    Some(c) => vec![*c],
                    None => (n_ellipsis - e..n_ellipsis).map(ellipsis_label).collect(),
                })
                .collect()
        })
        .collect();
    // Each label's size: the one size other than 1 that its axes have (1 broadcasts).
    let mut sizes: Vec<(char, usize)> = Vec::new();
    for (labels, x) in inputs.iter().zip(operands) {
        for (k, &c) in labels.iter().enumerate() {
            let n = x.shape()[k];
            match sizes.iter_mut().find(|(l, _)| *l == c) {
                Some((_, m)) if *m != n && *m != 1 && n != 1 => {
                    let what = if (c as u32) >= 0xE000 {
                        "an axis under `...`".to_string()
                    } else {
                        format!("label {c:?}")
                    };
                    fail(&format!(
                        "{what} has size {m} in one operand and {n} in another"
                    ))
                }
                Some((_, m)) => *m = (*m).max(n),
                None => sizes.push((c, n)),
            }
        }
    }
    let size_of = |c: char| sizes.iter().find(|(l, _)| *l == c).unwrap().1;
    let all_ellipsis: Vec<char> = (0..n_ellipsis).map(ellipsis_label).collect();
    let out: Vec<char> = match out_term {
        Some(o) => {
            let o: Vec<char> = parse(o)
                .into_iter()
                .flat_map(|l| match l {
                    Some(c) => vec![c],
                    None => all_ellipsis.clone(),
                })
                .collect();
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
                .filter(|c| {
                    !all_ellipsis.contains(c)
                        && inputs.iter().flatten().filter(|l| *l == c).count() == 1
                })
                .collect();
            once.sort_unstable();
            all_ellipsis.iter().copied().chain(once).collect()
        }
    };
    // Each operand on its own: size-1 axes that broadcast dropped, repeated labels reduced to
    // their diagonal (JAX's mask-and-sum), labels no one else needs summed.
    let mut terms: Vec<(Array, Vec<char>)> = Vec::with_capacity(operands.len());
    for (x, labels) in operands.iter().zip(&inputs) {
        let mut x = (*x).clone();
        let mut labels = labels.clone();
        let broadcast: Vec<usize> = (0..labels.len())
            .filter(|&k| x.shape()[k] == 1 && size_of(labels[k]) != 1)
            .collect();
        if !broadcast.is_empty() {
            let shape: Vec<usize> = (0..labels.len())
                .filter(|k| !broadcast.contains(k))
                .map(|k| x.shape()[k])
                .collect();
            x = x.reshape(&shape[..]);
            labels = (0..labels.len())
                .filter(|k| !broadcast.contains(k))
                .map(|k| labels[k])
                .collect();
        }
        while let Some((i, j)) = (0..labels.len()).find_map(|j| {
            labels[..j]
                .iter()
                .position(|&l| l == labels[j])
                .map(|i| (i, j))
        }) {
            let mask =
                Array::iota(DType::I32, x.shape(), i).eq(Array::iota(DType::I32, x.shape(), j));
            x = where_(&mask, &x, Array::zeros(&[], x.dtype())).sum(j as i64, false);
            labels.remove(j);
        }
        terms.push((x, labels));
    }
    let needed_elsewhere = |terms: &[(Array, Vec<char>)], me: usize, c: char| {
        out.contains(&c)
            || terms
                .iter()
                .enumerate()
                .any(|(k, (_, l))| k != me && l.contains(&c))
    };
    let sum_own = |terms: &mut Vec<(Array, Vec<char>)>, me: usize| {
        let labels = terms[me].1.clone();
        let drop: Vec<usize> = (0..labels.len())
            .filter(|&k| !needed_elsewhere(terms, me, labels[k]))
            .collect();
        if !drop.is_empty() {
            let axes: Vec<i64> = drop.iter().map(|&k| k as i64).collect();
            let x = terms[me].0.sum(axes, false);
            let kept = (0..labels.len())
                .filter(|k| !drop.contains(k))
                .map(|k| labels[k])
                .collect();
            terms[me] = (x, kept);
        }
    };
    for me in 0..terms.len() {
        sum_own(&mut terms, me);
    }
    // Contract left to right: the first two operands become one until one is left.
    while terms.len() > 1 {
        let (a, la) = terms.remove(0);
        let (b, lb) = terms.remove(0);
        let later = |c: char| out.contains(&c) || terms.iter().any(|(_, l)| l.contains(&c));
        let pos = |labels: &[char], c: char| labels.iter().position(|&l| l == c).unwrap();
        let shared: Vec<char> = la.iter().copied().filter(|c| lb.contains(c)).collect();
        let (batch, contract): (Vec<char>, Vec<char>) = shared.iter().partition(|&&c| later(c));
        let dims = DotDims {
            lhs_contract: contract.iter().map(|&c| pos(&la, c)).collect(),
            rhs_contract: contract.iter().map(|&c| pos(&lb, c)).collect(),
            lhs_batch: batch.iter().map(|&c| pos(&la, c)).collect(),
            rhs_batch: batch.iter().map(|&c| pos(&lb, c)).collect(),
        };
        let mut labels = batch.clone();
        labels.extend(la.iter().filter(|c| !shared.contains(c)));
        labels.extend(lb.iter().filter(|c| !shared.contains(c)));
        terms.insert(0, (a.dot_general(&b, &dims), labels));
        sum_own(&mut terms, 0);
    }
    let (result, labels) = terms.pop().expect("one operand");
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

/// `lax.dot_general`'s `dimension_numbers` as JAX writes them:
/// `((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))`.
impl<const C: usize, const B: usize> From<(([usize; C], [usize; C]), ([usize; B], [usize; B]))>
    for DotDims
{
    fn from(((lc, rc), (lb, rb)): (([usize; C], [usize; C]), ([usize; B], [usize; B]))) -> DotDims {
        DotDims {
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
        }
    }
}
