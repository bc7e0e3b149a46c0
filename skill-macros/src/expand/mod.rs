//! Code generation for `#[skill]`. Cannot fail: everything was checked before.
//! The skill's items are here; its manifest constant ([`manifest`]) and its
//! compile-time checks ([`checks`]) have modules of their own.

pub mod checks;
pub mod direct;
pub mod manifest;
pub mod tokens;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Path, Type};

use crate::ast::func::SkillFn;
use crate::ast::types::SkillArgs;
use crate::expand::checks::{Condition, condition_check, effect_checks};
use crate::expand::manifest::manifest;
use crate::expand::tokens::{opt_str, respan, runtime_path, variant};
use crate::source_text::source_text;

/// The user's function, with a bare `Ctx` completed to `Ctx<marker>`: its
/// body is a hidden `async fn` of the same signature, which the handler runs,
/// and the function of the user's name returns it as a `Direct<marker, _>`,
/// whose awaited calls of other skills are checked against `calls(...)`
/// ([`direct`]). Built with `quote!` only: parsing costs the macro time.
pub fn user_fn(func: &SkillFn, p: &TokenStream) -> TokenStream {
    let ItemFn {
        attrs, vis, sig, ..
    } = &func.item;
    let ident = &sig.ident;
    let body_ident = body_fn(ident);
    let mut inner = completed_sig(func);
    inner.ident = body_ident.clone();
    let (names, types): (Vec<Ident>, Vec<&Type>) = inner
        .inputs
        .iter()
        .enumerate()
        .filter_map(|(i, arg)| match arg {
            FnArg::Typed(t) => Some((
                Ident::new(&format!("__skill_arg{i}"), Span::call_site()),
                &*t.ty,
            )),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let ret = match &sig.output {
        syn::ReturnType::Type(_, t) => quote!(#t),
        syn::ReturnType::Default => quote!(()),
    };
    // Docs, `cfg` and deprecation describe the function callers see; lint
    // levels and other attributes (`#[tracing::instrument]`) the body.
    let is_outer =
        |a: &&syn::Attribute| a.path().is_ident("doc") || a.path().is_ident("deprecated");
    let outer_attrs = attrs
        .iter()
        .filter(|a| is_outer(a) || a.path().is_ident("cfg"));
    let inner_attrs = attrs.iter().filter(|a| !is_outer(a));
    let body = direct::check_awaits(func.body.stream(), ident, p);
    let mut block = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body);
    block.set_span(func.body.span());
    quote! {
        #[doc(hidden)]
        #(#inner_attrs)*
        #inner #block

        #(#outer_attrs)*
        // Compiled only where it is called (tests, other skills): the
        // handler runs the body function itself.
        #[inline]
        #vis fn #ident(#(#names: #types),*)
            -> #p::Direct<#ident, impl ::core::future::Future<Output = #ret>>
        {
            #p::Direct { future: #body_ident(#(#names),*), _skill: ::core::marker::PhantomData }
        }
    }
}

/// The hidden function holding a skill's body.
pub fn body_fn(ident: &Ident) -> Ident {
    Ident::new(&format!("__skill_body_{ident}"), ident.span())
}

/// The signature with a bare `Ctx` completed to `Ctx<marker>`, so the
/// user's import stays used and the type they named is the one they get.
pub fn completed_sig(func: &SkillFn) -> syn::Signature {
    let mut sig = func.item.sig.clone();
    let ident = &func.item.sig.ident;
    // Every bare `Ctx`, so that a misplaced second one gets only the shape error.
    for arg in &mut sig.inputs {
        if let FnArg::Typed(t) = arg
            && crate::ast::func::is_ctx(&t.ty) == Some(false)
            && let Type::Path(path) = &mut *t.ty
            && let Some(last) = path.path.segments.last_mut()
        {
            last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<#ident>));
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
        "The skill marker of [`{ident}()`]: the type to name in `Ctx<{ident}>`, `calls({ident})` and typed calls."
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
            quote!(unsafe impl #krate::__private::Declares<#c> for #ident {}),
            // At the capability for errors, in the macro's context so that
            // `unsafe_code` (even forbidden) does not flag the macro's own impl.
            c.span().resolved_at(Span::call_site()),
        )
    });
    // Calling `t` is allowed only if this skill declares all of `t`'s
    // capabilities; checked here, at the `calls(...)` entry, even before any call.
    let calls = args.calls.iter().map(|t| {
        let check = respan(
            quote!(#krate::__private::Probe(::core::marker::PhantomData::<#t>).__skill_callable::<#ident>();),
            t.span(),
        );
        quote! {
            unsafe impl #krate::__private::Calls<#t> for #ident {}
            const _: fn() = || {
                #[allow(unused_imports)]
                use #krate::__private::NotASkill as _;
                #check
            };
        }
    });
    let caps_list = &args.capabilities;
    let callable = quote! {
        unsafe impl<__S> #krate::__private::CallableBy<__S> for #ident
        where
            #(__S: #krate::__private::Declares<#caps_list>,)*
        {}
    };
    quote!(#(#caps)* #(#calls)* #callable)
}

pub fn skill(args: &SkillArgs, func: &SkillFn) -> TokenStream {
    let krate = runtime_path(args);
    let p = quote!(#krate::__private);
    let ident = &func.item.sig.ident;
    let user_fn = user_fn(func, &p);
    let body_ident = body_fn(ident);
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
    quote! {
        #user_fn
        #marker

        const _: () = {
            #skill_impl
            #grants
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
    quote! {
        impl #p::Skill for #ident {
            type Input = #input;
            type Output = #output;
            type Error = #error;
            const MANIFEST: &'static #p::Manifest = &#manifest;
            #conditions

            fn run(
                #ctx: #p::Ctx<Self>,
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
    let p = quote!(#krate::__private);
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
        let (effect_checks, first_check) = effect_checks(args, func, &p);
        return quote! {
            #marker
            const _: () = {
                #skill_impl
                #grants
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
