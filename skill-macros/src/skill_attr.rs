//! `#[skill]`, `#[op]` and `#[pipeline]`: parse the function and the
//! attribute (`ast`), check them (`check`), expand them (`expand`), or, when a
//! check fails, expand what keeps the rest of the crate compiling (`fallback`).

/// A `#[skill]` (or `#[op]` with a body): refuses a bodiless function with
/// a message naming what it may be instead.
pub fn skill(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    form: crate::ast::types::Form,
) -> proc_macro2::TokenStream {
    let item: crate::ast::func::FnWithBody = match syn::parse2(item.clone()) {
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
            let f = crate::ast::func::FnWithBody::new(attrs, decl.vis, decl.sig, body);
            let func = crate::ast::func::SkillFn::from_item(&crate::errors::Errors::new(), f);
            return crate::fallback::skill(e, None, Some(&func));
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
    native(attr, item, form)
}

/// A skill (or native op) from its parsed function.
pub fn native(
    attr: proc_macro2::TokenStream,
    item: crate::ast::func::FnWithBody,
    form: crate::ast::types::Form,
) -> proc_macro2::TokenStream {
    let cx = crate::errors::Errors::new();
    let func = crate::ast::func::SkillFn::from_item(&cx, item);
    let list: crate::args::List = match syn::parse2(attr) {
        Ok(l) => l,
        Err(e) => return crate::fallback::skill(e, None, Some(&func)),
    };
    let args = crate::ast::types::SkillArgs::from_list_as(&cx, list, form);
    crate::check::all(&cx, &args, &func);
    crate::check::op_runtime(&cx, &args, true);
    match cx.into_result() {
        Ok(()) => crate::expand::skill(&args, &func),
        Err(e) => crate::fallback::skill(e, Some(&args), Some(&func)),
    }
}

/// A pipeline, or an op that runs elsewhere: a declaration without a body.
pub fn declared(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    form: crate::ast::types::Form,
) -> proc_macro2::TokenStream {
    let (what, shape) = match form {
        crate::ast::types::Form::Op => (
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
            let span = syn::parse2::<crate::ast::func::FnWithBody>(item)
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
    let item = crate::ast::func::FnWithBody::new(decl.attrs, decl.vis, decl.sig, body);
    let cx = crate::errors::Errors::new();
    let func = crate::ast::func::SkillFn::from_item(&cx, item);
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
    let list: crate::args::List = match syn::parse2(attr) {
        Ok(l) => l,
        Err(e) => return e.into_compile_error(),
    };
    let args = crate::ast::types::SkillArgs::from_list_as(&cx, list, form);
    crate::check::all(&cx, &args, &func);
    if form == crate::ast::types::Form::Op {
        crate::check::op_runtime(&cx, &args, false);
    } else {
        crate::check::steps(&cx, &args);
    }
    match cx.into_result() {
        Ok(()) => crate::expand::declared(&args, &func),
        Err(e) => {
            let marker = crate::expand::marker(&func);
            let e = e.into_compile_error();
            quote::quote!(#e #marker)
        }
    }
}
