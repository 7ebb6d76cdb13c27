//! Checks of the annotated function that the transformation macros share: what kind of
//! function it is, its return type, its parameters' bindings and types. The messages name
//! the macro; the rules live here once.

use crate::ctxt::Ctxt;
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit::Visit;
use syn::{Attribute, FnArg, Ident, Item, Pat, PatIdent, ReturnType, Signature, Type};

/// How a parameter is taken.
pub enum Passing {
    /// `x: T`
    Value,
    /// `x: &T` (never `&mut`). `static_lifetime`: written `&'static T`.
    Ref {
        inner: Box<Type>,
        static_lifetime: bool,
    },
}

impl Passing {
    /// `T` for `x: T` and for `x: &T`.
    pub fn inner<'a>(&'a self, ty: &'a Type) -> &'a Type {
        match self {
            Passing::Value => ty,
            Passing::Ref { inner, .. } => inner,
        }
    }
}

/// How `ty` is taken, or `Err` with the referenced type for `&mut T`.
pub fn passing_of(ty: &Type) -> Result<Passing, &Type> {
    match ty {
        Type::Reference(r) if r.mutability.is_some() => Err(&r.elem),
        Type::Reference(r) => Ok(Passing::Ref {
            inner: r.elem.clone(),
            static_lifetime: r.lifetime.as_ref().is_some_and(|l| l.ident == "static"),
        }),
        _ => Ok(Passing::Value),
    }
}

/// The declared return type.
pub enum Output {
    /// A nameable type: the closure of the expansion is annotated with it.
    Concrete(Box<Type>),
    /// `impl Trait` somewhere in it: it cannot be written on a closure, so it is inferred.
    Opaque,
}

/// The return type; no return type, or `()`, is reported with `message` (a transformed
/// function returns arrays).
pub fn check_output(cx: &mut Ctxt, sig: &Signature, message: &str) -> Output {
    match &sig.output {
        ReturnType::Default => {
            cx.error(sig.ident.span(), message);
            Output::Opaque
        }
        ReturnType::Type(_, ty) => {
            if matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) {
                cx.error_spanned_by(ty, message);
                Output::Opaque
            } else if contains_impl_trait(ty) {
                Output::Opaque
            } else {
                Output::Concrete(ty.clone())
            }
        }
    }
}

/// What each macro says about function kinds it cannot stand for.
pub struct KindMessages {
    /// `jit`, for `#[jit] cannot be applied to a variadic function`.
    pub macro_name: &'static str,
    pub const_fn: &'static str,
    pub async_fn: &'static str,
    pub extern_fn: &'static str,
}

/// `const`, `async`, `extern` and variadic functions, in that order. Methods and generics are
/// each macro's own rule.
pub fn check_function_kind(cx: &mut Ctxt, sig: &Signature, messages: &KindMessages) {
    if let Some(t) = &sig.constness {
        cx.error(t.span, messages.const_fn);
    }
    if let Some(t) = &sig.asyncness {
        cx.error(t.span, messages.async_fn);
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, messages.extern_fn);
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(
            v,
            format!(
                "#[{}] cannot be applied to a variadic function",
                messages.macro_name
            ),
        );
    }
}

/// The keyword of an item that is not a function, and what to call it; `None` for other
/// items (e.g. a function without a body).
pub fn item_keyword(item: &Item) -> Option<(Span, &'static str)> {
    Some(match item {
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
        _ => return None,
    })
}

/// Inner attributes (`#![...]` at the top of the body), then the outer ones.
pub fn split_inner_attrs(attrs: Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    attrs
        .into_iter()
        .partition(|a| matches!(a.style, syn::AttrStyle::Inner(_)))
}

/// The binding of a parameter that must be a plain name (`x`, `mut x`). A pattern is
/// reported with `unnamed(is_wildcard, type)`, and `ref x` or `x @ ..` asks for a plain
/// name.
pub fn plain_binding<'a>(
    cx: &mut Ctxt,
    pat: &'a mut Pat,
    ty: &Type,
    unnamed: impl FnOnce(bool, &str) -> String,
) -> Option<&'a mut PatIdent> {
    let Pat::Ident(ident) = pat else {
        let message = unnamed(matches!(pat, Pat::Wild(_)), &type_string(ty));
        cx.error_spanned_by(&*pat, message);
        return None;
    };
    if ident.by_ref.is_some() || ident.subpat.is_some() {
        cx.error_spanned_by(
            &*ident,
            format!(
                "give this parameter a plain name, e.g. `{}: {}`",
                ident.ident,
                type_string(ty)
            ),
        );
        return None;
    }
    Some(ident)
}

/// `a {what} function is pure, it cannot write through `&mut``, for `name: &mut elem`.
pub fn mut_ref_message(what: &str, name: &str, elem: &Type) -> String {
    format!(
        "a {what} function is pure, it cannot write through `&mut`: take \
         `{name}: {elem}` (or `&{elem}`) and return the updated value",
        elem = type_string(elem)
    )
}

/// A Rust scalar type that the runtime traces as a weakly typed 0-d array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Scalar {
    pub float: bool,
}

/// `f32 f64 i32 i64 u64 u32 i16 u16 u8 i8 bool`, written as a bare name. (`usize` and
/// `isize` are refused instead, see [`untraceable_type`]: they are sizes and indices, which a
/// body almost always needs as Rust values.)
pub fn scalar_type(ty: &Type) -> Option<Scalar> {
    let name = bare_type_name(ty)?;
    match name.as_str() {
        "f32" | "f64" => Some(Scalar { float: true }),
        "i32" | "i64" | "u64" | "u32" | "i16" | "u16" | "u8" | "i8" | "bool" => {
            Some(Scalar { float: false })
        }
        _ => None,
    }
}

/// The name of a type written as one bare identifier (`usize`, `Array`), without generics.
pub fn bare_type_name(ty: &Type) -> Option<String> {
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

/// Common Rust types that have no array dtype, so cannot be traced.
pub fn untraceable_type(ty: &Type) -> Option<String> {
    let name = bare_type_name(ty)?;
    matches!(name.as_str(), "usize" | "isize" | "char" | "String" | "str").then_some(name)
}

pub fn contains_impl_trait(ty: &Type) -> bool {
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
pub fn params_by_position(sig: &Signature) -> Vec<Option<Ident>> {
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
