//! Calls of other skills' functions in a skill's body. A skill's function
//! returns `Direct<marker, _>`; each awaited call `path(args).await` in a
//! body is routed through `Probe(..).__skill_check::<Self>()`, which for a
//! skill requires `calls(...)` to list it and is the identity otherwise.
//! Tokens only, like the ambient scan: the body is never parsed.

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};
use quote::quote;

/// Words that end a path to its left, so `return (f).await` is left alone.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "static", "struct", "trait", "true", "type", "unsafe", "use", "where",
    "while", "yield",
];

/// `body` with every awaited call of a path checked against the skill
/// `marker`'s `calls(...)`.
pub fn check_awaits(body: TokenStream, marker: &Ident, p: &TokenStream) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let mut it = body.into_iter().peekable();
    while let Some(tt) = it.next() {
        match tt {
            TokenTree::Group(g) => {
                // A macro's arguments are its own syntax: left as written.
                let macro_args =
                    matches!(out.last(), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                let stream = if macro_args {
                    g.stream()
                } else {
                    check_awaits(g.stream(), marker, p)
                };
                let mut ng = Group::new(g.delimiter(), stream);
                ng.set_span(g.span());
                out.push(ng.into());
            }
            TokenTree::Punct(dot)
                if dot.as_char() == '.'
                    && matches!(it.peek(), Some(TokenTree::Ident(w)) if w == "await") =>
            {
                if let Some(start) = awaited_call(&out) {
                    let call: TokenStream = out.drain(start..).collect();
                    let span = call
                        .clone()
                        .into_iter()
                        .next()
                        .map_or_else(Span::call_site, |t| t.span());
                    // At the call, so the error lands there.
                    let check = Ident::new("__skill_check", span);
                    let caller = Ident::new(&marker.to_string(), span);
                    let probe = quote! {{
                        #[allow(unused_imports)]
                        use #p::NotASkill as _;
                        #p::Probe(#call).#check::<#caller>()
                    }};
                    out.push(Group::new(Delimiter::Parenthesis, probe).into());
                }
                out.push(TokenTree::Punct(dot));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Where the awaited expression before an `.await` starts, when it is a path
/// (`a`, `skills::a`, `::x::a`) followed by its arguments, the only way to
/// call a skill's function, or a variable holding what one returned.
/// Methods, fields, turbofish and macro calls are left alone.
fn awaited_call(out: &[TokenTree]) -> Option<usize> {
    let n = out.len();
    // A future held in a variable: `let f = other(input); f.await`.
    if let Some(TokenTree::Ident(id)) = out.last() {
        let word = id.to_string();
        let plain = !KEYWORDS.contains(&word.as_str()) && word != "self";
        return Some(n - 1).filter(|&s| plain && !before_is_member(out, s));
    }
    let Some(TokenTree::Group(args)) = out.last() else {
        return None;
    };
    if args.delimiter() != Delimiter::Parenthesis || n < 2 {
        return None;
    }
    // Walk left over `ident (:: ident)*`.
    let mut i = n - 2;
    loop {
        let TokenTree::Ident(id) = &out[i] else {
            return None;
        };
        if KEYWORDS.contains(&id.to_string().as_str()) {
            return None;
        }
        let sep = i >= 2
            && matches!(&out[i - 1], TokenTree::Punct(p) if p.as_char() == ':')
            && matches!(&out[i - 2], TokenTree::Punct(p) if p.as_char() == ':');
        if !sep {
            break;
        }
        if i >= 3 && matches!(&out[i - 3], TokenTree::Ident(_)) {
            i -= 3;
        } else {
            // A leading `::`.
            i -= 2;
            return Some(i).filter(|&s| !before_is_member(out, s));
        }
    }
    Some(i).filter(|&s| !before_is_member(out, s))
}

/// Whether the token before `start` makes the path a method or field
/// (`x.a(..)`) or part of a longer path.
fn before_is_member(out: &[TokenTree], start: usize) -> bool {
    start > 0 && matches!(&out[start - 1], TokenTree::Punct(p) if matches!(p.as_char(), '.' | ':'))
}
