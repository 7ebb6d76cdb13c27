//! The sine and cosine integrals (`sici`) and the Fresnel integrals (`fresnel`): Cephes's
//! approximations as JAX 0.10.2 writes them, with JAX's custom derivatives.

// The coefficients keep Cephes's (and JAX's) published digits; they parse to the same f64.
#![allow(clippy::excessive_precision)]

use super::{full_like, horner};
use crate::numpy::inexact;
use crate::{custom_jvp, where_, Array, DType};
use std::f64::consts::{FRAC_PI_2, PI};

const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// The sine and cosine integrals `Si(x) = ∫₀ˣ sin t / t dt` and
/// `Ci(x) = γ + log x + ∫₀ˣ (cos t - 1) / t dt` (`jax.scipy.special.sici`), for real `x`:
/// Cephes's rational series for `|x| <= 4`, its auxiliary functions `f`, `g` up to `1e9`, and
/// `π/2 - cos x / x`, `sin x / x` beyond. `Si` is odd; `Ci` of a negative `x` is `Ci(|x|)`
/// (JAX's choice: scipy gives a complex-valued branch's real part) and NaN at `-inf`. The
/// derivatives are JAX's: `sinc(x / π)` and `cos x / x`.
#[track_caller]
pub fn sici(x: &Array) -> (Array, Array) {
    let x = inexact(x);
    assert!(
        !x.dtype().is_complex(),
        "sici: Argument `x` to sici must be real-valued. Got dtype {}, as in JAX",
        x.dtype().name()
    );
    custom_jvp(
        "sici",
        |x: Array| sici_value(&x),
        |x: Array, dx: Array| {
            let sin_term = crate::numpy::sinc(&(&x / PI));
            let cos_term = &x.cos() / &x;
            (sici_value(&x), (&sin_term * &dx, &cos_term * &dx))
        },
    )
    .call(x)
}

fn sici_value(x: &Array) -> (Array, Array) {
    let x_abs = x.abs();
    let (si_series, ci_series) = sici_series(&x_abs);
    let (si_asymp, ci_asymp) = sici_asymptotic(&x_abs);
    let (si_approx, ci_approx) = sici_far(&x_abs);
    let near = x_abs.le(4.0);
    let middle = x_abs.gt(4.0).bitwise_and(x_abs.le(1e9));
    let select = |a: &Array, b: &Array, c: &Array| where_(&near, a, where_(&middle, b, c));
    let si = select(&si_series, &si_asymp, &si_approx);
    let ci = select(&ci_series, &ci_asymp, &ci_approx);
    let si = &x.sign() * &si;
    let ci = where_(crate::numpy::isneginf(x), f64::NAN, &ci);
    (si, ci)
}

/// `x >= 1e9`.
fn sici_far(x: &Array) -> (Array, Array) {
    let si = FRAC_PI_2 - &(&x.cos() / x);
    let ci = &x.sin() / x;
    let posinf = crate::numpy::isposinf(x);
    (where_(&posinf, FRAC_PI_2, &si), where_(&posinf, 0.0, &ci))
}

/// `0 <= x <= 4`.
fn sici_series(x: &Array) -> (Array, Array) {
    const SN: [f64; 6] = [
        -8.39167827910303881427E-11,
        4.62591714427012837309E-8,
        -9.75759303843632795789E-6,
        9.76945438170435310816E-4,
        -4.13470316229406538752E-2,
        1.00000000000000000302E0,
    ];
    const SD: [f64; 6] = [
        2.03269266195951942049E-12,
        1.27997891179943299903E-9,
        4.41827842801218905784E-7,
        9.96412122043875552487E-5,
        1.42085239326149893930E-2,
        9.99999999999999996984E-1,
    ];
    const CN: [f64; 6] = [
        2.02524002389102268789E-11,
        -1.35249504915790756375E-8,
        3.59325051419993077021E-6,
        -4.74007206873407909465E-4,
        2.89159652607555242092E-2,
        -1.00000000000000000080E0,
    ];
    const CD: [f64; 6] = [
        4.07746040061880559506E-12,
        3.06780997581887812692E-9,
        1.23210355685883423679E-6,
        3.17442024775032769882E-4,
        5.10028056236446052392E-2,
        4.00000000000000000080E0,
    ];
    let t = x * x;
    let si = &(x * &horner(&SN, &t)) / &horner(&SD, &t);
    let ci = &(EULER_GAMMA + &x.log()) + &(&(&t * &horner(&CN, &t)) / &horner(&CD, &t));
    let zero = x.eq(0.0);
    (
        where_(&zero, 0.0, &si),
        where_(&zero, f64::NEG_INFINITY, &ci),
    )
}

/// `4 < x <= 1e9`: the auxiliary functions `f`, `g` (two fits, split at 8).
fn sici_asymptotic(x: &Array) -> (Array, Array) {
    const FN4: [f64; 7] = [
        4.23612862892216586994E0,
        5.45937717161812843388E0,
        1.62083287701538329132E0,
        1.67006611831323023771E-1,
        6.81020132472518137426E-3,
        1.08936580650328664411E-4,
        5.48900223421373614008E-7,
    ];
    const FD4: [f64; 8] = [
        1.0,
        8.16496634205391016773E0,
        7.30828822505564552187E0,
        1.86792257950184183883E0,
        1.78792052963149907262E-1,
        7.01710668322789753610E-3,
        1.10034357153915731354E-4,
        5.48900252756255700982E-7,
    ];
    const GN4: [f64; 8] = [
        8.71001698973114191777E-2,
        6.11379109952219284151E-1,
        3.97180296392337498885E-1,
        7.48527737628469092119E-2,
        5.38868681462177273157E-3,
        1.61999794598934024525E-4,
        1.97963874140963632189E-6,
        7.82579040744090311069E-9,
    ];
    const GD4: [f64; 8] = [
        1.0,
        1.64402202413355338886E0,
        6.66296701268987968381E-1,
        9.88771761277688796203E-2,
        6.22396345441768420760E-3,
        1.73221081474177119497E-4,
        2.02659182086343991969E-6,
        7.82579218933534490868E-9,
    ];
    const FN8: [f64; 9] = [
        4.55880873470465315206E-1,
        7.13715274100146711374E-1,
        1.60300158222319456320E-1,
        1.16064229408124407915E-2,
        3.49556442447859055605E-4,
        4.86215430826454749482E-6,
        3.20092790091004902806E-8,
        9.41779576128512936592E-11,
        9.70507110881952024631E-14,
    ];
    const FD8: [f64; 9] = [
        1.0,
        9.17463611873684053703E-1,
        1.78685545332074536321E-1,
        1.22253594771971293032E-2,
        3.58696481881851580297E-4,
        4.92435064317881464393E-6,
        3.21956939101046018377E-8,
        9.43720590350276732376E-11,
        9.70507110881952025725E-14,
    ];
    const GN8: [f64; 9] = [
        6.97359953443276214934E-1,
        3.30410979305632063225E-1,
        3.84878767649974295920E-2,
        1.71718239052347903558E-3,
        3.48941165502279436777E-5,
        3.47131167084116673800E-7,
        1.70404452782044526189E-9,
        3.85945925430276600453E-12,
        3.14040098946363334640E-15,
    ];
    const GD8: [f64; 10] = [
        1.0,
        1.68548898811011640017E0,
        4.87852258695304967486E-1,
        4.67913194259625806320E-2,
        1.90284426674399523638E-3,
        3.68475504442561108162E-5,
        3.57043223443740838771E-7,
        1.72693748966316146736E-9,
        3.87830166023954706752E-12,
        3.14040098946363335242E-15,
    ];
    let s = x.sin();
    let c = x.cos();
    let z = 1.0 / &(x * x);
    let f_of = |num: &[f64], den: &[f64]| &horner(num, &z) / &(x * &horner(den, &z));
    let g_of = |num: &[f64], den: &[f64]| &(&z * &horner(num, &z)) / &horner(den, &z);
    let below_8 = x.lt(8.0);
    let f = where_(&below_8, f_of(&FN4, &FD4), f_of(&FN8, &FD8));
    let g = where_(&below_8, g_of(&GN4, &GD4), g_of(&GN8, &GD8));
    let si = &(FRAC_PI_2 - &(&f * &c)) - &(&g * &s);
    let ci = &(&f * &s) - &(&g * &c);
    (si, ci)
}

/// `sin(π x² / 2)` and `cos(π x² / 2)` without the rounding of `x²` spoiling the phase
/// (JAX's `sincospisquaredhalf`, after scipy's `sinpi`/`cospi`).
fn sin_cos_pi_x2_half(x: &Array) -> (Array, Array) {
    let x = x.abs();
    let s = x.fmod(2.0);
    let r = (&s * &(&x - &(&s / 2.0))).fmod(2.0);
    let sinpi = where_(
        r.lt(0.5),
        (&r * PI).sin(),
        where_(
            r.gt(1.5),
            (&(&r - 2.0) * PI).sin(),
            -(&(&r - 1.0) * PI).sin(),
        ),
    );
    let cospi = where_(
        r.eq(0.5),
        0.0,
        where_(
            r.lt(1.0),
            -(&(&r - 0.5) * PI).sin(),
            (&(&r - 1.5) * PI).sin(),
        ),
    );
    (sinpi, cospi)
}

/// The Fresnel integrals `S(x) = ∫₀ˣ sin(π t² / 2) dt` and `C(x) = ∫₀ˣ cos(π t² / 2) dt`
/// (`jax.scipy.special.fresnel`), for real `x`: Cephes's `fresnl` in float64 and its
/// single-precision `fresnlf` in float32 (half-precision inputs compute in float32 and come
/// back in their dtype, as JAX's), with JAX's derivatives `sin(π x² / 2)`, `cos(π x² / 2)`.
#[track_caller]
pub fn fresnel(x: &Array) -> (Array, Array) {
    let x = inexact(x);
    assert!(
        !x.dtype().is_complex(),
        "fresnel: support for complex-valued inputs is not implemented, as in JAX"
    );
    custom_jvp(
        "fresnel",
        |x: Array| fresnel_value(&x),
        |x: Array, dx: Array| {
            let (sinpi, cospi) = sin_cos_pi_x2_half(&x);
            (fresnel_value(&x), (&sinpi * &dx, &cospi * &dx))
        },
    )
    .call(x)
}

fn fresnel_value(xxa: &Array) -> (Array, Array) {
    let original = xxa.dtype();
    let xxa = match original {
        DType::F64 | DType::F32 => xxa.clone(),
        DType::F16 | DType::BF16 => xxa.astype(DType::F32),
        other => panic!(
            "fresnel: support for {} dtype is not implemented, as in JAX",
            other.name()
        ),
    };
    let single = xxa.dtype() == DType::F32;
    let x = xxa.abs();
    let x2 = &x * &x;
    let t = &x2 * &x2;
    let (sinpi, cospi) = sin_cos_pi_x2_half(&x);
    let (s_small, c_small, s_large, c_large, f, g);
    let tp = &x2 * PI;
    let u = 1.0 / &(&tp * &tp);
    let tr = 1.0 / &tp;
    if single {
        const SN: [f64; 7] = [
            1.647629463788700e-9,
            -1.522754752581096e-7,
            8.424748808502400e-6,
            -3.120693124703272e-4,
            7.244727626597022e-3,
            -9.228055941124598e-2,
            5.235987735681432e-1,
        ];
        const CN: [f64; 7] = [
            1.416802502367354e-8,
            -1.157231412229871e-6,
            5.387223446683264e-5,
            -1.604381798862293e-3,
            2.818489036795073e-2,
            -2.467398198317899e-1,
            9.999999760004487e-1,
        ];
        const FN: [f64; 8] = [
            -1.903009855649792e12,
            1.355942388050252e11,
            -4.158143148511033e9,
            7.343848463587323e7,
            -8.732356681548485e5,
            8.560515466275470e3,
            -1.032877601091159e2,
            2.999401847870011e0,
        ];
        const GN: [f64; 8] = [
            -1.860843997624650e11,
            1.278350673393208e10,
            -3.779387713202229e8,
            6.492611570598858e6,
            -7.787789623358162e4,
            8.602931494734327e2,
            -1.493439396592284e1,
            9.999841934744914e-1,
        ];
        s_small = &(&x * &x2) * &horner(&SN, &t);
        c_small = &x * &horner(&CN, &t);
        s_large = full_like(&x, 0.5);
        c_large = full_like(&x, 0.5);
        f = 1.0 - &(&u * &horner(&FN, &u));
        g = &tr * &horner(&GN, &u);
    } else {
        const SN: [f64; 6] = [
            -2.99181919401019853726e3,
            7.08840045257738576863e5,
            -6.29741486205862506537e7,
            2.54890880573376359104e9,
            -4.42979518059697779103e10,
            3.18016297876567817986e11,
        ];
        const SD: [f64; 7] = [
            1.00000000000000000000e0,
            2.81376268889994315696e2,
            4.55847810806532581675e4,
            5.17343888770096400730e6,
            4.19320245898111231129e8,
            2.24411795645340920940e10,
            6.07366389490084639049e11,
        ];
        const CN: [f64; 6] = [
            -4.98843114573573548651e-8,
            9.50428062829859605134e-6,
            -6.45191435683965050962e-4,
            1.88843319396703850064e-2,
            -2.05525900955013891793e-1,
            9.99999999999999998822e-1,
        ];
        const CD: [f64; 7] = [
            3.99982968972495980367e-12,
            9.15439215774657478799e-10,
            1.25001862479598821474e-7,
            1.22262789024179030997e-5,
            8.68029542941784300606e-4,
            4.12142090722199792936e-2,
            1.00000000000000000118e0,
        ];
        const FN: [f64; 10] = [
            4.21543555043677546506e-1,
            1.43407919780758885261e-1,
            1.15220955073585758835e-2,
            3.45017939782574027900e-4,
            4.63613749287867322088e-6,
            3.05568983790257605827e-8,
            1.02304514164907233465e-10,
            1.72010743268161828879e-13,
            1.34283276233062758925e-16,
            3.76329711269987889006e-20,
        ];
        const FD: [f64; 11] = [
            1.00000000000000000000e0,
            7.51586398353378947175e-1,
            1.16888925859191382142e-1,
            6.44051526508858611005e-3,
            1.55934409164153020873e-4,
            1.84627567348930545870e-6,
            1.12699224763999035261e-8,
            3.60140029589371370404e-11,
            5.88754533621578410010e-14,
            4.52001434074129701496e-17,
            1.25443237090011264384e-20,
        ];
        const GN: [f64; 11] = [
            5.04442073643383265887e-1,
            1.97102833525523411709e-1,
            1.87648584092575249293e-2,
            6.84079380915393090172e-4,
            1.15138826111884280931e-5,
            9.82852443688422223854e-8,
            4.45344415861750144738e-10,
            1.08268041139020870318e-12,
            1.37555460633261799868e-15,
            8.36354435630677421531e-19,
            1.86958710162783235106e-22,
        ];
        const GD: [f64; 12] = [
            1.00000000000000000000e0,
            1.47495759925128324529e0,
            3.37748989120019970451e-1,
            2.53603741420338795122e-2,
            8.14679107184306179049e-4,
            1.27545075667729118702e-5,
            1.04314589657571990585e-7,
            4.60680728146520428211e-10,
            1.10273215066240270757e-12,
            1.38796531259578871258e-15,
            8.39158816283118707363e-19,
            1.86958710162783236342e-22,
        ];
        s_small = &(&(&x * &x2) * &horner(&SN, &t)) / &horner(&SD, &t);
        c_small = &(&x * &horner(&CN, &t)) / &horner(&CD, &t);
        let inv_pi_x = 1.0 / &(&x * PI);
        c_large = 0.5 + &(&inv_pi_x * &sinpi);
        s_large = 0.5 - &(&inv_pi_x * &cospi);
        f = 1.0 - &(&(&u * &horner(&FN, &u)) / &horner(&FD, &u));
        g = &(&tr * &horner(&GN, &u)) / &horner(&GD, &u);
    }
    let pi_x = &x * PI;
    let c_other = 0.5 + &(&(&(&f * &sinpi) - &(&g * &cospi)) / &pi_x);
    let s_other = 0.5 - &(&(&(&f * &cospi) + &(&g * &sinpi)) / &pi_x);
    let isinf = xxa.isinf();
    let small = x2.lt(2.5625);
    let large = x.gt(36974.0);
    let pick = |small_v: &Array, large_v: &Array, other: &Array| {
        where_(
            &isinf,
            0.5,
            where_(&small, small_v, where_(&large, large_v, other)),
        )
    };
    let s = pick(&s_small, &s_large, &s_other);
    let c = pick(&c_small, &c_large, &c_other);
    let neg = xxa.lt(0.0);
    let s = where_(&neg, -&s, &s);
    let c = where_(&neg, -&c, &c);
    (s.astype(original), c.astype(original))
}
