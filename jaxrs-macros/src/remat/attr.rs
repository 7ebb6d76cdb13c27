//! The options inside `#[remat(...)]`, parsed into typed values before anything looks at the
//! function.
//!
//! Grammar: a comma-separated list of `key = value`:
//!
//! - `policy = nothing_saveable | dots_saveable | everything_saveable |
//!   save_only_these_names("a", "b", ...)`;
//! - `static = <params>`: one parameter (an index counted from 0, or a name) or a
//!   parenthesised list of them, as in `#[jit]`.
//!
//! Each option is parsed on its own, so a mistake in one does not hide a mistake in another.

use crate::ctxt::Ctxt;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Lit, LitStr, Token};

/// The valid option names, in the order error messages list them.
pub const KEYS: &[&str] = &["policy", "static"];

/// The policies without arguments, then the one with.
const POLICIES: &[&str] = &[
    "nothing_saveable",
    "dots_saveable",
    "everything_saveable",
    "save_only_these_names",
];

/// A policy as written.
pub enum Policy {
    NothingSaveable,
    DotsSaveable,
    EverythingSaveable,
    SaveOnlyTheseNames(Vec<LitStr>),
}

/// Everything `#[remat(...)]` said, each option at most once.
#[derive(Default)]
pub struct RematAttr {
    pub policy: Option<Policy>,
    /// `static = ...`: parameters the body sees as Rust values instead of traced arrays.
    pub statics: Option<ArgList>,
    /// Some option could not be parsed, so the parameters' roles are not fully known: checks
    /// that depend on a role (is this parameter traceable?) must not run.
    pub incomplete: bool,
}

/// The parameters `static` names.
pub struct ArgList {
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

enum Value {
    Policy(Policy),
    Statics(Vec<ArgRef>),
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> RematAttr {
    let errors_before = cx.error_count();
    let mut attr = RematAttr::default();
    for entry in split_top_level_commas(cx, tokens) {
        match parse_option.parse2(entry) {
            Ok((key, value)) => attr.set(cx, key, value),
            Err(e) => cx.syn_error(e),
        }
    }
    attr.incomplete = cx.error_count() > errors_before;
    attr
}

impl RematAttr {
    fn set(&mut self, cx: &mut Ctxt, key: Ident, value: Value) {
        let name = key.unraw().to_string();
        let taken = match value {
            Value::Policy(p) => self.policy.replace(p).is_some(),
            Value::Statics(args) => self.statics.replace(ArgList { args }).is_some(),
        };
        if taken {
            cx.error(
                key.span(),
                format!("`{name}` is given twice; give each option of #[remat] once"),
            );
        }
    }
}

/// Splits `a = 1, b = (2, 3)` into `a = 1` and `b = (2, 3)`. A trailing comma is allowed;
/// an empty option in the middle (`a = 1,, b = 2`) is an error.
fn split_top_level_commas(cx: &mut Ctxt, tokens: TokenStream) -> Vec<TokenStream> {
    let mut entries = Vec::new();
    let mut current = Vec::<TokenTree>::new();
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                if current.is_empty() {
                    cx.error(
                        p.span(),
                        "unexpected `,`: expected an option, `policy = ...` or `static = ...`",
                    );
                } else {
                    entries.push(current.drain(..).collect());
                }
            }
            _ => current.push(tt),
        }
    }
    if !current.is_empty() {
        entries.push(current.into_iter().collect());
    }
    entries
}

fn parse_option(input: ParseStream) -> syn::Result<(Ident, Value)> {
    let key = input.call(Ident::parse_any).map_err(|_| {
        input
            .error("expected an option of #[remat]: `policy = <policy>` or `static = <parameters>`")
    })?;
    let name = key.unraw().to_string();
    if !KEYS.contains(&name.as_str()) {
        return Err(syn::Error::new(key.span(), unknown_key_message(&name)));
    }
    if !input.peek(Token![=]) {
        let example = if name == "policy" {
            "policy = dots_saveable"
        } else {
            "static = 0"
        };
        let message = format!("expected `=` after `{name}`, as in `{example}`");
        return Err(if input.is_empty() {
            syn::Error::new(key.span(), message)
        } else {
            input.error(message)
        });
    }
    input.parse::<Token![=]>()?;
    let value = if name == "policy" {
        Value::Policy(parse_policy(input)?)
    } else {
        Value::Statics(parse_params(input, &name)?)
    };
    if !input.is_empty() {
        return Err(input.error(format!(
            "unexpected tokens after the value of `{name}`; separate options with `,`"
        )));
    }
    Ok((key, value))
}

fn unknown_key_message(name: &str) -> String {
    let valid = KEYS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let mut message = format!("unknown option `{name}` of #[remat]; the valid options are {valid}");
    let hint = match name {
        "static_argnums" | "static_argnames" => {
            Some(" (`static` takes parameter indices and names alike: `static = 0` or `static = (0, n)`)")
        }
        "prevent_cse" => Some(
            " (the recomputation is always kept apart from the forward pass by an \
             optimization barrier)",
        ),
        _ => None,
    };
    message.push_str(hint.unwrap_or_default());
    message
}

fn policies_list() -> String {
    let mut items: Vec<String> = POLICIES[..3].iter().map(|p| format!("`{p}`")).collect();
    items.push("`save_only_these_names(\"name\", ...)`".to_string());
    format!(
        "{} and {}",
        items[..items.len() - 1].join(", "),
        items[items.len() - 1]
    )
}

/// The policy a name stands for, in snake case (`dots_saveable`) or as the runtime's variant
/// (`DotsSaveable`).
fn policy_name_of(name: &str) -> Option<&'static str> {
    let snake: String = name
        .chars()
        .enumerate()
        .flat_map(|(i, c)| {
            let lower = c.to_ascii_lowercase();
            if c.is_ascii_uppercase() && i > 0 {
                vec!['_', lower]
            } else {
                vec![lower]
            }
        })
        .collect();
    POLICIES.iter().copied().find(|p| *p == snake)
}

/// `dots_saveable`, or `save_only_these_names("a", "b")`.
fn parse_policy(input: ParseStream) -> syn::Result<Policy> {
    if input.is_empty() {
        return Err(input.error(format!("expected a policy: {}", policies_list())));
    }
    let path = input.call(syn::Path::parse_mod_style).map_err(|_| {
        input.error(format!(
            "expected a policy name: {}; write it without quotes",
            policies_list()
        ))
    })?;
    if path.segments.len() > 1 || path.leading_colon.is_some() {
        // `RematPolicy::DotsSaveable` or `checkpoint_policies::dots_saveable`.
        let last = path.segments.last().expect("a path has a segment");
        let suggestion = policy_name_of(&last.ident.unraw().to_string())
            .map(|p| match p {
                "save_only_these_names" => {
                    "write `policy = save_only_these_names(\"name\", ...)`".to_string()
                }
                p => format!("write `policy = {p}`"),
            })
            .unwrap_or_else(|| format!("the valid policies are {}", policies_list()));
        return Err(syn::Error::new_spanned(
            &path,
            format!("write the policy's bare name, not a path: {suggestion}"),
        ));
    }
    let ident = path.segments[0].ident.clone();
    if input.peek(Token![.]) {
        // `jax.checkpoint_policies.dots_saveable`
        return Err(input.error(format!(
            "write the policy's bare name, e.g. `policy = dots_saveable`; the valid policies \
             are {}",
            policies_list()
        )));
    }
    let name = ident.unraw().to_string();
    let has_parens = input.cursor().group(Delimiter::Parenthesis).is_some();
    let policy = match name.as_str() {
        "nothing_saveable" => Policy::NothingSaveable,
        "dots_saveable" => Policy::DotsSaveable,
        "everything_saveable" => Policy::EverythingSaveable,
        "save_only_these_names" => {
            if !has_parens {
                return Err(syn::Error::new(
                    ident.span(),
                    "`save_only_these_names` takes the names to save: \
                     `save_only_these_names(\"hidden\", \"attention\")`",
                ));
            }
            return parse_names(input).map(Policy::SaveOnlyTheseNames);
        }
        other => {
            let hint = match other {
                "checkpoint_dots" => " (`checkpoint_dots` is called `dots_saveable` here)",
                "save_anything" | "everything" => " (did you mean `everything_saveable`?)",
                "nothing" | "none" | "None" => " (did you mean `nothing_saveable`?)",
                _ => "",
            };
            return Err(syn::Error::new(
                ident.span(),
                format!(
                    "unknown remat policy `{other}`; the valid policies are {}{hint}",
                    policies_list()
                ),
            ));
        }
    };
    if has_parens {
        let group: proc_macro2::Group = input.parse()?;
        return Err(syn::Error::new(
            group.span(),
            format!("`{name}` takes no arguments: write `policy = {name}`"),
        ));
    }
    Ok(policy)
}

/// `("a", "b")`: at least one name, each a string literal, none repeated.
fn parse_names(input: ParseStream) -> syn::Result<Vec<LitStr>> {
    let content;
    let parens = syn::parenthesized!(content in input);
    let mut names: Vec<LitStr> = Vec::new();
    while !content.is_empty() {
        let lit: LitStr = if content.peek(LitStr) {
            content.parse()?
        } else if content.peek(Ident::peek_any) {
            let ident = content.call(Ident::parse_any)?;
            return Err(syn::Error::new(
                ident.span(),
                format!(
                    "write the name as a string, as given to `checkpoint_name`: \
                     `\"{}\"`",
                    ident.unraw()
                ),
            ));
        } else {
            return Err(content.error(
                "expected a name as a string literal, e.g. `save_only_these_names(\"hidden\")`",
            ));
        };
        if names.iter().any(|n| n.value() == lit.value()) {
            return Err(syn::Error::new(
                lit.span(),
                format!("`{:?}` is listed twice; name each value once", lit.value()),
            ));
        }
        names.push(lit);
        if content.is_empty() {
            break;
        }
        content
            .parse::<Token![,]>()
            .map_err(|_| content.error("expected `,` between the names, as in `(\"a\", \"b\")`"))?;
    }
    if names.is_empty() {
        return Err(syn::Error::new(
            parens.span.join(),
            "`save_only_these_names()` names nothing, which saves nothing: write \
             `policy = nothing_saveable`, or list the names given to `checkpoint_name`",
        ));
    }
    Ok(names)
}

/// `0`, `n`, or `(0, n, ...)`.
fn parse_params(input: ParseStream, key: &str) -> syn::Result<Vec<ArgRef>> {
    if input.is_empty() {
        return Err(input.error(malformed_message(key)));
    }
    if input.cursor().group(Delimiter::Parenthesis).is_none() {
        return Ok(vec![parse_param(input, key)?]);
    }
    let content;
    let parens = syn::parenthesized!(content in input);
    let mut args = Vec::new();
    while !content.is_empty() {
        args.push(parse_param(&content, key)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>().map_err(|_| {
            content.error(format!(
                "expected `,` between the parameters of `{key}`, as in `{key} = (0, 1)`"
            ))
        })?;
    }
    if args.is_empty() {
        return Err(syn::Error::new(
            parens.span.join(),
            format!("`{key} = ()` names no parameter; remove `{key}` or name one"),
        ));
    }
    Ok(args)
}

fn parse_param(input: ParseStream, key: &str) -> syn::Result<ArgRef> {
    if input.peek(Ident) {
        return Ok(ArgRef::Name(input.parse()?));
    }
    if input.peek(Lit) {
        return match input.parse::<Lit>()? {
            Lit::Int(int) => Ok(ArgRef::Index {
                index: int.base10_parse::<usize>()?,
                span: int.span(),
            }),
            Lit::Str(s) => Err(syn::Error::new(
                s.span(),
                format!(
                    "write the parameter name without quotes: `{key} = {}`",
                    s.value()
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
         `{key} = 0`, `{key} = n` or `{key} = (0, n)`"
    )
}
