//! Reading one value of the attribute tree: a string, an integer, a flag, a
//! word of a vocabulary, a list, a path, an expression. Each reports what it
//! expected, at the value, and gives `None` when it did not find it.

use syn::{Expr, ExprLit, Lit, LitInt, LitStr, Path};

use skill_core::words::Word;

use crate::args::{Entry, List, Node, NodeKind};
use crate::ast::types::Choice;
use crate::errors::Errors;
use crate::suggest::hint;

/// The named entries of `list`, with unknown and duplicate keys reported (each
/// once, at the offending key) and dropped. Literals are not keys.
pub fn nodes(
    cx: &Errors,
    list: List,
    what: &str,
    known: &[&str],
    repeatable: &[&str],
) -> Vec<Node> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for entry in list.0 {
        let node = match entry {
            Entry::Node(n) => n,
            Entry::Lit(l) => {
                cx.error_spanned(
                    &l,
                    format!("expected `key = value` in {what}, found a literal"),
                );
                continue;
            }
        };
        let key = node.key();
        if !known.contains(&key.as_str()) {
            cx.error_at(
                node.span(),
                format!("unknown {what} argument `{key}`{}", hint(&key, known)),
            );
            continue;
        }
        if seen.contains(&key) && !repeatable.contains(&key.as_str()) {
            cx.error_at(
                node.span(),
                format!("duplicate {what} argument `{key}`; remove one of them"),
            );
            continue;
        }
        seen.push(key);
        out.push(*node);
    }
    out
}

pub fn sub_list(cx: &Errors, node: Node) -> List {
    match node.kind {
        NodeKind::List(list, _) => list,
        _ => {
            cx.error_at(node.span(), format!("expected `{}(...)`", node.key()));
            List(Vec::new())
        }
    }
}

pub fn value<'a>(cx: &Errors, node: &'a Node, expected: &str) -> Option<&'a Expr> {
    match &node.kind {
        NodeKind::Value(e) => Some(e),
        _ => {
            cx.error_at(
                node.span(),
                format!("expected `{} = {expected}`", node.key()),
            );
            None
        }
    }
}

pub fn lit(e: &Expr) -> Option<&Lit> {
    match e {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        Expr::Group(g) => lit(&g.expr),
        _ => None,
    }
}

pub fn str_lit(cx: &Errors, node: &Node) -> Option<LitStr> {
    let e = value(cx, node, "\"...\"")?;
    match lit(e) {
        Some(Lit::Str(s)) => Some(s.clone()),
        _ => {
            cx.error_spanned(
                e,
                format!(
                    "`{}` takes a string literal, like `{} = \"...\"`",
                    node.key(),
                    node.key()
                ),
            );
            None
        }
    }
}

pub fn int_lit(cx: &Errors, node: &Node) -> Option<LitInt> {
    let e = value(cx, node, "N")?;
    match lit(e) {
        Some(Lit::Int(i)) if i.base10_parse::<u64>().is_ok() => Some(i.clone()),
        _ => {
            cx.error_spanned(
                e,
                format!(
                    "`{}` takes a non-negative integer literal, like `{} = 1000`",
                    node.key(),
                    node.key()
                ),
            );
            None
        }
    }
}

/// `idempotent` or `idempotent = true|false`.
pub fn flag(cx: &Errors, node: &Node) -> bool {
    match &node.kind {
        NodeKind::Bare => true,
        NodeKind::Value(e) => match lit(e) {
            Some(Lit::Bool(b)) => b.value,
            _ => {
                cx.error_spanned(
                    e,
                    format!("`{}` takes `true` or `false`, or no value", node.key()),
                );
                false
            }
        },
        NodeKind::List(_, span) => {
            cx.error_at(
                *span,
                format!(
                    "`{}` takes no list; write `{}` or `{} = true`",
                    node.key(),
                    node.key(),
                    node.key()
                ),
            );
            false
        }
    }
}

pub fn choice(cx: &Errors, node: &Node, options: &[(&str, &'static str)]) -> Option<Choice> {
    let s = str_lit(cx, node)?;
    let v = s.value();
    match options.iter().find(|(word, _)| *word == v) {
        Some((_, variant)) => Some(Choice {
            variant,
            span: s.span(),
        }),
        None => {
            let words: Vec<&str> = options.iter().map(|(w, _)| *w).collect();
            cx.error_spanned(
                &s,
                format!("`{}` cannot be \"{v}\"{}", node.key(), hint(&v, &words)),
            );
            None
        }
    }
}

/// `node`'s word, one of vocabulary `W` (the words the manifest exports).
pub fn word<W: Word>(cx: &Errors, node: &Node) -> Option<Choice> {
    choice(cx, node, W::WORDS)
}

/// [`word`] for the ADR's capitalized words, which the attribute takes in
/// lowercase (`sandbox = "docker"`, exported `DOCKER`).
pub fn lowercase_word<W: Word>(cx: &Errors, node: &Node) -> Option<Choice> {
    let lower: Vec<(String, &'static str)> = W::WORDS
        .iter()
        .map(|(w, v)| (w.to_ascii_lowercase(), *v))
        .collect();
    let options: Vec<(&str, &'static str)> = lower.iter().map(|(w, v)| (w.as_str(), *v)).collect();
    choice(cx, node, &options)
}

/// The words of vocabulary `W`, as keys.
pub fn words<W: Word>() -> Vec<&'static str> {
    W::WORDS.iter().map(|(w, _)| *w).collect()
}

pub fn str_list(cx: &Errors, node: &Node) -> Vec<LitStr> {
    let NodeKind::List(list, _) = &node.kind else {
        cx.error_at(
            node.span(),
            format!("expected `{}(\"...\", ...)`", node.key()),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in &list.0 {
        match e {
            Entry::Lit(Lit::Str(s)) => out.push(s.clone()),
            other => cx.error_at(
                other.span(),
                format!("`{}(...)` takes string literals", node.key()),
            ),
        }
    }
    out
}

pub fn path_list(cx: &Errors, node: Node, key: &str) -> Vec<Path> {
    let span = node.span();
    let NodeKind::List(list, _) = node.kind else {
        cx.error_at(span, format!("expected `{key}(Path, ...)`"));
        return Vec::new();
    };
    let mut out: Vec<Path> = Vec::new();
    for e in list.0 {
        match e {
            Entry::Node(n) if matches!(n.kind, NodeKind::Bare) => {
                let path = n.path;
                if out.iter().any(|p| same_path(p, &path)) {
                    cx.error_spanned(&path, format!("`{}` is listed twice in {key}(...)", crate::args::path_text(&path)));
                } else {
                    out.push(path);
                }
            }
            other => cx.error_at(
                other.span(),
                format!("{key}(...) takes Rust paths, like `{key}(DatabaseRead)`; the path names the declaration, so a typo does not compile"),
            ),
        }
    }
    out
}

pub fn same_path(a: &Path, b: &Path) -> bool {
    crate::args::path_text(a) == crate::args::path_text(b)
}

pub fn parse_path(cx: &Errors, s: &LitStr) -> Option<Path> {
    match s.parse::<Path>() {
        Ok(p) => Some(p),
        Err(_) => {
            cx.error_spanned(
                s,
                "`crate` takes a path to the runtime crate, like `crate = \"::my_skills_runtime\"`",
            );
            None
        }
    }
}

/// The span of the first token in `tokens` (groups searched) for which `is` holds.
pub fn find_token(
    tokens: proc_macro2::TokenStream,
    is: &dyn Fn(&proc_macro2::TokenTree) -> bool,
) -> Option<proc_macro2::Span> {
    tokens.into_iter().find_map(|t| match &t {
        _ if is(&t) => Some(t.span()),
        proc_macro2::TokenTree::Group(g) => find_token(g.stream(), is),
        _ => None,
    })
}
