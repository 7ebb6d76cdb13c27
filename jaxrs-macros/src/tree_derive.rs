//! `#[derive(Tree)]`: parse the struct into a list of fields, check it is a struct, generate
//! `flatten_into`, `structure` and `unflatten_from` over the fields in declaration order.

use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Generics, Ident, Member, Type};

/// A struct the derive accepts.
struct TreeStruct {
    name: Ident,
    generics: Generics,
    shape: Shape,
    fields: Vec<Field>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Named,
    Tuple,
    Unit,
}

struct Field {
    member: Member,
    /// The name recorded in the structure: the field's name, or its index.
    label: String,
    ty: Type,
}

pub fn derive(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let mut cx = Ctxt::new();
    let parsed = parse(&mut cx, input);
    match (cx.check(), parsed) {
        (Ok(()), Some(s)) => expand(&s),
        (Err(e), _) => e.to_compile_error(),
        (Ok(()), None) => unreachable!("parse reports why it returns None"),
    }
}

fn parse(cx: &mut Ctxt, input: DeriveInput) -> Option<TreeStruct> {
    let data = match input.data {
        Data::Struct(data) => data,
        Data::Enum(e) => {
            cx.error(
                e.enum_token.span,
                format!(
                    "#[derive(Tree)] supports structs only, and `{}` is an enum; implement \
                     `jaxrs::Tree` for it by hand (its structure may depend on the variant), \
                     or hold the variants' arrays in a struct",
                    input.ident
                ),
            );
            return None;
        }
        Data::Union(u) => {
            cx.error(
                u.union_token.span,
                format!(
                    "#[derive(Tree)] supports structs only, and `{}` is a union: a tree must \
                     know which of its fields hold arrays",
                    input.ident
                ),
            );
            return None;
        }
    };
    let (shape, fields) = match data.fields {
        Fields::Named(named) => (
            Shape::Named,
            named
                .named
                .into_iter()
                .map(|f| {
                    let ident = f.ident.expect("named fields have names");
                    Field {
                        label: ident.unraw().to_string(),
                        member: Member::Named(ident),
                        ty: f.ty,
                    }
                })
                .collect(),
        ),
        Fields::Unnamed(unnamed) => (
            Shape::Tuple,
            unnamed
                .unnamed
                .into_iter()
                .enumerate()
                .map(|(i, f)| Field {
                    label: i.to_string(),
                    member: Member::Unnamed(syn::Index {
                        index: i as u32,
                        span: f.ty.span(),
                    }),
                    ty: f.ty,
                })
                .collect(),
        ),
        Fields::Unit => (Shape::Unit, Vec::new()),
    };
    Some(TreeStruct {
        name: input.ident,
        generics: input.generics,
        shape,
        fields,
    })
}

fn expand(s: &TreeStruct) -> TokenStream {
    let private = quote!(::jaxrs::__private);
    let name = &s.name;
    let name_str = name.unraw().to_string();

    // `T: Tree` for every type parameter.
    let mut generics = s.generics.clone();
    let type_params: Vec<Ident> = generics.type_params().map(|t| t.ident.clone()).collect();
    {
        let where_clause = generics.make_where_clause();
        for t in &type_params {
            where_clause
                .predicates
                .push(syn::parse_quote!(#t: #private::Tree));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    let leaves = if s.fields.is_empty() {
        Ident::new("_leaves", Span::call_site())
    } else {
        Ident::new("leaves", Span::call_site())
    };

    // Spanned at each field's type, so that "`Foo: Tree` is not satisfied" points at it.
    // The trait's path is spanned too, so that every error about a field points at it.
    let tree_at = |ty: &Type| quote_spanned!(ty.span()=> <#ty as ::jaxrs::__private::Tree>);
    let flatten = s.fields.iter().map(|f| {
        let member = &f.member;
        let tree = tree_at(&f.ty);
        quote_spanned!(f.ty.span()=> #tree::flatten_into(&self.#member, #leaves);)
    });
    let structure = s.fields.iter().map(|f| {
        let member = &f.member;
        let label = &f.label;
        let tree = tree_at(&f.ty);
        quote_spanned!(f.ty.span()=> (#label, #tree::structure(&self.#member)))
    });
    let count = s.fields.len();
    let labels_match = s.fields.iter().enumerate().map(|(i, f)| {
        let label = &f.label;
        quote!(&& fields[#i].0 == #label)
    });
    let rebuilt = s.fields.iter().enumerate().map(|(i, f)| {
        let tree = tree_at(&f.ty);
        let value = quote_spanned!(f.ty.span()=> #tree::unflatten_from(&fields[#i].1, #leaves)?);
        match &f.member {
            Member::Named(ident) => quote!(#ident: #value),
            Member::Unnamed(_) => value,
        }
    });
    let construct = match s.shape {
        Shape::Named => quote!(Self { #(#rebuilt),* }),
        Shape::Tuple => quote!(Self( #(#rebuilt),* )),
        Shape::Unit => quote!(Self),
    };
    // What unflattening expected, for the mismatch error: `Params { w, b }`.
    let labels: Vec<&str> = s.fields.iter().map(|f| f.label.as_str()).collect();
    let expected = if labels.is_empty() {
        format!("{name_str} {{}}")
    } else {
        format!("{name_str} {{ {} }}", labels.join(", "))
    };
    let fields_pat = if s.fields.is_empty() {
        quote!(fields: _fields)
    } else {
        quote!(fields)
    };
    let labels_match = if s.fields.is_empty() {
        quote!(&&_fields.is_empty())
    } else {
        quote!(&& fields.len() == #count #(#labels_match)*)
    };

    quote! {
        #[automatically_derived]
        impl #impl_generics #private::Tree for #name #ty_generics #where_clause {
            fn flatten_into(&self, #leaves: &mut ::std::vec::Vec<#private::Array>) {
                #(#flatten)*
            }

            fn structure(&self) -> #private::TreeDef {
                #private::TreeDef::Struct {
                    name: #name_str,
                    fields: ::std::vec![#(#structure),*],
                }
            }

            fn unflatten_from(
                def: &#private::TreeDef,
                #leaves: &mut dyn ::core::iter::Iterator<Item = #private::Array>,
            ) -> ::core::result::Result<Self, #private::TreeMismatch> {
                match def {
                    #private::TreeDef::Struct { name, #fields_pat }
                        if *name == #name_str #labels_match =>
                    {
                        ::core::result::Result::Ok(#construct)
                    }
                    _ => ::core::result::Result::Err(#private::TreeMismatch::new(#expected, def)),
                }
            }
        }
    }
}
