//! Checks the function and the options against each other and builds the model expansion
//! works from. Everything the compiler can tell at `cargo build` time is checked here, each
//! mistake reported at its token with what would be right.

use super::attr::{ArgList, ArgRef, JitAttr};
use crate::ctxt::Ctxt;
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit::Visit;
use syn::{
    Attribute, Block, FnArg, GenericParam, Ident, Item, ItemFn, Pat, ReturnType, Signature, Type,
    Visibility,
};

/// The most parameters one role can hold: the runtime implements `Tree` and `Hash` for tuples
/// of up to 12.
const MAX_PER_ROLE: usize = 12;

/// A jitted function, checked.
pub struct JitFn {
    /// Outer attributes (doc comments included), kept on the generated function.
    pub attrs: Vec<Attribute>,
    /// Inner attributes (`#![...]` at the top of the body), kept at the top of its body.
    pub inner_attrs: Vec<Attribute>,
    pub vis: Visibility,
    /// The signature, with `mut` removed from parameter bindings (the generated outer function
    /// only moves them into the call; the body gets its own bindings).
    pub sig: Signature,
    pub block: Block,
    pub params: Vec<Param>,
    pub output: Output,
}

/// One parameter of a jitted function.
pub struct Param {
    pub ident: Ident,
    /// `mut` on the binding, carried over to the body's binding.
    pub mutability: Option<syn::token::Mut>,
    pub ty: Type,
    pub role: Role,
    pub passing: Passing,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// Traced, and its buffers may be reused for the outputs.
    Donated,
    /// Traced.
    Kept,
    /// Part of the cache key; the body sees its Rust value.
    Static,
}

pub enum Passing {
    /// `x: T`
    Value,
    /// `x: &T` (never `&mut`). `static_lifetime`: written `&'static T`.
    Ref {
        inner: Box<Type>,
        static_lifetime: bool,
    },
}

/// The declared return type.
pub enum Output {
    /// A nameable type: the closure of the expansion is annotated with it.
    Concrete(Box<Type>),
    /// `impl Trait` somewhere in it: it cannot be written on a closure, so it is inferred.
    Opaque,
}

/// A Rust scalar type that the runtime traces as a weakly typed 0-d array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Scalar {
    pub float: bool,
}

/// `f32 f64 i32 i64 u32 u8 i8 bool`, written as a bare name.
pub fn scalar_type(ty: &Type) -> Option<Scalar> {
    let name = bare_type_name(ty)?;
    match name.as_str() {
        "f32" | "f64" => Some(Scalar { float: true }),
        "i32" | "i64" | "u32" | "u8" | "i8" | "bool" => Some(Scalar { float: false }),
        _ => None,
    }
}

/// The name of a type written as one bare identifier (`usize`, `Array`), without generics.
pub(crate) fn bare_type_name(ty: &Type) -> Option<String> {
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

/// Parses the annotated item and checks it together with the options.
/// `None` when the item is not a function at all (already reported).
pub fn validate(cx: &mut Ctxt, attr: &JitAttr, item: Item) -> Option<JitFn> {
    let item = match item {
        Item::Fn(f) => f,
        other => {
            not_a_function(cx, &other);
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
    let mut params = check_params(cx, &mut sig);

    let n = sig.inputs.len();
    let names: Vec<Option<Ident>> = params_by_position(&sig);
    let donated = resolve(cx, &sig.ident, attr.donate.as_ref(), &names, n);
    let statics = resolve(cx, &sig.ident, attr.statics.as_ref(), &names, n);

    // Roles, and conflicts between them.
    let mut roles = vec![Role::Kept; n];
    for &(i, _) in &donated {
        roles[i] = Role::Donated;
    }
    for &(i, span) in &statics {
        if roles[i] == Role::Donated {
            let name = display_param(&names, i);
            cx.error(
                span,
                format!(
                    "{name} is both donated and static; a static argument is a Rust value in \
                     the cache key, a donated one is an array whose buffer XLA reuses: \
                     remove it from `donate` or from `static`"
                ),
            );
        }
        roles[i] = Role::Static;
    }

    // `params` holds only the parameters that had a plain name; match them up by position.
    for p in &mut params {
        let i = position_of(&names, &p.ident);
        p.role = roles[i];
    }
    if !attr.incomplete {
        for p in &params {
            check_param_role(cx, p);
        }
    }
    for (role, what, fix) in [
        (
            Role::Donated,
            "donated",
            "group them in a struct with #[derive(Tree)] and donate that",
        ),
        (
            Role::Kept,
            "traced",
            "group them in a struct with #[derive(Tree)]",
        ),
        (Role::Static, "static", "group them in a tuple or struct"),
    ] {
        let count = params.iter().filter(|p| p.role == role).count();
        if count > MAX_PER_ROLE {
            cx.error(
                sig.ident.span(),
                format!(
                    "#[jit] takes at most {MAX_PER_ROLE} {what} parameters, `{}` has {count}; {fix}",
                    sig.ident.unraw()
                ),
            );
        }
    }

    Some(JitFn {
        attrs,
        inner_attrs,
        vis,
        sig,
        block: *block,
        params,
        output,
    })
}

fn not_a_function(cx: &mut Ctxt, item: &Item) {
    let (span, what): (Span, &str) = match item {
        Item::Struct(i) => (i.struct_token.span, "a struct"),
        Item::Enum(i) => (i.enum_token.span, "an enum"),
        Item::Union(i) => (i.union_token.span, "a union"),
        Item::Const(i) => (i.const_token.span, "a const"),
        Item::Static(i) => (i.static_token.span, "a static"),
        Item::Impl(i) => (i.impl_token.span, "an impl block"),
        Item::Trait(i) => (i.trait_token.span, "a trait"),
        Item::Mod(i) => (i.mod_token.span, "a module"),
        Item::Type(i) => (i.type_token.span, "a type alias"),
        Item::Use(i) => (i.use_token.span, "a use declaration"),
        _ => {
            // e.g. a function without a body (a trait method's declaration).
            cx.error_spanned_by(
                item,
                "#[jit] applies to a free function with a body, e.g. \
                 `#[jit] fn f(x: Array) -> Array { .. }`",
            );
            return;
        }
    };
    cx.error(
        span,
        format!(
            "#[jit] applies to free functions, not to {what}: put it on a function, e.g. \
             `#[jit] fn f(x: Array) -> Array {{ .. }}`"
        ),
    );
}

/// Async, const, extern, methods, generics: the kinds of function jit cannot stand for.
fn check_function_kind(cx: &mut Ctxt, sig: &Signature) {
    if let Some(t) = &sig.constness {
        cx.error(
            t.span,
            "#[jit] cannot be applied to a `const fn`: calling a jitted function traces, \
             compiles and runs it on a device, which cannot happen at compile time; remove `const`",
        );
    }
    if let Some(t) = &sig.asyncness {
        cx.error(
            t.span,
            "#[jit] cannot be applied to an `async fn`: jit traces the body into one XLA \
             program when called, and an async fn returns a future instead of running its \
             body; remove `async` (a jitted call can run inside async code)",
        );
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(
            abi,
            "#[jit] cannot be applied to an `extern` function: the jitted function takes and \
             returns Rust values (arrays, trees); remove the ABI",
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "#[jit] cannot be applied to a variadic function");
    }
    for param in &sig.generics.params {
        let (span, what) = match param {
            GenericParam::Lifetime(_) => continue,
            GenericParam::Type(t) => (t.ident.span(), "type"),
            GenericParam::Const(c) => (c.ident.span(), "const"),
        };
        cx.error(
            span,
            format!(
                "#[jit] cannot be applied to a generic function: its compile cache is one \
                 `static`, shared by every instantiation, so the {what} parameter would mix \
                 different programs in one cache; use concrete types, or call `jaxrs::jit` on \
                 a closure inside the generic function"
            ),
        );
    }
    if let Some(FnArg::Receiver(r)) = sig.inputs.first() {
        cx.error_spanned_by(
            r,
            "#[jit] cannot be applied to a method: jit traces a free function of its \
             arguments; make `self` an ordinary parameter of a free function, \
             e.g. `fn forward(model: &Model, x: &Array) -> Array`",
        );
    }
}

fn check_output(cx: &mut Ctxt, sig: &Signature) -> Output {
    const MESSAGE: &str = "a jitted function must return arrays: its result is what XLA \
                           computes; declare a return type, e.g. `-> Array` or `-> (Params, Array)`";
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

/// Each parameter's name, binding and type; strips `mut` from the signature's bindings.
fn check_params(cx: &mut Ctxt, sig: &mut Signature) -> Vec<Param> {
    let mut params = Vec::new();
    for arg in sig.inputs.iter_mut() {
        let FnArg::Typed(pat_type) = arg else {
            continue; // a receiver, reported by check_function_kind
        };
        let ty = (*pat_type.ty).clone();
        let name = match &*pat_type.pat {
            Pat::Ident(p) => p.ident.unraw().to_string(),
            _ => "arg".to_string(),
        };
        let passing = check_param_type(cx, &name, &ty);
        let Pat::Ident(pat) = &mut *pat_type.pat else {
            let message = if matches!(&*pat_type.pat, Pat::Wild(_)) {
                format!(
                    "give this parameter a name, e.g. `_unused: {}`: #[jit] passes each \
                     parameter to the runtime by its name",
                    type_string(&ty)
                )
            } else {
                format!(
                    "give this parameter a name, e.g. `arg: {}`, and destructure it inside \
                     the body: #[jit] passes each parameter to the runtime by its name",
                    type_string(&ty)
                )
            };
            cx.error_spanned_by(&pat_type.pat, message);
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
        let mutability = pat.mutability.take();
        let Some(passing) = passing else { continue };
        params.push(Param {
            ident: pat.ident.clone(),
            mutability,
            ty,
            role: Role::Kept,
            passing,
        });
    }
    params
}

/// `&mut T` and `impl Trait` are errors; `&T` is passed by reference.
fn check_param_type(cx: &mut Ctxt, name: &str, ty: &Type) -> Option<Passing> {
    if contains_impl_trait(ty) {
        cx.error_spanned_by(
            ty,
            "#[jit] cannot take an `impl Trait` parameter: it makes the function generic, and \
             the compile cache of a jitted function is one `static` shared by every \
             instantiation; use a concrete type",
        );
        return None;
    }
    match ty {
        Type::Reference(r) if r.mutability.is_some() => {
            cx.error_spanned_by(
                ty,
                format!(
                    "a jitted function is pure, it cannot write through `&mut`: take \
                     `{name}: {elem}` (or `&{elem}`) and return the updated value",
                    elem = type_string(&r.elem)
                ),
            );
            None
        }
        Type::Reference(r) => Some(Passing::Ref {
            inner: r.elem.clone(),
            static_lifetime: r.lifetime.as_ref().is_some_and(|l| l.ident == "static"),
        }),
        _ => Some(Passing::Value),
    }
}

pub(crate) fn contains_impl_trait(ty: &Type) -> bool {
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

/// The name of each parameter by position; `None` where it has no name or is `self`.
/// Parameters whose type was rejected keep their name, so that the options naming them do
/// not report a second, misleading error.
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

fn position_of(names: &[Option<Ident>], ident: &Ident) -> usize {
    names
        .iter()
        .position(|n| n.as_ref() == Some(ident))
        .expect("every named parameter has a position")
}

fn display_param(names: &[Option<Ident>], i: usize) -> String {
    match &names[i] {
        Some(name) => format!("`{}` (parameter {i})", name.unraw()),
        None => format!("parameter {i}"),
    }
}

/// Resolves an option's parameters to positions, reporting indices out of range, unknown
/// names and repeats. Returns each position once, with the span that named it.
fn resolve(
    cx: &mut Ctxt,
    fn_name: &Ident,
    list: Option<&ArgList>,
    names: &[Option<Ident>],
    n: usize,
) -> Vec<(usize, Span)> {
    let Some(list) = list else {
        return Vec::new();
    };
    let key = list.key.unraw();
    let mut resolved: Vec<(usize, Span)> = Vec::new();
    for arg in &list.args {
        let position = match arg {
            ArgRef::Index { index, span } => {
                if *index < n {
                    Some(*index)
                } else {
                    let f = fn_name.unraw();
                    let message = match n {
                        0 => format!("`{f}` has no parameters, so index {index} is out of range"),
                        1 => format!(
                            "`{f}` has 1 parameter, index {index} is out of range: \
                             indices count from 0, so the only one is 0"
                        ),
                        _ => format!(
                            "`{f}` has {n} parameters, index {index} is out of range: \
                             indices count from 0, so the last is {}",
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
                    .position(|n| n.as_ref().is_some_and(|n| n.unraw() == wanted));
                if found.is_none() {
                    let list = names
                        .iter()
                        .flatten()
                        .map(|n| format!("`{}`", n.unraw()))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let listing = if list.is_empty() {
                        "it has no named parameters".to_string()
                    } else {
                        format!("its parameters are {list}")
                    };
                    cx.error(
                        ident.span(),
                        format!(
                            "`{wanted}` is not a parameter of `{}`; {listing}",
                            fn_name.unraw()
                        ),
                    );
                }
                found
            }
        };
        let Some(position) = position else { continue };
        if resolved.iter().any(|&(p, _)| p == position) {
            cx.error(
                arg.span(),
                format!(
                    "{} is listed twice in `{key}`; name each parameter once",
                    display_param(names, position)
                ),
            );
            continue;
        }
        resolved.push((position, arg.span()));
    }
    resolved
}

/// What a role requires of the parameter's type, as far as syntax can tell.
fn check_param_role(cx: &mut Ctxt, p: &Param) {
    let name = p.ident.unraw();
    match (p.role, &p.passing) {
        (Role::Donated, Passing::Ref { inner, .. }) => cx.error_spanned_by(
            &p.ty,
            format!(
                "`{name}` is donated, and donation takes ownership: declare `{name}: {}` \
                 (the caller then cannot use the donated value again)",
                type_string(inner)
            ),
        ),
        (Role::Donated | Role::Kept, passing) => {
            let ty = match passing {
                Passing::Value => &p.ty,
                Passing::Ref { inner, .. } => inner,
            };
            if let Some(type_name) = untraceable_type(ty) {
                cx.error_spanned_by(
                    &p.ty,
                    format!(
                        "`{name}: {}` would be traced, but `{type_name}` is not an array type; \
                         if the body needs its Rust value, make it static: \
                         `#[jit(static = {name})]`",
                        type_string(&p.ty)
                    ),
                );
            }
        }
        (Role::Static, _) => {}
    }
}

/// Common Rust types that have no array dtype, so cannot be traced.
pub(crate) fn untraceable_type(ty: &Type) -> Option<String> {
    let name = bare_type_name(ty)?;
    matches!(name.as_str(), "usize" | "isize" | "char" | "String" | "str").then_some(name)
}

/// A type as a user would write it: `&'static str`, not `& 'static str`.
pub fn type_string(ty: &Type) -> String {
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
