//! Code generation for `#[skill]`. Cannot fail: everything was checked before.
//! The skill's items are here; its manifest constant ([`manifest`]) and its
//! compile-time checks ([`checks`]) have modules of their own.

pub mod assertions;
pub mod manifest;
pub mod tokens;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Path, Type};

use crate::ast::func::SkillFn;
use crate::ast::types::SkillArgs;
use crate::expand::assertions::{Condition, condition_check, effect_checks};
use crate::expand::manifest::manifest;
use crate::expand::tokens::{opt_str, respan, runtime_path, variant};
use crate::source_text::source_text;

/// The input and return types of the function callers see: the skill's
/// own (`()` where it has none).
pub fn caller_types(func: &SkillFn) -> (TokenStream, TokenStream) {
    let ret = match &func.item.sig.output {
        syn::ReturnType::Type(_, t) => quote!(#t),
        syn::ReturnType::Default => quote!(()),
    };
    let input = func
        .input
        .as_ref()
        .map(|t| quote!(#t))
        .unwrap_or_else(|| quote!(()));
    (input, ret)
}

/// The skill's function as callers see it: `name(&ctx, input)`, bound by
/// `Authority<name>`, the one rule of who may run the skill directly,
/// whatever the syntax of the call (a call, `join!`, a closure, a function
/// pointer). It runs the handler through `Skill::run`, which only a context
/// of the skill reaches.
pub fn caller_fn(func: &SkillFn, p: &TokenStream) -> TokenStream {
    let ItemFn {
        attrs, vis, sig, ..
    } = &func.item;
    let ident = &sig.ident;
    let (input, ret) = caller_types(func);
    // Docs, `cfg` and deprecation describe the function callers see.
    let outer = attrs
        .iter()
        .filter(|a| is_outer(a) || a.path().is_ident("cfg"));
    let run = quote!(#p::run_called::<#ident>(ctx, input));
    let future = if func.error.is_some() {
        run
    } else {
        quote!(#p::infallible(#run))
    };
    let doc = format!(
        " Call it as `{ident}(&ctx, input)`: from a skill that lists `{ident}` in `calls(...)`, with its own context (the future lives as long as that call); from code that owns a runtime, with `runtime.context()`."
    );
    quote! {
        #(#outer)*
        #[doc = ""]
        #[doc = #doc]
        #[inline]
        #vis fn #ident<'__call>(
            ctx: &dyn #p::Authority<'__call, #ident>,
            input: #input,
        ) -> impl ::core::future::Future<Output = #ret> + ::core::marker::Send + use<'__call> {
            #future
        }
    }
}

/// Docs and deprecation describe the function callers see; lint levels and
/// other attributes (`#[tracing::instrument]`) the body.
fn is_outer(a: &syn::Attribute) -> bool {
    a.path().is_ident("doc") || a.path().is_ident("deprecated")
}

/// The user's function as written, a `Ctx` completed to `Ctx<marker>`,
/// under a hidden name: the handler `Skill::run` calls. It goes inside the
/// constant that holds the skill's items, where no path reaches it.
pub fn body_fn(func: &SkillFn) -> TokenStream {
    let mut sig = completed_sig(func);
    sig.ident = body_ident(&func.item.sig.ident);
    let inner = func.item.attrs.iter().filter(|a| !is_outer(a));
    let block = &func.body;
    quote! {
        #(#inner)*
        #sig #block
    }
}

/// The hidden function holding a skill's body.
pub fn body_ident(ident: &Ident) -> Ident {
    Ident::new(&format!("__skill_body_{ident}"), ident.span())
}

/// The signature with a bare `Ctx` completed to `Ctx<'_, marker>` (the
/// call's lifetime, and the skill), so the user's import stays used and the
/// type they named is the one they get; a lifetime they wrote is kept.
pub fn completed_sig(func: &SkillFn) -> syn::Signature {
    let mut sig = func.item.sig.clone();
    let ident = &func.item.sig.ident;
    // Every `Ctx`, so that a misplaced second one gets only the shape error,
    // and one typed with another's marker (refused) no other.
    for arg in &mut sig.inputs {
        if let FnArg::Typed(t) = arg
            && crate::ast::func::is_ctx(&t.ty).is_some()
            && let Type::Path(path) = &mut *t.ty
            && let Some(last) = path.path.segments.last_mut()
        {
            let lifetime = match &last.arguments {
                syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                    syn::GenericArgument::Lifetime(l) => Some(l.clone()),
                    _ => None,
                }),
                _ => None,
            }
            .unwrap_or_else(|| syn::Lifetime::new("'_", Span::call_site()));
            last.arguments =
                syn::PathArguments::AngleBracketed(syn::parse_quote!(<#lifetime, #ident>));
        }
    }
    sig
}

/// The user's function as written (with `Ctx` completed), for when the
/// attribute or the function is wrong: the rest of the crate keeps compiling.
pub fn user_fn_as_written(func: &SkillFn) -> TokenStream {
    let ItemFn { attrs, vis, .. } = &func.item;
    let sig = completed_sig(func);
    let body = &func.body;
    quote!(#(#attrs)* #vis #sig #body)
}

/// The zero-sized marker type named like the function. A braced struct lives in
/// the type namespace only, so it does not collide with the function.
pub fn marker(func: &SkillFn) -> TokenStream {
    let ident = &func.item.sig.ident;
    let vis = &func.item.vis;
    let doc = format!(
        "The skill marker of [`{ident}()`]: the type to name in `Ctx<'_, {ident}>`, `calls({ident})` and typed calls."
    );
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}
    }
}

/// `impl Declares<C>` and `impl Calls<T>` for what the skill declares.
pub fn grants(args: &SkillArgs, func: &SkillFn, krate: &Path) -> TokenStream {
    let ident = &func.item.sig.ident;
    let caps = args.capabilities.iter().map(|c| {
        respan(
            quote!(unsafe impl #krate::__private_v2::Declares<#c> for #ident {}),
            // At the capability for errors, in the macro's context so that
            // `unsafe_code` (even forbidden) does not flag the macro's own impl.
            c.span().resolved_at(Span::call_site()),
        )
    });
    // Calling `t` is allowed only if this skill declares all of `t`'s
    // capabilities; checked here, at the `calls(...)` entry, even before any call.
    let calls = args.calls.iter().map(|t| {
        let check = respan(
            quote!(#krate::__private_v2::Probe(::core::marker::PhantomData::<#t>).__skill_callable::<#ident>();),
            t.span(),
        );
        quote! {
            unsafe impl #krate::__private_v2::Calls<#t> for #ident {}
            const _: fn() = || {
                #[allow(unused_imports)]
                use #krate::__private_v2::NotASkill as _;
                #check
            };
        }
    });
    let caps_list = &args.capabilities;
    let callable = quote! {
        unsafe impl<__S> #krate::__private_v2::CallableBy<__S> for #ident
        where
            #(__S: #krate::__private_v2::Declares<#caps_list>,)*
        {}
    };
    quote!(#(#caps)* #(#calls)* #callable)
}

/// For each `calls(T)`: what `T` may do beyond its capabilities (its ambient
/// allowances, its side effects) this skill may do too, so calling cannot
/// widen it. A constant per entry, at the entry.
fn no_wider(args: &SkillArgs, func: &SkillFn, p: &TokenStream) -> TokenStream {
    let me = &func.item.sig.ident;
    let what = if args.op.is_some() { "op" } else { "skill" };
    args.calls
        .iter()
        .map(|t| {
            let callee = crate::args::path_text(t);
            let ambient = format!(
                "{what} `{me}` calls `{callee}`, which has an ambient allowance `{me}` neither has nor covers with a capability: calling would widen what `{me}` may do; give `{me}` the same `ambient(...)` allowance (or a capability covering it), or remove `{callee}` from `calls(...)`"
            );
            let effects = format!(
                "{what} `{me}` calls `{callee}`, which has a side effect `{me}` does not list: calling would widen what `{me}` may do; list each of `{callee}`'s side effects in `side_effects(...)` of `{me}`, or remove `{callee}` from `calls(...)`"
            );
            respan(
                quote!(const _: () = #p::assert_no_wider(
                    <#t as #p::Skill>::MANIFEST,
                    <#me as #p::Skill>::MANIFEST,
                    #ambient,
                    #effects,
                );),
                t.span(),
            )
        })
        .collect()
}

pub fn skill(args: &SkillArgs, func: &SkillFn) -> TokenStream {
    let krate = runtime_path(args);
    let p = quote!(#krate::__private_v2);
    let ident = &func.item.sig.ident;
    let caller = caller_fn(func, &p);
    let body = body_fn(func);
    let body_ident = body_ident(ident);
    let marker = marker(func);
    let grants = grants(args, func, &krate);

    let input_ty = func.input.clone().unwrap_or_else(|| syn::parse_quote!(()));
    let output_ty = func.output.clone().unwrap_or_else(|| syn::parse_quote!(()));
    let error_ty: Type = func
        .error
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(#p::Never));
    let call_args = if func.ctx_param.is_some() {
        quote!(ctx, input)
    } else {
        quote!(input)
    };
    // A handler without a context drops the one it is given when `run`
    // returns (a `_` parameter: no `drop` call compiled per skill).
    let ctx_pat = if func.ctx_param.is_some() {
        quote!(ctx)
    } else {
        quote!(_)
    };
    let run_body = if func.error.is_some() {
        quote!(#body_ident(#call_args))
    } else {
        quote!(let fut = #body_ident(#call_args); async move { ::core::result::Result::Ok(fut.await) })
    };

    // An output that is a `Result` under another name is refused
    // (`TypeProbe::IS_RESULT`, in the constant that holds the skill's items);
    // written out, a `Result`'s error type's failure modes count.
    let skill_name = ident.to_string();
    let mut type_checks = TokenStream::new();
    if func.error.is_none() {
        let msg = format!(
            "skill `{skill_name}` returns `{}`, a `Result` under another name, which would be taken as its output and lose its failure modes; write the `Result` out in the signature, `-> Result<Output, Error>` (the alias's own types)",
            type_text(&output_ty)
        );
        type_checks.extend(quote! {
            #[allow(unused_imports)]
            use #p::AnyType as _;
        });
        type_checks.extend(respan(
            quote!(if #p::TypeProbe::<#output_ty>::IS_RESULT { ::core::panic!(#msg) }),
            output_ty.span(),
        ));
    }
    let manifest = manifest(args, func, &p);
    // Each condition gives its slice entry: its text and its typed check.
    let preconditions: Vec<_> = args
        .preconditions
        .iter()
        .filter_map(|c| {
            let (Some(code), Some(message), Some(check)) = (&c.code, &c.message, &c.check) else {
                return None;
            };
            let text = source_text(check);
            let check = condition_check(Condition::Pre, check, func, &p);
            Some(quote! {
                #p::Precondition::<#ident> {
                    error_code: #code,
                    message: #message,
                    condition: #text,
                    check: #check,
                },
            })
        })
        .collect();
    let postconditions: Vec<_> = args
        .postconditions
        .iter()
        .filter_map(|c| {
            let check = c.check.as_ref()?;
            let text = source_text(check);
            let rollback = opt_str(&c.rollback);
            let f = condition_check(Condition::Post, check, func, &p);
            Some(quote! {
                #p::Postcondition::<#ident> { assertion: #text, rollback_action: #rollback, check: #f },
            })
        })
        .collect();
    let rules: Vec<_> = args
        .validation_rules
        .iter()
        .filter_map(|r| {
            let (Some(id), Some(severity), Some(message), Some(check)) =
                (&r.id, r.severity, &r.message, &r.check)
            else {
                return None;
            };
            let text = source_text(check);
            let severity = variant(&p, "Severity", severity);
            let f = condition_check(Condition::Rule, check, func, &p);
            Some(quote! {
                #p::ValidationRule::<#ident> {
                    rule_id: #id, expression: #text, severity: #severity, message: #message, check: #f,
                },
            })
        })
        .collect();
    let (effect_checks, first_check) = effect_checks(args, func, &p);

    // Empty lists are left to the trait's defaults: one constant fewer for rustc
    // to check per empty list.
    let mut conditions = TokenStream::new();
    for (name, ty, items) in [
        ("PRECONDITIONS", "Precondition", &preconditions),
        ("POSTCONDITIONS", "Postcondition", &postconditions),
        ("VALIDATION_RULES", "ValidationRule", &rules),
    ] {
        if !items.is_empty() {
            let (name, ty) = (
                Ident::new(name, Span::call_site()),
                Ident::new(ty, Span::call_site()),
            );
            conditions.extend(quote! {
                const #name: &'static [#p::#ty<Self>] = &[#(#items)*];
            });
        }
    }
    let skill_impl = impl_skill(
        &p,
        ident,
        [&input_ty, &output_ty, &error_ty],
        &manifest,
        conditions,
        (ctx_pat, run_body),
    );
    let no_wider = no_wider(args, func, &p);
    quote! {
        #caller
        #marker

        const _: () = {
            #body
            #skill_impl
            #grants
            #no_wider
            #effect_checks
            #type_checks
            #first_check
        };
    }
}

/// A type as written, for messages: `Vec<In>`, not `Vec < In >`.
fn type_text(ty: &Type) -> String {
    quote!(#ty)
        .to_string()
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ::", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace("& ", "&")
        // The text goes into `panic!`'s format string.
        .replace('{', "{{")
        .replace('}', "}}")
}

/// `impl Skill` for the marker `ident`, submitted to the registry.
fn impl_skill(
    p: &TokenStream,
    ident: &Ident,
    [input, output, error]: [&Type; 3],
    manifest: &TokenStream,
    conditions: TokenStream,
    (ctx, run_body): (TokenStream, TokenStream),
) -> TokenStream {
    // `unsafe`: the trait's promise (no ambient authority the manifest does
    // not declare) is what the checks this macro emits hold it to.
    quote! {
        unsafe impl #p::Skill for #ident {
            type Input = #input;
            type Output = #output;
            type Error = #error;
            const MANIFEST: &'static #p::Manifest = &#manifest;
            #conditions

            fn run(
                #ctx: #p::Ctx<'_, Self>,
                input: #input,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#output, #error>,
            > + ::core::marker::Send {
                #run_body
            }
        }
        #p::inventory::submit! {
            #p::SkillEntry::of::<#ident>()
        }
    }
}

/// `#[pipeline]`, or `#[op]` without a body: the marker type and a `Skill`
/// whose handler runs the steps, or calls the op where it runs.
pub fn declared(args: &SkillArgs, func: &SkillFn) -> TokenStream {
    let krate = runtime_path(args);
    let p = quote!(#krate::__private_v2);
    let (error, run): (Type, _) = if args.op.is_some() {
        (
            syn::parse_quote!(#p::OpFailed),
            quote!(#p::run_external_op::<Self>(ctx, input)),
        )
    } else {
        (
            syn::parse_quote!(#p::PipelineFailed),
            quote!(#p::run_pipeline::<Self>(ctx, input)),
        )
    };
    let input_ty = func.input.clone().unwrap_or_else(|| syn::parse_quote!(()));
    let output_ty = func.output.clone().unwrap_or_else(|| syn::parse_quote!(()));
    let manifest = manifest(args, func, &p);
    let marker = marker(func);
    let skill_impl = impl_skill(
        &p,
        &func.item.sig.ident,
        [&input_ty, &output_ty, &error],
        &manifest,
        TokenStream::new(),
        (quote!(ctx), run),
    );
    // An op's capabilities grant and constrain like a skill's: callers must
    // declare them (`calls(op)`), effectful ones must be side effects. A
    // pipeline's are its steps', computed by the registry.
    if args.op.is_some() {
        let grants = grants(args, func, &krate);
        let no_wider = no_wider(args, func, &p);
        let (effect_checks, first_check) = effect_checks(args, func, &p);
        return quote! {
            #marker
            const _: () = {
                #skill_impl
                #grants
                #no_wider
                #effect_checks
                #first_check
            };
        };
    }
    quote! {
        #marker
        const _: () = { #skill_impl };
    }
}
