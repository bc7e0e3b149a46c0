//! `#[agent(...)]`: the AI-COS agent contract (seed 002) on an `async fn`,
//! built like `#[skill]`: the attribute read into its parts (`ast`), the
//! rules across them (`check`), then the code (`expand`), which cannot fail.
//!
//! Checked here, each at its token: the id (dotted snake_case), the version
//! (semver), the role, domain, tool permissions and storage (their words),
//! `rate_limit >= 1`, KPI thresholds ordered for the declared direction and
//! ratios within 0 to 1, each metric once, escalation triggers present and
//! `timeout_hours >= 1`, tools named, each skill listed once. Checked by
//! rustc through the expansion: every listed skill is a skill and its
//! `reusable_by` lets the agent's role run it; every ambient use of the body
//! is one a listed skill may make; every output pointer names a field of the
//! output type.

mod ast;
mod check;
mod expand;

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::args::List;
use crate::ast::func::{FnWithBody, SkillFn, Who};
use crate::errors::Errors;

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
    let cx = Errors::new();
    let func = SkillFn::from_item_for(&cx, f, Who::AGENT);
    let args = match syn::parse2::<List>(attr) {
        Ok(list) => ast::read(&cx, list),
        Err(e) => {
            cx.push(e);
            ast::Args::default()
        }
    };
    check::all(&cx, &args, &func);
    match cx.into_result() {
        Ok(()) => expand::agent(&args, &func),
        Err(e) => {
            // The marker keeps the agent's name defined; the body waits for
            // the contract to be right (its context is the contract's), so
            // one mistake gives one error.
            let e = e.into_compile_error();
            let marker = expand::marker(&func);
            quote!(#e #marker)
        }
    }
}
