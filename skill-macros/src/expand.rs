//! Code generation for `#[skill]`. Cannot fail: everything was checked before.

use std::borrow::Cow;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, LitStr, Path, Type};

use crate::args::path_text;
use crate::ast::{Choice, SkillArgs, SkillFn, same_path};
use crate::check::arity;
use crate::source_text::source_text;

pub fn runtime_path(args: &SkillArgs) -> Path {
    args.krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::skill_runtime))
}

/// The user's function as written, with a bare `Ctx` completed to `Ctx<marker>`.
pub fn user_fn(func: &SkillFn) -> TokenStream {
    let ItemFn {
        attrs, vis, sig, ..
    } = &func.item;
    let body = &func.body;
    let sig = match (func.ctx_param, func.ctx_needs_marker) {
        (Some(i), true) => {
            // Complete the user's own path (`Ctx` -> `Ctx<marker>`), so their
            // import stays used and the type they named is the one they get.
            let mut sig = sig.clone();
            let ident = &func.item.sig.ident;
            if let Some(FnArg::Typed(t)) = sig.inputs.iter_mut().nth(i)
                && let Type::Path(p) = &mut *t.ty
                && let Some(last) = p.path.segments.last_mut()
            {
                last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<#ident>));
            }
            Cow::Owned(sig)
        }
        _ => Cow::Borrowed(sig),
    };
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
            quote!(impl #krate::__private::Declares<#c> for #ident {}),
            c.span(),
        )
    });
    // Calling `t` is allowed only if this skill declares all of `t`'s
    // capabilities; checked here, at the `calls(...)` entry, even before any call.
    let calls = args.calls.iter().map(|t| {
        let check = respan(quote!(__skill_callable::<#t, #ident>();), t.span());
        quote! {
            impl #krate::__private::Calls<#t> for #ident {}
            const _: fn() = || {
                fn __skill_callable<T: #krate::__private::CallableBy<S>, S>() {}
                #check
            };
        }
    });
    let caps_list = &args.capabilities;
    let callable = quote! {
        impl<__S> #krate::__private::CallableBy<__S> for #ident
        where
            #(__S: #krate::__private::Declares<#caps_list>,)*
        {}
    };
    quote!(#(#caps)* #(#calls)* #callable)
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

pub fn skill(args: &SkillArgs, func: &SkillFn) -> TokenStream {
    let krate = runtime_path(args);
    let p = quote!(#krate::__private);
    let ident = &func.item.sig.ident;
    let user_fn = user_fn(func);
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
        quote!(#ident(#call_args))
    } else {
        quote!(let fut = #ident(#call_args); async move { ::core::result::Result::Ok(fut.await) })
    };

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
            // Coercing the user's closure to a typed fn pointer makes rustc check it
            // against the skill's types and report mistakes on the closure itself.
            let variant = if arity(check) == 2 {
                quote!(InputCaller)
            } else {
                quote!(Input)
            };
            let check: TokenStream = respan(quote!(#p::InputCheck::#variant), check.span())
                .into_iter()
                .chain(check_fn(check))
                .collect();
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
    let io_check = |check: &syn::Expr| {
        let variant = if arity(check) == 2 {
            quote!(InputOutput)
        } else {
            quote!(Output)
        };
        respan(quote!(#p::OutputCheck::#variant), check.span())
            .into_iter()
            .chain(check_fn(check))
            .collect::<TokenStream>()
    };
    let postconditions: Vec<_> = args
        .postconditions
        .iter()
        .filter_map(|c| {
            let check = c.check.as_ref()?;
            let text = source_text(check);
            let rollback = opt_str(&c.rollback);
            let f = io_check(check);
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
            let f = io_check(check);
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
            #first_check
        };
    }
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
    quote! {
        #marker
        const _: () = { #skill_impl };
    }
}

/// A condition's closure as a function item,
/// `({ fn __skill_check(i: &In) -> bool {...} __skill_check })`,
/// when its parameters are all typed: a function item coerces to a function
/// pointer as itself, where a closure needs a shim compiled per condition.
/// Anything else (untyped parameters, `Self` in the body) stays a closure.
fn check_fn(check: &syn::Expr) -> TokenStream {
    let as_is = quote!((#check));
    let syn::Expr::Closure(c) = check else {
        return as_is;
    };
    let simple = c.asyncness.is_none()
        && c.capture.is_none()
        && c.constness.is_none()
        && c.lifetimes.is_none()
        && c.attrs.is_empty()
        && c.inputs.iter().all(|p| matches!(p, syn::Pat::Type(_)))
        && !mentions_self(c.body.to_token_stream());
    if !simple {
        return as_is;
    }
    let inputs = c.inputs.iter();
    let ret = match &c.output {
        syn::ReturnType::Type(_, ty) => quote!(#ty),
        syn::ReturnType::Default => quote_spanned!(c.inputs_end.span=> bool),
    };
    let body = &c.body;
    let body = match &**body {
        syn::Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => quote!(#b),
        _ => quote_spanned!(body.span()=> { #body }),
    };
    let name = Ident::new("__skill_check", Span::mixed_site());
    // The block's value is what is coerced to the condition's pointer type: a
    // mismatch (a parameter of the wrong type) is reported there, so it is
    // placed at the closure.
    let value = Ident::new(
        "__skill_check",
        Span::mixed_site().located_at(c.inputs_begin.span),
    );
    quote!(({
        fn #name(#(#inputs),*) -> #ret #body
        #value
    }))
}

/// Whether `tokens` use `Self`, which a nested function cannot.
fn mentions_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == "Self",
        proc_macro2::TokenTree::Group(g) => mentions_self(g.stream()),
        _ => false,
    })
}

fn some(s: &LitStr) -> TokenStream {
    quote!(::core::option::Option::Some(#s))
}

fn opt_str(s: &Option<LitStr>) -> TokenStream {
    s.as_ref()
        .map(some)
        .unwrap_or_else(|| quote!(::core::option::Option::None))
}

fn variant(p: &TokenStream, ty: &str, c: Choice) -> TokenStream {
    let ty = Ident::new(ty, Span::call_site());
    let v = Ident::new(c.variant, c.span);
    quote!(#p::#ty::#v)
}

/// The chosen variant, or `default` when the key was not given.
fn variant_or(
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

fn manifest(args: &SkillArgs, func: &SkillFn, p: &TokenStream) -> TokenStream {
    let ident = &func.item.sig.ident;
    let fn_name = ident.to_string().trim_start_matches("r#").to_owned();
    let name = args
        .name
        .as_ref()
        .map(|n| quote!(#n))
        .unwrap_or_else(|| quote!(#fn_name));
    let title = args.title.as_ref().map(some);
    let version = args
        .version
        .as_ref()
        .map(|v| quote!(#v))
        .unwrap_or_else(|| quote!(::core::env!("CARGO_PKG_VERSION")));
    let description = match (&args.description, &func.doc) {
        (Some(d), _) => d.value(),
        (None, Some((doc, _))) => doc.clone(),
        (None, None) => String::new(),
    };
    let domain = args.domain.as_ref().map(some);
    let status = args.status.map(|s| variant(p, "Status", s));
    let deprecation = args.deprecation.as_ref().map(|d| {
        let replaced_by = opt_str(&d.replaced_by);
        let removal = opt_str(&d.removal_version);
        let notes = d.notes.as_ref().map(LitStr::value).unwrap_or_default();
        quote!(::core::option::Option::Some(#p::Deprecation {
            replaced_by: #replaced_by, removal_version: #removal, notes: #notes,
        }))
    });
    let pipeline = !args.steps.is_empty();
    let op = args.op.as_ref().map(|o| {
        let lit = |v: &Option<LitStr>| v.as_ref().map(LitStr::value).unwrap_or_default();
        let body = match o.runtime.map_or("Native", |c| c.variant) {
            "Mcp" => {
                let t = lit(&o.tool);
                quote!(Mcp { tool: #t })
            }
            "Http" => {
                let u = lit(&o.url);
                quote!(Http { url: #u })
            }
            "Script" => {
                let c = lit(&o.command);
                quote!(Script { command: #c })
            }
            _ => quote!(Native),
        };
        quote!(::core::option::Option::Some(#p::OpRuntime::#body))
    });
    let kind = if pipeline {
        Some(quote!(#p::Kind::Pipeline))
    } else {
        args.kind.map(|k| variant(p, "Kind", k))
    };
    let steps = args.steps.iter().filter_map(|s| {
        let (id, (kind, target)) = (s.id.as_ref()?, s.target.as_ref()?);
        let text = target.value();
        let (name, version) = match text.split_once('@') {
            Some((n, v)) => (n.to_owned(), quote!(::core::option::Option::Some(#v))),
            None => (text, quote!(::core::option::Option::None)),
        };
        let kind = Ident::new(if *kind == "op" { "Op" } else { "Skill" }, target.span());
        let map = |pairs: &[(Ident, LitStr)]| {
            let items = pairs.iter().map(|(f, r)| {
                let f = f.to_string();
                quote!((#f, #r))
            });
            quote!(&[#(#items),*])
        };
        let (inputs, outputs) = (map(&s.inputs), map(&s.outputs));
        Some(quote! {
            #p::PipelineStep {
                id: #id,
                target: #p::CallTarget { kind: #p::TargetKind::#kind, name: #name, version: #version },
                inputs: #inputs,
                outputs: #outputs,
            }
        })
    });
    // Only what differs from `Manifest::DEFAULT` is written out; the rest comes
    // from it by struct update. A smaller constant is less for rustc to check
    // and evaluate per skill (the compile-time benchmark counts it).
    let mut fields: Vec<TokenStream> = vec![
        quote!(name: #name),
        quote!(version: #version),
        quote!(description: #description),
    ];
    let mut set = |field: &str, value: Option<TokenStream>| {
        if let Some(value) = value {
            let field = Ident::new(field, Span::call_site());
            fields.push(quote!(#field: #value));
        }
    };
    set("title", title);
    set("domain", domain);
    set("owners", slice(&args.owners));
    set("status", status);
    set("deprecation", deprecation);
    set("kind", kind);
    set("autonomy", args.autonomy.map(|a| variant(p, "Autonomy", a)));
    set("policy_tags", slice(&args.policy_tags));
    set(
        "rate_limit",
        args.rate_limit
            .as_ref()
            .map(|n| quote!(::core::option::Option::Some(#p::RateLimit { max_per_minute: #n }))),
    );
    let (ri, ro) = (&args.redact_inputs, &args.redact_outputs);
    set(
        "redaction",
        (!ri.is_empty() || !ro.is_empty())
            .then(|| quote!(#p::Redaction { inputs: &[#(#ri),*], outputs: &[#(#ro),*] })),
    );
    let timeout = args
        .timeout_ms
        .as_ref()
        .map(|t| quote!(#t))
        .unwrap_or_else(|| quote!(#p::Execution::DEFAULT.timeout_ms));
    let retries = args
        .retries
        .as_ref()
        .map(|t| quote!(#t))
        .unwrap_or_else(|| {
            // A pipeline's steps retry on their own; rerunning every step
            // because one failed is not what anyone wants by default.
            if pipeline {
                quote!(0)
            } else {
                quote!(#p::Execution::DEFAULT.retries)
            }
        });
    let backoff = args
        .backoff
        .map(|b| variant(p, "Backoff", b))
        .unwrap_or_else(|| quote!(#p::Execution::DEFAULT.backoff));
    let idempotent = args.idempotent;
    set(
        "execution",
        (pipeline
            || args.timeout_ms.is_some()
            || args.retries.is_some()
            || args.backoff.is_some()
            || idempotent)
            .then(|| {
                quote!(#p::Execution {
                    timeout_ms: #timeout, retries: #retries, backoff: #backoff, idempotent: #idempotent,
                })
            }),
    );
    let destructive = args.destructive;
    let hitl = args.requires_hitl;
    let sandbox = variant_or(p, "Sandbox", args.sandbox, "Local");
    let source = variant_or(p, "Origin", args.source, "Local");
    set(
        "constraints",
        (destructive || hitl || args.sandbox.is_some() || args.source.is_some()).then(|| {
            quote!(#p::Constraints {
                is_destructive: #destructive, requires_hitl: #hitl, sandbox_type: #sandbox, source: #source,
            })
        }),
    );
    set(
        "mcp",
        args.mcp.as_ref().map(|m| {
            let exposed = m.exposed;
            let tool = opt_str(&m.tool_name);
            let perms = &m.permissions;
            quote!(#p::Mcp { exposed: #exposed, tool_name: #tool, permissions: &[#(#perms),*] })
        }),
    );
    let reuse: Vec<_> = args
        .reusable_by
        .iter()
        .map(|(role, level)| {
            let role = variant(p, "AgentRole", *role);
            let level = variant(p, "PermissionLevel", *level);
            quote!(#p::Reuse { agent_role: #role, permission_level: #level })
        })
        .collect();
    set("reusable_by", slice(&reuse));
    let caps: Vec<_> = args
        .capabilities
        .iter()
        .map(|c| respan(quote!(<#c as #p::Capability>::INFO), c.span()))
        .collect();
    set("capabilities", slice(&caps));
    let effects: Vec<_> = args
        .side_effects
        .iter()
        .map(|s| {
            let c = &s.capability;
            let target = s.target.as_ref().map(LitStr::value).unwrap_or_default();
            let reversible = s.reversible.unwrap_or(false);
            let description = opt_str(&s.description);
            quote_spanned!(c.span()=> #p::SideEffect {
                capability: <#c as #p::Capability>::INFO,
                target: #target,
                reversible: #reversible,
                description: #description,
            })
        })
        .collect();
    set("side_effects", slice(&effects));
    let calls: Vec<_> = args
        .calls
        .iter()
        .map(|t| {
            quote_spanned!(t.span()=> #p::CallTarget {
                kind: if <#t as #p::Skill>::MANIFEST.op.is_some() {
                    #p::TargetKind::Op
                } else {
                    #p::TargetKind::Skill
                },
                name: <#t as #p::Skill>::MANIFEST.name,
                version: ::core::option::Option::Some(<#t as #p::Skill>::MANIFEST.version),
            })
        })
        .collect();
    set("call_targets", slice(&calls));
    let steps: Vec<_> = steps.collect();
    set("steps", slice(&steps));
    set("op", op);
    let ambient: Vec<_> = args
        .ambient
        .iter()
        .map(|(kind, reason)| {
            let key = kind.key();
            quote!(#p::AmbientAllowance { kind: #key, reason: #reason })
        })
        .collect();
    set("ambient_allowances", slice(&ambient));
    let loc = quote_spanned!(ident.span()=> #p::Location {
        file: ::core::file!(), line: ::core::line!(), column: ::core::column!(),
    });
    fields.push(
        quote!(entrypoint: #p::Entrypoint { module: ::core::module_path!(), handler: #fn_name }),
    );
    fields.push(quote!(location: #loc));
    quote! {
        #p::Manifest { #(#fields,)* ..#p::Manifest::DEFAULT }
    }
}

/// `&[items...]`, or `None` for no items (the default's empty slice).
fn slice<T: ToTokens>(items: &[T]) -> Option<TokenStream> {
    (!items.is_empty()).then(|| quote!(&[#(#items),*]))
}

/// Compile-time checks that need the capability's declaration, which lives in
/// another item (often another crate): they run as constant evaluation, so a
/// broken rule fails the build with our message, spanned at the capability.
/// The checks as items, and the first effect check as an expression (empty if
/// there is none).
fn effect_checks(args: &SkillArgs, func: &SkillFn, p: &TokenStream) -> (TokenStream, TokenStream) {
    let skill = func.item.sig.ident.to_string();
    let mut out = TokenStream::new();
    let mut first = TokenStream::new();
    for c in &args.capabilities {
        if args
            .side_effects
            .iter()
            .any(|s| same_path(&s.capability, c))
        {
            continue;
        }
        let name = path_text(c);
        let msg = format!(
            "skill `{skill}` declares capability `{name}`, which writes, deletes, upserts, reaches the network or spawns processes, but does not list it as a side effect; add `{name}(target = \"...\", reversible = ...)` to `side_effects(...)`"
        );
        // Every token at the capability, so the error (at the call) lands there.
        let check = respan(
            quote!(#p::assert_effect_listed(<#c as #p::Capability>::INFO, #msg)),
            c.span(),
        );
        // The first check is the value of the constant that holds the
        // skill's items (one constant fewer for rustc to build and check per
        // skill); any further one is a constant of its own, so that each
        // mistake is reported.
        if first.is_empty() {
            first = check;
        } else {
            out.extend(quote_spanned! {c.span()=> const _: () = #check;});
        }
    }
    for finding in crate::ambient::scan(func.body.stream()) {
        if args.ambient.iter().any(|(k, _)| *k == finding.kind) {
            continue;
        }
        let kind = finding.kind;
        let msg = format!(
            "skill `{skill}` uses `{}` ({}) but declares no capability covering it: it needs {}; declare one in `capabilities(...)` and reach the resource through `ctx`, or allow it with `ambient({} = \"why\")`",
            finding.path,
            kind.key().replace('_', " "),
            kind.needs(),
            kind.key(),
        );
        let variant = Ident::new(kind.variant(), Span::call_site());
        let covered = args
            .capabilities
            .iter()
            .map(|c| quote!(|| <#c as #p::Capability>::INFO.covers(#p::Ambient::#variant)));
        out.extend(respan(
            quote! {
                const _: () = if !(false #(#covered)*) {
                    ::core::panic!(#msg)
                };
            },
            finding.span,
        ));
    }
    if !args.destructive {
        for s in args
            .side_effects
            .iter()
            .filter(|s| s.reversible == Some(false))
        {
            let c = &s.capability;
            let name = path_text(c);
            let msg = format!(
                "skill `{skill}` has an irreversible delete (`{name}`, reversible = false) but is not marked destructive; add `destructive` to #[skill(...)]"
            );
            out.extend(quote_spanned! {c.span()=>
                const _: () = if ::core::matches!(<#c as #p::Capability>::INFO.operation, #p::Operation::Delete) {
                    ::core::panic!(#msg)
                };
            });
        }
    }
    (out, first)
}
