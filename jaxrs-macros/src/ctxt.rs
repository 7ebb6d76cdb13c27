//! Collects every error a macro finds, so one build reports them all.
//!
//! Parsing and validation push errors here and carry on with what they could make sense of;
//! expansion runs only when nothing was pushed.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::fmt::Display;

#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn new() -> Ctxt {
        Ctxt::default()
    }

    /// Records an error pointing at `span`.
    pub fn error(&mut self, span: Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records an error pointing at all of `tokens` (first to last token).
    pub fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error syn produced.
    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// How many errors were recorded so far; compare two counts to tell whether a step failed.
    pub fn error_count(&self) -> usize {
        self.errors.len()
    }

    /// All errors as one, or `Ok` if there were none.
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            combined.combine(e);
        }
        Err(combined)
    }

    /// The errors as `compile_error!` invocations, one per error, each at its span.
    pub fn into_compile_errors(self) -> TokenStream {
        match self.check() {
            Ok(()) => TokenStream::new(),
            Err(e) => e.to_compile_error(),
        }
    }
}
