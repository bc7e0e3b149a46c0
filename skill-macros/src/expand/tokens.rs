//! Small token helpers the generators share: the runtime's path, respanning,
//! literals and the manifest's variant and slice expressions.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Ident, LitStr, Path};

use crate::ast::types::{Choice, SkillArgs};

pub fn runtime_path(args: &SkillArgs) -> Path {
    args.krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::skill_runtime))
}

/// Give every token of `tokens` the span `span`, so a type error in generated
/// code lands on the user's token (for example a path that is not a capability).
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = group.into();
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

pub(super) fn some(s: &LitStr) -> TokenStream {
    quote!(::core::option::Option::Some(#s))
}

pub(super) fn opt_str(s: &Option<LitStr>) -> TokenStream {
    s.as_ref()
        .map(some)
        .unwrap_or_else(|| quote!(::core::option::Option::None))
}

pub(super) fn variant(p: &TokenStream, ty: &str, c: Choice) -> TokenStream {
    let ty = Ident::new(ty, Span::call_site());
    let v = Ident::new(c.variant, c.span);
    quote!(#p::#ty::#v)
}

/// The chosen variant, or `default` when the key was not given.
pub(super) fn variant_or(
    p: &TokenStream,
    ty: &str,
    chosen: Option<Choice>,
    default: &'static str,
) -> TokenStream {
    let c = chosen.unwrap_or(Choice {
        variant: default,
        span: Span::call_site(),
    });
    variant(p, ty, c)
}

/// `&[items...]`, or `None` for no items (the default's empty slice).
pub(super) fn slice<T: ToTokens>(items: &[T]) -> Option<TokenStream> {
    (!items.is_empty()).then(|| quote!(&[#(#items),*]))
}
