//! `#[agent(...)]`: the AI-COS agent contract (seed 002) on an `async fn`.
//!
//! Checked here, each at its token: the id (dotted snake_case), the version
//! (semver), the role, domain, tool permissions and storage (their words),
//! `rate_limit >= 1`, KPI thresholds ordered for the declared direction, and
//! escalation triggers. Checked by rustc through the expansion: every listed
//! skill is a skill (`<S as Skill>`), and its `reusable_by` admits the agent's
//! role at `execute` or above (a constant that panics with the agent, skill,
//! role and fix when it does not).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use skill_core::agent::{Direction, Storage, ToolPermission, thresholds_ordered};
use skill_core::manifest::AgentRole;
use skill_core::names::{is_agent_id, is_semver};
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitStr, Path, Type};

use crate::args::{Entry, List, Node, NodeKind, path_text};
use crate::ast::func::{FnWithBody, SkillFn};
use crate::ast::read::{flag, int_lit, lit, nodes, str_list, str_lit, sub_list, value, word};
use crate::ast::types::Choice;
use crate::ctxt::Ctxt;
use crate::expand::tokens::respan;
use crate::source_text::source_text;

/// The words of the seed's `Domain`.
const DOMAINS: &[&str] = &["core", "infra", "data", "seo", "rag", "cart", "aicos"];

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
    escalation: Option<Escalation>,
    kpis: Vec<Kpi>,
}

struct Escalation {
    triggers: Vec<TokenStream>,
    target: LitStr,
    human_required: bool,
    timeout_hours: u32,
}

struct Kpi {
    metric: LitStr,
    numbers: [f64; 3],
    unit: LitStr,
    direction: Choice,
    source: TokenStream,
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
    let (role, role_word) = args
        .role
        .as_ref()
        .map(|(c, w)| (c.variant, w.clone()))
        .expect("checked");
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
                    if !DOMAINS.contains(&s.value().as_str()) {
                        cx.error_spanned(
                            &s,
                            format!(
                                "`domain` cannot be \"{}\"; the agent model's domains are {}",
                                s.value(),
                                DOMAINS.join(", ")
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
                    a.tools.extend(tool(cx, t));
                }
            }
            "skills" => a.skills = skills(cx, node),
            "memory" => memory(cx, node, &mut a),
            "pre_condition" | "post_condition" => {
                let pre = node.key() == "pre_condition";
                if let Some(c) = condition(cx, node) {
                    if pre { a.pre.push(c) } else { a.post.push(c) }
                }
            }
            "invariants" => a.invariants = str_list(cx, &node),
            "escalation" => a.escalation = escalation(cx, node),
            "kpi" => a.kpis.extend(kpi(cx, node)),
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

fn tool(cx: &Ctxt, node: Node) -> Option<(LitStr, Choice, u32)> {
    let span = node.span();
    let fields = nodes(
        cx,
        sub_list(cx, node),
        "tool(...)",
        &["id", "permission", "rate_limit"],
        &[],
    );
    let (mut id, mut perm, mut rate) = (None, None, None);
    for f in fields {
        match f.key().as_str() {
            "id" => id = str_lit(cx, &f),
            "permission" => perm = word::<ToolPermission>(cx, &f),
            _ => {
                if let Some(n) = int_lit(cx, &f) {
                    let v = n.base10_parse::<u32>().unwrap_or(0);
                    if v < 1 {
                        cx.error_spanned(
                            &n,
                            "`rate_limit` is calls per minute and must be at least 1",
                        );
                    }
                    rate = Some(v);
                }
            }
        }
    }
    if id.is_none() || perm.is_none() || rate.is_none() {
        cx.error_at(span, "a tool is `tool(id = \"mcp__server__tool\", permission = \"read\" | \"write\" | \"execute\", rate_limit = N)`");
    }
    Some((id?, perm?, rate?))
}

fn skills(cx: &Ctxt, node: Node) -> Vec<(Path, bool)> {
    let NodeKind::List(list, _) = node.kind else {
        cx.error_at(
            node.path.span(),
            "expected `skills(skill_a, skill_b(required = false), ...)`",
        );
        return Vec::new();
    };
    let mut out: Vec<(Path, bool)> = Vec::new();
    for e in list.0 {
        let Entry::Node(n) = e else {
            cx.error_at(e.span(), "skills(...) takes skills by their function's path, like `skills(seo_role_audit)`; the path names the skill, so a typo does not compile");
            continue;
        };
        let n = *n;
        let required = match n.kind {
            NodeKind::Bare => true,
            NodeKind::List(ref l, _) => {
                let mut required = true;
                for f in nodes(
                    cx,
                    List(clone_list(l)),
                    "a skill's options",
                    &["required"],
                    &[],
                ) {
                    required = flag(cx, &f);
                }
                required
            }
            NodeKind::Value(_) => {
                cx.error_at(n.path.span(), "write `skill` or `skill(required = false)`");
                true
            }
        };
        if out.iter().any(|(p, _)| path_text(p) == path_text(&n.path)) {
            cx.error_spanned(
                &n.path,
                format!("`{}` is listed twice in skills(...)", path_text(&n.path)),
            );
            continue;
        }
        out.push((n.path, required));
    }
    out
}

/// The entries of a list, re-parsed (the tree is not `Clone`).
fn clone_list(l: &List) -> Vec<Entry> {
    let tokens: TokenStream =
        l.0.iter()
            .map(|e| match e {
                Entry::Lit(l) => quote!(#l,),
                Entry::Node(n) => {
                    let p = &n.path;
                    match &n.kind {
                        NodeKind::Bare => quote!(#p,),
                        NodeKind::Value(v) => quote!(#p = #v,),
                        NodeKind::List(_, _) => quote!(#p,),
                    }
                }
            })
            .collect();
    syn::parse2::<List>(tokens).map(|l| l.0).unwrap_or_default()
}

fn memory(cx: &Ctxt, node: Node, a: &mut Args) {
    for m in nodes(
        cx,
        sub_list(cx, node),
        "memory(...)",
        &["short_term", "long_term", "shared"],
        &[],
    ) {
        match m.key().as_str() {
            "short_term" => {
                for f in nodes(cx, sub_list(cx, m), "short_term(...)", &["max_tokens"], &[]) {
                    a.short_term = int_lit(cx, &f).and_then(|n| n.base10_parse::<u32>().ok());
                }
            }
            "long_term" => {
                for f in nodes(cx, sub_list(cx, m), "long_term(...)", &["storage"], &[]) {
                    a.long_term = word::<Storage>(cx, &f);
                }
            }
            _ => {
                for f in nodes(cx, sub_list(cx, m), "shared(...)", &["namespaces"], &[]) {
                    a.shared = Some(str_list(cx, &f));
                }
            }
        }
    }
}

fn condition(cx: &Ctxt, node: Node) -> Option<(LitStr, Expr)> {
    let key = node.key();
    let span = node.span();
    let (mut code, mut check) = (None, None);
    for f in nodes(
        cx,
        sub_list(cx, node),
        &format!("{key}(...)"),
        &["code", "check"],
        &[],
    ) {
        if f.key() == "code" {
            code = str_lit(cx, &f);
        } else {
            check = value(cx, &f, "|input: &In| ...").cloned();
        }
    }
    if code.is_none() || check.is_none() {
        cx.error_at(span, format!("write `{key}(code = \"ERROR_CODE\", check = |input: &In| ...)`; a post-condition's closure takes `&Out`, or `&In, &Out`"));
    }
    Some((code?, check?))
}

fn number(cx: &Ctxt, node: &Node) -> Option<f64> {
    let e = value(cx, node, "a number")?;
    let (neg, inner) = match e {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    };
    let v = match lit(inner) {
        Some(Lit::Float(f)) => f.base10_parse::<f64>().ok(),
        Some(Lit::Int(i)) => i.base10_parse::<f64>().ok(),
        _ => None,
    };
    match v {
        Some(v) => Some(if neg { -v } else { v }),
        None => {
            cx.error_spanned(
                e,
                format!(
                    "`{}` takes a number, like `{} = 0.95`",
                    node.key(),
                    node.key()
                ),
            );
            None
        }
    }
}

fn escalation(cx: &Ctxt, node: Node) -> Option<Escalation> {
    let span = node.span();
    let keys = &[
        "triggers",
        "target_agent",
        "human_required",
        "timeout_hours",
    ];
    let (mut triggers, mut target, mut human, mut hours) = (Vec::new(), None, false, 24u32);
    for f in nodes(cx, sub_list(cx, node), "escalation(...)", keys, &[]) {
        match f.key().as_str() {
            "triggers" => triggers = trigger_list(cx, f),
            "target_agent" => {
                target = str_lit(cx, &f);
                if let Some(t) = &target
                    && !is_agent_id(&t.value())
                {
                    cx.error_spanned(t, "`target_agent` is an agent id, dotted snake_case like \"agent.seo.architect\"");
                }
            }
            "human_required" => human = flag(cx, &f),
            _ => {
                hours = int_lit(cx, &f)
                    .and_then(|n| n.base10_parse().ok())
                    .unwrap_or(24)
            }
        }
    }
    if triggers.is_empty() {
        cx.error_at(span, "an escalation needs `triggers(...)`: `confidence_below(field = \"/confidence\", value = 0.7)`, `error_count_above = 3`, `human_required(field = \"/human_required\")`");
    }
    let Some(target) = target else {
        cx.error_at(
            span,
            "an escalation needs `target_agent = \"agent.domain.name\"`",
        );
        return None;
    };
    Some(Escalation {
        triggers,
        target,
        human_required: human,
        timeout_hours: hours,
    })
}

fn trigger_list(cx: &Ctxt, node: Node) -> Vec<TokenStream> {
    let p = quote!(::skill_runtime::__private);
    let mut out = Vec::new();
    let keys = &["confidence_below", "error_count_above", "human_required"];
    for t in nodes(cx, sub_list(cx, node), "triggers(...)", keys, &[]) {
        match t.key().as_str() {
            "error_count_above" => {
                if let Some(n) = int_lit(cx, &t).and_then(|n| n.base10_parse::<u32>().ok()) {
                    out.push(quote!(#p::Trigger::ErrorCountAbove { count: #n }));
                }
            }
            "confidence_below" => {
                let (mut field, mut below) = (None, None);
                for f in nodes(
                    cx,
                    sub_list(cx, t),
                    "confidence_below(...)",
                    &["field", "value"],
                    &[],
                ) {
                    if f.key() == "field" {
                        field = pointer(cx, &f);
                    } else {
                        below = number(cx, &f);
                    }
                }
                if let (Some(field), Some(value)) = (field, below) {
                    out.push(quote!(#p::Trigger::ConfidenceBelow { field: #field, value: #value }));
                }
            }
            _ => {
                for f in nodes(cx, sub_list(cx, t), "human_required(...)", &["field"], &[]) {
                    if let Some(field) = pointer(cx, &f) {
                        out.push(quote!(#p::Trigger::HumanRequired { field: #field }));
                    }
                }
            }
        }
    }
    out
}

/// A JSON pointer into the output, like `"/confidence"`.
fn pointer(cx: &Ctxt, node: &Node) -> Option<LitStr> {
    let s = str_lit(cx, node)?;
    if !s.value().starts_with('/') {
        cx.error_spanned(
            &s,
            "`field` is a JSON pointer into the output, like \"/confidence\"",
        );
        return None;
    }
    Some(s)
}

fn kpi(cx: &Ctxt, node: Node) -> Option<Kpi> {
    let span = node.span();
    let p = quote!(::skill_runtime::__private);
    let keys = &[
        "metric_id",
        "target",
        "warning",
        "critical",
        "unit",
        "direction",
        "field",
    ];
    let (mut metric, mut unit, mut direction, mut field) = (None, None, None, None);
    let mut numbers: [Option<(f64, Span)>; 3] = [None; 3];
    for f in nodes(cx, sub_list(cx, node), "kpi(...)", keys, &[]) {
        match f.key().as_str() {
            "metric_id" => metric = str_lit(cx, &f),
            "unit" => unit = str_lit(cx, &f),
            "direction" => direction = word::<Direction>(cx, &f),
            "field" => field = pointer(cx, &f),
            k => {
                let i = ["target", "warning", "critical"]
                    .iter()
                    .position(|x| *x == k)
                    .unwrap_or(0);
                let at = value(cx, &f, "a number").map_or(f.span(), |e| e.span());
                numbers[i] = number(cx, &f).map(|v| (v, at));
            }
        }
    }
    let (Some(metric), Some(unit), Some(direction), [Some(t), Some(w), Some(c)]) =
        (metric, unit, direction, numbers)
    else {
        cx.error_at(span, "a KPI is `kpi(metric_id = \"...\", target = N, warning = N, critical = N, unit = \"...\", direction = \"higher\" | \"lower\")`, plus `field = \"/pointer\"` for a KPI computed from an output field");
        return None;
    };
    let dir = Direction::ALL
        .iter()
        .copied()
        .find(|d| d.as_str().eq_ignore_ascii_case(direction.variant))
        .unwrap_or(Direction::Higher);
    if !thresholds_ordered(dir, t.0, w.0, c.0) {
        let (cmp, word) = if dir == Direction::Higher {
            (">", "higher")
        } else {
            ("<", "lower")
        };
        cx.error_at(
            w.1,
            format!(
                "KPI \"{}\" is better when {word} (direction = \"{}\"), so its thresholds must be ordered target {cmp} warning {cmp} critical; here target = {}, warning = {}, critical = {}",
                metric.value(), dir.as_str(), t.0, w.0, c.0
            ),
        );
    }
    let source = match (metric.value().as_str(), field) {
        (_, Some(f)) => quote!(#p::KpiSource::OutputMean(#f)),
        ("task_success_rate", None) => quote!(#p::KpiSource::SuccessRate),
        ("avg_processing_time", None) => quote!(#p::KpiSource::ProcessingTime),
        (other, None) => {
            cx.error_spanned(&metric, format!("KPI \"{other}\" is computed from an output field: add `field = \"/pointer\"` (the built-in KPIs are \"task_success_rate\" and \"avg_processing_time\")"));
            return None;
        }
    };
    Some(Kpi {
        metric,
        numbers: [t.0, w.0, c.0],
        unit,
        direction,
        source,
    })
}
