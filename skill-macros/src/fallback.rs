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
    let user_fn = expand::user_fn_as_written(func);
    let marker = expand::marker(func);
    let grants = expand::grants(args, func, &krate);
    quote! {
        #errors
        #user_fn
        #marker
        const _: () = { #grants };
    }
}
