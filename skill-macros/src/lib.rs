//! Procedural macros of `skill-runtime`. Depend on `skill-runtime` and use these
//! through `skill_runtime::prelude`; this crate's paths are not public API.

mod ambient;
mod args;
mod ast;
mod capability;
mod check;
mod ctxt;
mod expand;
mod failure;
mod fallback;
mod source_text;
mod suggest;

use proc_macro::TokenStream;

/// Turn an `async fn` into a skill. See `skill_runtime` and `docs/attributes.md`.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    skill_impl(attr.into(), item.into()).into()
}

fn skill_impl(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let item: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[skill] goes on an `async fn`",
            )
            .into_compile_error();
            return quote::quote!(#e #item);
        }
    };
    let cx = ctxt::Ctxt::new();
    let func = ast::SkillFn::from_item(&cx, item);
    let list: args::List = match syn::parse2(attr) {
        Ok(l) => l,
        Err(e) => return fallback::skill(e, None, Some(&func)),
    };
    let args = ast::SkillArgs::from_list(&cx, list);
    check::all(&cx, &args, &func);
    match cx.check() {
        Ok(()) => expand::skill(&args, &func),
        Err(e) => fallback::skill(e, Some(&args), Some(&func)),
    }
}

/// Declare a capability on a unit struct:
/// `#[capability(id = "database.write", effect = "database", operation = "write", resource = Db)]`.
/// The doc comment is its description.
#[proc_macro_attribute]
pub fn capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item2 = proc_macro2::TokenStream::from(item.clone());
    let list: args::List = match syn::parse(attr) {
        Ok(l) => l,
        Err(e) => {
            let e = e.into_compile_error();
            return quote::quote!(#e #item2).into();
        }
    };
    match syn::parse::<syn::ItemStruct>(item) {
        Ok(s) => capability::expand(list, s).into(),
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[capability] goes on a struct, like `pub struct DatabaseWrite;`",
            )
            .into_compile_error();
            quote::quote!(#e #item2).into()
        }
    }
}

/// Derive `FailureModes` for a skill's error enum: one failure mode per variant,
/// its code the variant name in snake_case, its description the doc comment;
/// `#[failure(retryable)]` marks transient failures, `#[failure(code = "...")]`
/// overrides the code.
#[proc_macro_derive(FailureModes, attributes(failure))]
pub fn failure_modes(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(i) => failure::expand(i).into(),
        Err(e) => e.into_compile_error().into(),
    }
}
