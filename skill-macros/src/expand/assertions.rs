//! The assertions a skill's expansion carries, proved by the type checker: effectful
//! capabilities listed as side effects, ambient uses covered, irreversible
//! deletes only on destructive skills; and the form of condition functions.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use crate::args::path_text;
use crate::ast::func::SkillFn;
use crate::ast::read::same_path;
use crate::ast::types::{Choice, SkillArgs};
use crate::expand::tokens::respan;

/// A condition's closure as a function item,
/// `({ fn __skill_check(i: &In) -> bool {...} __skill_check })`,
/// when its parameters are all typed: a function item coerces to a function
/// pointer as itself, where a closure needs a shim compiled per condition.
/// Anything else (untyped parameters, `Self` in the body) stays a closure.
pub(super) fn check_fn(check: &syn::Expr) -> TokenStream {
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

/// Which list a condition belongs to: it decides the check's parameters.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Condition {
    Pre,
    Post,
    Rule,
}

/// A condition's check as the value of its slice entry: the variant of
/// `InputCheck`/`OutputCheck` and the function it holds.
///
/// A closure whose parameters are untyped, or typed exactly as the skill's
/// types, is coerced to the variant's pointer (cheap, and rustc infers
/// untyped parameters from it). Anything else (a function's path, a closure
/// typed otherwise) is called through `PreconditionFn`/`PostconditionFn`/
/// `RuleFn` in a function of the expected signature: whatever it takes, if it
/// fits one form it runs, and if it fits none the error is the trait's, which
/// names the expected forms.
pub(super) fn condition_check(
    kind: Condition,
    check: &syn::Expr,
    func: &SkillFn,
    p: &TokenStream,
) -> TokenStream {
    let input = func
        .input
        .as_ref()
        .map(ToTokens::to_token_stream)
        .unwrap_or_default();
    let output = func
        .output
        .as_ref()
        .map(ToTokens::to_token_stream)
        .unwrap_or_default();
    // Types compared as written, spaces left out.
    let text = |t: &dyn ToTokens| t.to_token_stream().to_string().replace(' ', "");
    let (i, o) = (format!("&{}", text(&input)), format!("&{}", text(&output)));
    let arity = crate::check::arity(check);
    let (enum_name, one, two) = match kind {
        Condition::Pre => ("InputCheck", "Input", "InputCaller"),
        Condition::Post | Condition::Rule => ("OutputCheck", "Output", "InputOutput"),
    };
    let direct = match check {
        syn::Expr::Closure(c) => {
            let expected: &[&dyn Fn(&str) -> bool] = match (kind, arity) {
                (Condition::Pre, 1) => &[&|t| t == i],
                (Condition::Pre, _) => &[&|t| t == i, &|t| {
                    t.starts_with('&') && t.ends_with("Caller")
                }],
                (_, 1) => &[&|t| t == o],
                _ => &[&|t| t == i, &|t| t == o],
            };
            mentions_self(c.body.to_token_stream())
                || c.inputs
                    .iter()
                    .zip(expected)
                    .all(|(param, fits)| match param {
                        syn::Pat::Type(t) => fits(&text(&t.ty)),
                        _ => true,
                    })
        }
        _ => false,
    };
    let enum_ident = Ident::new(enum_name, Span::call_site());
    if direct {
        let variant = Ident::new(if arity == 2 { two } else { one }, Span::call_site());
        return respan(quote!(#p::#enum_ident::#variant), check.span())
            .into_iter()
            .chain(check_fn(check))
            .collect();
    }
    let trait_name = match kind {
        Condition::Pre => "PreconditionFn",
        Condition::Post => "PostconditionFn",
        Condition::Rule => "RuleFn",
    };
    let trait_ident = Ident::new(trait_name, Span::call_site());
    // The skill's types named, so that a check taking others is not inferred
    // as another instance of the trait but fails with its message.
    let generics = match kind {
        Condition::Pre => quote!(<#input, _>),
        _ => quote!(<#input, #output, _>),
    };
    let variant = Ident::new(two, Span::call_site());
    let name = Ident::new("__skill_check", Span::mixed_site());
    let (a, b) = (
        Ident::new("a", Span::mixed_site()),
        Ident::new("b", Span::mixed_site()),
    );
    let second = match kind {
        Condition::Pre => quote!(&#p::Caller),
        _ => quote!(&#output),
    };
    // The call at the check (its path, parentheses and borrow), so that an
    // unfit check is reported there and not at the whole attribute.
    let span = check.span();
    let mut arg = respan(quote!(&), span);
    arg.extend([group(
        proc_macro2::Delimiter::Parenthesis,
        check.to_token_stream(),
        span,
    )]);
    let mut call = respan(quote!(#p::#trait_ident::#generics::holds), span);
    call.extend([group(
        proc_macro2::Delimiter::Parenthesis,
        quote!(#arg, #a, #b),
        span,
    )]);
    quote!(#p::#enum_ident::#variant({
        fn #name(#a: &#input, #b: #second) -> bool {
            #call
        }
        #name
    }))
}

fn group(
    delimiter: proc_macro2::Delimiter,
    tokens: TokenStream,
    span: Span,
) -> proc_macro2::TokenTree {
    let mut g = proc_macro2::Group::new(delimiter, tokens);
    g.set_span(span);
    g.into()
}

/// Whether `tokens` use `Self`, which a nested function cannot.
fn mentions_self(tokens: TokenStream) -> bool {
    crate::ast::read::find_token(
        tokens,
        &|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "Self"),
    )
    .is_some()
}

/// Compile-time checks that need the capability's declaration, which lives in
/// another item (often another crate): they run as constant evaluation, so a
/// broken rule fails the build with our message, spanned at the capability.
/// The checks as items, and the first effect check as an expression (empty if
/// there is none).
pub(super) fn effect_checks(
    args: &SkillArgs,
    func: &SkillFn,
    p: &TokenStream,
) -> (TokenStream, TokenStream) {
    // What the messages call it, and the attribute to fix.
    let (what, attr) = if args.op.is_some() {
        ("op", "#[op(...)]")
    } else {
        ("skill", "#[skill(...)]")
    };
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
            "{what} `{skill}` declares capability `{name}`, which writes, deletes, upserts, reaches the network or spawns processes, but does not list it as a side effect; add `{name}(target = \"...\", reversible = ...)` to `side_effects(...)`"
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
    // The body and every condition's closure: a check runs in the skill's
    // process like its body.
    let mut code = func.body.stream();
    let checks = (args.preconditions.iter().map(|c| &c.check))
        .chain(args.postconditions.iter().map(|c| &c.check))
        .chain(args.validation_rules.iter().map(|c| &c.check));
    for check in checks.flatten() {
        code.extend(quote!({ #check }));
    }
    for finding in crate::ambient::scan(code) {
        if args.ambient.iter().any(|(k, _)| *k == finding.kind) {
            continue;
        }
        let kind = finding.kind;
        let msg = if kind == crate::ambient::Kind::UnsafeCode {
            format!(
                "{what} `{skill}` has `{}` code, whose effects nothing checks (a call into C reaches files, the network or processes unseen); move it into a capability's resource, whose code the capability answers for, or allow it with `ambient(unsafe_code = \"why\")`",
                finding.path
            )
        } else {
            format!(
                "{what} `{skill}` uses `{}` ({}) but declares no capability covering it: it needs {}; declare one in `capabilities(...)` and reach the resource through `ctx`, or allow it with `ambient({} = \"why\")`",
                finding.path,
                kind.as_str().replace('_', " "),
                crate::ambient::needs(kind),
                kind.as_str(),
            )
        };
        out.extend(uncovered(p, &args.capabilities, kind, &msg, finding.span));
    }
    // A bodiless op's kind is the authority it exercises: a script runs a
    // process, an HTTP or MCP op makes a request. The op declares a
    // capability for it, which every caller must then declare (`calls`'s
    // subset rule); an `ambient(...)` allowance would stop at the op, so it
    // does not count.
    if let Some((kind, does, c)) = args.op.as_ref().and_then(op_authority) {
        let msg = format!(
            "op `{skill}` {does} but declares no capability covering it: it needs {}; declare one in `capabilities(...)`, which every skill or pipeline that calls the op must declare too",
            crate::ambient::needs(kind),
        );
        out.extend(uncovered(p, &args.capabilities, kind, &msg, c.span));
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
                "{what} `{skill}` has an irreversible delete (`{name}`, reversible = false) but is not marked destructive; add `destructive` to {attr}"
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

/// The ambient authority a bodiless op's runtime exercises, what it does in
/// words, and the `runtime = "..."` choice to span the error at.
/// A constant that fails with `msg` at `span` unless one of `capabilities`
/// covers ambient `kind` (`CapabilityInfo::covers`, evaluated by the
/// compiler).
fn uncovered(
    p: &TokenStream,
    capabilities: &[syn::Path],
    kind: crate::ambient::Kind,
    msg: &str,
    span: Span,
) -> TokenStream {
    let variant = Ident::new(&format!("{kind:?}"), Span::call_site());
    let covered = capabilities
        .iter()
        .map(|c| quote!(|| <#c as #p::Capability>::INFO.covers(#p::Ambient::#variant)));
    respan(
        quote! {
            const _: () = if !(false #(#covered)*) {
                ::core::panic!(#msg)
            };
        },
        span,
    )
}

fn op_authority(op: &crate::ast::types::OpArgs) -> Option<(crate::ambient::Kind, String, &Choice)> {
    let c = op.runtime.as_ref()?;
    let lit = |l: &Option<syn::LitStr>| l.as_ref().map(syn::LitStr::value).unwrap_or_default();
    Some(match c.variant {
        "Script" => (
            crate::ambient::Kind::Process,
            format!("runs the script `{}` (a process)", lit(&op.command)),
            c,
        ),
        "Http" => (
            crate::ambient::Kind::Network,
            format!("requests `{}` (network)", lit(&op.url)),
            c,
        ),
        "Mcp" => (
            crate::ambient::Kind::Network,
            format!(
                "calls MCP tool `{}` on the runtime's MCP client (network)",
                lit(&op.tool)
            ),
            c,
        ),
        _ => return None,
    })
}
