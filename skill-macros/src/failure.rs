//! `#[derive(FailureModes)]`: the failure modes of a skill's error enum.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, LitStr};

use crate::args::List;
use crate::ast::func::doc_text;
use crate::ast::read::{flag, nodes, str_lit};
use skill_core::names::is_snake_case;

use crate::check::to_snake_case;
use crate::errors::Errors;

pub fn expand(input: DeriveInput) -> TokenStream {
    let cx = Errors::new();
    let ident = &input.ident;
    let Data::Enum(data) = &input.data else {
        return syn::Error::new_spanned(
            ident,
            "#[derive(FailureModes)] goes on an enum with one variant per failure mode",
        )
        .into_compile_error();
    };
    let mut modes = Vec::new();
    let mut seen: Vec<(String, syn::Ident)> = Vec::new();
    for v in &data.variants {
        let mut code = to_snake_case(&v.ident.to_string());
        let mut code_span = None;
        let mut retryable = false;
        for attr in v.attrs.iter().filter(|a| a.path().is_ident("failure")) {
            let list = match &attr.meta {
                syn::Meta::List(l) => syn::parse2::<List>(l.tokens.clone()),
                _ => Err(syn::Error::new_spanned(
                    attr,
                    "expected `#[failure(retryable)]` or `#[failure(code = \"...\")]`",
                )),
            };
            let list = match list {
                Ok(l) => l,
                Err(e) => {
                    cx.push(e);
                    continue;
                }
            };
            for node in nodes(&cx, list, "#[failure]", &["retryable", "code"], &[]) {
                if node.key() == "retryable" {
                    retryable = flag(&cx, &node);
                } else if let Some(c) = str_lit(&cx, &node) {
                    code = c.value();
                    code_span = Some(c);
                }
            }
        }
        if !is_snake_case(&code) {
            match &code_span {
                Some(s) => cx.error_spanned(s, format!("failure code \"{code}\" is not snake_case")),
                None => cx.error_spanned(&v.ident, format!("failure code `{code}` derived from this variant is not snake_case; add `#[failure(code = \"...\")]`")),
            }
        }
        if let Some((_, first)) = seen.iter().find(|(c, _)| *c == code) {
            let at = code_span.as_ref().map_or(v.ident.span(), LitStr::span);
            cx.error_at(
                at,
                format!("failure code \"{code}\" is already the code of `{first}`; callers tell failures apart by code, so give `{}` its own with `#[failure(code = \"...\")]`", v.ident),
            );
        } else {
            seen.push((code.clone(), v.ident.clone()));
        }
        let Some((description, _)) = doc_text(&v.attrs) else {
            cx.error_spanned(&v.ident, format!("failure mode `{}` has no description; add a doc comment saying when it happens", v.ident));
            continue;
        };
        let code = LitStr::new(&code, v.ident.span());
        modes.push((v.ident.clone(), code, description, retryable));
    }
    // With errors, the impl is still emitted (with a body never run) so that
    // the skills using the type get no second error about it.
    let errors = cx.into_result().err().map(syn::Error::into_compile_error);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let p = quote!(::skill_runtime::__private_v2);
    let entries = modes.iter().map(|(_, code, description, retryable)| {
        quote!(#p::FailureMode { code: #code, description: #description, retryable: #retryable })
    });
    let arms = modes.iter().enumerate().map(
        |(i, (v, ..))| quote!(Self::#v { .. } => &<Self as #p::FailureModes>::FAILURE_MODES[#i]),
    );
    let body = if errors.is_some() {
        quote!(::core::unreachable!())
    } else if modes.is_empty() {
        quote!(match *self {})
    } else {
        quote!(match self { #(#arms,)* })
    };
    quote! {
        #errors
        impl #impl_generics #p::FailureModes for #ident #ty_generics #where_clause {
            const FAILURE_MODES: &'static [#p::FailureMode] = &[#(#entries),*];
            fn failure_mode(&self) -> &'static #p::FailureMode {
                #body
            }
        }
    }
}
