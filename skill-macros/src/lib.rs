//! Procedural macros of `skill-runtime`. Depend on `skill-runtime` and use these
//! through `skill_runtime::prelude`; this crate's paths are not public API.

#![warn(missing_docs)]

mod agent;
mod ambient;
mod args;
mod ast;
mod capability;
mod check;
mod errors;
mod expand;
mod failure;
mod fallback;
mod skill_attr;
mod source_text;
mod suggest;

use proc_macro::TokenStream;

/// Turn an `async fn` into a skill. See `skill_runtime` and `docs/attributes.md`.
#[proc_macro_attribute]
pub fn skill(attr: TokenStream, item: TokenStream) -> TokenStream {
    skill_attr::skill(attr.into(), item.into(), ast::types::Form::Skill).into()
}

/// Declare an op (the op registry's lower-level entries): on an `async fn` with
/// a body, a native op; on a bodiless one, an op with `runtime = "mcp"` (and
/// `tool`), `"script"` (and `command`) or `"http"` (and `url`).
#[proc_macro_attribute]
pub fn op(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match syn::parse2::<ast::func::FnWithBody>(item.clone()) {
        Ok(f) => skill_attr::native(attr.into(), f, ast::types::Form::Op).into(),
        Err(_) => skill_attr::declared(attr.into(), item, ast::types::Form::Op).into(),
    }
}

/// Declare a pipeline skill on a bodiless `async fn`. See `skill_runtime`.
#[proc_macro_attribute]
pub fn pipeline(attr: TokenStream, item: TokenStream) -> TokenStream {
    skill_attr::declared(attr.into(), item.into(), ast::types::Form::Pipeline).into()
}

/// Declare an agent (the AI-COS agent contract) on an `async fn`. See
/// `skill_runtime` and `docs/agents.md`.
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    agent::expand(attr.into(), item.into()).into()
}

/// Turn a unit struct into a capability:
/// `#[capability(id = "database.write", effect = "database", operation = "write", resource = Db)]`.
/// The doc comment is its description.
#[proc_macro_attribute]
pub fn capability(attr: TokenStream, item: TokenStream) -> TokenStream {
    capability::attribute(attr.into(), item.into()).into()
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
