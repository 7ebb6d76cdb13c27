//! The options inside `#[pmap(...)]`, parsed into typed values before anything looks at the
//! function.
//!
//! Grammar: a comma-separated list of `key = value`:
//!
//! - `axis_name = "d"`, a string literal: the name collectives use for the device axis;
//! - `in_axes = AXES`, `out_axes = AXES`, as in `#[vmap]` (one axis for everything or a
//!   parenthesised list, each `None` or an integer);
//! - `donate = PARAMS`, `static = PARAMS`, as in `#[jit]`.

use crate::common::attr::{self, ArgList, Grammar};
use crate::ctxt::Ctxt;
use crate::vmap::attr::{parse_axes, Axes};
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, Lit, LitStr};

const GRAMMAR: Grammar = Grammar {
    name: "pmap",
    keys: &["axis_name", "in_axes", "out_axes", "donate", "static"],
    keys_joined_by: ", ",
    expected_at_comma: KEYS_WITH_EXAMPLES,
    expected_at_start: KEYS_WITH_EXAMPLES,
    example_value: |name| match name {
        "axis_name" => "\"d\"",
        _ => "0",
    },
    unknown_key_hint,
};

const KEYS_WITH_EXAMPLES: &str =
    "`axis_name = \"d\"`, `in_axes = (0, None)`, `out_axes = 0`, `donate = ...` or `static = ...`";

/// Everything `#[pmap(...)]` said, each option at most once.
#[derive(Default)]
pub struct PmapAttr {
    pub axis_name: Option<LitStr>,
    pub in_axes: Option<Axes>,
    pub out_axes: Option<Axes>,
    pub donate: Option<ArgList>,
    pub statics: Option<ArgList>,
    /// Some option could not be parsed: checks that depend on every option must not run.
    pub incomplete: bool,
}

enum Parsed {
    AxisName(Ident, LitStr),
    Axes(Axes),
    Params(ArgList),
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> PmapAttr {
    let mut attr = PmapAttr::default();
    let incomplete = attr::parse_options(cx, &GRAMMAR, tokens, parse_option, |cx, option| {
        attr.set(cx, option)
    });
    attr.incomplete = incomplete;
    attr
}

impl PmapAttr {
    fn set(&mut self, cx: &mut Ctxt, option: Parsed) {
        let key = match &option {
            Parsed::AxisName(k, _) => k.clone(),
            Parsed::Axes(a) => a.key.clone(),
            Parsed::Params(l) => l.key.clone(),
        };
        let name = key.unraw().to_string();
        let taken = match name.as_str() {
            "axis_name" => self.axis_name.is_some(),
            "in_axes" => self.in_axes.is_some(),
            "out_axes" => self.out_axes.is_some(),
            "donate" => self.donate.is_some(),
            _ => self.statics.is_some(),
        };
        if taken {
            cx.error(key.span(), format!("`{name}` is given twice; keep one"));
            return;
        }
        match option {
            Parsed::AxisName(_, s) => self.axis_name = Some(s),
            Parsed::Axes(a) if name == "in_axes" => self.in_axes = Some(a),
            Parsed::Axes(a) => self.out_axes = Some(a),
            Parsed::Params(l) if name == "donate" => self.donate = Some(l),
            Parsed::Params(l) => self.statics = Some(l),
        }
    }
}

fn parse_option(input: ParseStream) -> syn::Result<Parsed> {
    let (key, name) = attr::parse_key(input, &GRAMMAR)?;
    match name.as_str() {
        "axis_name" => {
            let value = parse_axis_name(input)?;
            attr::expect_end(input, &name, "")?;
            Ok(Parsed::AxisName(key, value))
        }
        "in_axes" | "out_axes" => {
            let value = parse_axes(input, &name)?;
            attr::expect_end(
                input,
                &name,
                &format!(", and list one axis per parameter in parentheses: `{name} = (0, None)`"),
            )?;
            Ok(Parsed::Axes(Axes { key, value }))
        }
        _ => {
            let args = attr::parse_params(input, &name, ("params", "lr"))?;
            attr::expect_end(
                input,
                &name,
                &format!(", and list several parameters in parentheses: `{name} = (0, 1)`"),
            )?;
            Ok(Parsed::Params(ArgList { key, args }))
        }
    }
}

/// `"d"`; anything else is explained.
fn parse_axis_name(input: ParseStream) -> syn::Result<LitStr> {
    const EXAMPLE: &str = "`axis_name = \"batch\"`";
    if input.peek(Lit) {
        if let Lit::Str(s) = input.fork().parse::<Lit>()? {
            input.parse::<Lit>()?;
            if s.value().is_empty() {
                return Err(syn::Error::new(
                    s.span(),
                    format!("the axis name cannot be empty; name it, e.g. {EXAMPLE}"),
                ));
            }
            return Ok(s);
        }
    }
    let message = format!(
        "`axis_name` is a string literal naming the device axis for collectives, e.g. {EXAMPLE}"
    );
    if input.is_empty() {
        return Err(input.error(message));
    }
    let tt: proc_macro2::TokenTree = input.parse()?;
    Err(syn::Error::new(tt.span(), message))
}

fn unknown_key_hint(name: &str) -> Option<String> {
    match name {
        "in_axis" | "inaxes" | "axes" => Some(" (did you mean `in_axes`?)".to_string()),
        "out_axis" | "outaxes" => Some(" (did you mean `out_axes`?)".to_string()),
        "axis" | "name" | "axisname" => Some(" (did you mean `axis_name`?)".to_string()),
        "static_broadcasted_argnums" | "static_argnums" => {
            Some(" (`static` takes parameter indices and names alike: `static = 1`)".to_string())
        }
        "donate_argnums" => {
            Some(" (`donate` takes parameter indices and names alike: `donate = 0`)".to_string())
        }
        "devices" | "backend" | "axis_size" => Some(format!(
            " (`{name}` is not an option of the attribute; the function form takes devices: \
             `jaxrs::pmap(f).devices(&devices)`)"
        )),
        _ => None,
    }
}
