//! `#[agent(...)]`: the AI-COS agent contract (seed 002) on an `async fn`.
//!
//! Checked here, each at its token: the id (dotted snake_case), the version
//! (semver), the role, domain, tool permissions and storage (their words),
//! `rate_limit >= 1`, KPI thresholds ordered for the declared direction, and
//! escalation triggers. Checked by rustc through the expansion: every listed
//! skill is a skill (`<S as Skill>`), and its `reusable_by` admits the agent's
//! role at `execute` or above (a constant that panics with the agent, skill,
//! role and fix when it does not).

mod parts;

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use skill_core::manifest::AgentRole;
use skill_core::names::{is_agent_id, is_semver};
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Path, Type};

use crate::args::{List, path_text};
use crate::ast::func::{FnWithBody, SkillFn};
use crate::ast::read::{nodes, str_list, str_lit, sub_list, word};
use crate::ast::types::Choice;
use crate::ctxt::Ctxt;
use crate::expand::tokens::respan;
use crate::source_text::source_text;

const KEYS: &[&str] = &[
    "id",
    "name",
    "role",
    "domain",
    "version",
    "owner",
    "tools",
    "skills",
    "memory",
    "pre_condition",
    "post_condition",
    "invariants",
    "escalation",
    "kpi",
];

#[derive(Default)]
struct Args {
    id: Option<LitStr>,
    name: Option<LitStr>,
    role: Option<(Choice, String)>,
    domain: Option<LitStr>,
    version: Option<LitStr>,
    owner: Option<LitStr>,
    tools: Vec<(LitStr, Choice, u32)>,
    skills: Vec<(Path, bool)>,
    short_term: Option<u32>,
    long_term: Option<Choice>,
    shared: Option<Vec<LitStr>>,
    pre: Vec<(LitStr, Expr)>,
    post: Vec<(LitStr, Expr)>,
    invariants: Vec<LitStr>,
    escalation: Option<parts::Escalation>,
    kpis: Vec<parts::Kpi>,
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let f: FnWithBody = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                Span::call_site(),
                "#[agent] goes on a free `async fn` with a body, like `pub async fn my_agent(ctx: AgentCtx, input: In) -> Result<Out, E> { ... }`",
            )
            .into_compile_error();
            return quote!(#e #item);
        }
    };
    let cx = Ctxt::new();
    let func = SkillFn::from_item(&cx, f);
    let args = match syn::parse2::<List>(attr) {
        Ok(list) => read(&cx, list, &func),
        Err(e) => {
            cx.push(e);
            Args::default()
        }
    };
    let ident = &func.item.sig.ident;
    let vis = &func.item.vis;
    let p = quote!(::skill_runtime::__private);
    let sig = crate::expand::completed_sig(&func);
    let body = &func.body;
    let attrs = &func.item.attrs;
    let user_fn = quote!(#(#attrs)* #vis #sig #body);
    let marker = quote! {
        #[doc = concat!("The agent marker of [`", stringify!(#ident), "()`].")]
        #[allow(non_camel_case_types)]
        #vis struct #ident {}
    };
    if let Err(e) = cx.check() {
        let e = e.into_compile_error();
        return quote!(#e #user_fn #marker);
    }
    let unit: Type = syn::parse_quote!(());
    let input = func.input.clone().unwrap_or(unit.clone());
    let output = func.output.clone().unwrap_or(unit);
    let (error, execute) = {
        let call_args = if func.ctx_param.is_some() {
            quote!(ctx, input)
        } else {
            quote!(input)
        };
        let call_args = if func.input.is_some() {
            call_args
        } else if func.ctx_param.is_some() {
            quote!(ctx)
        } else {
            quote!()
        };
        let keep_ctx = if func.ctx_param.is_some() {
            quote!()
        } else {
            quote!(let _ = ctx;)
        };
        let keep_input = if func.input.is_some() {
            quote!()
        } else {
            quote!(let _ = input;)
        };
        match &func.error {
            Some(e) => (quote!(#e), quote!(#keep_ctx #keep_input #ident(#call_args))),
            None => (
                quote!(#p::Never),
                quote!(#keep_ctx #keep_input async move { ::core::result::Result::Ok(#ident(#call_args).await) }),
            ),
        }
    };
    let lit_or = |l: &Option<LitStr>| l.as_ref().map(LitStr::value).unwrap_or_default();
    let (id, name, domain, version, owner) = (
        lit_or(&args.id),
        lit_or(&args.name),
        lit_or(&args.domain),
        lit_or(&args.version),
        lit_or(&args.owner),
    );
    // Present whenever no error was reported (a missing role is one).
    let Some((role, role_word)) = args.role.as_ref().map(|(c, w)| (c.variant, w.clone())) else {
        let e = syn::Error::new(
            Span::call_site(),
            "an agent contract needs `role = \"...\"`",
        )
        .into_compile_error();
        return quote!(#e #user_fn #marker);
    };
    let role_ident = syn::Ident::new(role, Span::call_site());
    let description = func
        .doc
        .as_ref()
        .map(|(d, _)| d.clone())
        .unwrap_or_default();
    let tools = args.tools.iter().map(|(tid, perm, rate)| {
        let perm = syn::Ident::new(perm.variant, Span::call_site());
        quote!(#p::AgentTool { tool_id: #tid, permission: #p::ToolPermission::#perm, rate_limit: #rate })
    });
    let skills = args.skills.iter().map(|(s, required)| {
        let m = respan(quote!(<#s as #p::Skill>::MANIFEST), s.span());
        quote!(#p::AgentSkill { manifest: #m, required: #required })
    });
    let uses = args.skills.iter().map(|(s, _)| {
        let skill = path_text(s);
        let msg = format!(
            "agent `{id}` has role `{role_word}`, but its skill `{skill}` does not allow role `{role_word}` at `execute` or above in its reusable_by; add `{role_word} = \"execute\"` to `reusable_by(...)` in the #[skill] of `{skill}`, or remove `{skill}` from the agent's `skills(...)`"
        );
        let check = respan(
            quote!(#p::assert_reusable(<#s as #p::Skill>::MANIFEST, #p::AgentRole::#role_ident, #msg)),
            s.span(),
        );
        quote_spanned! {s.span()=>
            unsafe impl #p::Uses<#s> for #ident {}
            const _: () = #check;
        }
    });
    let short_term = opt(args.short_term.map(|n| quote!(#n)));
    let long_term = opt(args.long_term.as_ref().map(|c| {
        let v = syn::Ident::new(c.variant, Span::call_site());
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
    let pre = args.pre.iter().map(|(code, check)| {
        let text = source_text(check);
        quote!(#p::PreCondition { expression: #text, error_code: #code, check: #check })
    });
    let post = args.post.iter().map(|(code, check)| {
        let text = source_text(check);
        let both = matches!(check, Expr::Closure(c) if c.inputs.len() == 2);
        let check = if both {
            quote!(#p::PostCheck::Both(#check))
        } else {
            quote!(#p::PostCheck::Output(#check))
        };
        quote!(#p::PostCondition { expression: #text, error_code: #code, check: #check })
    });
    let invariants = &args.invariants;
    let escalation = opt(args.escalation.as_ref().map(|e| {
        let (triggers, target, human, hours) =
            (&e.triggers, &e.target, e.human_required, e.timeout_hours);
        quote!(#p::Escalation {
            triggers: &[#(#triggers),*],
            target_agent: #target,
            human_required: #human,
            timeout_hours: #hours,
        })
    }));
    let kpis = args.kpis.iter().map(|k| {
        let (metric, unit, source) = (&k.metric, &k.unit, &k.source);
        let [target, warning, critical] = k.numbers;
        let dir = syn::Ident::new(k.direction.variant, Span::call_site());
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
    let handler = ident.to_string();
    quote! {
        #user_fn
        #marker
        const _: () = {
            impl #p::Agent for #ident {
                type Input = #input;
                type Output = #output;
                type Error = #error;
                const CONTRACT: &'static #p::AgentContract = &#p::AgentContract {
                    id: #id,
                    name: #name,
                    description: #description,
                    role: #p::AgentRole::#role_ident,
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
                    handler: #handler,
                    location: #p::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() },
                };
                const PRE_CONDITIONS: &'static [#p::PreCondition<#input>] = &[#(#pre),*];
                const POST_CONDITIONS: &'static [#p::PostCondition<#input, #output>] = &[#(#post),*];
                fn execute(
                    ctx: #p::AgentCtx<Self>,
                    input: #input,
                ) -> impl ::core::future::Future<Output = ::core::result::Result<#output, #error>> + ::core::marker::Send {
                    #execute
                }
            }
            #(#uses)*
            #p::inventory::submit! { #p::AgentEntry::of::<#ident>() }
        };
    }
}

fn opt(t: Option<TokenStream>) -> TokenStream {
    match t {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    }
}

fn read(cx: &Ctxt, list: List, func: &SkillFn) -> Args {
    let mut a = Args::default();
    for node in nodes(
        cx,
        list,
        "#[agent]",
        KEYS,
        &["pre_condition", "post_condition", "kpi"],
    ) {
        match node.key().as_str() {
            "id" => {
                if let Some(s) = str_lit(cx, &node) {
                    if !is_agent_id(&s.value()) {
                        cx.error_spanned(&s, format!("agent id \"{}\" must be snake_case words joined by dots, at least two, like \"agent.seo.vlevel\"", s.value()));
                    }
                    a.id = Some(s);
                }
            }
            "name" => a.name = str_lit(cx, &node),
            "owner" => a.owner = str_lit(cx, &node),
            "version" => {
                if let Some(s) = str_lit(cx, &node) {
                    if !is_semver(&s.value()) {
                        cx.error_spanned(&s, format!("\"{}\" is not a semver version; write MAJOR.MINOR.PATCH, like \"1.0.0\"", s.value()));
                    }
                    a.version = Some(s);
                }
            }
            "domain" => {
                if let Some(s) = str_lit(cx, &node) {
                    if skill_core::manifest::Domain::parse(&s.value()).is_none() {
                        let words: Vec<&str> = skill_core::manifest::Domain::ALL
                            .iter()
                            .map(|w| w.as_str())
                            .collect();
                        cx.error_spanned(
                            &s,
                            format!(
                                "`domain` cannot be \"{}\"; the agent model's domains are {}",
                                s.value(),
                                words.join(", ")
                            ),
                        );
                    }
                    a.domain = Some(s);
                }
            }
            "role" => {
                a.role = word::<AgentRole>(cx, &node).map(|c| {
                    let w = c.variant.to_ascii_lowercase();
                    (c, w)
                });
            }
            "tools" => {
                for t in nodes(cx, sub_list(cx, node), "tools(...)", &["tool"], &["tool"]) {
                    a.tools.extend(parts::tool(cx, t));
                }
            }
            "skills" => a.skills = parts::skills(cx, node),
            "memory" => parts::memory(cx, node, &mut a),
            "pre_condition" | "post_condition" => {
                let pre = node.key() == "pre_condition";
                if let Some(c) = parts::condition(cx, node) {
                    if pre { a.pre.push(c) } else { a.post.push(c) }
                }
            }
            "invariants" => a.invariants = str_list(cx, &node),
            "escalation" => a.escalation = parts::escalation(cx, node),
            "kpi" => a.kpis.extend(parts::kpi(cx, node)),
            _ => {}
        }
    }
    let span = func.item.sig.ident.span();
    for (missing, what) in [
        (a.id.is_none(), "id = \"agent.domain.name\""),
        (a.name.is_none(), "name = \"Display name\""),
        (a.role.is_none(), "role = \"executor\""),
        (a.domain.is_none(), "domain = \"seo\""),
        (a.version.is_none(), "version = \"1.0.0\""),
        (a.owner.is_none(), "owner = \"team\""),
    ] {
        if missing && !cx.has_errors() {
            cx.error_at(
                span,
                format!("an agent contract needs `{what}` in #[agent(...)]"),
            );
        }
    }
    if func.doc.is_none() {
        cx.error_at(
            span,
            "document the agent with a `///` comment: it is the contract's description",
        );
    }
    a
}
