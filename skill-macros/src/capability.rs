//! `#[capability(...)]`: declare a capability on a struct.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{ItemStruct, LitStr, Path, Type};

use skill_core::capability::{EffectType, Operation};
use skill_core::names::is_capability_id;
use skill_core::words::Word;

use crate::args::{List, NodeKind};
use crate::ast::func::doc_text;
use crate::ast::read::{choice, nodes, str_lit};
use crate::ast::types::Choice;
use crate::errors::Errors;

const KEYS: &[&str] = &["id", "effect", "operation", "resource", "ambient", "crate"];

pub fn expand(args: List, item: ItemStruct) -> TokenStream {
    let cx = Errors::new();
    let mut id: Option<LitStr> = None;
    let mut effect: Option<Choice> = None;
    let mut operation: Option<Choice> = None;
    let mut resource: Option<Type> = None;
    let mut krate: Option<Path> = None;
    let mut ambient = Vec::new();
    // The keys written, right or wrong: a wrong value is reported at the
    // value, and not again as a missing key.
    let mut written: Vec<String> = Vec::new();
    for node in nodes(&cx, args, "#[capability]", KEYS, &[]) {
        written.push(node.key());
        match node.key().as_str() {
            "ambient" => {
                ambient = crate::ast::skill_args::ambient(
                    &cx,
                    node,
                    "this capability's resource may reach it beyond the capability's effect",
                )
            }
            "id" => id = str_lit(&cx, &node),
            "effect" => effect = choice(&cx, &node, EffectType::WORDS),
            "operation" => operation = choice(&cx, &node, Operation::WORDS),
            "resource" => match &node.kind {
                NodeKind::Value(syn::Expr::Path(p)) => {
                    let path = &p.path;
                    resource = Some(syn::parse_quote!(#path));
                }
                _ => cx.error_at(
                    node.span(),
                    "`resource` takes a type, like `resource = SeoDb`",
                ),
            },
            _ => {
                krate = str_lit(&cx, &node).and_then(|s| {
                    s.parse::<Path>()
                        .map_err(|_| {
                            cx.error_spanned(
                                &s,
                                "`crate` takes a path, like `crate = \"::skill_runtime\"`",
                            )
                        })
                        .ok()
                })
            }
        }
    }
    let ident = &item.ident;
    let missing = |key: &str| !written.iter().any(|k| k == key);
    if missing("id") {
        cx.error_spanned(
            ident,
            "#[capability] needs `id = \"domain.verb\"`, like `id = \"database.write\"`",
        );
    }
    if missing("effect") {
        cx.error_spanned(ident, "#[capability] needs `effect = \"...\"`: database, file, api, event, cache, network, process or none");
    }
    if missing("operation") {
        cx.error_spanned(
            ident,
            "#[capability] needs `operation = \"...\"`: read, write, delete, upsert or execute",
        );
    }
    if let Some(id) = &id
        && !is_capability_id(&id.value())
    {
        cx.error_spanned(id, format!("capability id \"{}\" is not of the form `domain.verb` (two lowercase snake_case words joined by one dot, like \"database.write\")", id.value()));
    }
    if !item.generics.params.is_empty() {
        cx.error_spanned(
            &item.generics,
            "a capability is a plain struct without generics",
        );
        let e = cx.into_result().err().map(|e| e.into_compile_error());
        return quote!(#e #item);
    }
    let description = doc_text(&item.attrs);
    if description.is_none() {
        cx.error_spanned(
            ident,
            "capability has no description; add a doc comment saying what it allows",
        );
    }
    // With a mistake, the errors and the capability all the same, its
    // missing or wrong parts filled in: the skills that declare it, its side
    // effects and its resource then add no error of their own (one mistake,
    // one error). The build fails on the errors, so the filler never runs.
    let errors = cx.into_result().err().map(|e| e.into_compile_error());
    let id = id.unwrap_or_else(|| LitStr::new("invalid.capability", Span::call_site()));
    let description = description.map(|(d, _)| d).unwrap_or_default();
    let effect = effect.map_or("None", |c| c.variant);
    let operation = operation.map_or("Read", |c| c.variant);
    let krate = krate.unwrap_or_else(|| syn::parse_quote!(::skill_runtime));
    let p = quote!(#krate::__private_v2);
    // A resource is handed out by reference, for the call: one that is
    // `Clone` could be copied out of it (into a static, a task), and what
    // the capability grants with it.
    let not_clone = resource.as_ref().map(|r| {
        let name = quote!(#r).to_string().replace(' ', "");
        let msg = format!(
            "the resource of capability `{ident}`, `{name}`, is `Clone`: a clone would carry what the capability grants out of the call it was handed to (into a static, a task); make it a type that is not `Clone` (wrap a cloneable client in a struct of your own), and share state through fields it keeps private"
        );
        let check = quote!(if #p::TypeProbe::<#r>::IS_CLONE { ::core::panic!(#msg) });
        let check = crate::expand::tokens::respan(check, r.span());
        quote! {
            const _: () = {
                #[allow(unused_imports)]
                use #p::AnyType as _;
                #check
            };
        }
    });
    let resource = resource.unwrap_or_else(|| syn::parse_quote!(()));
    let resource_name = quote!(#resource).to_string().replace(' ', "");
    let effect = syn::Ident::new(effect, Span::call_site());
    let operation = syn::Ident::new(operation, Span::call_site());
    let name = ident.to_string();
    let ambient = ambient.iter().map(|(kind, reason)| {
        let kind = kind.as_str();
        quote!(#p::AmbientAllowance { kind: #kind, reason: #reason })
    });
    quote! {
        #errors
        #item
        const _: () = {
            impl #p::Capability for #ident {
                type Resource = #resource;
                const INFO: &'static #p::CapabilityInfo = &#p::CapabilityInfo {
                    id: #id,
                    description: #description,
                    effect: #p::EffectType::#effect,
                    operation: #p::Operation::#operation,
                    rust_path: ::core::concat!(::core::module_path!(), "::", #name),
                    resource: ::core::any::TypeId::of::<#resource>,
                    resource_name: #resource_name,
                    resource_type: ::core::any::type_name::<#resource>,
                    ambient_allowances: &[#(#ambient),*],
                    file: ::core::file!(),
                    line: ::core::line!(),
                };
            }
            #p::inventory::submit! {
                #p::CapabilityEntry(<#ident as #p::Capability>::INFO)
            }
            #not_clone
        };
    }
}

/// `#[capability(...)]` on `item`, which must be a struct.
pub fn attribute(attr: TokenStream, item: TokenStream) -> TokenStream {
    let list: List = match syn::parse2(attr) {
        Ok(l) => l,
        Err(e) => {
            let e = e.into_compile_error();
            return quote!(#e #item);
        }
    };
    match syn::parse2::<syn::ItemStruct>(item.clone()) {
        Ok(s) => expand(list, s),
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[capability] goes on a struct, like `pub struct DatabaseWrite;`",
            )
            .into_compile_error();
            quote!(#e #item)
        }
    }
}
