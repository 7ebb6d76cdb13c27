//! The options inside `#[vmap(...)]`, parsed into typed values before anything looks at the
//! function.
//!
//! Grammar: a comma-separated list of `key = value`:
//!
//! - `in_axes = AXES`, `out_axes = AXES`, where `AXES` is one axis for every parameter (or
//!   the whole result) or a parenthesised list with one per parameter (or result element),
//!   and an axis is `None` or an integer (`0`, `-1`: negative counts from the end);
//! - `axis_size = EXPR`, a `usize` expression: the batch size when no parameter is mapped;
//! - `axis_name = "i"`, a string literal: the batch axis's name, for collectives
//!   (`psum(&x, "i")`) inside the function.
//!
//! Each option is parsed on its own, so a mistake in one does not hide one in another.

use crate::common::attr::{self, Grammar};
use crate::ctxt::Ctxt;
use proc_macro2::{Delimiter, Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Expr, Ident, Lit, LitStr, Token};

const GRAMMAR: Grammar = Grammar {
    name: "vmap",
    keys: &["in_axes", "out_axes", "axis_size", "axis_name"],
    keys_joined_by: ", ",
    expected_at_comma: KEYS_WITH_EXAMPLES,
    expected_at_start: KEYS_WITH_EXAMPLES,
    example_value: |name| match name {
        "axis_size" => "8",
        "axis_name" => "\"i\"",
        _ => "0",
    },
    unknown_key_hint,
};

const KEYS_WITH_EXAMPLES: &str =
    "`in_axes = (None, 0)`, `out_axes = 0`, `axis_size = 8` or `axis_name = \"i\"`";

/// Everything `#[vmap(...)]` said, each option at most once.
#[derive(Default)]
pub struct VmapAttr {
    pub in_axes: Option<Axes>,
    pub out_axes: Option<Axes>,
    /// `axis_size = ...`: the key (for spans) and the expression.
    pub axis_size: Option<(Ident, Expr)>,
    /// `axis_name = "i"`: the key (for spans) and the name.
    pub axis_name: Option<(Ident, LitStr)>,
    /// Some option could not be parsed: checks that depend on every option (is any
    /// parameter mapped?) must not run, or they would report consequences of the mistake.
    pub incomplete: bool,
}

/// The value of `in_axes` or `out_axes`.
pub struct Axes {
    pub key: Ident,
    pub value: AxesValue,
}

pub enum AxesValue {
    /// `in_axes = 0`: the same axis for every parameter.
    One(Axis),
    /// `in_axes = (None, 0, 0)`: one per parameter; `span` covers the parentheses.
    List { entries: Vec<Axis>, span: Span },
}

/// `None` or an integer, as written.
#[derive(Clone, Copy)]
pub struct Axis {
    pub value: Option<i64>,
    /// The first token (`-` of `-1`) and the last.
    pub span: Span,
    pub end: Span,
}

impl Axis {
    /// Tokens spanning the axis as written, for errors that point at all of `-1`.
    pub fn tokens(&self) -> TokenStream {
        let first = Ident::new("axis", self.span);
        let last = Ident::new("axis", self.end);
        quote::quote!(#first #last)
    }
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> VmapAttr {
    let mut attr = VmapAttr::default();
    let incomplete = attr::parse_options(cx, &GRAMMAR, tokens, parse_option, |cx, option| {
        attr.set(cx, option)
    });
    attr.incomplete = incomplete;
    attr
}

enum Parsed {
    Axes(Axes),
    AxisSize(Ident, Expr),
    AxisName(Ident, LitStr),
}

impl VmapAttr {
    fn set(&mut self, cx: &mut Ctxt, option: Parsed) {
        let key = match &option {
            Parsed::Axes(a) => a.key.clone(),
            Parsed::AxisSize(k, _) | Parsed::AxisName(k, _) => k.clone(),
        };
        let name = key.unraw().to_string();
        let taken = match name.as_str() {
            "in_axes" => self.in_axes.is_some(),
            "out_axes" => self.out_axes.is_some(),
            "axis_name" => self.axis_name.is_some(),
            _ => self.axis_size.is_some(),
        };
        if taken {
            cx.error(key.span(), format!("`{name}` is given twice; keep one"));
            return;
        }
        match option {
            Parsed::Axes(a) if name == "in_axes" => self.in_axes = Some(a),
            Parsed::Axes(a) => self.out_axes = Some(a),
            Parsed::AxisSize(k, e) => self.axis_size = Some((k, e)),
            Parsed::AxisName(k, s) => self.axis_name = Some((k, s)),
        }
    }
}

/// Parses one `key = value`.
fn parse_option(input: ParseStream) -> syn::Result<Parsed> {
    let (key, name) = attr::parse_key(input, &GRAMMAR)?;
    if name == "axis_size" {
        if input.is_empty() {
            return Err(
                input.error("expected the batch size after `axis_size =`, e.g. `axis_size = 8`")
            );
        }
        let expr: Expr = input.parse()?;
        attr::expect_end(input, &name, "")?;
        return Ok(Parsed::AxisSize(key, expr));
    }
    if name == "axis_name" {
        return parse_axis_name(input, key);
    }
    let value = parse_axes(input, &name)?;
    attr::expect_end(
        input,
        &name,
        &format!(", and list one axis per parameter in parentheses: `{name} = (None, 0)`"),
    )?;
    Ok(Parsed::Axes(Axes { key, value }))
}

fn unknown_key_hint(name: &str) -> Option<String> {
    match name {
        "in_axis" | "inaxes" | "axes" | "in_dims" => Some(" (did you mean `in_axes`?)".to_string()),
        "out_axis" | "outaxes" | "out_dims" => Some(" (did you mean `out_axes`?)".to_string()),
        "size" | "batch_size" | "axis_len" => Some(" (did you mean `axis_size`?)".to_string()),
        "name" | "axis" | "axisname" => Some(" (did you mean `axis_name`?)".to_string()),
        "spmd_axis_name" => Some(format!(
            " (`{name}` names a mesh axis for sharding the batch, which jaxrs's vmap does not \
             support; `axis_name` names the batch axis for collectives)"
        )),
        _ => None,
    }
}

/// `axis_name = "i"`: a string literal, not empty.
fn parse_axis_name(input: ParseStream, key: Ident) -> syn::Result<Parsed> {
    const EXAMPLE: &str = "`axis_name = \"i\"`";
    if input.is_empty() {
        return Err(input.error(format!(
            "expected the axis name after `axis_name =`, a string literal: {EXAMPLE}"
        )));
    }
    if !input.peek(LitStr) {
        let value: TokenStream = input.parse()?;
        return Err(syn::Error::new_spanned(
            &value,
            format!(
                "`axis_name` is a string literal, as in {EXAMPLE}; `{value}` is not (a name \
                 computed at run time goes through the function form, `vmap_named`)"
            ),
        ));
    }
    let name: LitStr = input.parse()?;
    if name.value().is_empty() {
        return Err(syn::Error::new(
            name.span(),
            format!("the axis name is empty; name it, as in {EXAMPLE}"),
        ));
    }
    attr::expect_end(input, "axis_name", "")?;
    Ok(Parsed::AxisName(key, name))
}

/// `0`, `None`, `-1`, or `(None, 0, ...)`.
pub fn parse_axes(input: ParseStream, key: &str) -> syn::Result<AxesValue> {
    if input.is_empty() {
        return Err(input.error(malformed_message(key)));
    }
    if let Some((_, span, _)) = input.cursor().group(Delimiter::Bracket) {
        return Err(syn::Error::new(
            span.join(),
            format!("write the list in parentheses: `{key} = (None, 0)`"),
        ));
    }
    if input.cursor().group(Delimiter::Parenthesis).is_none() {
        return Ok(AxesValue::One(parse_axis(input, key)?));
    }
    let (entries, span) = attr::parse_parenthesised(
        input,
        |content| parse_axis(content, key),
        || format!("expected `,` between the axes of `{key}`, as in `{key} = (None, 0)`"),
    )?;
    Ok(AxesValue::List { entries, span })
}

/// One axis: `None`, `0`, `-1`.
fn parse_axis(input: ParseStream, key: &str) -> syn::Result<Axis> {
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        if ident == "None" {
            return Ok(Axis {
                value: None,
                span: ident.span(),
                end: ident.span(),
            });
        }
        let message = if ident == "Some" {
            format!("write the axis without `Some`: `{key} = (None, 0)`")
        } else {
            format!(
                "`{ident}` is not an axis: an entry of `{key}` is `None` (not mapped) or an \
                 integer literal such as `0` or `-1`, one per parameter in order"
            )
        };
        return Err(syn::Error::new(ident.span(), message));
    }
    if input.cursor().group(Delimiter::Parenthesis).is_some() {
        let group: proc_macro2::Group = input.parse()?;
        return Err(syn::Error::new(
            group.span(),
            format!(
                "an entry of `{key}` is one axis for its whole parameter (`None` or an \
                 integer); nested lists are not supported"
            ),
        ));
    }
    let negative = input.peek(Token![-]);
    let minus = if negative {
        Some(input.parse::<Token![-]>()?)
    } else {
        None
    };
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        return match lit {
            Lit::Int(int) => {
                let value = int.base10_parse::<i64>()?;
                Ok(Axis {
                    value: Some(if negative { -value } else { value }),
                    span: minus.map_or(int.span(), |m| m.spans[0]),
                    end: int.span(),
                })
            }
            Lit::Float(f) => Err(syn::Error::new(
                f.span(),
                format!("`{f}` is not an axis; axes are whole numbers, e.g. `{key} = 0`"),
            )),
            Lit::Str(s) if s.value() == "None" => {
                Err(syn::Error::new(s.span(), "write `None` without quotes"))
            }
            other => Err(syn::Error::new(other.span(), malformed_message(key))),
        };
    }
    Err(input.error(malformed_message(key)))
}

fn malformed_message(key: &str) -> String {
    format!(
        "expected an axis (`None` or an integer) or a parenthesised list of them: \
         `{key} = 0` or `{key} = (None, 0, -1)`"
    )
}
