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

use crate::common::attr::{self, ArgList, Grammar};
use crate::ctxt::Ctxt;
use proc_macro2::{Delimiter, TokenStream};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token};

const GRAMMAR: Grammar = Grammar {
    name: "remat",
    keys: &["policy", "static"],
    keys_joined_by: " and ",
    expected_at_comma: "`policy = ...` or `static = ...`",
    expected_at_start: "`policy = <policy>` or `static = <parameters>`",
    example_value: |name| {
        if name == "policy" {
            "dots_saveable"
        } else {
            "0"
        }
    },
    unknown_key_hint,
};

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

enum Value {
    Policy(Policy),
    Statics(ArgList),
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> RematAttr {
    let mut attr = RematAttr::default();
    let incomplete = attr::parse_options(cx, &GRAMMAR, tokens, parse_option, |cx, (key, value)| {
        attr.set(cx, key, value)
    });
    attr.incomplete = incomplete;
    attr
}

impl RematAttr {
    fn set(&mut self, cx: &mut Ctxt, key: Ident, value: Value) {
        let name = key.unraw().to_string();
        let taken = match value {
            Value::Policy(p) => self.policy.replace(p).is_some(),
            Value::Statics(list) => self.statics.replace(list).is_some(),
        };
        if taken {
            cx.error(
                key.span(),
                format!("`{name}` is given twice; give each option of #[remat] once"),
            );
        }
    }
}

fn parse_option(input: ParseStream) -> syn::Result<(Ident, Value)> {
    let (key, name) = attr::parse_key(input, &GRAMMAR)?;
    let value = if name == "policy" {
        Value::Policy(parse_policy(input)?)
    } else {
        Value::Statics(ArgList {
            key: key.clone(),
            args: attr::parse_params(input, &name, ("n", "n"))?,
        })
    };
    attr::expect_end(input, &name, "")?;
    Ok((key, value))
}

fn unknown_key_hint(name: &str) -> Option<String> {
    let hint = match name {
        "static_argnums" | "static_argnames" => {
            " (`static` takes parameter indices and names alike: `static = 0` or `static = (0, n)`)"
        }
        "prevent_cse" => {
            " (the recomputation is always kept apart from the forward pass by an \
             optimization barrier)"
        }
        _ => return None,
    };
    Some(hint.to_string())
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
