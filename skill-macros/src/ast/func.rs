//! The annotated function, taken apart: its signature's shape (context,
//! input, output, error) and its doc comment.

use proc_macro2::{Span, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, ItemFn, Lit, PathArguments, ReturnType, Type};

use crate::ast::read::{find_token, lit};
use crate::errors::Errors;

/// The annotated function, taken apart.
pub struct SkillFn {
    /// The function with an empty body: its signature and attributes.
    pub item: ItemFn,
    /// The body as written, never parsed: it is the user's code, passed through
    /// to rustc unchanged (and scanned as tokens for ambient authority).
    pub body: proc_macro2::Group,
    /// Index of the context parameter, if the function takes one.
    pub ctx_param: Option<usize>,
    pub input: Option<Type>,
    pub output: Option<Type>,
    /// `Some` when the function returns `Result<_, E>`.
    pub error: Option<Type>,
    pub doc: Option<(String, Span)>,
}

/// Which attribute a function carries, for the words of its errors.
#[derive(Clone, Copy)]
pub struct Who {
    /// `#[skill]` or `#[agent]`.
    pub attr: &'static str,
    /// The context parameter's type: `Ctx` or `AgentCtx`.
    pub ctx: &'static str,
    /// `skill` or `agent` (written after "a" for a skill, "an" otherwise).
    pub thing: &'static str,
}

impl Who {
    pub const SKILL: Who = Who {
        attr: "#[skill]",
        ctx: "Ctx",
        thing: "skill",
    };
    pub const AGENT: Who = Who {
        attr: "#[agent]",
        ctx: "AgentCtx",
        thing: "agent",
    };

    /// `a skill` or `an agent`.
    pub fn a_thing(self) -> &'static str {
        if self.thing == "skill" {
            "a skill"
        } else {
            "an agent"
        }
    }

    /// A skill's message, in this attribute's words.
    pub fn say(self, msg: &str) -> String {
        if self.attr == Who::SKILL.attr {
            return msg.to_owned();
        }
        msg.replace("#[skill]", self.attr)
            .replace("ctx: Ctx,", &format!("ctx: {},", self.ctx))
            .replace("a skill's", &format!("an {}'s", self.thing))
            .replace("a skill has", &format!("an {} has", self.thing))
            .replace("a skill per", &format!("an {} per", self.thing))
    }
}

impl SkillFn {
    pub fn from_item(cx: &Errors, item: FnWithBody) -> SkillFn {
        SkillFn::from_item_for(cx, item, Who::SKILL)
    }

    pub fn from_item_for(cx: &Errors, FnWithBody { item, body }: FnWithBody, who: Who) -> SkillFn {
        let mut f = SkillFn {
            body,
            ctx_param: None,
            input: None,
            output: None,
            error: None,
            doc: doc_text(&item.attrs),
            item,
        };
        let sig = &f.item.sig;
        if sig.asyncness.is_none() {
            cx.error_spanned(
                sig.fn_token,
                who.say("#[skill] functions must be `async fn`; add `async` before `fn`"),
            );
        }
        if let syn::Safety::Unsafe(u) = &sig.safety {
            cx.error_spanned(
                u,
                who.say("a #[skill] function cannot be `unsafe fn`: the runtime calls it with no caller to uphold its contract; write `async fn`; code that needs `unsafe` goes in a capability's resource, or in the body with its `// SAFETY:` comment and an `ambient(unsafe_code = \"why\")` allowance"),
            );
        }
        if let Some(c) = &sig.constness {
            cx.error_spanned(
                c,
                who.say("a #[skill] function cannot be `const fn`; write `async fn`"),
            );
        }
        if let Some(abi) = &sig.abi {
            cx.error_spanned(
                abi,
                who.say("a #[skill] function uses the Rust ABI; remove the `extern` qualifier"),
            );
        }
        if let Some(v) = &sig.variadic {
            cx.error_spanned(v, who.say("a #[skill] function takes `(input: MyInput)` or `(ctx: Ctx, input: MyInput)`, not variadic arguments"));
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned(&sig.generics, who.say("#[skill] functions cannot be generic: a skill has one input and one output type; write a skill per type"));
        }
        let mut typed = Vec::new();
        for (i, arg) in sig.inputs.iter().enumerate() {
            match arg {
                FnArg::Receiver(r) => cx.error_spanned(
                    r,
                    who.say("#[skill] functions cannot take `self`; make it a free function"),
                ),
                FnArg::Typed(t) => typed.push((i, t)),
            }
        }
        // Know the context parameter even when the shape is wrong, so the fallback
        // completes its type and the shape error stays the only error.
        if let Some((0, first)) = typed.first()
            && is_ctx(&first.ty).is_some()
        {
            f.ctx_param = Some(0);
        }
        // A context typed with a marker names whose context it is: only the
        // function's own (the macro completes a bare `Ctx` to it).
        if let Some((0, first)) = typed.first()
            && is_ctx(&first.ty) == Some(true)
            && let Type::Path(path) = &*first.ty
            && let Some(last) = path.path.segments.last()
            && let PathArguments::AngleBracketed(a) = &last.arguments
        {
            let own = sig.ident.to_string();
            // The call's lifetime aside (`Ctx<'_, own>`).
            let named: Vec<String> = a
                .args
                .iter()
                .filter(|g| !matches!(g, syn::GenericArgument::Lifetime(_)))
                .map(|g| g.to_token_stream().to_string())
                .collect();
            if named != [own.clone()] {
                cx.error_spanned(
                    &a.args,
                    format!(
                        "{a_thing}'s context is its own: write `ctx: {ctx}`, which the macro makes `{ctx}<{own}>`; another's context would carry its authority",
                        a_thing = who.a_thing(),
                        ctx = who.ctx
                    ),
                );
            }
        }
        let contexts: Vec<_> = typed
            .iter()
            .filter(|(_, t)| is_ctx(&t.ty).is_some())
            .collect();
        if let [_, second, ..] = contexts.as_slice() {
            cx.error_spanned(
                &second.1.ty,
                who.say("a #[skill] function takes one context parameter, first: `(ctx: Ctx, input: MyInput)`; clone `ctx` where you need it twice"),
            );
        }
        match typed.as_slice() {
            [(_, input)] if is_ctx(&input.ty).is_none() => f.input = Some((*input.ty).clone()),
            [(0, ctx), (_, input)] if is_ctx(&ctx.ty).is_some() => {
                f.ctx_param = Some(0);
                f.input = Some((*input.ty).clone());
            }
            [] | [_] if sig.receiver().is_none() => cx.error_at(
                sig.paren_token.span.join(),
                who.say("a #[skill] function takes its input as a parameter: `(input: MyInput)` or `(ctx: Ctx, input: MyInput)`"),
            ),
            _ if sig.receiver().is_none() && contexts.len() > 1 => {}
            _ if sig.receiver().is_none() => cx.error_spanned(
                &sig.inputs,
                who.say("a #[skill] function takes `(input: MyInput)` or `(ctx: Ctx, input: MyInput)`; put several values in one input struct"),
            ),
            _ => {}
        }
        if let Some(input) = &f.input {
            check_value_type(
                cx,
                who,
                input,
                "input",
                "takes its input by value: `input: MyInput`",
            );
        }
        match &sig.output {
            ReturnType::Default => cx.error_spanned(
                &sig.ident,
                who.say("a #[skill] function must return its output: `-> MyOutput` or `-> Result<MyOutput, MyError>`"),
            ),
            ReturnType::Type(_, ty) => match result_parts(ty) {
                Some((ok, err)) => {
                    f.output = Some(ok);
                    f.error = Some(err);
                }
                None => f.output = Some((**ty).clone()),
            },
        }
        if let Some(output) = &f.output {
            check_value_type(
                cx,
                who,
                output,
                "output",
                "returns its output by value: `-> MyOutput`",
            );
        }
        if let Some(error) = &f.error {
            check_value_type(
                cx,
                who,
                error,
                "error",
                "returns its error by value: `-> Result<MyOutput, MyError>`",
            );
        }
        f
    }
}

/// A skill's input, output and error are named, owned types: each has a JSON
/// Schema in the manifest and crosses the wire as JSON, deserialized per call.
fn check_value_type(cx: &Errors, who: Who, ty: &Type, what: &str, shape: &str) {
    let named = format!(
        "a skill's {what} is a named type with a JSON Schema, like `My{}`",
        capitalized(what)
    );
    if let Type::Reference(r) = ty {
        cx.error_spanned(
            r.and_token,
            who.say(&format!(
                "a #[skill] function {shape}; it crosses the wire as JSON, so it cannot be borrowed"
            )),
        );
    } else if what != "error"
        && let Some(kind) = not_an_object(ty)
    {
        let verb = if what == "input" { "take" } else { "return" };
        cx.error_spanned(
            ty,
            who.say(&format!(
                "a skill's {what} is a JSON object (MCP tool arguments and structured results are), and `{}` is {kind}; put it in a field of a struct of yours and {verb} that struct",
                ty.to_token_stream().to_string().replace(' ', "")
            )),
        );
    } else if let Some(span) = find_token(
        ty.to_token_stream(),
        &|t| matches!(t, TokenTree::Ident(i) if i == "impl"),
    ) {
        cx.error_at(
            span,
            who.say(&format!(
                "`impl Trait` has no JSON Schema: {named} (deriving `JsonSchema`)"
            )),
        );
    } else if let Some(span) = find_token(
        ty.to_token_stream(),
        &|t| matches!(t, TokenTree::Punct(p) if p.as_char() == '\''),
    ) {
        cx.error_at(span, who.say(&format!("a skill's {what} owns its data: it is deserialized from JSON on every call, so it cannot borrow; drop the lifetime and use owned fields (`String` for `&str`, `Vec<T>` for `&[T]`)")));
    }
}

/// What the JSON of `ty` is, when it is written as a type of `std` whose JSON
/// is never an object (an alias or a type of the user's own is checked by the
/// registry build, from its schema).
fn not_an_object(ty: &Type) -> Option<&'static str> {
    match ty {
        Type::Tuple(t) if t.elems.is_empty() => Some("null"),
        Type::Tuple(_) | Type::Array(_) | Type::Slice(_) => Some("an array"),
        Type::Paren(p) => not_an_object(&p.elem),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?.ident.to_string();
            match last.as_str() {
                "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "LinkedList" | "BinaryHeap" => {
                    Some("an array")
                }
                "String" | "str" | "char" | "PathBuf" => Some("a string"),
                "bool" => Some("a boolean"),
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64"
                | "i128" | "isize" | "f32" | "f64" => Some("a number"),
                "Option" => Some("null or a value"),
                _ => None,
            }
        }
        _ => None,
    }
}

fn capitalized(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// A function item whose body stays tokens. Parsing a body is most of what a
/// derive-like macro would spend (syn's expression parser), and `#[skill]`
/// needs nothing from it but its tokens.
pub struct FnWithBody {
    /// The function with an empty block spanning the body's braces.
    pub item: ItemFn,
    pub body: proc_macro2::Group,
}

impl syn::parse::Parse for FnWithBody {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let vis: syn::Visibility = input.parse()?;
        let sig: syn::Signature = input.parse()?;
        let body: proc_macro2::Group = input.parse()?;
        if body.delimiter() != proc_macro2::Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected the function's body"));
        }
        Ok(FnWithBody::new(attrs, vis, sig, body))
    }
}

impl FnWithBody {
    pub fn new(
        attrs: Vec<syn::Attribute>,
        vis: syn::Visibility,
        sig: syn::Signature,
        body: proc_macro2::Group,
    ) -> FnWithBody {
        let block = Box::new(syn::Block {
            brace_token: syn::token::Brace {
                span: body.delim_span(),
            },
            stmts: Vec::new(),
        });
        FnWithBody {
            item: ItemFn {
                attrs,
                vis,
                modifiers: syn::FnModifiers::default(),
                sig,
                block,
            },
            body,
        }
    }
}

/// `Some(true)` for `Ctx<...>`, `Some(false)` for a bare `Ctx`, `None` otherwise.
pub(crate) fn is_ctx(ty: &Type) -> Option<bool> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Ctx" && last.ident != "AgentCtx" {
        return None;
    }
    Some(!matches!(last.arguments, PathArguments::None))
}

/// `Result<T, E>` → `(T, E)`.
pub(super) fn result_parts(ty: &Type) -> Option<(Type, Type)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    });
    let (ok, err) = (types.next()?, types.next()?);
    types.next().is_none().then_some((ok, err))
}

/// The first paragraph of the doc comment, lines joined by spaces.
pub fn doc_text(attrs: &[syn::Attribute]) -> Option<(String, Span)> {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Some(Lit::Str(s)) = lit(&nv.value)
        {
            span.get_or_insert(attr.span());
            let value = s.value();
            if value.trim().is_empty() {
                // An empty `///` line: a paragraph break (`"".lines()` is empty).
                lines.push(String::new());
            }
            lines.extend(value.lines().map(|l| l.trim().to_owned()));
        }
    }
    let para: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    if para.is_empty() {
        return None;
    }
    Some((para.join(" "), span.unwrap_or_else(Span::call_site)))
}
