//! `debug_print`: JAX's `jax.debug.print`, printing the values an operation sees at run time,
//! inside compiled code too.
//!
//! The primitive has no outputs and an effect. Eagerly it formats its operands at once. In a
//! compiled program it lowers to a side-effecting XLA FFI custom call
//! (`stablehlo.custom_call @jaxrs_host_callback`, `api_version = 4`, the format string as an
//! attribute), whose handler (registered through the plugin's FFI extension, see
//! `pjrt::ffi`) formats the operands' host memory when the program runs: once per execution
//! of the enclosing program, or per iteration inside a loop body. XLA keeps side-effecting
//! custom calls (no dead-code elimination), and jaxrs's own passes never drop equations.
//!
//! Rules: JVP prints the primal and has no tangent (there are no outputs); the VJP gives no
//! cotangents; batching unrolls over the batch, one print per example, as JAX does.

use crate::aval::Aval;
use crate::core::array::Array;
use crate::core::client::{client, fail};
use crate::core::lower::LowerCtx;
use crate::core::primitive::{as_any, Primitive};
use crate::core::print::{self, Elem};
use crate::core::trace::{bind, Operand};
use crate::pjrt::ffi::{self, HostArg};
use std::fmt::Write;
use std::sync::{Arc, RwLock};

/// Prints `fmt` with each `{}` replaced by the next value, at run time (see the module doc).
#[derive(Debug, Clone)]
pub struct DebugPrint {
    pub fmt: Arc<str>,
}

impl Primitive for DebugPrint {
    fn name(&self) -> &'static str {
        "debug_print"
    }
    fn params_string(&self) -> String {
        format!("fmt={:?}", &*self.fmt)
    }
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let holes = placeholders(&self.fmt)?;
        if holes != inputs.len() {
            return Err(format!(
                "the format string has {holes} `{{}}` placeholders but {} values are given",
                inputs.len()
            ));
        }
        Ok(vec![])
    }
    fn jvp(&self, _: &[Operand], _: &[Option<Array>], _: &[Array]) -> Vec<Option<Array>> {
        // The interpreter has already bound the print on the primals.
        vec![]
    }
    fn vjp(
        &self,
        primals: &[Operand],
        _: &[Array],
        _: &[Option<Array>],
        _: &[bool],
    ) -> Vec<Option<Array>> {
        vec![None; primals.len()]
    }
    fn batch(
        &self,
        args: &[Operand],
        dims: &[Option<usize>],
        axis_size: usize,
    ) -> (Vec<Array>, Vec<Option<usize>>) {
        for i in 0..axis_size {
            let example: Vec<Array> = args
                .iter()
                .zip(dims)
                .map(|(a, d)| {
                    let a = a.to_array().into_owned();
                    match d {
                        None => a,
                        Some(d) => {
                            let mut shape = a.shape().to_vec();
                            shape.remove(*d);
                            a.slice_axis(*d as i64, i, i + 1).reshape(shape)
                        }
                    }
                })
                .collect();
            let ops: Vec<Operand> = example.iter().map(Operand::from).collect();
            bind(Arc::new(self.clone()), &ops);
        }
        (vec![], vec![])
    }
    fn eager(&self, inputs: &[Operand]) -> Option<Vec<Array>> {
        let mut values = Vec::with_capacity(inputs.len());
        for op in inputs {
            let a = op.to_array();
            values.push(a.to_string());
        }
        emit(&substitute(&self.fmt, &values));
        Some(vec![])
    }
    fn lower(
        &self,
        cx: &mut LowerCtx,
        ins: &[String],
        in_avals: &[Aval],
        _: &[Aval],
    ) -> Vec<String> {
        ensure_handler();
        let operands: Vec<&str> = ins.iter().map(String::as_str).collect();
        let avals: Vec<&Aval> = in_avals.iter().collect();
        let props = format!(
            "api_version = 4 : i32, backend_config = {{fmt = \"{}\"}}, call_target_name = \"{}\", \
             has_side_effect = true",
            mlir_escape(&self.fmt),
            ffi::HOST_CALLBACK_TARGET
        );
        cx.op("stablehlo.custom_call", &operands, &avals, &props, &[])
    }
    as_any!();
}

/// Registers the host-callback handler with the plugin before the first program using it is
/// compiled.
fn ensure_handler() {
    ffi::set_host_callback(host_callback);
    if let Err(e) = ffi::register_host_callback(client().api()) {
        fail(e);
    }
}

/// The handler's work, on XLA's thread: format the operands and emit the line.
fn host_callback(attrs: &[(&str, &str)], args: &[HostArg<'_>]) {
    let fmt = attrs
        .iter()
        .find(|(name, _)| *name == "fmt")
        .map_or("", |(_, v)| v);
    let values: Vec<String> = args
        .iter()
        .map(|a| {
            let shape: Vec<usize> = a.dims.iter().map(|&d| d.max(0) as usize).collect();
            let elems: Vec<Elem> = crate::core::array::print_elems_of_bytes(a.bytes, a.dtype);
            print::display(&elems, &shape, a.dtype)
        })
        .collect();
    emit(&substitute(fmt, &values));
}

/// A receiver of the lines [`debug_print!`](macro@crate::debug_print) prints (see
/// [`set_debug_print_hook`]).
///
/// ```
/// let hook: jaxrs::DebugPrintHook = std::sync::Arc::new(|line: &str| eprintln!("{line}"));
/// jaxrs::set_debug_print_hook(Some(hook));
/// jaxrs::set_debug_print_hook(None);
/// ```
pub type DebugPrintHook = Arc<dyn Fn(&str) + Send + Sync>;
/// Where printed lines go: stdout unless a hook is set.
static HOOK: RwLock<Option<DebugPrintHook>> = RwLock::new(None);

fn emit(line: &str) {
    let hook = HOOK.read().unwrap_or_else(|p| p.into_inner()).clone();
    match hook {
        Some(h) => h(line),
        None => println!("{line}"),
    }
}

/// Sends the lines [`debug_print!`](macro@crate::debug_print) prints to `hook` instead of stdout
/// (`None` restores stdout); returns the previous hook. Lines printed from compiled code
/// reach the hook on XLA's threads, so it must be `Send + Sync`.
///
/// ```
/// use jaxrs::prelude::*;
/// use std::sync::{Arc, Mutex};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// jaxrs::set_debug_print_hook(Some(Arc::new(move |line: &str| {
///     sink.lock().unwrap().push(line.to_string())
/// })));
/// debug_print!("x = {}", Array::from_vec(vec![1.0f32, 2.0], &[2]));
/// jaxrs::set_debug_print_hook(None);
/// assert!(seen.lock().unwrap().contains(&"x = [1. 2.]".to_string()));
/// ```
pub fn set_debug_print_hook(hook: Option<DebugPrintHook>) -> Option<DebugPrintHook> {
    std::mem::replace(&mut *HOOK.write().unwrap_or_else(|p| p.into_inner()), hook)
}

/// The function behind [`debug_print!`](macro@crate::debug_print): prints `fmt` with each `{}`
/// replaced by the next value, at run time (eagerly: now; inside `jit`, `scan`, `vmap`,
/// `grad`: each time the compiled program runs, with the values of that run).
#[track_caller]
pub fn debug_print(fmt: &str, values: &[&Array]) {
    let ops: Vec<Operand> = values.iter().map(|a| Operand::from(*a)).collect();
    bind(Arc::new(DebugPrint { fmt: fmt.into() }), &ops);
}

/// Counts `{}` placeholders; `{{` and `}}` are literal braces.
fn placeholders(fmt: &str) -> Result<usize, String> {
    let mut n = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
            }
            ('{', Some('}')) => {
                chars.next();
                n += 1;
            }
            ('{', _) | ('}', _) => {
                return Err(format!(
                    "unsupported format string {fmt:?}: only `{{}}` placeholders (and `{{{{`, \
                     `}}}}`) are supported"
                ))
            }
            _ => {}
        }
    }
    Ok(n)
}

fn substitute(fmt: &str, values: &[String]) -> String {
    let mut out = String::with_capacity(fmt.len());
    let mut next = values.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
                out.push(c);
            }
            ('{', Some('}')) => {
                chars.next();
                out.push_str(next.next().map_or("{}", String::as_str));
            }
            _ => out.push(c),
        }
    }
    out
}

/// An MLIR string literal's body: bytes other than plain printable ASCII as `\XX`.
fn mlir_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if (b.is_ascii_graphic() || b == b' ') && b != b'"' && b != b'\\' {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_placeholders_and_escapes() {
        assert_eq!(placeholders("a {} b {{}} {}"), Ok(2));
        assert!(placeholders("a {x}").is_err());
        let v = ["1".to_string(), "2".to_string()];
        assert_eq!(substitute("a {} b {{}} {}", &v), "a 1 b {} 2");
        assert_eq!(mlir_escape("a\"b\\c\n"), "a\\22b\\5Cc\\0A");
    }
}
