//! The options inside `#[shard_map(...)]`, parsed into typed values before anything looks at
//! the function.
//!
//! Grammar: a comma-separated list of `key = value`. `in_specs`, `out_specs`, `mesh` and
//! `check_vma` take Rust expressions evaluated at each call, as JAX's
//! `jax.shard_map(f, mesh=, in_specs=, out_specs=, check_vma=)` takes Python values:
//! `in_specs = (P!["dp"], P![None, "mp"])` (one spec per traced parameter, or one for all),
//! `out_specs = P!["dp"]`, `mesh = mesh` (else the mesh in scope), `check_vma = false`.
//! `static = <params>` names parameters the body sees as Rust values, as in `#[remat]`.

use crate::common::attr::{self, ArgList, Grammar};
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::Ident;

const GRAMMAR: Grammar = Grammar {
    name: "shard_map",
    keys: &["in_specs", "out_specs", "mesh", "check_vma", "static"],
    keys_joined_by: ", ",
    expected_at_comma: "`in_specs = ...`, `out_specs = ...`, `mesh = ...`, `check_vma = ...` \
                        or `static = ...`",
    expected_at_start: "`in_specs = <specs>`, `out_specs = <specs>`, `mesh = <mesh>`, \
                        `check_vma = <bool>` or `static = <parameters>`",
    example_value: |name| match name {
        "in_specs" => "(P![\"dp\"], P![None, \"mp\"])",
        "out_specs" => "P![\"dp\"]",
        "mesh" => "mesh",
        "check_vma" => "false",
        _ => "0",
    },
    unknown_key_hint,
};

/// An option given as a Rust expression, with its key for messages.
pub struct ExprOption {
    pub key: Ident,
    pub expr: syn::Expr,
}

/// Everything `#[shard_map(...)]` said, each option at most once.
#[derive(Default)]
pub struct ShardMapAttr {
    pub in_specs: Option<ExprOption>,
    pub out_specs: Option<ExprOption>,
    pub mesh: Option<ExprOption>,
    pub check_vma: Option<ExprOption>,
    /// `static = ...`: parameters the body sees as Rust values instead of traced arrays.
    pub statics: Option<ArgList>,
    /// Some option could not be parsed, so the parameters' roles are not fully known.
    pub incomplete: bool,
}

enum Value {
    Expr(ExprOption),
    Statics(ArgList),
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> ShardMapAttr {
    let mut attr = ShardMapAttr::default();
    let incomplete = attr::parse_options(cx, &GRAMMAR, tokens, parse_option, |cx, value| {
        attr.set(cx, value)
    });
    attr.incomplete = incomplete;
    attr
}

impl ShardMapAttr {
    fn set(&mut self, cx: &mut Ctxt, value: Value) {
        let (key, taken) = match value {
            Value::Statics(list) => (list.key.clone(), self.statics.replace(list).is_some()),
            Value::Expr(e) => {
                let key = e.key.clone();
                let slot = match key.unraw().to_string().as_str() {
                    "in_specs" => &mut self.in_specs,
                    "out_specs" => &mut self.out_specs,
                    "mesh" => &mut self.mesh,
                    "check_vma" => &mut self.check_vma,
                    _ => unreachable!("parse_option only returns known keys"),
                };
                (key, slot.replace(e).is_some())
            }
        };
        if taken {
            cx.error(
                key.span(),
                format!(
                    "`{}` is given twice; give each option of #[shard_map] once",
                    key.unraw()
                ),
            );
        }
    }
}

fn parse_option(input: ParseStream) -> syn::Result<Value> {
    let (key, name) = attr::parse_key(input, &GRAMMAR)?;
    if name == "static" {
        let args = attr::parse_params(input, &name, ("n", "n"))?;
        attr::expect_end(input, &name, "")?;
        return Ok(Value::Statics(ArgList { key, args }));
    }
    if input.is_empty() {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "expected a value after `{name} =`, as in `{name} = {}`",
                (GRAMMAR.example_value)(&name)
            ),
        ));
    }
    let expr: syn::Expr = input.parse()?;
    attr::expect_end(input, &name, "")?;
    Ok(Value::Expr(ExprOption { key, expr }))
}

/// JAX users reach for the Python spellings; say what they are called here.
fn unknown_key_hint(name: &str) -> Option<String> {
    let hint = match name {
        "in_spec" | "in_shardings" => " (did you mean `in_specs`?)",
        "out_spec" | "out_shardings" => " (did you mean `out_specs`?)",
        "check_rep" => " (JAX renamed it `check_vma`)",
        "axis_names" => {
            " (every mesh axis is manual in jaxrs's shard_map; partial manual axes are not built \
             yet)"
        }
        _ => return None,
    };
    Some(hint.to_string())
}
