//! The array printer: numpy's `array2string` with its default options, which JAX's `str` and
//! `repr` use, so jaxrs prints what a JAX user expects to read.
//!
//! - [`display`] is numpy's `str(x)`: `[[1. 2.]\n [3. 4.]]`, and a 0-d array as its scalar
//!   (`1.0`, `3`, `True`).
//! - [`debug`] is JAX's `repr(x)` with jaxrs's dtype names and the shape:
//!   `Array([[1., 2.],\n       [3., 4.]], dtype=f32, shape=[2, 2])`.
//!
//! numpy's defaults: more than 1000 elements ([`THRESHOLD`]) are summarised to 3 items at each
//! edge of every axis ([`EDGE_ITEMS`]) with `...` between; rows wrap at 75 columns
//! ([`LINE_WIDTH`]); every element is padded to the width of the widest so columns align.
//! Floats print the shortest digits that read back as the same value at their dtype, at most 8
//! after the point (`floatmode='maxprec'`, `precision=8`), switching the whole array to
//! scientific notation when a nonzero magnitude is below 1e-4, reaches 1e3 (f16), 1e6 (f32)
//! or 1e8 (f64), or the largest is over 1000 times the smallest. bf16, which numpy knows only
//! through ml_dtypes, prints each value as ml_dtypes does (C++ `ostream` of the float: 6
//! significant digits, `%g` style) without padding. `tests/golden/print.json` pins all of this
//! against numpy and JAX.

use crate::aval::Aval;
use crate::dtype::DType;

/// Arrays with more elements than this are summarised (numpy's `threshold`).
const THRESHOLD: usize = 1000;
/// Items kept at each edge of a summarised axis (numpy's `edgeitems`).
const EDGE_ITEMS: usize = 3;
/// Lines wrap past this many columns (numpy's `linewidth`).
const LINE_WIDTH: usize = 75;
/// The most digits printed after the point (numpy's `precision`).
const PRECISION: usize = 8;
const REPR_PREFIX: &str = "Array(";

/// One element read back from the device, in a type that holds every dtype's values exactly.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Elem {
    Bool(bool),
    Int(i128),
    Float(f64),
    /// Real and imaginary parts.
    Complex(f64, f64),
}

/// numpy's `str(x)` of the array holding `elems` (row-major) with this shape and dtype.
pub(crate) fn display(elems: &[Elem], shape: &[usize], dtype: DType) -> String {
    match elems {
        [] => "[]".to_string(),
        [one] if shape.is_empty() => scalar_str(*one, dtype),
        _ => array2string(elems, shape, dtype, " ", "", LINE_WIDTH),
    }
}

/// JAX's `repr(x)` with jaxrs's suffix (`dtype=f32, shape=[2, 2]`, then `, weak_type=True`
/// for a weak type). The suffix stays on the last line if that line then fits in 75 columns,
/// and otherwise goes on a line of its own, aligned under the first `[`.
pub(crate) fn debug(elems: &[Elem], aval: &Aval) -> String {
    let body = if elems.is_empty() {
        "[]".to_string()
    } else {
        // numpy leaves room for the `,` JAX writes after the body.
        array2string(
            elems,
            &aval.shape,
            aval.dtype,
            ", ",
            REPR_PREFIX,
            LINE_WIDTH - 1,
        )
    };
    let suffix = repr_suffix(aval);
    let last_line_end = match body.rfind('\n') {
        Some(newline) => body.len() - newline - 1,
        None => REPR_PREFIX.len() + body.len(),
    };
    let fits = last_line_end + ", ".len() + suffix.len() + ")".len() <= LINE_WIDTH;
    let sep = if fits {
        " ".to_string()
    } else {
        format!("\n{}", " ".repeat(REPR_PREFIX.len()))
    };
    format!("{REPR_PREFIX}{body},{sep}{suffix})")
}

/// `dtype=f32, shape=[2, 2]`, with `, weak_type=True` for a weak type.
pub(crate) fn repr_suffix(aval: &Aval) -> String {
    let weak = if aval.weak { ", weak_type=True" } else { "" };
    format!(
        "dtype={}, shape={:?}{weak}",
        aval.dtype.short_name(),
        aval.shape
    )
}

/// numpy's `array2string(a, separator=separator, prefix=prefix)` for a non-empty array, with
/// `line_width` already reduced by the length of the suffix that will follow.
fn array2string(
    elems: &[Elem],
    shape: &[usize],
    dtype: DType,
    separator: &str,
    prefix: &str,
    line_width: usize,
) -> String {
    let summarise = elems.len() > THRESHOLD;
    // The widths come from the elements that are shown, as in numpy.
    let shown = if summarise {
        let mut shown = Vec::new();
        edge_elems(elems, shape, &mut shown);
        shown
    } else {
        elems.to_vec()
    };
    let printer = Printer {
        elems,
        shape,
        strides: row_major_strides(shape),
        format: ElemFormat::new(&shown, dtype, shape.is_empty()),
        separator,
        summarise,
    };
    let hanging_indent = " ".repeat(1 + prefix.len());
    printer.nested(0, 0, &hanging_indent, line_width as isize)
}

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// The indices along an axis of length `n` that a summary shows.
fn shown_indices(n: usize, summarise: bool) -> Vec<usize> {
    if summarise && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS).chain(n - EDGE_ITEMS..n).collect()
    } else {
        (0..n).collect()
    }
}

/// The elements a summary shows, in row-major order (numpy's `_leading_trailing`).
fn edge_elems(elems: &[Elem], shape: &[usize], out: &mut Vec<Elem>) {
    match shape.split_first() {
        None => out.push(elems[0]),
        Some((&n, rest)) => {
            let stride: usize = rest.iter().product();
            for i in shown_indices(n, true) {
                edge_elems(&elems[i * stride..(i + 1) * stride], rest, out);
            }
        }
    }
}

/// numpy's `_formatArray`.
struct Printer<'a> {
    elems: &'a [Elem],
    shape: &'a [usize],
    strides: Vec<usize>,
    format: ElemFormat,
    separator: &'a str,
    summarise: bool,
}

impl Printer<'_> {
    /// The sub-array at `offset` from `axis` on; `hanging_indent` starts every line but the
    /// first, and no line may run past `width`.
    fn nested(&self, axis: usize, offset: usize, hanging_indent: &str, width: isize) -> String {
        if axis == self.shape.len() {
            return self.format.format(self.elems[offset]);
        }
        // Inner rows sit one column right of this `[` and must leave room for its `]`.
        let inner_indent = format!("{hanging_indent} ");
        let inner_width = width - 1;
        let n = self.shape[axis];
        let show_summary = self.summarise && n > 2 * EDGE_ITEMS;
        let child = |i: usize| {
            self.nested(
                axis + 1,
                offset + i * self.strides[axis],
                &inner_indent,
                inner_width,
            )
        };
        let mut s = String::new();
        if axis + 1 == self.shape.len() {
            // A row: elements wrap onto new lines when they would not fit.
            let elem_width = width - self.separator.trim_end().len().max(1) as isize;
            let mut line = hanging_indent.to_string();
            for (k, i) in shown_indices(n, show_summary).into_iter().enumerate() {
                if show_summary && k == EDGE_ITEMS {
                    extend_line(&mut s, &mut line, "...", elem_width, hanging_indent);
                    line.push_str(self.separator);
                }
                extend_line(&mut s, &mut line, &child(i), elem_width, hanging_indent);
                if i + 1 < n {
                    line.push_str(self.separator);
                }
            }
            s.push_str(&line);
        } else {
            // Rows of sub-arrays: one per line, with a blank line per extra axis between them.
            let axes_left = self.shape.len() - axis;
            let line_sep = format!(
                "{}{}",
                self.separator.trim_end(),
                "\n".repeat(axes_left - 1)
            );
            for (k, i) in shown_indices(n, show_summary).into_iter().enumerate() {
                if show_summary && k == EDGE_ITEMS {
                    s.push_str(hanging_indent);
                    s.push_str("...");
                    s.push_str(&line_sep);
                }
                s.push_str(hanging_indent);
                s.push_str(&child(i));
                if i + 1 < n {
                    s.push_str(&line_sep);
                }
            }
        }
        format!("[{}]", &s[hanging_indent.len()..])
    }
}

/// numpy's `_extendLine`: appends `word` to `line`, first moving `line` into `s` and starting
/// a new line when the word would pass `width` (unless the line holds nothing yet).
fn extend_line(s: &mut String, line: &mut String, word: &str, width: isize, indent: &str) {
    let too_long = (line.len() + word.len()) as isize > width;
    if too_long && line.len() > indent.len() {
        s.push_str(line.trim_end());
        s.push('\n');
        line.clear();
        line.push_str(indent);
    }
    line.push_str(word);
}

/// How one element prints, chosen from all the shown elements (numpy's format functions).
enum ElemFormat {
    /// `True` padded to `False`'s width, except in a 0-d array.
    Bool {
        pad: bool,
    },
    /// Right-aligned to the widest.
    Int {
        width: usize,
    },
    Float(FloatFormat),
    /// numpy's `ComplexFloatingFormat`: the real parts as floats, the imaginary parts as
    /// floats with a `+` sign, then `j` (padding after it).
    Complex {
        re: FloatFormat,
        im: FloatFormat,
    },
    /// bf16: ml_dtypes' `repr` of each value, unpadded.
    BF16,
}

impl ElemFormat {
    fn new(shown: &[Elem], dtype: DType, zero_d: bool) -> ElemFormat {
        match dtype {
            DType::Bool => ElemFormat::Bool { pad: !zero_d },
            DType::BF16 => ElemFormat::BF16,
            d if d.is_complex() => {
                let (re, im): (Vec<f64>, Vec<f64>) = shown.iter().map(|&e| as_parts(e)).unzip();
                let part = d.real_dtype();
                ElemFormat::Complex {
                    re: FloatFormat::new(&re, part, false),
                    im: FloatFormat::new(&im, part, true),
                }
            }
            d if d.is_float() => {
                let values: Vec<f64> = shown.iter().map(|&e| as_f64(e)).collect();
                ElemFormat::Float(FloatFormat::new(&values, d, false))
            }
            _ => ElemFormat::Int {
                width: shown
                    .iter()
                    .map(|&e| as_int(e).to_string().len())
                    .max()
                    .unwrap_or(0),
            },
        }
    }

    fn format(&self, e: Elem) -> String {
        match self {
            ElemFormat::Bool { pad } => match (as_bool(e), pad) {
                (true, true) => " True".to_string(),
                (true, false) => "True".to_string(),
                (false, _) => "False".to_string(),
            },
            ElemFormat::Int { width } => format!("{:>width$}", as_int(e)),
            ElemFormat::Float(f) => f.format(as_f64(e)),
            ElemFormat::Complex { re, im } => {
                let (r, i) = as_parts(e);
                let i = im.format(i);
                let end = i.trim_end().len();
                format!("{}{}j{}", re.format(r), &i[..end], &i[end..])
            }
            ElemFormat::BF16 => ostream_float(as_f64(e) as f32),
        }
    }
}

fn as_f64(e: Elem) -> f64 {
    as_parts(e).0
}

fn as_parts(e: Elem) -> (f64, f64) {
    match e {
        Elem::Bool(b) => (b as u8 as f64, 0.0),
        Elem::Int(i) => (i as f64, 0.0),
        Elem::Float(v) => (v, 0.0),
        Elem::Complex(re, im) => (re, im),
    }
}

fn as_int(e: Elem) -> i128 {
    match e {
        Elem::Bool(b) => b as i128,
        Elem::Int(i) => i,
        Elem::Float(v) | Elem::Complex(v, _) => v as i128,
    }
}

fn as_bool(e: Elem) -> bool {
    match e {
        Elem::Bool(b) => b,
        Elem::Int(i) => i != 0,
        Elem::Float(v) => v != 0.0,
        Elem::Complex(re, im) => re != 0.0 || im != 0.0,
    }
}

/// numpy's `FloatingFormat` (`floatmode='maxprec'`, `precision=8`, `sign='-'`, or `'+'`
/// for the imaginary parts of complex numbers).
struct FloatFormat {
    dtype: DType,
    /// numpy's `sign='+'`: non-negative values print a `+`.
    plus: bool,
    scientific: bool,
    /// Characters before the point (the sign included).
    pad_left: usize,
    /// Characters after the point (positional), or up to the end of the exponent
    /// (scientific); only non-finite values use it in scientific mode.
    pad_right: usize,
    /// Scientific: digits after the point, the most any value needs; every value prints
    /// that many.
    frac_digits: usize,
    /// Scientific: digits of the exponent, at least 2.
    exp_digits: usize,
}

impl FloatFormat {
    fn new(values: &[f64], dtype: DType, plus: bool) -> FloatFormat {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let scientific = needs_scientific(&finite, dtype);
        let plus_width = |v: f64| (plus && !v.is_sign_negative()) as usize;
        let mut format = FloatFormat {
            dtype,
            plus,
            scientific,
            pad_left: 0,
            pad_right: 0,
            frac_digits: 0,
            exp_digits: 2,
        };
        if scientific {
            for &v in &finite {
                let sci = Scientific::of(v, dtype, Some(PRECISION));
                format.pad_left = format.pad_left.max(sci.int.len() + plus_width(v));
                format.frac_digits = format.frac_digits.max(sci.frac.len());
                format.exp_digits = format
                    .exp_digits
                    .max(sci.exp.unsigned_abs().to_string().len());
            }
            if !finite.is_empty() {
                format.pad_right = format.exp_digits + 2 + format.frac_digits;
            }
        } else {
            for &v in &finite {
                let (int, frac) = positional(v, dtype, Some(PRECISION));
                format.pad_left = format.pad_left.max(int.len() + plus_width(v));
                format.pad_right = format.pad_right.max(frac.len());
            }
        }
        if finite.len() != values.len() {
            // `nan`, `inf` and `-inf` are right-aligned in the full width of a number.
            let neg_inf = (plus || values.contains(&f64::NEG_INFINITY)) as usize;
            let longest = 3 + neg_inf;
            format.pad_left = format
                .pad_left
                .max(longest.saturating_sub(format.pad_right + 1));
        }
        format
    }

    fn format(&self, v: f64) -> String {
        let sign = if self.plus && !v.is_sign_negative() {
            "+"
        } else {
            ""
        };
        if !v.is_finite() {
            let width = self.pad_left + self.pad_right + 1;
            let sign = if self.plus && (v > 0.0 || v.is_nan()) {
                "+"
            } else {
                ""
            };
            return format!("{:>width$}", format!("{sign}{}", non_finite(v)));
        }
        if self.scientific {
            // Every value gets the same number of digits: the exact value rounded to it, which
            // is more than the shortest digits of some (numpy's `min_digits`).
            let sci = Scientific::parse(&format!("{v:.*e}", self.frac_digits));
            format!(
                "{:>left$}.{}e{}{:0>exp$}",
                format!("{sign}{}", sci.int),
                sci.frac,
                if sci.exp < 0 { '-' } else { '+' },
                sci.exp.unsigned_abs(),
                left = self.pad_left,
                exp = self.exp_digits,
            )
        } else {
            let (int, frac) = positional(v, self.dtype, Some(PRECISION));
            let int = format!("{sign}{int}");
            format!(
                "{int:>left$}.{frac:<right$}",
                left = self.pad_left,
                right = self.pad_right
            )
        }
    }
}

/// numpy's choice of scientific notation for a whole array. The comparisons run in the
/// array's dtype, as numpy's do (an f32 `1e-4` is not below `1e-4`).
fn needs_scientific(finite: &[f64], dtype: DType) -> bool {
    let magnitudes = finite.iter().map(|v| v.abs()).filter(|&m| m != 0.0);
    let (min, max) = magnitudes.fold((f64::INFINITY, 0.0f64), |(lo, hi), m| {
        (lo.min(m), hi.max(m))
    });
    if max == 0.0 {
        return false;
    }
    let cutoff = match dtype {
        DType::F16 => 1e3,
        DType::F32 => 1e6,
        _ => 1e8,
    };
    max >= cutoff || min < round_to(1e-4, dtype) || round_to(max / min, dtype) > 1000.0
}

/// `v` rounded to `dtype`'s precision.
fn round_to(v: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::BF16 => half::bf16::from_f64(v).to_f64(),
        DType::F32 => v as f32 as f64,
        _ => v,
    }
}

fn non_finite(v: f64) -> &'static str {
    if v.is_nan() {
        "nan"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// A finite float as `int.frac e exp`: `int` is one digit with its sign.
struct Scientific {
    int: String,
    frac: String,
    exp: i32,
}

impl Scientific {
    /// The shortest digits that read back as `v` at `dtype`, or, when there are more than
    /// `max_frac` digits after the point, `v` correctly rounded to `max_frac` of them, with
    /// trailing zeros dropped.
    fn of(v: f64, dtype: DType, max_frac: Option<usize>) -> Scientific {
        let shortest = Scientific::parse(&shortest_exp(v, dtype));
        match max_frac {
            Some(p) if shortest.frac.len() > p => {
                let mut rounded = Scientific::parse(&format!("{v:.p$e}"));
                rounded
                    .frac
                    .truncate(rounded.frac.trim_end_matches('0').len());
                rounded
            }
            _ => shortest,
        }
    }

    /// How many significant digits the mantissa has.
    fn significant(&self) -> usize {
        1 + self.frac.len()
    }

    /// Parses Rust's `{:e}` form (`-1.5e-5`, `1e2`).
    fn parse(s: &str) -> Scientific {
        let (mantissa, exp) = s.split_once('e').expect("`{:e}` writes an exponent");
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        Scientific {
            int: int.to_string(),
            frac: frac.to_string(),
            exp: exp.parse().expect("`{:e}` writes an integer exponent"),
        }
    }
}

/// The shortest `{:e}` digits of `v` that round-trip through `dtype`; of two equally short
/// candidates, the nearer to `v`, and at a tie the even one (numpy's Dragon4; Rust's own
/// shortest form rounds a tie up: f32 `6590.65625` is `6590.6562` in numpy, `6590.6563` in
/// Rust).
fn shortest_exp(v: f64, dtype: DType) -> String {
    let round_trips = |s: &str| match dtype {
        DType::F32 => s.parse::<f32>().is_ok_and(|r| r == v as f32),
        _ => s.parse::<f64>().is_ok_and(|r| round_to(r, dtype) == v),
    };
    // `{:.p$e}` rounds the exact value, ties to even.
    let nearest = |significant: usize| format!("{v:.*e}", significant - 1);
    let rust_shortest = match dtype {
        DType::F32 => format!("{:e}", v as f32),
        // Rust has no shortest form for 16-bit floats: the first length that reads back is.
        DType::F16 | DType::BF16 => (1..17)
            .map(nearest)
            .find(|s| v == 0.0 || round_trips(s))
            .unwrap_or_else(|| format!("{v:e}")),
        _ => format!("{v:e}"),
    };
    let candidate = nearest(Scientific::parse(&rust_shortest).significant());
    if v == 0.0 || round_trips(&candidate) {
        candidate
    } else {
        // The nearer decimal fell out of an interval narrower on its side (just above a power
        // of two): the shortest one is the other.
        rust_shortest
    }
}

/// A finite float in positional notation, split at the point: the integer part with its sign,
/// and the digits after the point (none for an integral value). With `max_frac`, longer
/// fractions are rounded to that many digits and trailing zeros dropped.
fn positional(v: f64, dtype: DType, max_frac: Option<usize>) -> (String, String) {
    let sci = Scientific::parse(&shortest_exp(v, dtype));
    let sign = if sci.int.starts_with('-') { "-" } else { "" };
    let digits = format!("{}{}", sci.int.trim_start_matches('-'), sci.frac);
    let (int, frac) = if sci.exp >= 0 {
        let point = sci.exp as usize + 1;
        if digits.len() > point {
            (digits[..point].to_string(), digits[point..].to_string())
        } else {
            (format!("{digits:0<point$}"), String::new())
        }
    } else {
        let zeros = "0".repeat(sci.exp.unsigned_abs() as usize - 1);
        ("0".to_string(), format!("{zeros}{digits}"))
    };
    let frac = frac.trim_end_matches('0').to_string();
    match max_frac {
        Some(p) if frac.len() > p => {
            let rounded = format!("{:.p$}", v.abs());
            let (int, frac) = rounded.split_once('.').expect("a precision writes a point");
            (
                format!("{sign}{int}"),
                frac.trim_end_matches('0').to_string(),
            )
        }
        _ => (format!("{sign}{int}"), frac),
    }
}

/// numpy's `str` of a scalar (a 0-d array): the shortest digits, positional (`1.0`, `0.1`)
/// from 1e-4 up to 1e3 (f16), 1e6 (f32) or 1e16 (f64), scientific (`1e-05`, `1.5e+16`)
/// outside.
fn scalar_str(e: Elem, dtype: DType) -> String {
    match (e, dtype) {
        (Elem::Bool(b), _) => if b { "True" } else { "False" }.to_string(),
        (Elem::Int(i), _) => i.to_string(),
        (Elem::Complex(re, im), d) => complex_scalar_str(re, im, d.real_dtype()),
        (Elem::Float(v), DType::BF16) => ostream_float(v as f32),
        (Elem::Float(v), _) if !v.is_finite() => non_finite(v).to_string(),
        (Elem::Float(v), _) => {
            let cutoff = match dtype {
                DType::F16 => 1e3,
                DType::F32 => 1e6,
                _ => 1e16,
            };
            let magnitude = v.abs();
            if magnitude == 0.0 || (1e-4..cutoff).contains(&magnitude) {
                let (int, frac) = positional(v, dtype, None);
                let frac = if frac.is_empty() { "0" } else { &frac };
                format!("{int}.{frac}")
            } else {
                let sci = Scientific::of(v, dtype, None);
                let dot = if sci.frac.is_empty() { "" } else { "." };
                let sign = if sci.exp < 0 { '-' } else { '+' };
                format!(
                    "{}{dot}{}e{sign}{:02}",
                    sci.int,
                    sci.frac,
                    sci.exp.unsigned_abs()
                )
            }
        }
    }
}

/// numpy's `str` of a complex scalar, Python's `repr` of a complex: `(1+2j)`, with each part
/// in its shortest digits without a trailing `.0`, and `2j` alone when the real part is +0.
fn complex_scalar_str(re: f64, im: f64, part: DType) -> String {
    let short = |v: f64| {
        if !v.is_finite() {
            return non_finite(v).to_string();
        }
        let s = scalar_str(Elem::Float(v), part);
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    };
    let im_str = short(im);
    if re == 0.0 && !re.is_sign_negative() {
        return format!("{im_str}j");
    }
    let plus = if im.is_sign_negative() && !im.is_nan() {
        ""
    } else {
        "+"
    };
    format!("({}{plus}{im_str}j)", short(re))
}

/// A C++ `ostream << float` with default flags (printf's `%g`, 6 significant digits), which
/// is ml_dtypes' `repr` of a bf16; a NaN prints without its sign.
fn ostream_float(v: f32) -> String {
    if !v.is_finite() {
        return non_finite(v as f64).to_string();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    const SIGNIFICANT: i32 = 6;
    let v = v as f64;
    let sci = Scientific::parse(&format!("{:.*e}", SIGNIFICANT as usize - 1, v));
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if sci.exp < -4 || sci.exp >= SIGNIFICANT {
        let mantissa = trim(&format!("{}.{}", sci.int, sci.frac));
        let sign = if sci.exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", sci.exp.unsigned_abs())
    } else {
        let decimals = (SIGNIFICANT - 1 - sci.exp) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(values: &[f64]) -> Vec<Elem> {
        values.iter().map(|&v| Elem::Float(v)).collect()
    }

    #[test]
    fn float16_digits_are_the_shortest_at_half_precision() {
        let tenth = half::f16::from_f64(0.1).to_f64();
        assert_eq!(display(&floats(&[tenth]), &[], DType::F16), "0.1");
        assert_eq!(
            display(&floats(&[tenth, 1.0]), &[2], DType::F16),
            "[0.1 1. ]"
        );
    }

    #[test]
    fn bf16_prints_six_significant_digits_unpadded() {
        assert_eq!(ostream_float(-1.001_358e-5), "-1.00136e-05");
        assert_eq!(ostream_float(300.0), "300");
        assert_eq!(ostream_float(9_999_220_736.0), "9.99922e+09");
        assert_eq!(ostream_float(-0.0), "-0");
        assert_eq!(ostream_float(f32::NAN), "nan");
    }

    #[test]
    fn rounding_to_eight_digits_is_half_to_even_on_the_exact_value() {
        let (_, frac) = positional(1.0 / 512.0, DType::F64, Some(PRECISION));
        assert_eq!(frac, "00195312");
    }
}
