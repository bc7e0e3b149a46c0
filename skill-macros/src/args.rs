//! The attribute grammar shared by `#[skill]` and `#[capability]`, parsed into an
//! untyped tree whose every node keeps its span:
//!
//! ```text
//! list  := (entry ("," entry)*)? ","?
//! entry := literal | path | path "=" expr | path "(" list ")"
//! ```
//!
//! Parsing stops at the first syntax error; turning the tree into typed arguments
//! (`ast.rs`) reports every semantic error.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, Lit, Path, Token};

pub struct List(pub Vec<Entry>);

pub enum Entry {
    Lit(Lit),
    Node(Box<Node>),
}

pub struct Node {
    pub path: Path,
    pub kind: NodeKind,
}

pub enum NodeKind {
    /// `idempotent`, `DatabaseRead`
    Bare,
    /// `name = "x"`, `check = |i: &In| ...`
    Value(Expr),
    /// `owners("a", "b")`, `DatabaseWrite(target = "t")`
    List(List, Span),
}

impl Parse for List {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut entries = Vec::new();
        while !input.is_empty() {
            entries.push(input.parse()?);
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(List(entries))
    }
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(Lit) {
            return Ok(Entry::Lit(input.parse()?));
        }
        let path = if input.peek(Token![crate]) && input.peek2(Token![=]) {
            // `crate = "..."` names the runtime crate when it is renamed;
            // `crate::caps::X` is a path like any other.
            let kw: Token![crate] = input.parse()?;
            Path::from(syn::Ident::new("crate", kw.span))
        } else {
            input.call(Path::parse_mod_style)?
        };
        let kind = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            NodeKind::Value(input.parse()?)
        } else if input.peek(syn::token::Paren) {
            let content;
            let paren = syn::parenthesized!(content in input);
            NodeKind::List(content.parse()?, paren.span.join())
        } else {
            NodeKind::Bare
        };
        Ok(Entry::Node(Box::new(Node { path, kind })))
    }
}

impl Entry {
    pub fn span(&self) -> Span {
        match self {
            Entry::Lit(l) => l.span(),
            Entry::Node(n) => n.path.span(),
        }
    }
}

impl Node {
    /// The key as written, for messages: `timeout_ms`, `mcp`, `DatabaseRead`.
    pub fn key(&self) -> String {
        path_text(&self.path)
    }

    pub fn span(&self) -> Span {
        self.path.span()
    }
}

/// A path as written, without spaces: `crate::caps::DatabaseRead`.
pub fn path_text(path: &Path) -> String {
    let mut s = String::new();
    if path.leading_colon.is_some() {
        s.push_str("::");
    }
    for (i, seg) in path.segments.iter().enumerate() {
        if i > 0 {
            s.push_str("::");
        }
        s.push_str(&seg.ident.to_string());
    }
    s
}
