//! Code generation for `#[agent]`. Cannot fail: everything was checked before.
//!
//! The agent's body is kept as written under a hidden name inside the
//! constant that holds its items, reached only through `Agent::execute`
//! (with the `AgentCtx` only the runner makes). Beside it: the contract
//! constant, `Uses<S>` for each listed skill with the constant check that
//! its `reusable_by` admits the agent's role, the ambient scan of the body
//! with each use checked against what the listed skills may do, and each
//! output pointer checked against the output type.

use heck::ToSnakeCase;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitStr, Type};

use crate::agent::ast::{Args, Trigger};
use crate::args::path_text;
use crate::ast::func::SkillFn;
use crate::expand::tokens::respan;
use crate::source_text::source_text;

pub fn agent(args: &Args, func: &SkillFn) -> TokenStream {
    let ident = &func.item.sig.ident;
    let p = quote!(::skill_runtime::__private_v2);
    let body = crate::expand::body_fn(func);
    let body_ident = crate::expand::body_ident(ident);
    let marker = marker(func);
    let unit: Type = syn::parse_quote!(());
    let input = func.input.clone().unwrap_or(unit.clone());
    let output = func.output.clone().unwrap_or(unit);
    let call_args = match (func.ctx_param.is_some(), func.input.is_some()) {
        (true, true) => quote!(ctx, input),
        (true, false) => quote!(ctx),
        (false, true) => quote!(input),
        (false, false) => quote!(),
    };
    let keep = match (func.ctx_param.is_some(), func.input.is_some()) {
        (true, true) => quote!(),
        (true, false) => quote!(let _ = input;),
        (false, true) => quote!(let _ = ctx;),
        (false, false) => quote!(let _ = (ctx, input);),
    };
    let (error, execute) = match &func.error {
        Some(e) => (quote!(#e), quote!(#keep #body_ident(#call_args))),
        None => (
            quote!(#p::Never),
            quote!(#keep async move { ::core::result::Result::Ok(#body_ident(#call_args).await) }),
        ),
    };
    let contract = contract(args, func, &p);
    let pre = args.pre.iter().map(|(code, check)| {
        let text = source_text(check);
        let check = pre_check(check, &input, &p);
        quote!(#p::PreCondition { expression: #text, error_code: #code, check: #check })
    });
    let post = args.post.iter().map(|(code, check)| {
        let text = source_text(check);
        let check = post_check(check, &input, &output, &p);
        quote!(#p::PostCondition { expression: #text, error_code: #code, check: #check })
    });
    let uses = uses(args, func, &p);
    let ambient = ambient(args, func, &p);
    let pointers = pointers(args, &output);
    quote! {
        #marker
        const _: () = {
            #body
            impl #p::Agent for #ident {
                type Input = #input;
                type Output = #output;
                type Error = #error;
                const CONTRACT: &'static #p::AgentContract = &#contract;
                const PRE_CONDITIONS: &'static [#p::PreCondition<#input>] = &[#(#pre),*];
                const POST_CONDITIONS: &'static [#p::PostCondition<#input, #output>] = &[#(#post),*];
                fn execute(
                    ctx: #p::AgentCtx<'_, Self>,
                    input: #input,
                ) -> impl ::core::future::Future<Output = ::core::result::Result<#output, #error>> + ::core::marker::Send {
                    #execute
                }
            }
            #uses
            #ambient
            #pointers
            #p::inventory::submit! { #p::AgentEntry::of::<#ident>() }
        };
    }
}

/// The zero-sized type naming the agent, documented with the agent's own
/// doc comment (its function is hidden: only the runner runs it).
pub fn marker(func: &SkillFn) -> TokenStream {
    let ident = &func.item.sig.ident;
    let vis = &func.item.vis;
    let docs = func
        .item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"));
    quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #vis struct #ident {}
    }
}

fn contract(args: &Args, func: &SkillFn, p: &TokenStream) -> TokenStream {
    let lit_or = |l: &Option<LitStr>| l.as_ref().map(LitStr::value).unwrap_or_default();
    let (id, name, domain, version, owner) = (
        lit_or(&args.id),
        lit_or(&args.name),
        lit_or(&args.domain),
        lit_or(&args.version),
        lit_or(&args.owner),
    );
    let role = role_ident(args);
    let description = func
        .doc
        .as_ref()
        .map(|(d, _)| d.clone())
        .unwrap_or_default();
    let tools = args.tools.iter().map(|t| {
        let (tid, rate) = (&t.id, t.rate_limit);
        let perm = Ident::new(t.permission.variant, Span::call_site());
        quote!(#p::AgentTool { tool_id: #tid, permission: #p::ToolPermission::#perm, rate_limit: #rate })
    });
    let skills = args.skills.iter().map(|(s, required)| {
        let m = respan(quote!(<#s as #p::Skill>::MANIFEST), s.span());
        quote!(#p::AgentSkill { manifest: #m, required: #required })
    });
    let short_term = opt(args.short_term.map(|n| quote!(#n)));
    let long_term = opt(args.long_term.as_ref().map(|c| {
        let v = Ident::new(c.variant, Span::call_site());
        quote!(#p::Storage::#v)
    }));
    let shared = opt(args.shared.as_ref().map(|ns| quote!(&[#(#ns),*])));
    let texts = |list: &[(LitStr, Expr)]| {
        list.iter()
            .map(|(code, check)| {
                let text = source_text(check);
                quote!(#p::ConditionText { expression: #text, error_code: #code })
            })
            .collect::<Vec<_>>()
    };
    let (pre_texts, post_texts) = (texts(&args.pre), texts(&args.post));
    let invariants = &args.invariants;
    let escalation = opt(args.escalation.as_ref().map(|e| {
        let triggers = e.triggers.iter().map(|t| match t {
            Trigger::ErrorCountAbove(n) => quote!(#p::Trigger::ErrorCountAbove { count: #n }),
            Trigger::ConfidenceBelow { field, value } => {
                quote!(#p::Trigger::ConfidenceBelow { field: #field, value: #value })
            }
            Trigger::HumanRequired { field } => {
                quote!(#p::Trigger::HumanRequired { field: #field })
            }
        });
        let (target, human, hours) = (&e.target, e.human_required, e.timeout_hours.0);
        quote!(#p::Escalation {
            triggers: &[#(#triggers),*],
            target_agent: #target,
            human_required: #human,
            timeout_hours: #hours,
        })
    }));
    let kpis = args.kpis.iter().map(|k| {
        let (metric, unit) = (&k.metric, &k.unit);
        let [target, warning, critical] = k.numbers.map(|(v, _)| v);
        let dir = Ident::new(k.direction.variant, Span::call_site());
        let source = match (metric.value().as_str(), &k.field) {
            (_, Some(f)) => quote!(#p::KpiSource::OutputMean(#f)),
            ("avg_processing_time", None) => quote!(#p::KpiSource::ProcessingTime),
            _ => quote!(#p::KpiSource::SuccessRate),
        };
        quote!(#p::Kpi {
            metric_id: #metric,
            target: #target,
            threshold_warning: #warning,
            threshold_critical: #critical,
            unit: #unit,
            direction: #p::Direction::#dir,
            source: #source,
        })
    });
    let handler = func.item.sig.ident.to_string();
    quote! {
        #p::AgentContract {
            id: #id,
            name: #name,
            description: #description,
            role: #p::AgentRole::#role,
            domain: #domain,
            version: #version,
            owner: #owner,
            tools: &[#(#tools),*],
            skills: &[#(#skills),*],
            memory: #p::Memory { short_term: #short_term, long_term: #long_term, shared: #shared },
            pre_conditions: &[#(#pre_texts),*],
            post_conditions: &[#(#post_texts),*],
            invariants: &[#(#invariants),*],
            escalation: #escalation,
            kpis: &[#(#kpis),*],
            module: ::core::module_path!(),
            handler: #handler,
            location: #p::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() },
        }
    }
}

/// The role's variant; checked present before expansion.
fn role_ident(args: &Args) -> Ident {
    let variant = args.role.as_ref().map_or("Executor", |(c, _)| c.variant);
    Ident::new(variant, Span::call_site())
}

/// `Uses<S>` for each listed skill, in the macro's context (so that
/// `unsafe_code`, even forbidden, does not flag the macro's own impl), with
/// the check that `S`'s `reusable_by` lets the agent's role run it.
fn uses(args: &Args, func: &SkillFn, p: &TokenStream) -> TokenStream {
    let ident = &func.item.sig.ident;
    let id = args.id.as_ref().map(LitStr::value).unwrap_or_default();
    let role_word = args
        .role
        .as_ref()
        .map(|(_, w)| w.clone())
        .unwrap_or_default();
    let role = role_ident(args);
    args.skills
        .iter()
        .map(|(s, _)| {
            let skill = path_text(s);
            let msg = format!(
                "agent `{id}` has role `{role_word}`, but its skill `{skill}` does not let role `{role_word}` run it (`execute` or `admin` in its reusable_by); add `{role_word} = \"execute\"` to `reusable_by(...)` in the #[skill] of `{skill}`, or remove `{skill}` from the agent's `skills(...)`"
            );
            let grant = respan(
                quote!(unsafe impl #p::Uses<#s> for #ident {}),
                s.span().resolved_at(Span::call_site()),
            );
            let check = respan(
                quote!(#p::assert_reusable(<#s as #p::Skill>::MANIFEST, #p::AgentRole::#role, #msg)),
                s.span(),
            );
            quote_spanned! {s.span()=>
                #grant
                const _: () = #check;
            }
        })
        .collect()
}

/// The ambient scan of the body and the conditions' closures: an agent may
/// reach what one of the skills it lists may (a capability covering it, or
/// the skill's own `ambient(...)` allowance), and nothing more, so that its
/// export's capability closure is a checked fact.
fn ambient(args: &Args, func: &SkillFn, p: &TokenStream) -> TokenStream {
    let id = args.id.as_ref().map(LitStr::value).unwrap_or_default();
    let mut code = func.body.stream();
    for (_, check) in args.pre.iter().chain(&args.post) {
        code.extend(quote!({ #check }));
    }
    let mut out = TokenStream::new();
    for finding in crate::ambient::scan(code) {
        let kind = finding.kind;
        let msg = format!(
            "agent `{id}` uses `{}` ({}), which none of the skills it lists may do: an agent reaches only what its skills reach; add a skill to `skills(...)` whose capabilities cover it ({}), and let that skill do it",
            finding.path,
            kind.as_str().replace('_', " "),
            crate::ambient::needs(kind),
        );
        let variant = Ident::new(&format!("{kind:?}"), Span::call_site());
        let allowed = args.skills.iter().map(|(s, _)| {
            quote!(|| #p::ambient_allowed(<#s as #p::Skill>::MANIFEST, #p::Ambient::#variant))
        });
        out.extend(respan(
            quote! {
                const _: () = if !(false #(#allowed)*) {
                    ::core::panic!(#msg)
                };
            },
            finding.span,
        ));
    }
    out
}

/// Each output pointer of a KPI or a trigger names a field of the output
/// type: its first segment, as serde writes a field (snake_case, or the
/// camelCase of a `rename_all`), is read from the type where the pointer is
/// written, so a typo is the type checker's error at the pointer.
fn pointers(args: &Args, output: &Type) -> TokenStream {
    let mut fields: Vec<&LitStr> = args.kpis.iter().filter_map(|k| k.field.as_ref()).collect();
    if let Some(e) = &args.escalation {
        for t in &e.triggers {
            match t {
                Trigger::ConfidenceBelow { field, .. } | Trigger::HumanRequired { field } => {
                    fields.push(field)
                }
                Trigger::ErrorCountAbove(_) => {}
            }
        }
    }
    let mut out = TokenStream::new();
    for f in fields {
        let value = f.value();
        let Some(first) = value.split('/').nth(1) else {
            continue;
        };
        let name = first.to_snake_case();
        if syn::parse_str::<Ident>(&name).is_err() {
            continue;
        }
        let field = Ident::new(&name, f.span());
        let o = Ident::new("__skill_output", Span::mixed_site());
        out.extend(respan(
            quote!(const _: fn(&#output) = |#o| { let _ = &#o.#field; };),
            f.span(),
        ));
    }
    out
}

/// A pre-condition's check: a closure untyped, or typed as the input is
/// written, as it is (coerced to the pointer); anything else through
/// `PreconditionFn`, whose message names the expected form when it does not
/// fit.
fn pre_check(check: &Expr, input: &Type, p: &TokenStream) -> TokenStream {
    let text = |t: &dyn quote::ToTokens| t.to_token_stream().to_string().replace(' ', "");
    let as_input = matches!(check, Expr::Closure(c) if c.inputs.iter().all(|p| match p {
        syn::Pat::Type(t) => text(&t.ty) == format!("&{}", text(input)),
        _ => true,
    }));
    if untyped_closure(check) || as_input {
        return quote!(#check);
    }
    let (f, i) = (
        Ident::new("__skill_check", Span::mixed_site()),
        Ident::new("i", Span::mixed_site()),
    );
    let call = at_check(
        quote!(#p::PreconditionFn::<#input, _>::holds),
        check,
        quote!(#i, &::core::default::Default::default()),
    );
    quote!({
        fn #f(#i: &#input) -> bool { #call }
        #f
    })
}

/// A post-condition's check: an untyped closure as it is, by its number of
/// parameters; anything else through `PostconditionFn` (input first, or the
/// output alone), whose message names the expected forms.
fn post_check(check: &Expr, input: &Type, output: &Type, p: &TokenStream) -> TokenStream {
    if untyped_closure(check) {
        let both = matches!(check, Expr::Closure(c) if c.inputs.len() == 2);
        return if both {
            quote!(#p::PostCheck::Both(#check))
        } else {
            quote!(#p::PostCheck::Output(#check))
        };
    }
    let (f, i, o) = (
        Ident::new("__skill_check", Span::mixed_site()),
        Ident::new("i", Span::mixed_site()),
        Ident::new("o", Span::mixed_site()),
    );
    let call = at_check(
        quote!(#p::PostconditionFn::<#input, #output, _>::holds),
        check,
        quote!(#i, #o),
    );
    quote!(#p::PostCheck::Both({
        fn #f(#i: &#input, #o: &#output) -> bool { #call }
        #f
    }))
}

/// `function(&(check), rest)`, the call and the borrow at the check so that
/// an unfit check is reported there; `rest` keeps its own spans (the
/// generated parameters it names).
fn at_check(function: TokenStream, check: &Expr, rest: TokenStream) -> TokenStream {
    let span = check.span();
    let mut args = respan(quote!(&), span);
    let mut borrowed = proc_macro2::Group::new(
        proc_macro2::Delimiter::Parenthesis,
        quote::ToTokens::to_token_stream(check),
    );
    borrowed.set_span(span);
    args.extend([proc_macro2::TokenTree::from(borrowed)]);
    args.extend(quote!(, #rest));
    let mut group = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, args);
    group.set_span(span);
    let mut call = respan(function, span);
    call.extend([proc_macro2::TokenTree::from(group)]);
    call
}

fn untyped_closure(check: &Expr) -> bool {
    matches!(check, Expr::Closure(c) if c.inputs.iter().all(|p| !matches!(p, syn::Pat::Type(_))))
}

fn opt(t: Option<TokenStream>) -> TokenStream {
    match t {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    }
}
