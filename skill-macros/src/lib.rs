//! Procedural macros of `skill-runtime`. Depend on `skill-runtime` and use these
//! through `skill_runtime::prelude`; this crate's paths are not public API.

#![warn(missing_docs)]

mod agent;
mod ambient;
mod args;
mod ast;
mod capability;
mod check;
mod ctxt;
mod expand;
mod failure;
mod fallback;
mod source_text;
mod suggest;

use proc_macro::TokenStream;

/// Turn an `async fn` into a skill. See `skill_runtime` and `docs/attributes.md`.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    skill_impl(attr.into(), item.into(), ast::types::Form::Skill).into()
}

/// Declare an op (the op registry's lower-level entries): on an `async fn` with
/// a body, a native op; on a bodiless one, an op with `runtime = "mcp"` (and
/// `tool`), `"script"` (and `command`) or `"http"` (and `url`).
#[proc_macro_attribute]
pub fn op(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match syn::parse2::<ast::func::FnWithBody>(item.clone()) {
        Ok(f) => skill_fn(attr.into(), f, ast::types::Form::Op).into(),
        Err(_) => declared_impl(attr.into(), item, ast::types::Form::Op).into(),
    }
}

fn skill_impl(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    form: ast::types::Form,
) -> proc_macro2::TokenStream {
    let item: ast::func::FnWithBody = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) if let Ok(decl) = syn::parse2::<syn::ForeignItemFn>(item.clone()) => {
            // A skill without a body: say so, and keep its name defined (with a
            // body that is never run) so that the crate gives no other error.
            let e = syn::Error::new_spanned(
                decl.semi_token,
                "a #[skill] function has a body: `async fn name(input: In) -> Out { ... }`; a step that runs elsewhere is a bodiless `#[op(runtime = \"mcp\" | \"script\" | \"http\", ...)]`, and a chain of steps a bodiless `#[pipeline(...)]`",
            );
            let body = proc_macro2::Group::new(
                proc_macro2::Delimiter::Brace,
                quote::quote!(::core::unreachable!()),
            );
            let mut attrs = decl.attrs;
            attrs.push(syn::parse_quote!(#[allow(unused_variables)]));
            let f = ast::func::FnWithBody::new(attrs, decl.vis, decl.sig, body);
            let func = ast::func::SkillFn::from_item(&ctxt::Ctxt::new(), f);
            return fallback::skill(e, None, Some(&func));
        }
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[skill] goes on a free `async fn` with a body, like `pub async fn lookup(input: LookupInput) -> LookupOutput { ... }`",
            )
            .into_compile_error();
            return quote::quote!(#e #item);
        }
    };
    skill_fn(attr, item, form)
}

/// A skill (or native op) from its parsed function.
fn skill_fn(
    attr: proc_macro2::TokenStream,
    item: ast::func::FnWithBody,
    form: ast::types::Form,
) -> proc_macro2::TokenStream {
    let cx = ctxt::Ctxt::new();
    let func = ast::func::SkillFn::from_item(&cx, item);
    let list: args::List = match syn::parse2(attr) {
        Ok(l) => l,
        Err(e) => return fallback::skill(e, None, Some(&func)),
    };
    let args = ast::types::SkillArgs::from_list_as(&cx, list, form);
    check::all(&cx, &args, &func);
    check::op_runtime(&cx, &args, true);
    match cx.check() {
        Ok(()) => expand::skill(&args, &func),
        Err(e) => fallback::skill(e, Some(&args), Some(&func)),
    }
}

/// Declare a pipeline skill on a bodiless `async fn`. See `skill_runtime`.
#[proc_macro_attribute]
pub fn pipeline(attr: TokenStream, item: TokenStream) -> TokenStream {
    declared_impl(attr.into(), item.into(), ast::types::Form::Pipeline).into()
}

/// A pipeline, or an op that runs elsewhere: a declaration without a body.
fn declared_impl(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    form: ast::types::Form,
) -> proc_macro2::TokenStream {
    let (what, shape) = match form {
        ast::types::Form::Op => (
            "an op",
            "#[op] goes on an `async fn`: with a body for a native op, or bodiless, like `pub async fn remote_summarize(input: In) -> Out;`, for `runtime = \"mcp\"`, `\"script\"` or `\"http\"`",
        ),
        _ => (
            "a pipeline",
            "#[pipeline] goes on a bodiless `async fn`, like `pub async fn summarize_note(input: SummarizeNoteInput) -> SummarizeNoteOutput;`",
        ),
    };
    let decl: syn::ForeignItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let span = syn::parse2::<ast::func::FnWithBody>(item)
                .map(|f| f.body.span())
                .unwrap_or_else(|_| proc_macro2::Span::call_site());
            return syn::Error::new(
                span,
                format!("{shape}: its body is its steps, so end it with `;`"),
            )
            .into_compile_error();
        }
    };
    // The declaration with an empty body: the same checks as a skill's signature.
    let body = proc_macro2::Group::new(
        proc_macro2::Delimiter::Brace,
        proc_macro2::TokenStream::new(),
    );
    let item = ast::func::FnWithBody::new(decl.attrs, decl.vis, decl.sig, body);
    let cx = ctxt::Ctxt::new();
    let func = ast::func::SkillFn::from_item(&cx, item);
    if let Some(i) = func.ctx_param {
        let arg = func.item.sig.inputs.iter().nth(i);
        cx.error_spanned(
            arg,
            format!("{what} without a body takes only its input, `(input: MyInput)`"),
        );
    }
    if let (Some(_), syn::ReturnType::Type(_, ty)) = (&func.error, &func.item.sig.output) {
        cx.error_spanned(
            ty,
            format!("{what} without a body returns its output type, not a `Result`: its failures have their own failure mode"),
        );
    }
    let list: args::List = match syn::parse2(attr) {
        Ok(l) => l,
        Err(e) => return e.into_compile_error(),
    };
    let args = ast::types::SkillArgs::from_list_as(&cx, list, form);
    check::all(&cx, &args, &func);
    if form == ast::types::Form::Op {
        check::op_runtime(&cx, &args, false);
    } else {
        check::steps(&cx, &args);
    }
    match cx.check() {
        Ok(()) => expand::declared(&args, &func),
        Err(e) => {
            let marker = expand::marker(&func);
            let e = e.into_compile_error();
            quote::quote!(#e #marker)
        }
    }
}

/// Declare an agent (the AI-COS agent contract) on an `async fn`. See
/// `skill_runtime` and `docs/agents.md`.
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    agent::expand(attr.into(), item.into()).into()
}

/// Declare a capability on a unit struct:
/// `#[capability(id = "database.write", effect = "database", operation = "write", resource = Db)]`.
/// The doc comment is its description.
#[proc_macro_attribute]
pub fn capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item2 = proc_macro2::TokenStream::from(item.clone());
    let list: args::List = match syn::parse(attr) {
        Ok(l) => l,
        Err(e) => {
            let e = e.into_compile_error();
            return quote::quote!(#e #item2).into();
        }
    };
    match syn::parse::<syn::ItemStruct>(item) {
        Ok(s) => capability::expand(list, s).into(),
        Err(_) => {
            let e = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[capability] goes on a struct, like `pub struct DatabaseWrite;`",
            )
            .into_compile_error();
            quote::quote!(#e #item2).into()
        }
    }
}

/// Derive `FailureModes` for a skill's error enum: one failure mode per variant,
/// its code the variant name in snake_case, its description the doc comment;
/// `#[failure(retryable)]` marks transient failures, `#[failure(code = "...")]`
/// overrides the code.
#[proc_macro_derive(FailureModes, attributes(failure))]
pub fn failure_modes(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(i) => failure::expand(i).into(),
        Err(e) => e.into_compile_error().into(),
    }
}
