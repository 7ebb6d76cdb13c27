//! The grammar the options of `#[jit]`, `#[remat]` and `#[vmap]` share: a comma-separated
//! list of `key = value`, each option parsed on its own so that a mistake in one does not
//! hide a mistake in another, and parameters named by position or by name. What a value
//! means is each macro's own.

use crate::ctxt::Ctxt;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Lit, Token};

/// What one macro's options are called, for the messages about them.
pub struct Grammar {
    /// `jit`, for `#[jit]`.
    pub name: &'static str,
    /// The valid option names, in the order error messages list them.
    pub keys: &'static [&'static str],
    /// How the list of valid options is joined: `" and "` or `", "`.
    pub keys_joined_by: &'static str,
    /// The options as one expected where a `,` is extra: "`donate = ...` or `static = ...`".
    pub expected_at_comma: &'static str,
    /// The options as one expected where no key is: "`donate = <parameters>` or ...".
    pub expected_at_start: &'static str,
    /// The example value of `key` for "expected `=` after `key`, as in `key = 0`".
    pub example_value: fn(&str) -> &'static str,
    /// Said after "unknown option `name` ...; the valid options are ...", if anything.
    pub unknown_key_hint: fn(&str) -> Option<String>,
}

/// Splits `a = 1, b = (2, 3)` into `a = 1` and `b = (2, 3)`. A trailing comma is allowed;
/// an empty option in the middle (`a = 1,, b = 2`) is an error.
pub fn split_top_level_commas(cx: &mut Ctxt, g: &Grammar, tokens: TokenStream) -> Vec<TokenStream> {
    let mut entries = Vec::new();
    let mut current = Vec::<TokenTree>::new();
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                if current.is_empty() {
                    cx.error(
                        p.span(),
                        format!(
                            "unexpected `,`: expected an option, {}",
                            g.expected_at_comma
                        ),
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

/// `key =`: a known key, then `=`. Returns the key and its unraw name.
pub fn parse_key(input: ParseStream, g: &Grammar) -> syn::Result<(Ident, String)> {
    let key = input.call(Ident::parse_any).map_err(|_| {
        input.error(format!(
            "expected an option of #[{}]: {}",
            g.name, g.expected_at_start
        ))
    })?;
    let name = key.unraw().to_string();
    if !g.keys.contains(&name.as_str()) {
        let valid = g
            .keys
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(g.keys_joined_by);
        let mut message = format!(
            "unknown option `{name}` of #[{}]; the valid options are {valid}",
            g.name
        );
        message.push_str(&(g.unknown_key_hint)(&name).unwrap_or_default());
        return Err(syn::Error::new(key.span(), message));
    }
    if !input.peek(Token![=]) {
        let message = format!(
            "expected `=` after `{name}`, as in `{name} = {}`",
            (g.example_value)(&name)
        );
        return Err(if input.is_empty() {
            syn::Error::new(key.span(), message)
        } else {
            input.error(message)
        });
    }
    input.parse::<Token![=]>()?;
    Ok((key, name))
}

/// Nothing may follow an option's value but the next `,`: "unexpected tokens after the value
/// of `name`; separate options with `,`", then `more`.
pub fn expect_end(input: ParseStream, name: &str, more: &str) -> syn::Result<()> {
    if input.is_empty() {
        return Ok(());
    }
    Err(input.error(format!(
        "unexpected tokens after the value of `{name}`; separate options with `,`{more}"
    )))
}

/// `(a, b, ...)`, each entry parsed by `one`; `between` is the error for a missing `,`.
/// Returns the entries and the span of the parentheses.
pub fn parse_parenthesised<T>(
    input: ParseStream,
    one: impl Fn(ParseStream) -> syn::Result<T>,
    between: impl FnOnce() -> String,
) -> syn::Result<(Vec<T>, Span)> {
    let content;
    let parens = syn::parenthesized!(content in input);
    let mut entries = Vec::new();
    while !content.is_empty() {
        entries.push(one(&content)?);
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(content.error(between()));
        }
        content.parse::<Token![,]>()?;
    }
    Ok((entries, parens.span.join()))
}

/// The parameters one option names.
pub struct ArgList {
    /// The option's name as written, for error spans.
    pub key: Ident,
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

/// The value of an option that names parameters: `0`, `lr`, or `(0, lr, ...)`. `names` are
/// the two parameter names the messages' examples use (`params`, `lr`).
pub fn parse_params(
    input: ParseStream,
    key: &str,
    names: (&str, &str),
) -> syn::Result<Vec<ArgRef>> {
    if input.is_empty() {
        return Err(input.error(malformed_message(key, names)));
    }
    // A parenthesised list arrives as one group token.
    if input.cursor().group(Delimiter::Parenthesis).is_none() {
        return Ok(vec![parse_param(input, key, names)?]);
    }
    let (args, span) = parse_parenthesised(
        input,
        |content| parse_param(content, key, names),
        || format!("expected `,` between the parameters of `{key}`, as in `{key} = (0, 1)`"),
    )?;
    if args.is_empty() {
        return Err(syn::Error::new(
            span,
            format!(
                "`{key} = ()` names no parameter; remove `{key}` or name one, e.g. `{key} = 0`"
            ),
        ));
    }
    Ok(args)
}

/// One parameter: an index or a name.
fn parse_param(input: ParseStream, key: &str, names: (&str, &str)) -> syn::Result<ArgRef> {
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
            Lit::Float(f) => Err(syn::Error::new(
                f.span(),
                format!(
                    "`{f}` is not a parameter index; indices are whole numbers counted \
                     from 0, e.g. `{key} = 1`"
                ),
            )),
            other => Err(syn::Error::new(other.span(), malformed_message(key, names))),
        };
    }
    Err(input.error(malformed_message(key, names)))
}

fn malformed_message(key: &str, (a, b): (&str, &str)) -> String {
    format!(
        "expected a parameter index or name, or a parenthesised list of them: \
         `{key} = 0`, `{key} = {a}` or `{key} = (0, {b})`"
    )
}

/// Parses each of the attribute's comma-separated options with `parse_option` and hands each
/// valid one to `set`, recording every mistake in `cx`. Returns whether some option could not
/// be parsed, so that checks which depend on every option do not run.
pub fn parse_options<O>(
    cx: &mut Ctxt,
    g: &Grammar,
    tokens: TokenStream,
    parse_option: impl Parser<Output = O> + Copy,
    mut set: impl FnMut(&mut Ctxt, O),
) -> bool {
    let errors_before = cx.error_count();
    for entry in split_top_level_commas(cx, g, tokens) {
        match parse_option.parse2(entry) {
            Ok(option) => set(cx, option),
            Err(e) => cx.syn_error(e),
        }
    }
    cx.error_count() > errors_before
}
