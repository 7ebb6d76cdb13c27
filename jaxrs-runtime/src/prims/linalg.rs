//! `dot_general`: contractions with batch dimensions (matmul, einsum-like products).

use super::arity;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::{dim_list, i64_array, LowerCtx};
use crate::core::primitive::{as_any, tuple_str, Primitive};
use crate::core::sharding::PartitionDim;
use crate::core::sharding::PartitionSpec;
use crate::core::sharding_types::{dims_of, SpecRule};
use crate::core::trace::{bind1, Operand};
use crate::dtype::DType;
use crate::kernels;

/// Puts the dims of a cotangent computed as `[batch, free, other side's contracting dims in
/// increasing order]` back into the operand's own order.
fn transpose_back(
    ct: Array,
    batch: &[usize],
    free: &[usize],
    contract: &[usize],
    other_contract: &[usize],
) -> Array {
    let mut pairs: Vec<(usize, usize)> = other_contract
        .iter()
        .copied()
        .zip(contract.iter().copied())
        .collect();
    pairs.sort_unstable();
    let source: Vec<usize> = batch
        .iter()
        .chain(free)
        .copied()
        .chain(pairs.into_iter().map(|(_, c)| c))
        .collect();
    let mut perm = vec![0; source.len()];
    for (position, &dim) in source.iter().enumerate() {
        perm[dim] = position;
    }
    ct.transpose(perm)
}

/// Contracts `lhs_contract` with `rhs_contract`, pairing `lhs_batch` with `rhs_batch`.
/// The result's dims are: batch dims, then lhs's free dims, then rhs's free dims.
///
/// As JAX's `dot_general_p`, the operands may differ in dtype (an f32 activation times an
/// int8 kernel): the result has the wider of the two ([`DotGeneral::result_dtype`]), or
/// `preferred_element_type`, which names the accumulation and result dtype (bf16 x bf16 ->
/// f32, s8 x s8 -> s32) and is never narrower than the operands' for integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotGeneral {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
    pub preferred_element_type: Option<DType>,
}

impl DotGeneral {
    /// The free (neither batch nor contracted) dims of an operand of rank `rank`.
    pub fn free_dims(rank: usize, contract: &[usize], batch: &[usize]) -> Vec<usize> {
        (0..rank)
            .filter(|d| !contract.contains(d) && !batch.contains(d))
            .collect()
    }

    /// The result dtype of a product of `lhs` and `rhs` elements with `preferred` asked for:
    /// JAX's `_dot_general_dtype_rule` (XLA's `HigherPrecisionType`, then `MaybeUpcast`). Of two
    /// different dtypes the one with more range, then more mantissa, then more bits wins
    /// (f32 over bf16 over int8); a `preferred` dtype replaces it, but an integer result may
    /// not be narrowed.
    pub fn result_dtype(lhs: DType, rhs: DType, preferred: Option<DType>) -> Result<DType, String> {
        // (complex, max exponent, mantissa bits, bit width, signed): compared in this order.
        fn rank(d: DType) -> (bool, i32, i32, usize, bool) {
            let real = d.real_dtype();
            let (maxexp, mant) = match real {
                DType::BF16 => (128, 7),
                DType::F16 => (16, 10),
                DType::F32 => (128, 23),
                DType::F64 => (1024, 52),
                _ => (-1, -1),
            };
            let bits = if d == DType::Bool {
                1
            } else {
                real.size_in_bytes() * 8
            };
            (d.is_complex(), maxexp, mant, bits, !d.is_unsigned())
        }
        let (a, b) = (rank(lhs), rank(rhs));
        let result = if a > b {
            lhs
        } else if b > a {
            rhs
        } else if lhs != rhs {
            return Err(format!(
                "operand dtypes {} and {} have no common result dtype",
                lhs.name(),
                rhs.name()
            ));
        } else {
            lhs
        };
        match preferred {
            None => Ok(result),
            Some(p) if p == result => Ok(p),
            Some(p) if !result.is_inexact() && rank(p).3 < rank(result).3 => Err(format!(
                "preferred_element_type {} is narrower than the result dtype {}",
                p.name(),
                result.name()
            )),
            Some(p) => Ok(p),
        }
    }

    /// For a bf16 or int8 product whose lhs has one row (its free dims multiply to 1) and
    /// whose rhs has several columns: the lhs free dim to widen to two rows, and where that
    /// dim lands in the result. `None` for every other product.
    fn two_row_dim(&self, l: &Aval, r: &Aval) -> Option<(usize, usize)> {
        let low = |d: DType| matches!(d, DType::BF16 | DType::I8 | DType::U8);
        if !(low(l.dtype) && low(r.dtype)) {
            return None;
        }
        let lf = DotGeneral::free_dims(l.rank(), &self.lhs_contract, &self.lhs_batch);
        let rf = DotGeneral::free_dims(r.rank(), &self.rhs_contract, &self.rhs_batch);
        let rows: usize = lf.iter().map(|&d| l.shape[d]).product();
        let cols: usize = rf.iter().map(|&d| r.shape[d]).product();
        if lf.is_empty() || rows != 1 || cols < 2 {
            return None;
        }
        Some((lf[0], self.lhs_batch.len()))
    }

    /// Whether this product has the form XLA's CPU backend hands to YNNPACK (checked against
    /// its optimized programs): a matrix product `[.., k] x [k, n]` or `[.., k] x [n, k]`
    /// without batch dims, with at least two columns (one row is widened to two, see
    /// [`DotGeneral::two_row_dim`]); or a batched bf16 product in attention's form (the lhs
    /// contracted on its last dim, the rhs `[.., k, n]` or `[.., n, k]` after its batch dims)
    /// of at least [`DotGeneral::MIN_BATCHED_YNN_ROWS`] rows and two columns per batch
    /// (attention's scores and outputs at a prefill: XLA puts the batch dims first and runs
    /// it on YNNPACK's bf16 kernels, as it does in jaxlib's programs).
    fn ynn_matmul(&self, l: &Aval, r: &Aval) -> bool {
        if !self.lhs_batch.is_empty() {
            // Only the forms attention takes: one contraction, the last dim of the lhs, and a
            // single free dim of the rhs after or before it (`[.., k, n]` or `[.., n, k]`). A
            // product contracting another lhs dim (a VJP's) can reach XLA's own dot code with
            // the lhs laid out `[k, m]`, which has no bf16 kernel ("Unsupported element type
            // for DotThunk", seen in the bf16 transformer trainer's step).
            let nb = self.rhs_batch.len();
            let lf = DotGeneral::free_dims(l.rank(), &self.lhs_contract, &self.lhs_batch);
            let rows: usize = lf.iter().map(|&d| l.shape[d]).product();
            let attention_form = self.lhs_contract == [l.rank() - 1]
                && self.rhs_batch.iter().enumerate().all(|(i, &d)| i == d)
                && r.rank() == nb + 2
                && matches!(self.rhs_contract.as_slice(), [c] if *c >= nb);
            let cols = |c: usize| r.shape[if c == nb { nb + 1 } else { nb }];
            return l.dtype == DType::BF16
                && r.dtype == DType::BF16
                && attention_form
                && rows >= DotGeneral::MIN_BATCHED_YNN_ROWS
                && cols(self.rhs_contract[0]) >= 2;
        }
        let cols = |d: usize| r.shape[1 - d];
        l.rank() >= 2
            && self.lhs_contract == [l.rank() - 1]
            && r.rank() == 2
            && matches!(self.rhs_contract.as_slice(), [0] | [1])
            && cols(self.rhs_contract[0]) >= 2
    }

    /// The fewest rows per batch for which a batched bf16 product is left in bf16 for
    /// YNNPACK; below it the operands are widened to f32, as before. 16 is the smallest prompt
    /// bucket, so prefill attention takes YNNPACK's kernels while a decode step's (one query
    /// row per sequence, or a few query heads per key head, against the whole cached keys and
    /// values, which YNNPACK would pack on every call) keeps the form it was tuned with: with a
    /// bound of 2 the Llama bf16 decode rows measured no faster (`cargo bench --bench
    /// generate`, three interleaved runs).
    const MIN_BATCHED_YNN_ROWS: usize = 16;

    /// For a bf16 product of a few activation rows with an `[out, in]` weight (`x @ w^T`, the
    /// layout PyTorch and `jaxrs_models::Dense` keep): the number of rows. `None` for every
    /// other product.
    ///
    /// YNNPACK packs the right-hand operand of every dot into its own tiles on every call and
    /// reads the left one as it is; with the weight on the right, packing it is most of a
    /// decode step's time. With the weight on the left (`(w @ x^T)^T`) only the few rows are
    /// packed: about 0.5x the time at 1-8 rows (the streamed table of
    /// `benches/matmul_dtypes.rs`); measured while choosing the bound, 0.8x at 32 rows and
    /// slower from about 128. int8 and f32 products gained nothing from the swap.
    fn weight_as_lhs_rows(&self, l: &Aval, r: &Aval) -> Option<usize> {
        const MAX_ROWS: usize = 32;
        const MIN_COLS: usize = 64;
        let bf16_matrix_product =
            l.dtype == DType::BF16 && r.dtype == DType::BF16 && self.lhs_batch.is_empty();
        if !bf16_matrix_product
            || l.rank() < 2
            || r.rank() != 2
            || self.lhs_contract != [l.rank() - 1]
            || self.rhs_contract != [1]
        {
            return None;
        }
        let rows: usize = l.shape[..l.rank() - 1].iter().product();
        (rows <= MAX_ROWS && r.shape[0] >= MIN_COLS).then_some(rows)
    }

    /// This product with other dimension numbers (the VJP's and batching rule's products keep
    /// the preferred dtype, as JAX's do).
    fn with_dims(
        &self,
        lhs_contract: Vec<usize>,
        rhs_contract: Vec<usize>,
        lhs_batch: Vec<usize>,
        rhs_batch: Vec<usize>,
    ) -> DotGeneral {
        DotGeneral {
            lhs_contract,
            rhs_contract,
            lhs_batch,
            rhs_batch,
            preferred_element_type: self.preferred_element_type,
        }
    }
}

impl Primitive for DotGeneral {
    fn name(&self) -> &'static str {
        "dot_general"
    }
    fn params_string(&self) -> String {
        let dims = format!(
            "dimension_numbers=(({}, {}), ({}, {}))",
            tuple_str(&self.lhs_contract),
            tuple_str(&self.rhs_contract),
            tuple_str(&self.lhs_batch),
            tuple_str(&self.rhs_batch)
        );
        // Shown only when set, as JAX's jaxprs show it.
        match self.preferred_element_type {
            Some(p) => format!("{dims} preferred_element_type={}", p.name()),
            None => dims,
        }
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (l, r) = (&inputs[0], &inputs[1]);
        if l.dtype == DType::Bool || r.dtype == DType::Bool {
            return Err("dot_general is not defined on bool".into());
        }
        let dtype = DotGeneral::result_dtype(l.dtype, r.dtype, self.preferred_element_type)?;
        if self.lhs_contract.len() != self.rhs_contract.len()
            || self.lhs_batch.len() != self.rhs_batch.len()
        {
            return Err("contracting and batch dims must pair up".into());
        }
        let in_range = |dims: &[usize], rank: usize| dims.iter().all(|&d| d < rank);
        if !in_range(&self.lhs_contract, l.rank())
            || !in_range(&self.lhs_batch, l.rank())
            || !in_range(&self.rhs_contract, r.rank())
            || !in_range(&self.rhs_batch, r.rank())
        {
            return Err(format!(
                "dimension numbers {} out of range",
                self.params_string()
            ));
        }
        for (&a, &b) in self.lhs_contract.iter().zip(&self.rhs_contract) {
            if l.shape[a] != r.shape[b] {
                return Err(format!(
                    "contracting dims differ: lhs dim {a} is {} but rhs dim {b} is {}",
                    l.shape[a], r.shape[b]
                ));
            }
        }
        for (&a, &b) in self.lhs_batch.iter().zip(&self.rhs_batch) {
            if l.shape[a] != r.shape[b] {
                return Err(format!(
                    "batch dims differ: lhs dim {a} is {} but rhs dim {b} is {}",
                    l.shape[a], r.shape[b]
                ));
            }
        }
        let mut shape: Vec<usize> = self.lhs_batch.iter().map(|&d| l.shape[d]).collect();
        shape.extend(
            DotGeneral::free_dims(l.rank(), &self.lhs_contract, &self.lhs_batch)
                .iter()
                .map(|&d| l.shape[d]),
        );
        shape.extend(
            DotGeneral::free_dims(r.rank(), &self.rhs_contract, &self.rhs_batch)
                .iter()
                .map(|&d| r.shape[d]),
        );
        Ok(vec![l.with_shape(shape).with_dtype(dtype).weak(
            l.weak && r.weak && self.preferred_element_type.is_none(),
        )])
    }
    fn sharding_rule(&self, ins: &[Aval], outs: &[Aval]) -> SpecRule {
        let _ = outs;
        let (lhs, rhs) = (dims_of(&ins[0]), dims_of(&ins[1]));
        let specs = |dims: &[PartitionDim], at: &[usize]| -> Vec<PartitionDim> {
            at.iter().map(|&i| dims[i].clone()).collect()
        };
        let consistent = |l: &[PartitionDim], r: &[PartitionDim]| {
            l.iter().zip(r).all(|(l, r)| {
                *l == PartitionDim::Replicated || *r == PartitionDim::Replicated || l == r
            })
        };
        let (lhs_batch, rhs_batch) = (specs(&lhs, &self.lhs_batch), specs(&rhs, &self.rhs_batch));
        if !consistent(&lhs_batch, &rhs_batch) {
            return Err(format!(
                "the lhs and rhs batch dimensions must be sharded consistently, got {} and {}",
                PartitionSpec::new(lhs_batch),
                PartitionSpec::new(rhs_batch)
            ));
        }
        let (lhs_c, rhs_c) = (
            specs(&lhs, &self.lhs_contract),
            specs(&rhs, &self.rhs_contract),
        );
        if !consistent(&lhs_c, &rhs_c) {
            return Err(format!(
                "the contracting dimensions must be sharded consistently, got {} and {}",
                PartitionSpec::new(lhs_c),
                PartitionSpec::new(rhs_c)
            ));
        }
        if lhs_c
            .iter()
            .zip(&rhs_c)
            .any(|(l, r)| *l != PartitionDim::Replicated && *r != PartitionDim::Replicated)
        {
            return Err(format!(
                "contracting dimensions are sharded and it is ambiguous how the output should \
                 be sharded; give the output's sharding (`lax::dot_general_sharded`, \
                 `jnp::matmul_sharded`, or `reshard` an operand). Got lhs contracting spec {} \
                 and rhs contracting spec {}",
                PartitionSpec::new(lhs_c),
                PartitionSpec::new(rhs_c)
            ));
        }
        // JAX's order: batch dims (as the lhs has them), then the lhs's free dims, then the rhs's.
        let free = |dims: &[PartitionDim], contract: &[usize], batch: &[usize]| {
            (0..dims.len())
                .filter(|i| !contract.contains(i) && !batch.contains(i))
                .map(|i| dims[i].clone())
                .collect::<Vec<_>>()
        };
        let mut out = lhs_batch;
        out.extend(free(&lhs, &self.lhs_contract, &self.lhs_batch));
        out.extend(free(&rhs, &self.rhs_contract, &self.rhs_batch));
        Ok(vec![out])
    }
    fn jvp(&self, p: &[Operand], t: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        let (x, y) = (p[0].to_array(), p[1].to_array());
        let dot = |a: &Array, b: &Array| bind1(self.clone(), &[Operand::from(a), Operand::from(b)]);
        let left = t[0].as_ref().map(|t| dot(t, &y));
        let right = t[1].as_ref().map(|t| dot(&x, t));
        match (left, right) {
            (Some(a), Some(b)) => vec![Some(a + b)],
            (a, b) => vec![a.or(b)],
        }
    }
    fn vjp(
        &self,
        p: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(g) = &cts[0] else {
            return vec![None, None];
        };
        let (x, y) = (p[0].to_array(), p[1].to_array());
        let (lb, lc, rb, rc) = (
            &self.lhs_batch,
            &self.lhs_contract,
            &self.rhs_batch,
            &self.rhs_contract,
        );
        let lf = DotGeneral::free_dims(x.rank(), lc, lb);
        let rf = DotGeneral::free_dims(y.rank(), rc, rb);
        let nb = lb.len();
        let g_batch: Vec<usize> = (0..nb).collect();
        let g_lhs_free: Vec<usize> = (nb..nb + lf.len()).collect();
        let g_rhs_free: Vec<usize> = (nb + lf.len()..g.rank()).collect();
        // d lhs: contract g's rhs-free dims with rhs's free dims; what remains of rhs are its
        // contracting dims, which map back to lhs's contracting dims.
        // With mixed or preferred dtypes the products below come out in the result's dtype;
        // each cotangent is rounded back to its operand's dtype, as JAX's transpose rules do.
        let like = |ct: Array, operand: &Array| {
            if ct.dtype() == operand.dtype() {
                ct
            } else {
                ct.astype(operand.dtype())
            }
        };
        let ct_x = wanted[0].then(|| {
            let d = bind1(
                self.with_dims(g_rhs_free, rf.clone(), g_batch.clone(), rb.clone()),
                &[Operand::from(g), Operand::from(&*y)],
            );
            like(transpose_back(d, lb, &lf, lc, rc), &x)
        });
        let ct_y = wanted[1].then(|| {
            let d = bind1(
                self.with_dims(g_lhs_free, lf.clone(), g_batch, lb.clone()),
                &[Operand::from(g), Operand::from(&*x)],
            );
            like(transpose_back(d, rb, &rf, rc, lc), &y)
        });
        vec![ct_x, ct_y]
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        out: &[Aval],
    ) -> Vec<String> {
        let mut fields = Vec::new();
        if !self.lhs_batch.is_empty() {
            fields.push(format!(
                "lhs_batching_dimensions = {}",
                dim_list(&self.lhs_batch)
            ));
            fields.push(format!(
                "rhs_batching_dimensions = {}",
                dim_list(&self.rhs_batch)
            ));
        }
        if !self.lhs_contract.is_empty() {
            fields.push(format!(
                "lhs_contracting_dimensions = {}",
                dim_list(&self.lhs_contract)
            ));
            fields.push(format!(
                "rhs_contracting_dimensions = {}",
                dim_list(&self.rhs_contract)
            ));
        }
        let props = format!(
            "dot_dimension_numbers = #stablehlo.dot<{}>",
            fields.join(", ")
        );
        let (l, r, o) = (&in_avals[0], &in_avals[1], &out[0]);
        // Operands of two dtypes are converted to the result's first, as JAX lowers them on
        // CPU and GPU (XLA's CPU codegen has no mixed-operand dots).
        let (l, a) = if l.dtype == r.dtype || l.dtype == o.dtype {
            (l.clone(), ins[0].clone())
        } else {
            let lo = l.with_dtype(o.dtype);
            let a = cx.op1("stablehlo.convert", &[&ins[0]], &[l], "", &lo);
            (lo, a)
        };
        let (r, b) = if l.dtype == r.dtype || r.dtype == o.dtype {
            (r.clone(), ins[1].clone())
        } else {
            let ro = r.with_dtype(o.dtype);
            let b = cx.op1("stablehlo.convert", &[&ins[1]], &[r], "", &ro);
            (ro, b)
        };
        let cpu = cx.for_cpu();
        let narrow = |d: DType| matches!(d, DType::BF16 | DType::I8 | DType::U8);
        if cpu && (narrow(l.dtype) || narrow(r.dtype)) && !self.ynn_matmul(&l, &r) {
            // XLA's CPU backend runs a bf16 or int8 product only inside a YNNPACK fusion: its
            // own dot code has no bf16 x bf16 -> f32 or s8 x s8 -> s32 kernel (it fails at run
            // time, "Unsupported element type for DotThunk"). A product left out of
            // `ynn_matmul` (int8 or few-row batched products, a contraction YNNPACK does not
            // read, one column) is computed from operands widened to f32 / s32.
            let wide = if o.dtype.is_inexact() {
                DType::F32
            } else {
                DType::I32
            };
            let mut widen = |x: &Aval, v: &str| {
                if x.dtype == wide {
                    (x.clone(), v.to_string())
                } else {
                    let xw = x.with_dtype(wide);
                    let c = cx.op1("stablehlo.convert", &[v], &[x], "", &xw);
                    (xw, c)
                }
            };
            let (lw, aw) = widen(&l, &a);
            let (rw, bw) = widen(&r, &b);
            let ow = o.with_dtype(wide);
            let d = cx.op1(
                "stablehlo.dot_general",
                &[&aw, &bw],
                &[&lw, &rw],
                &props,
                &ow,
            );
            if ow.dtype == o.dtype {
                return vec![d];
            }
            return vec![cx.op1("stablehlo.convert", &[&d], &[&ow], "", o)];
        }
        // On XLA's CPU backend a bf16 x bf16 -> bf16 product is computed as bf16 x bf16 -> f32
        // and rounded once: f32 accumulation, as jaxlib's XLA gives (it upcasts the operands),
        // in the one bf16 form XLA hands to YNNPACK (`IsDotSupportedByYnn` takes bf16 x bf16
        // only with an f32 result). Upcasting the operands instead writes an f32 copy of both
        // on every call: 3-5x slower at LLM shapes (benches/matmul_dtypes.rs).
        let acc =
            if cpu && l.dtype == DType::BF16 && r.dtype == DType::BF16 && o.dtype == DType::BF16 {
                o.with_dtype(DType::F32)
            } else {
                o.clone()
            };
        let weight_rows = cpu.then(|| self.weight_as_lhs_rows(&l, &r)).flatten();
        // Where the CPU has AVX512-BF16 and no AMX, a decode step's few rows go to a kernel
        // that reads the weight once (`kernels::bf16_rows` says why).
        let rows_kernel = weight_rows.is_some_and(|rows| {
            cx.bf16_rows_kernel() && rows <= kernels::bf16_rows::MAX_ROWS && acc.dtype == DType::F32
        });
        if let (Some(rows), false) = (weight_rows, rows_kernel) {
            return vec![lower_weight_as_lhs(cx, (&a, &l), (&b, &r), rows, &acc, o)];
        }
        let unit = cpu.then(|| self.two_row_dim(&l, &r)).flatten();
        let d = match unit {
            _ if rows_kernel => kernels::lower_host_kernel(
                cx,
                "jaxrs_bf16_rows",
                &[],
                &[a.clone(), b.clone()],
                &[l.clone(), r.clone()],
                std::slice::from_ref(&acc),
            )
            .remove(0),
            None => cx.op1("stablehlo.dot_general", &[&a, &b], &[&l, &r], &props, &acc),
            Some((lhs_dim, out_dim)) => {
                // A matrix-vector product (one activation row: a decode step) in bf16 or int8:
                // YNNPACK takes no dot with one row, and XLA's own code for it upcasts the whole
                // kernel to f32 / s32 on every call. Two copies of the row make a two-row
                // product that YNNPACK runs; its first row is the result (3-4x faster for
                // [1, 768] x [768, 3072], benches/matmul_dtypes.rs).
                let mut shape2 = l.shape.clone();
                shape2[lhs_dim] = 2;
                let l2 = l.with_shape(shape2);
                let dims = format!(
                    "broadcast_dimensions = {}",
                    i64_array((0..l.rank()).map(|d| d as i64))
                );
                let a2 = cx.op1("stablehlo.broadcast_in_dim", &[&a], &[&l], &dims, &l2);
                let mut out2 = acc.shape.clone();
                out2[out_dim] = 2;
                let acc2 = acc.with_shape(out2);
                let d2 = cx.op1(
                    "stablehlo.dot_general",
                    &[&a2, &b],
                    &[&l2, &r],
                    &props,
                    &acc2,
                );
                cx.op1(
                    "stablehlo.slice",
                    &[&d2],
                    &[&acc2],
                    &leading_slice(&acc.shape),
                    &acc,
                )
            }
        };
        if acc.dtype == o.dtype {
            return vec![d];
        }
        vec![cx.op1("stablehlo.convert", &[&d], &[&acc], "", o)]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        _: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        // No transpose: both sides batched make one more batch dimension (the first of the
        // result); one side batched makes its batch dim a free dim of the result.
        use crate::interpreters::batching::shift_axis;
        let shifted = |ds: &[usize], b: Option<usize>| -> Vec<usize> {
            ds.iter()
                .map(|&d| b.map_or(d, |b| shift_axis(d, b)))
                .collect()
        };
        let (ld, rd) = (dims[0], dims[1]);
        let mut prim = self.with_dims(
            shifted(&self.lhs_contract, ld),
            shifted(&self.rhs_contract, rd),
            shifted(&self.lhs_batch, ld),
            shifted(&self.rhs_batch, rd),
        );
        let (lhs, rhs) = (args[0].aval(), args[1].aval());
        let nbatch = prim.lhs_batch.len();
        let out = match (ld, rd) {
            (Some(l), Some(r)) => {
                prim.lhs_batch.insert(0, l);
                prim.rhs_batch.insert(0, r);
                0
            }
            (Some(l), None) => {
                let free = DotGeneral::free_dims(lhs.rank(), &prim.lhs_contract, &prim.lhs_batch);
                nbatch + free.iter().position(|&d| d == l).expect("a free dim")
            }
            (None, Some(r)) => {
                let lhs_free = lhs.rank() - prim.lhs_contract.len() - nbatch;
                let free = DotGeneral::free_dims(rhs.rank(), &prim.rhs_contract, &prim.rhs_batch);
                nbatch + lhs_free + free.iter().position(|&d| d == r).expect("a free dim")
            }
            (None, None) => unreachable!("a batching rule has a batched operand"),
        };
        let y = bind1(prim, args);
        (vec![y], vec![Some(out)])
    }
    as_any!();
}

/// `x @ w^T` for `rows` rows of `x` (`[..., k]`) and a weight `w` `[n, k]`, lowered as
/// `(w @ x^T)^T` (see [`DotGeneral::weight_as_lhs_rows`]), accumulated in `acc`'s dtype and
/// returned in `out`'s; one row is doubled, as YNNPACK takes no dot with one column.
///
/// The rounding to `out`'s dtype comes before the transpose: XLA folds a transpose of a dot
/// into the dot, which would put the weight back on the right.
fn lower_weight_as_lhs(
    cx: &mut LowerCtx,
    (x, x_aval): (&str, &Aval),
    (w, w_aval): (&str, &Aval),
    rows: usize,
    acc: &Aval,
    out: &Aval,
) -> String {
    let k = x_aval.shape[x_aval.rank() - 1];
    let n = w_aval.shape[0];
    let flat = x_aval.with_shape(vec![rows, k]);
    let mut xs = cx.op1("stablehlo.reshape", &[x], &[x_aval], "", &flat);
    let cols = rows.max(2);
    let mut xs_aval = flat.clone();
    if rows == 1 {
        xs_aval = flat.with_shape(vec![2, k]);
        let dims = format!("broadcast_dimensions = {}", i64_array([0i64, 1]));
        xs = cx.op1(
            "stablehlo.broadcast_in_dim",
            &[&xs],
            &[&flat],
            &dims,
            &xs_aval,
        );
    }
    let props = format!(
        "dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = {}, \
         rhs_contracting_dimensions = {}>",
        dim_list(&[1]),
        dim_list(&[1])
    );
    let wx_acc = acc.with_shape(vec![n, cols]);
    let mut wx = cx.op1(
        "stablehlo.dot_general",
        &[w, &xs],
        &[w_aval, &xs_aval],
        &props,
        &wx_acc,
    );
    let wx_aval = out.with_shape(vec![n, cols]);
    if acc.dtype != out.dtype {
        wx = cx.op1("stablehlo.convert", &[&wx], &[&wx_acc], "", &wx_aval);
    }
    let mut xw_aval = out.with_shape(vec![cols, n]);
    let perm = format!("permutation = {}", i64_array([1i64, 0]));
    let mut xw = cx.op1("stablehlo.transpose", &[&wx], &[&wx_aval], &perm, &xw_aval);
    if rows == 1 {
        let one = out.with_shape(vec![1, n]);
        xw = cx.op1(
            "stablehlo.slice",
            &[&xw],
            &[&xw_aval],
            &leading_slice(&one.shape),
            &one,
        );
        xw_aval = one;
    }
    cx.op1("stablehlo.reshape", &[&xw], &[&xw_aval], "", out)
}

/// The attributes of a `stablehlo.slice` taking the leading `shape` of its operand.
fn leading_slice(shape: &[usize]) -> String {
    format!(
        "limit_indices = {}, start_indices = {}, strides = {}",
        i64_array(shape.iter().map(|&n| n as i64)),
        i64_array(vec![0i64; shape.len()]),
        i64_array(vec![1i64; shape.len()])
    )
}
