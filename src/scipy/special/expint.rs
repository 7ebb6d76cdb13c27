//! The exponential integrals `expi`, `exp1` and `expn`: Cephes's `ei.c` and `expn.c`, as
//! JAX 0.10.2 ports them (the same rational approximations, series and continued fraction, and
//! the same piecewise selections, every piece evaluated on every element and then selected).

// The coefficients keep Cephes's (and JAX's) published digits; they parse to the same f64.
#![allow(clippy::excessive_precision)]

use super::{full_like, horner, real_only};
use crate::numpy::inexact;
use crate::{custom_jvp, where_, Array, DType};
use jaxrs_runtime::promote_args_inexact;

const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// `finfo(dtype).eps`, the stopping tolerance of JAX's series.
pub(super) fn machine_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        DType::F32 => f32::EPSILON as f64,
        DType::F16 => 0.000_976_562_5,
        DType::BF16 => 0.007_812_5,
        other => panic!("machine epsilon of {} is not defined", other.name()),
    }
}

/// A `lax.while_loop` over elements, as JAX's runs under `vmap` (and so inside
/// `jnp.vectorize`): the loop goes on while `active` holds for any element, and each step
/// keeps the old carry of the elements where it no longer does. Every carry has the shape of
/// the elements.
pub(super) fn elementwise_while(
    active: impl Fn(&[Array]) -> Array,
    body: impl Fn(&[Array]) -> Vec<Array>,
    init: Vec<Array>,
) -> Vec<Array> {
    crate::while_loop(
        |c: &Vec<Array>| active(c).reduce_or(None),
        |c: Vec<Array>| {
            let on = active(&c);
            let next = body(&c);
            next.iter()
                .zip(&c)
                .map(|(new, old)| where_(&on, new, old))
                .collect()
        },
        init,
    )
}

/// `x f(x) + γ + log x` on `0 < x <= 2`.
fn expint1(x: &Array) -> Array {
    const A: [f64; 6] = [
        -5.350447357812542947283e0,
        2.185049168816613393830e2,
        -4.176572384826693777058e3,
        5.541176756393557601232e4,
        -3.313381331178144034309e5,
        1.592627163384945414220e6,
    ];
    const B: [f64; 7] = [
        1.0,
        -5.250547959112862969197e1,
        1.259616186786790571525e3,
        -1.756549581973534652631e4,
        1.493062117002725991967e5,
        -7.294949239640527645655e5,
        1.592627163384945429726e6,
    ];
    let f = &horner(&A, x) / &horner(&B, x);
    &(&(x * &f) + EULER_GAMMA) + &x.log()
}

/// `e^x / x (1 + f(1/x) / x)`, the form of every interval above 2.
fn eval_expint_k(a: &[f64], b: &[f64], x: &Array) -> Array {
    let w = 1.0 / x;
    let f = &horner(a, &w) / &horner(b, &w);
    let f = &(&w * &f) + 1.0;
    &(&x.exp() * &w) * &f
}

const EXPINT_2: ([f64; 8], [f64; 8]) = (
    [
        1.981808503259689673238e-2,
        -1.271645625984917501326e0,
        -2.088160335681228318920e0,
        2.755544509187936721172e0,
        -4.409507048701600257171e-1,
        4.665623805935891391017e-2,
        -1.545042679673485262580e-3,
        7.059980605299617478514e-5,
    ],
    [
        1.0,
        1.476498670914921440652e0,
        5.629177174822436244827e-1,
        1.699017897879307263248e-1,
        2.291647179034212017463e-2,
        4.450150439728752875043e-3,
        1.727439612206521482874e-4,
        3.953167195549672482304e-5,
    ],
);

const EXPINT_3: ([f64; 8], [f64; 9]) = (
    [
        -1.373215375871208729803e0,
        -7.084559133740838761406e-1,
        1.580806855547941010501e0,
        -2.601500427425622944234e-1,
        2.994674694113713763365e-2,
        -1.038086040188744005513e-3,
        4.371064420753005429514e-5,
        2.141783679522602903795e-6,
    ],
    [
        1.0,
        8.585231423622028380768e-1,
        4.483285822873995129957e-1,
        7.687932158124475434091e-2,
        2.449868241021887685904e-2,
        8.832165941927796567926e-4,
        4.590952299511353531215e-4,
        -4.729848351866523044863e-6,
        2.665195537390710170105e-6,
    ],
);

const EXPINT_4: ([f64; 10], [f64; 10]) = (
    [
        -2.106934601691916512584e0,
        1.732733869664688041885e0,
        -2.423619178935841904839e-1,
        2.322724180937565842585e-2,
        2.372880440493179832059e-4,
        -8.343219561192552752335e-5,
        1.363408795605250394881e-5,
        -3.655412321999253963714e-7,
        1.464941733975961318456e-8,
        6.176407863710360207074e-10,
    ],
    [
        1.0,
        -2.298062239901678075778e-1,
        1.105077041474037862347e-1,
        -1.566542966630792353556e-2,
        2.761106850817352773874e-3,
        -2.089148012284048449115e-4,
        1.708528938807675304186e-5,
        -4.459311796356686423199e-7,
        1.394634930353847498145e-8,
        6.150865933977338354138e-10,
    ],
);

const EXPINT_5: ([f64; 8], [f64; 9]) = (
    [
        -2.458119367674020323359e-1,
        -1.483382253322077687183e-1,
        7.248291795735551591813e-2,
        -1.348315687380940523823e-2,
        1.342775069788636972294e-3,
        -7.942465637159712264564e-5,
        2.644179518984235952241e-6,
        -4.239473659313765177195e-8,
    ],
    [
        1.0,
        -1.044225908443871106315e-1,
        -2.676453128101402655055e-1,
        9.695000254621984627876e-2,
        -1.601745692712991078208e-2,
        1.496414899205908021882e-3,
        -8.462452563778485013756e-5,
        2.728938403476726394024e-6,
        -4.239462431819542051337e-8,
    ],
);

const EXPINT_6: ([f64; 6], [f64; 6]) = (
    [
        1.212561118105456670844e-1,
        -5.823133179043894485122e-1,
        2.348887314557016779211e-1,
        -3.040034318113248237280e-2,
        1.510082146865190661777e-3,
        -2.523137095499571377122e-5,
    ],
    [
        1.0,
        -1.002252150365854016662e0,
        2.928709694872224144953e-1,
        -3.337004338674007801307e-2,
        1.560544881127388842819e-3,
        -2.523137093603234562648e-5,
    ],
);

const EXPINT_7: ([f64; 9], [f64; 10]) = (
    [
        -7.657847078286127362028e-1,
        6.886192415566705051750e-1,
        -2.132598113545206124553e-1,
        3.346107552384193813594e-2,
        -3.076541477344756050249e-3,
        1.747119316454907477380e-4,
        -6.103711682274170530369e-6,
        1.218032765428652199087e-7,
        -1.086076102793290233007e-9,
    ],
    [
        1.0,
        -1.888802868662308731041e0,
        1.066691687211408896850e0,
        -2.751915982306380647738e-1,
        3.930852688233823569726e-2,
        -3.414684558602365085394e-3,
        1.866844370703555398195e-4,
        -6.345146083130515357861e-6,
        1.239754287483206878024e-7,
        -1.086076102793126632978e-9,
    ],
);

/// `expi` for `x >= 0`: Cephes's seven intervals `(0, 2], (2, 4], ..., (32, 64]` and above
/// (the last also takes `x = 0` and NaN, as JAX's `piecewise` default does).
fn expi_pos(x: &Array) -> Array {
    let pieces: [Array; 6] = [
        expint1(x),
        eval_expint_k(&EXPINT_2.0, &EXPINT_2.1, x),
        eval_expint_k(&EXPINT_3.0, &EXPINT_3.1, x),
        eval_expint_k(&EXPINT_4.0, &EXPINT_4.1, x),
        eval_expint_k(&EXPINT_5.0, &EXPINT_5.1, x),
        eval_expint_k(&EXPINT_6.0, &EXPINT_6.1, x),
    ];
    let mut out = eval_expint_k(&EXPINT_7.0, &EXPINT_7.1, x);
    for (i, piece) in pieces.iter().enumerate() {
        let (lo, hi) = if i == 0 {
            (0.0, 2.0)
        } else {
            (2f64.powi(i as i32), 2f64.powi(i as i32 + 1))
        };
        let inside = x.gt(lo).bitwise_and(x.le(hi));
        out = where_(&inside, piece, &out);
    }
    out
}

fn expi_value(x: &Array) -> Array {
    let negative = -expn_value(&full_like(x, 1.0), &-x);
    where_(x.lt(0.0), &negative, expi_pos(x))
}

/// The exponential integral `Ei(x) = ∫_{-∞}^x e^t / t dt` (`jax.scipy.special.expi`), for real
/// `x`: Cephes's rational approximations on `(0, 2]`, `(2, 4]`, ..., and `-E₁(-x)` below 0,
/// with JAX's derivative `e^x / x`. NaN at `x = 0` and at `±inf`, as JAX's (scipy gives
/// `-inf`, `inf` and 0 there).
#[track_caller]
pub fn expi(x: &Array) -> Array {
    let x = inexact(x);
    real_only("expi", &x);
    custom_jvp(
        "expi",
        |x: Array| expi_value(&x),
        |x: Array, dx: Array| {
            let slope = &x.exp() / &x;
            (expi_value(&x), &slope * &dx)
        },
    )
    .call(x)
}

/// `E₁(x) = expn(1, x)` (`jax.scipy.special.exp1`), with `expn`'s derivative `-E₀(x)`.
#[track_caller]
pub fn exp1(x: &Array) -> Array {
    let x = inexact(x);
    real_only("exp1", &x);
    expn(&full_like(&x, 1.0), &x)
}

/// The generalized exponential integral `Eₙ(x) = ∫₁^∞ e^{-xt} / tⁿ dt`
/// (`jax.scipy.special.expn`): Cephes's pieces as JAX selects them elementwise (NaN for
/// `n < 0` or `x < 0`, `inf` at `x = 0` for `n < 2`, `1 / (n - 1)` there for `n >= 2`,
/// `e^{-x} / x` for `n = 0`, the asymptotic form for `n >= 5000`, the continued fraction for
/// `x > 1`, the power series otherwise; the last true condition wins, so `expn(-1, 2)` is the
/// continued fraction's value, not NaN, as in JAX). The derivative in `x` is JAX's
/// `-E_{n-1}(x)`; `n` is not differentiated (JAX's `nondiff_argnums`: jaxrs gives it a zero
/// derivative where JAX raises).
#[track_caller]
pub fn expn(n: &Array, x: &Array) -> Array {
    let (n, x) = promote_args_inexact("expn", n, x);
    real_only("expn", &x);
    let shape = crate::numpy::broadcast_shapes(&[n.shape(), x.shape()]);
    let (n, x) = (n.broadcast_to(&shape), x.broadcast_to(&shape));
    custom_jvp(
        "expn",
        |(n, x): (Array, Array)| expn_value(&n, &x),
        |(n, x): (Array, Array), (_dn, dx): (Array, Array)| {
            let below = expn_value(&(&n - 1.0), &x);
            (expn_value(&n, &x), &(-&dx) * &below)
        },
    )
    .call((n, x))
}

/// `expn` of broadcast operands of one float dtype: every piece, then JAX's selection.
fn expn_value(n: &Array, x: &Array) -> Array {
    let conds = [
        n.lt(0.0).bitwise_or(x.lt(0.0)),
        x.eq(0.0).bitwise_and(n.lt(2.0)),
        x.eq(0.0).bitwise_and(n.ge(2.0)),
        n.eq(0.0).bitwise_and(x.ge(0.0)),
        n.ge(5000.0),
        x.gt(1.0),
    ];
    let n1 = where_(n.eq(1.0), n + n, n);
    let values = [
        full_like(x, f64::NAN),
        full_like(x, f64::INFINITY),
        1.0 / &n1,
        &(-x).exp() / x,
        expn_large_n(x, n),
        expn_continued_fraction(x, n),
    ];
    let mut out = expn_series(x, n);
    for (cond, value) in conds.iter().zip(&values) {
        out = where_(cond, value, &out);
    }
    out
}

/// Cephes's power series of `Eₙ` (`_expn1`), for `0 < x <= 1`.
fn expn_series(x: &Array, n: &Array) -> Array {
    let dt = x.dtype();
    let eps = machine_eps(dt);
    let one = full_like(x, 1.0);
    // ψ(n) = -γ - log x + Σ_{i=1}^{n-1} 1 / i, JAX's fori_loop over a traced bound.
    let psi = (-EULER_GAMMA) - &x.log();
    let psi = elementwise_while(
        |c| c[0].lt(n),
        |c| vec![&c[0] + 1.0, &c[1] + &(1.0 / &c[0])],
        vec![one.clone(), psi],
    )
    .swap_remove(1);
    let n1 = where_(n.eq(1.0), full_like(x, 2.0), n);
    let z = -x;
    let ans = where_(n.eq(1.0), full_like(x, 0.0), 1.0 / &(1.0 - &n1));
    // Carry: xk, yk, pk, ans, t.
    let init = vec![
        full_like(x, 0.0),
        one.clone(),
        1.0 - n,
        ans,
        full_like(x, f64::INFINITY),
    ];
    let done = elementwise_while(
        |c| x.gt(0.0).bitwise_and(c[4].gt(eps)),
        |c| {
            let xk = &c[0] + 1.0;
            let yk = &c[1] * &(&z / &xk);
            let pk = &c[2] + 1.0;
            let ans = &c[3] + &where_(pk.ne(0.0), &yk / &pk, 0.0);
            let t = where_(ans.ne(0.0), (&yk / &ans).abs(), 1.0);
            vec![xk, yk, pk, ans, t]
        },
        init,
    );
    let r = n - 1.0;
    &(&(&z.pow(&r) * &psi) / &n.lgamma().exp()) - &done[3]
}

/// Cephes's continued fraction of `Eₙ` (`_expn2`), for `x > 1`.
fn expn_continued_fraction(x: &Array, n: &Array) -> Array {
    const BIG: f64 = 1.44115188075855872e17;
    let eps = machine_eps(x.dtype());
    let one = full_like(x, 1.0);
    let xn = x + n;
    // Carry: k, pkm2, qkm2, pkm1, qkm1, ans, t, r.
    let init = vec![
        one.clone(),
        one.clone(),
        x.clone(),
        one.clone(),
        xn.clone(),
        1.0 / &xn,
        full_like(x, f64::INFINITY),
        full_like(x, 0.0),
    ];
    let done = elementwise_while(
        |c| x.gt(0.0).bitwise_and(c[6].gt(eps)),
        |c| {
            let k = &c[0] + 1.0;
            let odd = crate::numpy::remainder(&k, 2.0).eq(1.0);
            let yk = where_(&odd, &one, x);
            let xk = where_(&odd, n + &(&(&k - 1.0) / 2.0), &k / 2.0);
            let pk = &(&c[3] * &yk) + &(&c[1] * &xk);
            let qk = &(&c[4] * &yk) + &(&c[2] * &xk);
            let nz = qk.ne(0.0);
            let r = where_(&nz, &pk / &qk, &c[7]);
            let t = where_(&nz, (&(&c[5] - &r) / &r).abs(), 1.0);
            let ans = where_(&nz, &r, &c[5]);
            let is_big = pk.abs().gt(BIG);
            let scale = |v: &Array| where_(&is_big, v / BIG, v);
            let (pkm2, qkm2) = (scale(&c[3]), scale(&c[4]));
            let (pkm1, qkm1) = (scale(&pk), scale(&qk));
            vec![k, pkm2, qkm2, pkm1, qkm1, ans, t, r]
        },
        init,
    );
    &done[5] * &(-x).exp()
}

/// The asymptotic expansion of `Eₙ` for `n >= 5000` (`_expn3`).
fn expn_large_n(x: &Array, n: &Array) -> Array {
    let xk = x + n;
    let yk = 1.0 / &(&xk * &xk);
    let t = n;
    let ans = &(&(&(x * 6.0) * x) - &(&(t * 8.0) * x)) + &(t * t);
    let ans = &(&yk * t) * &ans;
    let ans = &yk * &(&ans + &(t * &(t - &(x * 2.0))));
    let ans = &yk * &(&ans + t);
    &(&(&ans + 1.0) * &(-x).exp()) / &xk
}
