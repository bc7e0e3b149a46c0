//! What `#[skill]` emits when the attribute or function is wrong: the user's
//! function and its marker type, so the rest of the crate and IDEs keep working,
//! plus the errors, so one mistake gives its own error and not a cascade.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::func::SkillFn;
use crate::ast::types::SkillArgs;
use crate::expand;

pub fn skill(errors: syn::Error, args: Option<&SkillArgs>, func: Option<&SkillFn>) -> TokenStream {
    let errors = errors.into_compile_error();
    let Some(func) = func else { return errors };
    if func.item.sig.receiver().is_some() {
        // A method sits in an `impl`, where no marker struct can go.
        let item = expand::user_fn_as_written(func);
        return quote!(#errors #item);
    }
    let default = SkillArgs::default();
    let args = args.unwrap_or(&default);
    let krate = expand::tokens::runtime_path(args);
    let p = quote!(#krate::__private_v2);
    let marker = expand::marker(func);
    let grants = expand::grants(args, func, &krate);
    // The body still type checks, where only the runtime would reach it; the
    // function callers see keeps its shape, so their calls give no error of
    // their own. It is never run: the crate does not compile.
    let body = expand::body_fn(func);
    let caller = fallback_caller(func, &p);
    quote! {
        #errors
        #caller
        #marker
        const _: () = {
            #[allow(dead_code)]
            #body
            #grants
        };
    }
}

/// The function callers see, with a body that never finishes.
fn fallback_caller(func: &SkillFn, p: &TokenStream) -> TokenStream {
    let sig = &func.item.sig;
    let (ident, vis) = (&sig.ident, &func.item.vis);
    let (input, ret) = crate::expand::caller_types(func);
    quote! {
        #[allow(unused_variables)]
        #vis fn #ident(
            ctx: &dyn #p::Authority<#ident>,
            input: #input,
        ) -> impl ::core::future::Future<Output = #ret> + ::core::marker::Send + use<> {
            ::core::future::pending()
        }
    }
}
