//! The options inside `#[jit(...)]`, parsed into typed values before anything looks at the
//! function.
//!
//! Grammar: a comma-separated list of `key = value`, where `key` is `donate` or `static` and
//! `value` is one parameter (an index counted from 0, or a name) or a parenthesised list of
//! them: `donate = 0`, `static = lr`, `donate = (0, params)`. Each option is parsed on its own,
//! so a mistake in one does not hide a mistake in another.

use crate::ctxt::Ctxt;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Lit, Token};

/// The valid option names, in the order error messages list them.
pub const KEYS: &[&str] = &["donate", "static"];

/// Everything `#[jit(...)]` said, each option at most once.
#[derive(Default)]
pub struct JitAttr {
    /// `donate = ...`: parameters whose buffers XLA may reuse for the outputs.
    pub donate: Option<ArgList>,
    /// `static = ...`: parameters that are part of the cache key instead of being traced.
    pub statics: Option<ArgList>,
    /// Some option could not be parsed, so the parameters' roles are not fully known: checks
    /// that depend on a role (is this parameter traceable?) must not run, or they would report
    /// consequences of the first mistake.
    pub incomplete: bool,
}

/// The parameters one option names.
pub struct ArgList {
    /// The option's name as written, for error spans.
    pub key: Ident,
    pub args: Vec<ArgRef>,
}

/// A reference to a parameter of the function, as written in the attribute.
pub enum ArgRef {
    /// By position, counted from 0.
    Index { index: usize, span: Span },
    /// By name.
    Name(Ident),
}

impl ArgRef {
    pub fn span(&self) -> Span {
        match self {
            ArgRef::Index { span, .. } => *span,
            ArgRef::Name(ident) => ident.span(),
        }
    }
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> JitAttr {
    let errors_before = cx.error_count();
    let mut attr = JitAttr::default();
    for entry in split_top_level_commas(cx, tokens) {
        match parse_option.parse2(entry) {
            Ok((key, args)) => attr.set(cx, key, args),
            Err(e) => cx.syn_error(e),
        }
    }
    attr.incomplete = cx.error_count() > errors_before;
    attr
}

impl JitAttr {
    fn set(&mut self, cx: &mut Ctxt, key: Ident, args: Vec<ArgRef>) {
        let name = key.unraw().to_string();
        let slot = match name.as_str() {
            "donate" => &mut self.donate,
            "static" => &mut self.statics,
            _ => unreachable!("parse_option only returns known keys"),
        };
        if slot.is_some() {
            cx.error(
                key.span(),
                format!(
                    "`{name}` is given twice; name all its parameters in one list, \
                     e.g. `{name} = (0, 1)`"
                ),
            );
            return;
        }
        *slot = Some(ArgList { key, args });
    }
}

/// Splits `a = 1, b = (2, 3)` into `a = 1` and `b = (2, 3)`. A trailing comma is allowed;
/// an empty option in the middle (`a = 1,, b = 2`) is an error.
fn split_top_level_commas(cx: &mut Ctxt, tokens: TokenStream) -> Vec<TokenStream> {
    let mut entries = Vec::new();
    let mut current = Vec::<TokenTree>::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                if current.is_empty() {
                    cx.error(
                        p.span(),
                        "unexpected `,`: expected an option, `donate = ...` or `static = ...`",
                    );
                } else {
                    entries.push(current.drain(..).collect());
                }
            }
            _ => current.push(tt),
        }
        if iter.peek().is_none() && !current.is_empty() {
            entries.push(current.drain(..).collect());
        }
    }
    entries
}

/// Parses one `key = value`.
fn parse_option(input: ParseStream) -> syn::Result<(Ident, Vec<ArgRef>)> {
    let key = match input.call(Ident::parse_any) {
        Ok(key) => key,
        Err(_) => {
            return Err(input.error(format!(
                "expected an option of #[jit]: {}",
                list_keys_with_examples()
            )))
        }
    };
    let name = key.unraw().to_string();
    if !KEYS.contains(&name.as_str()) {
        return Err(syn::Error::new(key.span(), unknown_key_message(&name)));
    }
    if !input.peek(Token![=]) {
        let message = format!("expected `=` after `{name}`, as in `{name} = 0`");
        return Err(if input.is_empty() {
            syn::Error::new(key.span(), message)
        } else {
            input.error(message)
        });
    }
    input.parse::<Token![=]>()?;
    let args = parse_value(input, &name)?;
    if !input.is_empty() {
        return Err(input.error(format!(
            "unexpected tokens after the value of `{name}`; separate options with `,`, \
             and list several parameters in parentheses: `{name} = (0, 1)`"
        )));
    }
    Ok((key, args))
}

fn list_keys_with_examples() -> &'static str {
    "`donate = <parameters>` or `static = <parameters>`"
}

fn unknown_key_message(name: &str) -> String {
    let valid = KEYS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let mut message = format!("unknown option `{name}` of #[jit]; the valid options are {valid}");
    // JAX users reach for the Python spellings; say what they are called here.
    let jax_spelling = match name {
        "static_argnums" | "static_argnames" => Some("static"),
        "donate_argnums" | "donate_argnames" => Some("donate"),
        _ => None,
    };
    if let Some(key) = jax_spelling {
        message.push_str(&format!(
            " (`{key}` takes parameter indices and names alike: `{key} = 0` or `{key} = (0, lr)`)"
        ));
    }
    message
}

/// `0`, `lr`, or `(0, lr, ...)`.
fn parse_value(input: ParseStream, key: &str) -> syn::Result<Vec<ArgRef>> {
    if input.is_empty() {
        return Err(input.error(malformed_message(key)));
    }
    // A parenthesised list arrives as one group token.
    let is_paren_group = input.cursor().group(Delimiter::Parenthesis).is_some();
    if !is_paren_group {
        return Ok(vec![parse_arg(input, key)?]);
    }
    let content;
    let parens = syn::parenthesized!(content in input);
    let mut args = Vec::new();
    while !content.is_empty() {
        args.push(parse_arg(&content, key)?);
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error(format!(
                "expected `,` between the parameters of `{key}`, as in `{key} = (0, 1)`"
            )));
        }
        content.parse::<Token![,]>()?;
    }
    if args.is_empty() {
        return Err(syn::Error::new(
            parens.span.join(),
            format!(
                "`{key} = ()` names no parameter; remove `{key}` or name one, e.g. `{key} = 0`"
            ),
        ));
    }
    Ok(args)
}

/// One parameter: an index or a name.
fn parse_arg(input: ParseStream, key: &str) -> syn::Result<ArgRef> {
    if input.peek(Ident) {
        return Ok(ArgRef::Name(input.parse()?));
    }
    if input.peek(Lit) {
        let lit: Lit = input.parse()?;
        return match lit {
            Lit::Int(int) => {
                let index = int.base10_parse::<usize>()?;
                Ok(ArgRef::Index {
                    index,
                    span: int.span(),
                })
            }
            Lit::Str(s) => Err(syn::Error::new(
                s.span(),
                format!(
                    "write the parameter name without quotes: `{key} = {}`",
                    s.value()
                ),
            )),
            Lit::Float(f) => Err(syn::Error::new(
                f.span(),
                format!(
                    "`{f}` is not a parameter index; indices are whole numbers counted \
                     from 0, e.g. `{key} = 1`"
                ),
            )),
            other => Err(syn::Error::new(other.span(), malformed_message(key))),
        };
    }
    Err(input.error(malformed_message(key)))
}

fn malformed_message(key: &str) -> String {
    format!(
        "expected a parameter index or name, or a parenthesised list of them: \
         `{key} = 0`, `{key} = params` or `{key} = (0, lr)`"
    )
}
