//! Transformation attributes stacked on one function.
//!
//! Attributes compose like decorators, outermost first: `#[jit] #[vmap(..)] fn f` is
//! `jit(vmap(f))`. Rust expands the outermost attribute first, with the others still on the
//! item, so each transformation macro takes the transformation attributes below it off the
//! function and puts them on an inner function with the same signature and body, which its
//! own expansion calls: they then apply inside it.

use syn::Attribute;

/// The attribute macros of jaxrs that transform a function.
const TRANSFORMS: &[&str] = &[
    "jit",
    "vmap",
    "grad",
    "value_and_grad",
    "scan",
    "remat",
    "pmap",
    "pjit",
];

/// Is `attr` one of jaxrs's transformations (`#[vmap(..)]`, `#[jaxrs::vmap(..)]`, ...)?
pub fn is_transform(attr: &Attribute) -> bool {
    if !matches!(attr.style, syn::AttrStyle::Outer) {
        return false;
    }
    let segments: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segments.as_slice() {
        [name] => TRANSFORMS.contains(&name.as_str()),
        [krate, name] if krate == "jaxrs" => TRANSFORMS.contains(&name.as_str()),
        _ => false,
    }
}

/// Splits the attributes into the transformations (in order) and the others.
pub fn split(attrs: Vec<Attribute>) -> (Vec<Attribute>, Vec<Attribute>) {
    attrs.into_iter().partition(is_transform)
}
