//! The matrix decompositions, as `jax.lax.linalg` has them: `cholesky`, `triangular_solve`,
//! `lu`, `qr`, `eigh`, `svd`, `eig`, `hessenberg` and `schur`, each over a batch of matrices (the last two dims;
//! leading dims are the batch), with JAX's forward and reverse rules and a batching rule.
//! Each takes complex matrices too (Hermitian for `cholesky` and `eigh`), with JAX's complex
//! JVPs (conjugate transposes where the real rules transpose); LU's and the triangular
//! solve's reverse rules hold as written (JAX's transposes are linear, never conjugating),
//! and the others' reverse mode for complex matrices transposes their JVPs.
//!
//! How they run: XLA's CPU compiler has no expansion for LU or SVD and a slow one for the
//! rest, so every decomposition lowers to a custom call of a host kernel (`kernels::linalg`,
//! backed by faer), as jaxlib calls LAPACK on CPU. Results follow LAPACK's conventions (a
//! failed factorisation gives NaN; `eigh`'s eigenvalues ascending, `svd`'s singular values
//! descending); eigenvector and singular-vector signs are the kernel's, as LAPACK's are
//! implementation-defined too.
//!
//! Rules, written with the Array API so they are traced and differentiable again:
//! - cholesky: `L̇ = L φ(L⁻¹ Σ̇ L⁻ᵀ)` with φ the lower triangle with the diagonal halved;
//!   reverse `Σ̄ = L⁻ᵀ φ(Lᵀ L̄) L⁻¹` (the caller symmetrizes, as `jnp.linalg.cholesky` does).
//! - triangular_solve: linear in `b` (transpose: the solve with `op(a)ᵀ`); in `a`,
//!   `Ẋ = -op(a)⁻¹ op(ȧ) X`, masked to the triangle read.
//! - lu (square): `L̇ = L tril(M, -1)`, `U̇ = triu(M) U` with `M = L⁻¹ P ȧ U⁻¹`.
//! - qr (m ≥ n, reduced or square): JAX's rule; reverse mode by transposing it.
//! - eigh: `ẇ = diag(Vᵀ ȧ V)`, `V̇ = V (F ∘ Vᵀ ȧ V)` with `F_ij = 1/(w_j - w_i)`.
//! - svd: JAX's rule (with the `m ≠ n` terms); reverse mode by transposing it.
//! - eig: the eigenvalues' `ẇ = diag(V⁻¹ ȧ V)`, reverse `ā = V⁻ᵀ diag(w̄) Vᵀ`; none for the
//!   eigenvectors, as JAX has none without an opt-in.
//! - hessenberg, schur and the triangular recurrences behind sqrtm, solve_sylvester and funm:
//!   none, as JAX has none.
//!
//! Batching moves the batch dim to the front: the kernels take leading batch dims natively.

use super::arity;
use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::trace::{bind, Operand};
use crate::dtype::DType;
use crate::interpreters::ad::{or_zeros, transpose_linear};
use crate::interpreters::batching::move_bdim;
use crate::kernels;
use std::sync::Arc;

/// Checks that `a` is a batch of real or complex matrices; returns (rows, cols).
fn matrix_operand(a: &Aval, what: &str) -> Result<(usize, usize), String> {
    if a.rank() < 2 {
        return Err(format!(
            "{what} must have at least 2 dimensions (a batch of matrices)"
        ));
    }
    if !matches!(a.dtype, DType::F32 | DType::F64 | DType::C64 | DType::C128) {
        return Err(format!(
            "{what} must be float32, float64, complex64 or complex128, got {}",
            a.dtype.name()
        ));
    }
    Ok((a.shape[a.rank() - 2], a.shape[a.rank() - 1]))
}

/// `a`'s shape with its last two dims replaced by `tail`.
fn with_matrix_dims(a: &Aval, tail: &[usize]) -> Vec<usize> {
    let mut shape = a.shape[..a.rank() - 2].to_vec();
    shape.extend_from_slice(tail);
    shape
}

/// Lowers to the host kernel `target` with boolean attributes `flags`.
fn lower_kernel(
    cx: &mut LowerCtx,
    target: &str,
    flags: &[(&str, bool)],
    ins: &[String],
    in_avals: &[Aval],
    out_avals: &[Aval],
) -> Vec<String> {
    let flags: Vec<(&str, &str)> = flags
        .iter()
        .map(|&(name, on)| (name, if on { "true" } else { "false" }))
        .collect();
    kernels::lower_host_kernel(cx, target, &flags, ins, in_avals, out_avals)
}

/// The batching rule every decomposition shares: batch dims to the front, bind, results
/// batched at 0.
fn batch_at_front(
    prim: Arc<dyn Primitive>,
    args: &[Operand],
    dims: &[Option<usize>],
    axis_size: usize,
) -> (Vec<Array>, Vec<Option<usize>>) {
    let moved: Vec<Array> = args
        .iter()
        .zip(dims)
        .map(|(a, d)| move_bdim(a, *d, 0, axis_size))
        .collect();
    let ops: Vec<Operand> = moved.iter().map(Operand::from).collect();
    let outs = bind(prim, &ops);
    let n = outs.len();
    (outs, vec![Some(0); n])
}

/// The matrix transpose of a batch (`x.mT`).
pub fn mt(x: &Array) -> Array {
    x.swap_axes(-1, -2)
}

/// The conjugate transpose of a batch (`x.mH`); the transpose of a real one.
pub fn mh(x: &Array) -> Array {
    mt(x).conj()
}

/// The VJP of a decomposition of a complex matrix: its JVP (`Primitive::jvp`), transposed.
/// The real rules are transposed by hand (below each JVP); for complex matrices the JVPs
/// conjugate, and transposing them mechanically is how JAX gets their reverse mode too.
fn vjp_of_complex(
    prim: &dyn Primitive,
    primals: &[Operand],
    outs: &[Array],
    cts: &[Option<Array>],
) -> Vec<Option<Array>> {
    let linear = |t: Vec<Array>| -> Vec<Array> {
        prim.jvp(primals, &[t.into_iter().next()], outs)
            .iter()
            .zip(outs)
            .map(|(t, o)| or_zeros(t, o.aval()))
            .collect()
    };
    let ct = transpose_linear(&[primals[0].aval()], linear, cts).remove(0);
    vec![Some(ct)]
}

/// The `n x n` identity of `dtype`.
pub fn eye(n: usize, dtype: DType) -> Array {
    Array::iota(DType::I32, &[n, n], 0)
        .eq(Array::iota(DType::I32, &[n, n], 1))
        .astype(dtype)
}

/// The diagonals of a batch of square matrices, `[.., n]`.
fn diag_of(x: &Array) -> Array {
    let n = x.shape()[x.rank() - 1];
    (x * &eye(n, x.dtype())).sum(-1i64, false)
}

/// A batch of diagonal matrices from a batch of vectors `[.., n]`.
fn diag_matrix(v: &Array) -> Array {
    let n = v.shape()[v.rank() - 1];
    v.expand_dims(-2) * &eye(n, v.dtype())
}

/// `1 / x` elementwise.
fn recip(x: &Array) -> Array {
    Array::ones(&[], x.dtype()) / x
}

/// The lower triangle with its diagonal halved: Cholesky's φ.
fn phi(x: &Array) -> Array {
    x.tril(-1) + diag_matrix(&diag_of(x)) * 0.5
}

// ------------------------------------------------------------------ cholesky

/// `lax.linalg.cholesky` without the symmetrization: the lower Cholesky factor of the lower
/// triangle of each matrix (NaN where a matrix is not positive definite).
#[derive(Debug, Clone)]
pub struct Cholesky;

/// Binds [`Cholesky`].
#[track_caller]
pub fn cholesky(a: &Array) -> Array {
    bind(Arc::new(Cholesky), &[Operand::from(a)]).remove(0)
}

impl Primitive for Cholesky {
    fn name(&self) -> &'static str {
        "cholesky"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let (m, n) = matrix_operand(&inputs[0], "the operand")?;
        if m != n {
            return Err(format!("the matrices must be square, got {m}x{n}"));
        }
        Ok(vec![inputs[0].clone()])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let Some(sigma_dot) = &tangents[0] else {
            return vec![None];
        };
        let l = &outs[0];
        // L⁻¹ Σ̇ L⁻ᴴ by two triangular solves (the first against conj(L), transposed).
        let tmp = triangular_solve(&l.conj(), sigma_dot, false, true, true, false);
        let inner = triangular_solve(l, &tmp, true, true, false, false);
        vec![Some(l.matmul(&phi(&inner)))]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(l_bar) = &cts[0] else {
            return vec![None];
        };
        if l_bar.dtype().is_complex() {
            return vjp_of_complex(self, primals, outs, cts);
        }
        let l = &outs[0];
        let p = phi(&mt(l).matmul(l_bar));
        // L⁻ᵀ P L⁻¹: solve Lᵀ Y = P, then Z L = Y.
        let y = triangular_solve(l, &p, true, true, true, false);
        vec![Some(triangular_solve(l, &y, false, true, false, false))]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        lower_kernel(cx, "jaxrs_cholesky", &[], ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

// ------------------------------------------------------------------ triangular_solve

/// `lax.linalg.triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal)`: `x` with
/// `op(a) x = b` (left side) or `x op(a) = b`, reading only `a`'s lower or upper triangle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriangularSolve {
    pub left_side: bool,
    pub lower: bool,
    pub transpose_a: bool,
    pub unit_diagonal: bool,
}

/// Binds [`TriangularSolve`]; `a` and `b` share their batch dims (broadcast first).
#[track_caller]
pub fn triangular_solve(
    a: &Array,
    b: &Array,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    unit_diagonal: bool,
) -> Array {
    let prim = TriangularSolve {
        left_side,
        lower,
        transpose_a,
        unit_diagonal,
    };
    // The kernel wants equal batch dims: broadcast the leading dims of both.
    let batch_a = &a.shape()[..a.rank().saturating_sub(2)];
    let batch_b = &b.shape()[..b.rank().saturating_sub(2)];
    let (a, b) = if batch_a != batch_b && a.rank() >= 2 && b.rank() >= 2 {
        let batch = broadcast_batch(batch_a, batch_b);
        let full = |x: &Array| {
            let mut s = batch.clone();
            s.extend_from_slice(&x.shape()[x.rank() - 2..]);
            x.broadcast_to(&s)
        };
        (full(a), full(b))
    } else {
        (a.clone(), b.clone())
    };
    bind(Arc::new(prim), &[Operand::from(&a), Operand::from(&b)]).remove(0)
}

/// numpy's broadcast of two batch shapes (a mismatch is reported by the primitive's check).
pub fn broadcast_batch(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let da = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let db = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            if da == 1 {
                db
            } else {
                da
            }
        })
        .collect()
}

impl TriangularSolve {
    /// `op(a)`: `a` or its transpose.
    fn op(&self, a: &Array) -> Array {
        if self.transpose_a {
            mt(a)
        } else {
            a.clone()
        }
    }
    /// The part of a cotangent or tangent of `a` that the solve reads.
    fn mask(&self, x: &Array) -> Array {
        let k = i64::from(self.unit_diagonal);
        if self.lower {
            x.tril(-k)
        } else {
            x.triu(k)
        }
    }
    fn solve(&self, a: &Array, b: &Array) -> Array {
        triangular_solve(
            a,
            b,
            self.left_side,
            self.lower,
            self.transpose_a,
            self.unit_diagonal,
        )
    }
}

impl Primitive for TriangularSolve {
    fn name(&self) -> &'static str {
        "triangular_solve"
    }
    fn params_string(&self) -> String {
        format!(
            "left_side={} lower={} transpose_a={} unit_diagonal={}",
            self.left_side, self.lower, self.transpose_a, self.unit_diagonal
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 2)?;
        let (m, n) = matrix_operand(&inputs[0], "a")?;
        let (bm, bn) = matrix_operand(&inputs[1], "b")?;
        if m != n {
            return Err(format!("a must be square, got {m}x{n}"));
        }
        if inputs[0].dtype != inputs[1].dtype {
            return Err("a and b must have the same dtype".into());
        }
        if inputs[0].shape[..inputs[0].rank() - 2] != inputs[1].shape[..inputs[1].rank() - 2] {
            return Err("a and b must have the same batch dims".into());
        }
        let shared = if self.left_side { bm } else { bn };
        if shared != n {
            return Err(format!(
                "a is {n}x{n} but b's {} dim is {shared}",
                if self.left_side { "row" } else { "column" }
            ));
        }
        Ok(vec![inputs[1].clone()])
    }
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        outs: &[Array],
    ) -> Vec<Option<Array>> {
        let a = primals[0].to_array();
        let x = &outs[0];
        let mut rhs = tangents[1].clone();
        if let Some(a_dot) = &tangents[0] {
            let op_dot = self.op(&self.mask(a_dot));
            let term = if self.left_side {
                op_dot.matmul(x)
            } else {
                x.matmul(&op_dot)
            };
            rhs = Some(match rhs {
                Some(b_dot) => b_dot - term,
                None => -term,
            });
        }
        vec![rhs.map(|r| self.solve(&a, &r))]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        wanted: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(x_bar) = &cts[0] else {
            return vec![None, None];
        };
        let a = primals[0].to_array();
        let transposed = TriangularSolve {
            transpose_a: !self.transpose_a,
            ..self.clone()
        };
        let b_bar = transposed.solve(&a, x_bar);
        let a_bar = wanted[0].then(|| {
            let x = &outs[0];
            let op_bar = if self.left_side {
                -b_bar.matmul(&mt(x))
            } else {
                -mt(x).matmul(&b_bar)
            };
            self.mask(&self.op(&op_bar))
        });
        vec![a_bar, Some(b_bar)]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        let flags = [
            ("left_side", self.left_side),
            ("lower", self.lower),
            ("transpose_a", self.transpose_a),
            ("unit_diagonal", self.unit_diagonal),
        ];
        lower_kernel(cx, "jaxrs_triangular_solve", &flags, ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

// ------------------------------------------------------------------ lu

/// `lax.linalg.lu`: `(lu, pivots, permutation)` with `a[permutation] = L U`, `L` unit lower
/// (below `lu`'s diagonal), `U` upper (on and above it), `pivots` LAPACK's row swaps.
#[derive(Debug, Clone)]
pub struct Lu;

/// Binds [`Lu`]: `(lu, pivots, permutation)`.
#[track_caller]
pub fn lu(a: &Array) -> (Array, Array, Array) {
    let mut outs = bind(Arc::new(Lu), &[Operand::from(a)]);
    let perm = outs.pop().expect("three results");
    let pivots = outs.pop().expect("three results");
    (outs.pop().expect("three results"), pivots, perm)
}

/// Rows of `x` (`[.., m, n]`) gathered by a batch of index vectors `[.., m]`.
fn take_rows(x: &Array, rows: &Array) -> Array {
    let idx = rows.expand_dims(-1).broadcast_to(x.shape());
    x.take_along_axis(&idx, -2)
}

impl Primitive for Lu {
    fn name(&self) -> &'static str {
        "lu"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let (m, n) = matrix_operand(a, "the operand")?;
        let batch = with_matrix_dims(a, &[]);
        let ints = |len: usize| {
            let mut s = batch.clone();
            s.push(len);
            Aval::new(s, DType::I32)
        };
        Ok(vec![a.clone(), ints(m.min(n)), ints(m)])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let Some(a_dot) = &tangents[0] else {
            return vec![None, None, None];
        };
        let (lu, perm) = (&outs[0], &outs[2]);
        let n = square_or_panic(lu, "lu's derivative");
        let l = lu.tril(-1) + eye(n, lu.dtype());
        let u = lu.triu(0);
        let pa = take_rows(a_dot, perm);
        let la = triangular_solve(&l, &pa, true, true, false, true);
        let m = triangular_solve(&u, &la, false, false, false, false);
        let lu_dot = l.matmul(&m.tril(-1)) + m.triu(0).matmul(&u);
        vec![Some(lu_dot), None, None]
    }
    fn vjp(
        &self,
        _: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        let Some(c_bar) = &cts[0] else {
            return vec![None];
        };
        let (lu, perm) = (&outs[0], &outs[2]);
        let n = square_or_panic(lu, "lu's derivative");
        let l = lu.tril(-1) + eye(n, lu.dtype());
        let u = lu.triu(0);
        let m_bar = mt(&l).matmul(c_bar).tril(-1) + c_bar.matmul(&mt(&u)).triu(0);
        // (P ā) = L⁻ᵀ M̄ U⁻ᵀ, then undo the row permutation.
        let y = triangular_solve(&l, &m_bar, true, true, true, true);
        let pa_bar = triangular_solve(&u, &y, false, false, true, false);
        let inverse = perm.argsort(-1);
        vec![Some(take_rows(&pa_bar, &inverse))]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        lower_kernel(cx, "jaxrs_lu", &[], ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

/// The size of a batch of square matrices; differentiating a rectangular decomposition
/// stops here, as JAX's rules that exist only for the square case do.
#[track_caller]
fn square_or_panic(x: &Array, what: &str) -> usize {
    let (m, n) = (x.shape()[x.rank() - 2], x.shape()[x.rank() - 1]);
    if m != n {
        panic!("{what} is implemented for square matrices only, got {m}x{n}");
    }
    n
}

/// Solves with LU factors `(lu, permutation)` of [`lu`]: `a x = b`, or `aᵀ x = b` when
/// `transpose`. `b` is `[.., n, k]`, broadcast against the factors' batch.
#[track_caller]
pub fn lu_solve(lu: &Array, permutation: &Array, b: &Array, transpose: bool) -> Array {
    let batch = broadcast_batch(&lu.shape()[..lu.rank() - 2], &b.shape()[..b.rank() - 2]);
    let full = |x: &Array, tail: &[usize]| {
        let mut s = batch.clone();
        s.extend_from_slice(tail);
        x.broadcast_to(&s)
    };
    let lu = full(lu, &lu.shape()[lu.rank() - 2..]);
    let perm = full(permutation, &permutation.shape()[permutation.rank() - 1..]);
    let b = full(b, &b.shape()[b.rank() - 2..]);
    if !transpose {
        let y = triangular_solve(&lu, &take_rows(&b, &perm), true, true, false, true);
        triangular_solve(&lu, &y, true, false, false, false)
    } else {
        // aᵀ = Uᵀ Lᵀ P: solve Uᵀ y = b, Lᵀ z = y, then x = Pᵀ z.
        let y = triangular_solve(&lu, &b, true, false, true, false);
        let z = triangular_solve(&lu, &y, true, true, true, true);
        take_rows(&z, &perm.argsort(-1))
    }
}

/// `a⁻¹ b` for a batch of square matrices, by LU.
fn solve(a: &Array, b: &Array) -> Array {
    let (lu_factor, _, permutation) = lu(a);
    lu_solve(&lu_factor, &permutation, b, false)
}

// ------------------------------------------------------------------ qr

/// `lax.linalg.qr(a, full_matrices)`: `(q, r)`, `q` orthonormal columns (`m x m` when full,
/// else `m x min(m, n)`), `r` upper triangular.
#[derive(Debug, Clone)]
pub struct Qr {
    pub full_matrices: bool,
}

/// Binds [`Qr`]: `(q, r)`.
#[track_caller]
pub fn qr(a: &Array, full_matrices: bool) -> (Array, Array) {
    let mut outs = bind(Arc::new(Qr { full_matrices }), &[Operand::from(a)]);
    let r = outs.pop().expect("two results");
    (outs.pop().expect("two results"), r)
}

impl Qr {
    /// JAX's rule exists for `m >= n`, reduced, or square.
    #[track_caller]
    fn check_differentiable(&self, a: &[usize]) {
        let (m, n) = (a[a.len() - 2], a[a.len() - 1]);
        if m < n || (self.full_matrices && m != n) {
            panic!(
                "qr's derivative is implemented for m >= n with full_matrices=false (or square), \
                 as JAX's, got {m}x{n} with full_matrices={}",
                self.full_matrices
            );
        }
    }
}

impl Primitive for Qr {
    fn name(&self) -> &'static str {
        "qr"
    }
    fn params_string(&self) -> String {
        format!("full_matrices={}", self.full_matrices)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let (m, n) = matrix_operand(a, "the operand")?;
        let k = if self.full_matrices { m } else { m.min(n) };
        Ok(vec![
            Aval::new(with_matrix_dims(a, &[m, k]), a.dtype),
            Aval::new(with_matrix_dims(a, &[k, n]), a.dtype),
        ])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let Some(a_dot) = &tangents[0] else {
            return vec![None, None];
        };
        self.check_differentiable(a_dot.shape());
        let (q, r) = (&outs[0], &outs[1]);
        let x = triangular_solve(r, a_dot, false, false, false, false);
        let c = mh(q).matmul(&x);
        let lower = c.tril(-1);
        let mut omega = &lower - mh(&lower);
        if c.dtype().is_complex() {
            // The diagonal's imaginary part, which a complex Q's phases leave free (JAX's
            // correction).
            let n = c.shape()[c.rank() - 1];
            omega = omega + eye(n, c.dtype()) * (&c - c.real().astype(c.dtype()));
        }
        let q_dot = q.matmul(&(&omega - &c)) + &x;
        let r_dot = (&c - &omega).matmul(r);
        vec![Some(q_dot), Some(r_dot)]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        self.check_differentiable(&primals[0].aval().shape);
        if primals[0].aval().dtype.is_complex() {
            return vjp_of_complex(self, primals, outs, cts);
        }
        let (q, r) = (&outs[0], &outs[1]);
        let zeros = |x: &Array| Array::zeros(x.shape(), x.dtype());
        let q_bar = cts[0].clone().unwrap_or_else(|| zeros(q));
        let r_bar = cts[1].clone().unwrap_or_else(|| zeros(r));
        // The transpose of the JVP: with M = R̄ Rᵀ - Qᵀ Q̄, C̄ = M - tril(M - Mᵀ, -1),
        // X̄ = Q̄ + Q C̄ and ā = X̄ R⁻ᵀ.
        let m = r_bar.matmul(&mt(r)) - mt(q).matmul(&q_bar);
        let c_bar = &m - (&m - mt(&m)).tril(-1);
        let x_bar = q_bar + q.matmul(&c_bar);
        vec![Some(triangular_solve(r, &x_bar, false, false, true, false))]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        lower_kernel(
            cx,
            "jaxrs_qr",
            &[("full_matrices", self.full_matrices)],
            ins,
            ia,
            oa,
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

// ------------------------------------------------------------------ eigh

/// `lax.linalg.eigh`: `(v, w)`, eigenvectors in `v`'s columns and eigenvalues ascending, of
/// the symmetric (Hermitian) matrix whose lower triangle is given, or, with
/// `symmetrize_input`, of the Hermitian part `(a + aᴴ) / 2`.
///
/// JAX symmetrizes with jnp operations before its `eigh` primitive. Here the kernel forms
/// the Hermitian part as it copies the matrix into its own layout, and the rules below
/// symmetrize the tangents and cotangents as the transposed operations would: a separate
/// XLA fusion before the custom call cost 0.3-0.9 ms of a 4 ms 256x256 decomposition (the
/// fusion split over XLA's threads, the kernel then run on a pool thread).
#[derive(Debug, Clone)]
pub struct Eigh {
    pub symmetrize_input: bool,
}

/// Binds [`Eigh`] on the lower triangle as given: `(v, w)`.
#[track_caller]
pub fn eigh(a: &Array) -> (Array, Array) {
    bind_eigh(a, false)
}

/// Binds [`Eigh`] on the Hermitian part `(a + aᴴ) / 2`: `(v, w)`.
#[track_caller]
pub fn eigh_of_hermitian_part(a: &Array) -> (Array, Array) {
    bind_eigh(a, true)
}

#[track_caller]
fn bind_eigh(a: &Array, symmetrize_input: bool) -> (Array, Array) {
    let mut outs = bind(Arc::new(Eigh { symmetrize_input }), &[Operand::from(a)]);
    let w = outs.pop().expect("two results");
    (outs.pop().expect("two results"), w)
}

/// `(x + xᴴ) / 2`, the Hermitian part (and its own transpose, as a linear map): JAX's
/// `lax.linalg.symmetrize`.
pub fn hermitian_part(x: &Array) -> Array {
    (x + &mh(x)) * 0.5
}

/// `F_ij = 1 / (w_j - w_i)` off the diagonal, 0 on it (eigh's and svd's coupling matrix, of
/// `d_ij = w_j - w_i`).
fn coupling(d: &Array) -> Array {
    let n = d.shape()[d.rank() - 1];
    let i = eye(n, d.dtype());
    recip(&(&i + d)) - &i
}

impl Primitive for Eigh {
    fn name(&self) -> &'static str {
        "eigh"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let (m, n) = matrix_operand(a, "the operand")?;
        if m != n {
            return Err(format!("the matrices must be square, got {m}x{n}"));
        }
        Ok(vec![
            a.clone(),
            // Real eigenvalues, for a Hermitian matrix too.
            Aval::new(with_matrix_dims(a, &[n]), a.dtype.real_dtype()),
        ])
    }
    fn jvp(&self, _: &[Operand], tangents: &[Option<Array>], outs: &[Array]) -> Vec<Option<Array>> {
        let Some(a_dot) = &tangents[0] else {
            return vec![None, None];
        };
        let symmetrized;
        let a_dot = if self.symmetrize_input {
            symmetrized = hermitian_part(a_dot);
            &symmetrized
        } else {
            a_dot
        };
        let (v, w) = (&outs[0], &outs[1]);
        let f = coupling(&(w.expand_dims(-2) - w.expand_dims(-1))).astype(v.dtype());
        let vh_a_v = mh(v).matmul(a_dot).matmul(v);
        let v_dot = v.matmul(&(&f * &vh_a_v));
        vec![Some(v_dot), Some(diag_of(&vh_a_v).real())]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        if outs[0].dtype().is_complex() {
            return vjp_of_complex(self, primals, outs, cts);
        }
        let (v, w) = (&outs[0], &outs[1]);
        let mut inner = match &cts[1] {
            Some(w_bar) => diag_matrix(w_bar),
            None => Array::zeros(v.shape(), v.dtype()),
        };
        if let Some(v_bar) = &cts[0] {
            let f = coupling(&(w.expand_dims(-2) - w.expand_dims(-1)));
            inner = inner + f * mt(v).matmul(v_bar);
        }
        let a_bar = v.matmul(&inner).matmul(&mt(v));
        if self.symmetrize_input {
            return vec![Some(hermitian_part(&a_bar))];
        }
        vec![Some(a_bar)]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        let flags = [("symmetrize_input", self.symmetrize_input)];
        lower_kernel(cx, "jaxrs_eigh", &flags, ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

// ------------------------------------------------------------------ svd

/// `lax.linalg.svd(a, full_matrices, compute_uv)`: `[s]` or `[s, u, vt]`, singular values
/// descending.
#[derive(Debug, Clone)]
pub struct Svd {
    pub full_matrices: bool,
    pub compute_uv: bool,
}

/// Binds [`Svd`] with vectors: `(u, s, vt)` as `jnp.linalg.svd` returns them.
#[track_caller]
pub fn svd(a: &Array, full_matrices: bool) -> (Array, Array, Array) {
    let prim = Svd {
        full_matrices,
        compute_uv: true,
    };
    let mut outs = bind(Arc::new(prim), &[Operand::from(a)]);
    let vt = outs.pop().expect("three results");
    let u = outs.pop().expect("three results");
    (u, outs.pop().expect("three results"), vt)
}

/// Binds [`Svd`] without vectors: the singular values.
#[track_caller]
pub fn svdvals(a: &Array) -> Array {
    let prim = Svd {
        full_matrices: false,
        compute_uv: false,
    };
    bind(Arc::new(prim), &[Operand::from(a)]).remove(0)
}

impl Svd {
    /// The reduced decomposition's tangents, as JAX's `svd_jvp_rule`: `(ṡ, U̇, V̇)`.
    fn tangents(a_dot: &Array, s: &Array, u: &Array, v: &Array) -> (Array, Array, Array) {
        let dtype = u.dtype();
        let ds_mat = mh(u).matmul(a_dot).matmul(v);
        let s_row = s.expand_dims(-2);
        let s_col = s.expand_dims(-1);
        let f = safe_coupling(&((&s_row + &s_col) * (&s_row - &s_col))).astype(dtype);
        let dss = s_row.astype(dtype) * &ds_mat;
        let sds = s_col.astype(dtype) * &ds_mat;
        let mut du_inner = &f * (&dss + mh(&dss));
        let s_inv = safe_reciprocal(s).expand_dims(-2).astype(dtype);
        if dtype.is_complex() {
            // The imaginary diagonal of Uᴴ ȧ V, which the singular vectors' free phases take
            // (zero for real matrices).
            let k = s.shape()[s.rank() - 1];
            du_inner = du_inner + (&ds_mat - mh(&ds_mat)) * 0.5 * (&s_inv * eye(k, dtype));
        }
        let mut du = u.matmul(&du_inner);
        let mut dv = v.matmul(&(&f * (&sds + mh(&sds))));
        let (m, n) = (
            a_dot.shape()[a_dot.rank() - 2],
            a_dot.shape()[a_dot.rank() - 1],
        );
        if m > n {
            let dav = a_dot.matmul(v);
            du = du + (&dav - u.matmul(&mh(u).matmul(&dav))) * &s_inv;
        }
        if n > m {
            let dahu = mh(a_dot).matmul(u);
            dv = dv + (&dahu - v.matmul(&mh(v).matmul(&dahu))) * &s_inv;
        }
        (diag_of(&ds_mat).real(), du, dv)
    }
}

/// `1/x` where `x != 0`, else 0 (JAX's guard for repeated or zero singular values).
fn safe_reciprocal(x: &Array) -> Array {
    let zero = x.eq(0.0).astype(x.dtype());
    recip(&(x + &zero)) - zero
}

/// `1/d` off the zeros of `d`, 0 on them (svd's coupling matrix).
fn safe_coupling(d: &Array) -> Array {
    safe_reciprocal(d)
}

impl Primitive for Svd {
    fn name(&self) -> &'static str {
        "svd"
    }
    fn params_string(&self) -> String {
        format!(
            "full_matrices={} compute_uv={}",
            self.full_matrices, self.compute_uv
        )
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let (m, n) = matrix_operand(a, "the operand")?;
        let k = m.min(n);
        let s = Aval::new(with_matrix_dims(a, &[k]), a.dtype.real_dtype());
        if !self.compute_uv {
            return Ok(vec![s]);
        }
        let (ku, kv) = if self.full_matrices { (m, n) } else { (k, k) };
        Ok(vec![
            s,
            Aval::new(with_matrix_dims(a, &[m, ku]), a.dtype),
            Aval::new(with_matrix_dims(a, &[kv, n]), a.dtype),
        ])
    }
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        _: &[Array],
    ) -> Vec<Option<Array>> {
        let Some(a_dot) = &tangents[0] else {
            return vec![None; if self.compute_uv { 3 } else { 1 }];
        };
        if self.full_matrices {
            let (m, n) = (
                a_dot.shape()[a_dot.rank() - 2],
                a_dot.shape()[a_dot.rank() - 1],
            );
            if m != n {
                panic!("svd's derivative with full_matrices=true needs square matrices (as JAX's), got {m}x{n}");
            }
        }
        let a = primals[0].to_array();
        let (u, s, vt) = svd(&a, false);
        let (ds, du, dv) = Svd::tangents(a_dot, &s, &u, &mh(&vt));
        if self.compute_uv {
            vec![Some(ds), Some(du), Some(mh(&dv))]
        } else {
            vec![Some(ds)]
        }
    }
    fn vjp(
        &self,
        primals: &[Operand],
        outs: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        let a = primals[0].to_array();
        let (m, n) = (a.shape()[a.rank() - 2], a.shape()[a.rank() - 1]);
        if self.full_matrices && self.compute_uv && m != n {
            panic!("svd's derivative with full_matrices=true needs square matrices (as JAX's), got {m}x{n}");
        }
        if a.dtype().is_complex() {
            return vjp_of_complex(self, primals, outs, cts);
        }
        // The reduced factors: the forward pass's own when it computed them (square full
        // matrices are reduced ones), else computed here.
        let (u, s, vt) = if self.compute_uv && (!self.full_matrices || m == n) {
            (outs[1].clone(), outs[0].clone(), outs[2].clone())
        } else {
            svd(&a, false)
        };
        let v = mt(&vt);
        let s_inv = safe_reciprocal(&s).expand_dims(-2);
        let mut k_bar = match &cts[0] {
            Some(s_bar) => diag_matrix(s_bar),
            None => Array::zeros(
                &with_matrix_dims(a.aval(), &[m.min(n), m.min(n)]),
                a.dtype(),
            ),
        };
        let mut a_bar_extra: Option<Array> = None;
        if self.compute_uv {
            let s_row = s.expand_dims(-2);
            let s_col = s.expand_dims(-1);
            let f = safe_coupling(&((&s_row + &s_col) * (&s_row - &s_col)));
            if let Some(u_bar) = &cts[1] {
                let a_u = &f * mt(&u).matmul(u_bar);
                k_bar = k_bar + (&a_u + mt(&a_u)) * &s_row;
                if m > n {
                    let rest = (u_bar - u.matmul(&mt(&u).matmul(u_bar))) * &s_inv;
                    a_bar_extra = Some(rest.matmul(&vt));
                }
            }
            if let Some(vt_bar) = &cts[2] {
                let v_bar = mt(vt_bar);
                let a_v = &f * mt(&v).matmul(&v_bar);
                k_bar = k_bar + &s_col * (&a_v + mt(&a_v));
                if n > m {
                    let rest = (&v_bar - v.matmul(&vt.matmul(&v_bar))) * &s_inv;
                    let term = u.matmul(&mt(&rest));
                    a_bar_extra = Some(match a_bar_extra {
                        Some(e) => e + term,
                        None => term,
                    });
                }
            }
        }
        let mut a_bar = u.matmul(&k_bar).matmul(&vt);
        if let Some(extra) = a_bar_extra {
            a_bar = a_bar + extra;
        }
        vec![Some(a_bar)]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        let flags = [
            ("full_matrices", self.full_matrices),
            ("compute_uv", self.compute_uv),
        ];
        lower_kernel(cx, "jaxrs_svd", &flags, ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

// ------------------------------------------------------------------ eig

/// `lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=vectors)`:
/// `[w]` or `[w, v]`, the eigenvalues and the right eigenvectors (columns, unit norm) of a
/// general square matrix, complex whatever `a`'s dtype. Their order is the kernel's.
///
/// Derivatives, as JAX's: the eigenvalues' `ẇ = diag(V⁻¹ ȧ V)`; the eigenvectors' stop with
/// a message, as JAX's do unless its `enable_eigvec_derivs` opt-in is given (they are only
/// right under assumptions no one can check).
#[derive(Debug, Clone)]
pub struct Eig {
    pub vectors: bool,
}

/// Binds [`Eig`] with eigenvectors: `(w, v)` as `jnp.linalg.eig` returns them.
#[track_caller]
pub fn eig(a: &Array) -> (Array, Array) {
    let mut outs = bind(Arc::new(Eig { vectors: true }), &[Operand::from(a)]);
    let v = outs.pop().expect("two results");
    (outs.pop().expect("two results"), v)
}

/// Binds [`Eig`] without eigenvectors: the eigenvalues (`jnp.linalg.eigvals`).
#[track_caller]
pub fn eigvals(a: &Array) -> Array {
    bind(Arc::new(Eig { vectors: false }), &[Operand::from(a)]).remove(0)
}

impl Eig {
    #[track_caller]
    fn refuse_vector_derivatives(&self) {
        if self.vectors {
            panic!(
                "eig: derivatives of non-symmetric eigenvectors are not implemented, as in \
                 JAX without its enable_eigvec_derivs opt-in (they are only valid under \
                 assumptions on the input that cannot be checked); differentiate eigvals, or \
                 eigh for a symmetric matrix"
            );
        }
    }
}

impl Primitive for Eig {
    fn name(&self) -> &'static str {
        "eig"
    }
    fn params_string(&self) -> String {
        format!("compute_right_eigenvectors={}", self.vectors)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        arity(inputs, 1)?;
        let a = &inputs[0];
        let (m, n) = matrix_operand(a, "the operand")?;
        if m != n {
            return Err(format!("the matrices must be square, got {m}x{n}"));
        }
        let complex = a.dtype.to_complex();
        let w = Aval::new(with_matrix_dims(a, &[n]), complex);
        Ok(if self.vectors {
            vec![w, Aval::new(a.shape.clone(), complex)]
        } else {
            vec![w]
        })
    }
    fn jvp(
        &self,
        primals: &[Operand],
        tangents: &[Option<Array>],
        _: &[Array],
    ) -> Vec<Option<Array>> {
        let Some(a_dot) = &tangents[0] else {
            return vec![None; 1 + usize::from(self.vectors)];
        };
        self.refuse_vector_derivatives();
        let (_, v) = eig(&primals[0].to_array());
        let a_dot = a_dot.astype(v.dtype());
        vec![Some((solve(&v, &a_dot) * mt(&v)).sum(-1i64, false))]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        cts: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        if cts.iter().all(Option::is_none) {
            return vec![None];
        }
        self.refuse_vector_derivatives();
        let w_bar = cts[0].as_ref().expect("eigvals has one result");
        let a = primals[0].to_array();
        let (_, v) = eig(&a);
        // The transpose of ȧ -> diag(V⁻¹ ȧ V): V⁻ᵀ diag(w̄) Vᵀ; its real part for a real
        // matrix (the transpose of the cast to complex).
        let vt = mt(&v);
        let a_bar = solve(&vt, &diag_matrix(w_bar).matmul(&vt));
        vec![Some(if a.dtype().is_complex() {
            a_bar
        } else {
            a_bar.real()
        })]
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        lower_kernel(
            cx,
            "jaxrs_eig",
            &[("compute_vectors", self.vectors)],
            ins,
            ia,
            oa,
        )
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

// ------------------------------------------------------------------ hessenberg and schur

/// The Hessenberg reduction `(h, q)` of a batch of square matrices: `a = q h qᴴ` with `h`
/// zero below its first subdiagonal and `q` unitary. `scipy.linalg.hessenberg`'s result,
/// computed as LAPACK's `gehrd`/`unghr` (JAX's `lax.linalg.hessenberg` returns the packed
/// reflectors instead, and `jax.scipy.linalg.hessenberg` forms the same `h` and `q` from
/// them). Not differentiable, as JAX's is not.
#[derive(Debug, Clone)]
pub struct Hessenberg;

/// Binds [`Hessenberg`]: `(h, q)`.
#[track_caller]
pub fn hessenberg(a: &Array) -> (Array, Array) {
    let mut outs = bind(Arc::new(Hessenberg), &[Operand::from(a)]);
    let q = outs.pop().expect("two results");
    (outs.pop().expect("two results"), q)
}

/// `a`'s aval twice, after checking it is a batch of square matrices.
fn square_twice(inputs: &[Aval]) -> Result<Vec<Aval>, String> {
    arity(inputs, 1)?;
    let (m, n) = matrix_operand(&inputs[0], "the operand")?;
    if m != n {
        return Err(format!("the matrices must be square, got {m}x{n}"));
    }
    Ok(vec![inputs[0].clone(), inputs[0].clone()])
}

impl Primitive for Hessenberg {
    fn name(&self) -> &'static str {
        "hessenberg"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        square_twice(inputs)
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        lower_kernel(cx, "jaxrs_hessenberg", &[], ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

/// `lax.linalg.schur(a)`: `(t, z)` with `a = z t zᴴ`, `z` unitary, `t` upper triangular for a
/// complex matrix and quasi-triangular for a real one (a 2x2 block `[[p, q], [r, p]]`,
/// `q r < 0`, per complex-conjugate pair, as LAPACK standardises them). The Schur form is
/// not unique: the order of the eigenvalues along `t`'s diagonal and the signs (phases) of
/// `z`'s columns are the kernel's QR iteration's (`kernels::schur`) and may differ from
/// LAPACK's; the products and everything computed from the form alone (`sqrtm`, `funm`,
/// `solve_sylvester`) do not. Not differentiable, as JAX's is not (JAX has no rule).
#[derive(Debug, Clone)]
pub struct Schur;

/// Binds [`Schur`]: `(t, z)`.
#[track_caller]
pub fn schur(a: &Array) -> (Array, Array) {
    let mut outs = bind(Arc::new(Schur), &[Operand::from(a)]);
    let z = outs.pop().expect("two results");
    (outs.pop().expect("two results"), z)
}

impl Primitive for Schur {
    fn name(&self) -> &'static str {
        "schur"
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        square_twice(inputs)
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        lower_kernel(cx, "jaxrs_schur", &[], ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(self.clone()), args, dims, axis_size)
    }
    as_any!();
}

/// The recurrences over triangular matrices that JAX's Schur-based functions run as loops
/// (`jax.scipy.linalg.sqrtm`, `solve_sylvester` and `funm`), each a host kernel here that
/// follows JAX's loop element by element. None is differentiable: they only ever see the
/// output of [`Schur`], which has no derivative in JAX either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriangularRecurrence {
    /// `t -> u` with `u u = t` (upper triangular), JAX's `_sqrtm_triu`.
    SqrtmTriu,
    /// `(r, s, f) -> y` with `r y + y s = f` (`r` upper, `s` lower triangular), JAX's
    /// `_solve_sylvester_triangular_scan`.
    SylvesterTriu,
    /// `(f, t) -> (f, minden)`: Parlett's recurrence completing `f(t)` from its diagonal, and
    /// the smallest denominator met (JAX's `_algorithm_11_1_1`).
    Parlett,
}

/// Binds `kind` on `args`.
#[track_caller]
pub fn triangular_recurrence(kind: TriangularRecurrence, args: &[&Array]) -> Vec<Array> {
    let ops: Vec<Operand> = args.iter().map(|a| Operand::from(*a)).collect();
    bind(Arc::new(kind), &ops)
}

impl Primitive for TriangularRecurrence {
    fn name(&self) -> &'static str {
        match self {
            TriangularRecurrence::SqrtmTriu => "sqrtm_triu",
            TriangularRecurrence::SylvesterTriu => "sylvester_triu",
            TriangularRecurrence::Parlett => "parlett",
        }
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let count = match self {
            TriangularRecurrence::SqrtmTriu => 1,
            TriangularRecurrence::SylvesterTriu => 3,
            TriangularRecurrence::Parlett => 2,
        };
        arity(inputs, count)?;
        let mut dims = Vec::new();
        for (i, a) in inputs.iter().enumerate() {
            dims.push(matrix_operand(a, &format!("operand {i}"))?);
            if a.dtype != inputs[0].dtype
                || a.shape[..a.rank() - 2] != inputs[0].shape[..inputs[0].rank() - 2]
            {
                return Err(format!(
                    "the operands must share their dtype and batch dims, got {:?} and {:?}",
                    inputs[0], a
                ));
            }
        }
        let square = |(m, n): (usize, usize)| m == n;
        let fits = match self {
            TriangularRecurrence::SqrtmTriu => square(dims[0]),
            TriangularRecurrence::SylvesterTriu => {
                square(dims[0]) && square(dims[1]) && dims[2] == (dims[0].0, dims[1].0)
            }
            TriangularRecurrence::Parlett => square(dims[0]) && dims[1] == dims[0],
        };
        if !fits {
            return Err(format!(
                "the matrices' shapes do not fit together: {dims:?}"
            ));
        }
        let last = inputs.last().expect("an operand");
        Ok(match self {
            TriangularRecurrence::Parlett => vec![
                inputs[0].clone(),
                Aval::new(
                    inputs[0].shape[..inputs[0].rank() - 2].to_vec(),
                    inputs[0].dtype.real_dtype(),
                ),
            ],
            _ => vec![last.clone()],
        })
    }
    fn lower(&self, cx: &mut LowerCtx, ins: &[String], ia: &[Aval], oa: &[Aval]) -> Vec<String> {
        let target = format!("jaxrs_{}", self.name());
        lower_kernel(cx, &target, &[], ins, ia, oa)
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        batch_at_front(Arc::new(*self), args, dims, axis_size)
    }
    as_any!();
}
