//! Checks the function and the options against each other and builds the model expansion
//! works from, each mistake reported at its token with what would be right.

use super::attr::{ArgList, ArgRef, Policy, RematAttr};
use crate::ctxt::Ctxt;
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit::Visit;
use syn::{Attribute, Block, FnArg, Ident, Item, ItemFn, Pat, ReturnType, Signature, Type};

/// A rematerialised function, checked.
pub struct RematFn {
    /// Outer attributes (doc comments included), kept on the generated function.
    pub attrs: Vec<Attribute>,
    /// Inner attributes (`#![...]`), kept at the top of its body.
    pub inner_attrs: Vec<Attribute>,
    pub vis: syn::Visibility,
    /// The signature, with `mut` removed from traced parameters' bindings (the body gets its
    /// own bindings; static parameters are captured as they are).
    pub sig: Signature,
    pub block: Block,
    pub params: Vec<Param>,
    pub output: Output,
    pub policy: Option<Policy>,
}

/// One parameter.
pub struct Param {
    pub ident: Ident,
    /// `mut` on a traced parameter's binding, carried over to the body's binding.
    pub mutability: Option<syn::token::Mut>,
    pub ty: Type,
    pub is_static: bool,
    pub passing: Passing,
}

pub enum Passing {
    /// `x: T`
    Value,
    /// `x: &T` (never `&mut`).
    Ref(Box<Type>),
}

/// The declared return type.
pub enum Output {
    /// A nameable type: the closure of the expansion is annotated with it.
    Concrete(Box<Type>),
    /// `impl Trait` somewhere in it: inferred.
    Opaque,
}

/// `f32 f64 i32 i64 u32 u8 i8 bool`, written as a bare name: traced as weakly typed 0-d
/// arrays.
pub fn is_scalar_type(ty: &Type) -> bool {
    bare_type_name(ty).is_some_and(|n| {
        matches!(
            n.as_str(),
            "f32" | "f64" | "i32" | "i64" | "u32" | "u8" | "i8" | "bool"
        )
    })
}

fn bare_type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() && p.path.leading_colon.is_none() => {
            let seg = p.path.segments.last()?;
            (p.path.segments.len() == 1 && seg.arguments.is_none())
                .then(|| seg.ident.unraw().to_string())
        }
        Type::Paren(p) => bare_type_name(&p.elem),
        Type::Group(g) => bare_type_name(&g.elem),
        _ => None,
    }
}

/// Parses the annotated item and checks it together with the options. `None` when the item
/// is not a function at all (already reported).
pub fn validate(cx: &mut Ctxt, attr: RematAttr, item: Item) -> Option<RematFn> {
    let item = match item {
        Item::Fn(f) => f,
        other => {
            cx.error(
                item_head(&other),
                "#[remat] applies to functions: put it on a function, e.g. \
                 `#[remat] fn block(x: &Array, w: &Array) -> Array { .. }`, or wrap a closure \
                 in `jaxrs::remat(..)`",
            );
            return None;
        }
    };
    let ItemFn {
        attrs,
        vis,
        mut sig,
        block,
    } = item;
    let (inner_attrs, attrs): (Vec<_>, Vec<_>) = attrs
        .into_iter()
        .partition(|a| matches!(a.style, syn::AttrStyle::Inner(_)));

    check_function_kind(cx, &sig);
    let output = check_output(cx, &sig);
    let names = params_by_position(&sig);
    let before = cx.error_count();
    let statics = resolve(cx, &sig.ident, attr.statics.as_ref(), &names);
    // A misnamed static parameter would also be reported as untraceable: one error is enough.
    let roles_known = !attr.incomplete && cx.error_count() == before;
    let params = check_params(cx, &mut sig, &statics, roles_known);

    Some(RematFn {
        attrs,
        inner_attrs,
        vis,
        sig,
        block: *block,
        params,
        output,
        policy: attr.policy,
    })
}

/// The span an error about the whole item points at: its keyword.
fn item_head(item: &Item) -> Span {
    use syn::spanned::Spanned;
    match item {
        Item::Struct(i) => i.struct_token.span,
        Item::Enum(i) => i.enum_token.span,
        Item::Union(i) => i.union_token.span,
        Item::Impl(i) => i.impl_token.span,
        Item::Trait(i) => i.trait_token.span,
        Item::Const(i) => i.const_token.span,
        Item::Static(i) => i.static_token.span,
        Item::Mod(i) => i.mod_token.span,
        Item::Type(i) => i.type_token.span,
        Item::Use(i) => i.use_token.span,
        other => other.span(),
    }
}

fn check_function_kind(cx: &mut Ctxt, sig: &Signature) {
    if let Some(t) = &sig.constness {
        cx.error(
            t.span,
            "#[remat] cannot be applied to a `const fn`: a rematerialised function is traced \
             when called, which cannot happen at compile time; remove `const`",
        );
    }
    if let Some(t) = &sig.asyncness {
        cx.error(
            t.span,
            "#[remat] cannot be applied to an `async fn`: remat traces the body into one \
             program when called, and an async fn returns a future instead of running its \
             body; remove `async`",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            "#[remat] cannot be applied to an `extern` function: it takes and returns Rust \
             values (arrays, trees); remove the ABI",
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "#[remat] cannot be applied to a variadic function");
    }
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        cx.error_spanned_by(
            r,
            "#[remat] cannot be applied to a method: remat traces a function of its \
             arguments, and `self` is not one it can trace; make it a free function taking \
             the model as an ordinary parameter, e.g. `fn block(layer: &Layer, x: &Array)`",
        );
    }
}

fn check_output(cx: &mut Ctxt, sig: &Signature) -> Output {
    const MESSAGE: &str = "a rematerialised function must return arrays (its outputs are \
                           what the backward pass recomputes); declare a return type, \
                           e.g. `-> Array` or `-> (Array, Array)`";
    match &sig.output {
        ReturnType::Default => {
            cx.error(sig.ident.span(), MESSAGE);
            Output::Opaque
        }
        ReturnType::Type(_, ty) => {
            if matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) {
                cx.error_spanned_by(ty, MESSAGE);
                Output::Opaque
            } else if contains_impl_trait(ty) {
                Output::Opaque
            } else {
                Output::Concrete(ty.clone())
            }
        }
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

fn params_by_position(sig: &Signature) -> Vec<Option<Ident>> {
    sig.inputs
        .iter()
        .map(|arg| match arg {
            FnArg::Typed(t) => match &*t.pat {
                Pat::Ident(p) => Some(p.ident.clone()),
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The positions `static` names, each once; reports indices out of range, unknown names and
/// repeats.
fn resolve(
    cx: &mut Ctxt,
    fn_name: &Ident,
    list: Option<&ArgList>,
    names: &[Option<Ident>],
) -> Vec<usize> {
    let Some(list) = list else {
        return Vec::new();
    };
    let n = names.len();
    let f = fn_name.unraw();
    let mut resolved = Vec::new();
    for arg in &list.args {
        let position = match arg {
            ArgRef::Index { index, span } => {
                if *index < n {
                    Some(*index)
                } else {
                    let message = match n {
                        0 => format!("`{f}` has no parameters, so index {index} is out of range"),
                        _ => format!(
                            "`{f}` has {n} parameter{}, index {index} is out of range: \
                             indices count from 0, so the last is {}",
                            if n == 1 { "" } else { "s" },
                            n - 1
                        ),
                    };
                    cx.error(*span, message);
                    None
                }
            }
            ArgRef::Name(ident) => {
                let wanted = ident.unraw();
                let found = names
                    .iter()
                    .position(|p| p.as_ref().is_some_and(|p| p.unraw() == wanted));
                if found.is_none() {
                    let list = names
                        .iter()
                        .flatten()
                        .map(|p| format!("`{}`", p.unraw()))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let listing = if list.is_empty() {
                        "it has no named parameters".to_string()
                    } else {
                        format!("its parameters are {list}")
                    };
                    cx.error(
                        ident.span(),
                        format!("`{wanted}` is not a parameter of `{f}`; {listing}"),
                    );
                }
                found
            }
        };
        let Some(position) = position else { continue };
        if resolved.contains(&position) {
            cx.error(
                arg.span(),
                "this parameter is listed twice in `static`; name each parameter once",
            );
            continue;
        }
        resolved.push(position);
    }
    resolved
}

/// Each parameter's name, role and passing; strips `mut` from traced parameters' bindings.
fn check_params(
    cx: &mut Ctxt,
    sig: &mut Signature,
    statics: &[usize],
    roles_known: bool,
) -> Vec<Param> {
    let mut params = Vec::new();
    for (i, arg) in sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(pat_type) = arg else {
            continue; // a receiver, reported by check_function_kind
        };
        let ty = (*pat_type.ty).clone();
        let is_static = statics.contains(&i);
        let Pat::Ident(pat) = &mut *pat_type.pat else {
            let example = if matches!(&*pat_type.pat, Pat::Wild(_)) {
                "_unused"
            } else {
                "arg"
            };
            cx.error_spanned_by(
                &pat_type.pat,
                format!(
                    "give this parameter a name, e.g. `{example}: {}`, and destructure it \
                     inside the body: #[remat] passes each parameter by its name",
                    type_string(&ty)
                ),
            );
            continue;
        };
        if pat.by_ref.is_some() || pat.subpat.is_some() {
            cx.error_spanned_by(
                &*pat,
                format!(
                    "give this parameter a plain name, e.g. `{}: {}`",
                    pat.ident,
                    type_string(&ty)
                ),
            );
            continue;
        }
        let name = pat.ident.unraw().to_string();
        if is_static {
            // Captured by the traced closure as it is: any type, any binding.
            params.push(Param {
                ident: pat.ident.clone(),
                mutability: None,
                ty,
                is_static: true,
                passing: Passing::Value,
            });
            continue;
        }
        if contains_impl_trait(&ty) {
            cx.error_spanned_by(
                &ty,
                format!(
                    "#[remat] cannot trace an `impl Trait` parameter: the traced closure must \
                     name its type; add a type parameter instead, e.g. `fn f<T: Tree>({name}: T)`"
                ),
            );
            continue;
        }
        let passing = match &ty {
            Type::Reference(r) if r.mutability.is_some() => {
                cx.error_spanned_by(
                    &ty,
                    format!(
                        "a rematerialised function is pure, it cannot write through `&mut`: \
                         take `{name}: {elem}` (or `&{elem}`) and return the updated value",
                        elem = type_string(&r.elem)
                    ),
                );
                continue;
            }
            Type::Reference(r) => Passing::Ref(r.elem.clone()),
            _ => Passing::Value,
        };
        let inner = match &passing {
            Passing::Value => &ty,
            Passing::Ref(inner) => &**inner,
        };
        if roles_known {
            if let Some(type_name) = untraceable_type(inner) {
                cx.error_spanned_by(
                    &ty,
                    format!(
                        "`{name}: {}` would be traced, but `{type_name}` is not an array type; \
                         if the body needs its Rust value, make it static: \
                         `#[remat(static = {name})]`",
                        type_string(&ty)
                    ),
                );
                continue;
            }
        }
        params.push(Param {
            ident: pat.ident.clone(),
            mutability: pat.mutability.take(),
            ty,
            is_static: false,
            passing,
        });
    }
    params
}

/// Common Rust types that have no array dtype, so cannot be traced.
fn untraceable_type(ty: &Type) -> Option<String> {
    let name = bare_type_name(ty)?;
    matches!(name.as_str(), "usize" | "isize" | "char" | "String" | "str").then_some(name)
}

/// A type as a user would write it: `&'static str`, not `& 'static str`.
fn type_string(ty: &Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in [
        ("& '", "&'"),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ::", "::"),
        (":: ", "::"),
        (" ,", ","),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
        (" ;", ";"),
    ] {
        s = s.replace(from, to);
    }
    s
}
