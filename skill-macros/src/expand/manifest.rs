//! The `Manifest` constant of one skill: only the fields that differ from
//! `Manifest::DEFAULT` are written.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use crate::ast::func::SkillFn;
use crate::ast::types::SkillArgs;
use crate::expand::tokens::{opt_str, respan, slice, some, variant, variant_or};

pub(super) fn manifest(args: &SkillArgs, func: &SkillFn, p: &TokenStream) -> TokenStream {
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
        let after = match &s.after {
            None => quote!(::core::option::Option::None),
            Some(list) => quote!(::core::option::Option::Some(&[#(#list),*])),
        };
        let guard = match &s.guard {
            None => quote!(::core::option::Option::None),
            Some((runs_if, source)) => {
                quote!(::core::option::Option::Some(#p::Guard { source: #source, runs_if: #runs_if }))
            }
        };
        let on_error = s.on_error.iter().flatten();
        let retries = s
            .retries
            .as_ref()
            .and_then(|n| n.base10_parse::<u32>().ok())
            .unwrap_or(0);
        Some(quote! {
            #p::PipelineStep {
                id: #id,
                target: #p::CallTarget { kind: #p::TargetKind::#kind, name: #name, version: #version },
                inputs: #inputs,
                outputs: #outputs,
                after: #after,
                guard: #guard,
                on_error: &[#(#on_error),*],
                retries: #retries,
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
    set("intents", slice(&args.intents));
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
    set(
        "idempotency",
        args.idempotency
            .as_ref()
            .and_then(|i| i.strategy)
            .map(|strategy| {
                let strategy = variant(p, "KeyStrategy", strategy);
                let fields = args
                    .idempotency
                    .as_ref()
                    .map(|i| i.fields.as_slice())
                    .unwrap_or_default();
                quote!(::core::option::Option::Some(#p::IdempotencyKey {
                    strategy: #strategy, fields: &[#(#fields),*],
                }))
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
            let key = kind.as_str();
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
