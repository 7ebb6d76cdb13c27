//! The options inside `#[jit(...)]`, parsed into typed values before anything looks at the
//! function.
//!
//! Grammar (shared, see [`crate::common::attr`]): a comma-separated list of `key = value`,
//! where `key` is `donate` or `static` and `value` is one parameter (an index counted from 0,
//! or a name) or a parenthesised list of them: `donate = 0`, `static = lr`,
//! `donate = (0, params)`. `in_shardings`, `out_shardings` and `mesh` take Rust expressions
//! evaluated at each call (JAX's `jax.jit(f, in_shardings=..., out_shardings=...)`):
//! `in_shardings = (P!["dp", None], P![None, "mp"])` (one entry per traced parameter, or one
//! expression for all of them), `out_shardings = P!["dp", "mp"]`, `mesh = my_mesh()`.

use crate::common::attr::{self, ArgList, Grammar};
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use syn::parse::ParseStream;
use syn::Ident;

const GRAMMAR: Grammar = Grammar {
    name: "jit",
    keys: &["donate", "static", "in_shardings", "out_shardings", "mesh"],
    keys_joined_by: ", ",
    expected_at_comma: "`donate = ...`, `static = ...`, `in_shardings = ...`, \
                        `out_shardings = ...` or `mesh = ...`",
    expected_at_start: "`donate = <parameters>`, `static = <parameters>`, \
                        `in_shardings = <shardings>`, `out_shardings = <shardings>` or \
                        `mesh = <mesh>`",
    example_value: |key| match key {
        "in_shardings" => "(P![\"dp\", None], P![None, \"mp\"])",
        "out_shardings" => "P![\"dp\", \"mp\"]",
        "mesh" => "mesh",
        _ => "0",
    },
    unknown_key_hint,
};

/// Everything `#[jit(...)]` said, each option at most once.
#[derive(Default)]
pub struct JitAttr {
    /// `donate = ...`: parameters whose buffers XLA may reuse for the outputs.
    pub donate: Option<ArgList>,
    /// `static = ...`: parameters that are part of the cache key instead of being traced.
    pub statics: Option<ArgList>,
    /// `in_shardings = ...`: how the traced parameters are laid out.
    pub in_shardings: Option<ShardingsExpr>,
    /// `out_shardings = ...`: how the results are laid out.
    pub out_shardings: Option<ShardingsExpr>,
    /// `mesh = ...`: the mesh bare partition specs refer to.
    pub mesh: Option<ShardingsExpr>,
    /// Some option could not be parsed, so the parameters' roles are not fully known: checks
    /// that depend on a role (is this parameter traceable?) must not run, or they would report
    /// consequences of the first mistake.
    pub incomplete: bool,
}

/// Parses the attribute's tokens, recording every mistake in `cx` and keeping what is valid.
pub fn parse(cx: &mut Ctxt, tokens: TokenStream) -> JitAttr {
    let mut attr = JitAttr::default();
    let incomplete =
        attr::parse_options(
            cx,
            &GRAMMAR,
            tokens,
            parse_option,
            |cx, option| match option {
                JitOption::Params(list) => attr.set(cx, list),
                JitOption::Expr(e) => attr.set_expr(cx, e),
            },
        );
    attr.incomplete = incomplete;
    attr
}

impl JitAttr {
    fn set(&mut self, cx: &mut Ctxt, list: ArgList) {
        let name = syn::ext::IdentExt::unraw(&list.key).to_string();
        let slot = match name.as_str() {
            "donate" => &mut self.donate,
            "static" => &mut self.statics,
            _ => unreachable!("parse_option only returns known keys"),
        };
        if slot.is_some() {
            cx.error(
                list.key.span(),
                format!(
                    "`{name}` is given twice; name all its parameters in one list, \
                     e.g. `{name} = (0, 1)`"
                ),
            );
            return;
        }
        *slot = Some(list);
    }
}

/// The value of a sharding option: a Rust expression, kept with its key for error spans.
pub struct ShardingsExpr {
    pub key: Ident,
    pub expr: syn::Expr,
}

enum JitOption {
    Params(ArgList),
    Expr(ShardingsExpr),
}

impl JitAttr {
    fn set_expr(&mut self, cx: &mut Ctxt, e: ShardingsExpr) {
        let name = syn::ext::IdentExt::unraw(&e.key).to_string();
        let slot = match name.as_str() {
            "in_shardings" => &mut self.in_shardings,
            "out_shardings" => &mut self.out_shardings,
            "mesh" => &mut self.mesh,
            _ => unreachable!("parse_option only returns known keys"),
        };
        if slot.is_some() {
            cx.error(e.key.span(), format!("`{name}` is given twice"));
            return;
        }
        *slot = Some(e);
    }
}

/// Parses one `key = value`.
fn parse_option(input: ParseStream) -> syn::Result<JitOption> {
    let (key, name): (Ident, String) = attr::parse_key(input, &GRAMMAR)?;
    if matches!(name.as_str(), "in_shardings" | "out_shardings" | "mesh") {
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
        return Ok(JitOption::Expr(ShardingsExpr { key, expr }));
    }
    let args = attr::parse_params(input, &name, ("params", "lr"))?;
    attr::expect_end(
        input,
        &name,
        &format!(", and list several parameters in parentheses: `{name} = (0, 1)`"),
    )?;
    Ok(JitOption::Params(ArgList { key, args }))
}

/// JAX users reach for the Python spellings; say what they are called here.
fn unknown_key_hint(name: &str) -> Option<String> {
    let key = match name {
        "static_argnums" | "static_argnames" => "static",
        "donate_argnums" | "donate_argnames" => "donate",
        "in_sharding" | "in_specs" => {
            return Some(" (did you mean `in_shardings`?)".into());
        }
        "out_sharding" | "out_specs" => {
            return Some(" (did you mean `out_shardings`?)".into());
        }
        _ => return None,
    };
    Some(format!(
        " (`{key}` takes parameter indices and names alike: `{key} = 0` or `{key} = (0, lr)`)"
    ))
}
