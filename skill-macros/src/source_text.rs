//! The source text of an expression, as the user wrote it, for the manifest.
//!
//! `Span::join` is not stable, so the text is rebuilt token by token: tokens keep
//! their own text, and the gaps between them follow the tokens' line and column
//! positions (a gap on one line is kept; a line break becomes one space). Where
//! the compiler gives no positions, tokens are joined with conventional spacing.

use proc_macro2::{Delimiter, LineColumn, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

pub fn source_text(tokens: &impl ToTokens) -> String {
    let mut out = Writer {
        text: String::new(),
        last_end: None,
        last_joint: false,
    };
    out.stream(tokens.to_token_stream());
    out.text
}

struct Writer {
    text: String,
    last_end: Option<LineColumn>,
    last_joint: bool,
}

impl Writer {
    fn stream(&mut self, stream: TokenStream) {
        for tt in stream {
            match tt {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        Delimiter::Parenthesis => ("(", ")"),
                        Delimiter::Brace => ("{", "}"),
                        Delimiter::Bracket => ("[", "]"),
                        Delimiter::None => ("", ""),
                    };
                    self.token(open, g.span_open().start(), g.span_open().end(), false);
                    self.stream(g.stream());
                    self.token(close, g.span_close().start(), g.span_close().end(), false);
                }
                TokenTree::Punct(p) => {
                    let s = p.span();
                    self.token(
                        &p.as_char().to_string(),
                        s.start(),
                        s.end(),
                        p.spacing() == Spacing::Joint,
                    )
                }
                TokenTree::Ident(i) => {
                    self.token(&i.to_string(), i.span().start(), i.span().end(), false)
                }
                TokenTree::Literal(l) => {
                    self.token(&l.to_string(), l.span().start(), l.span().end(), false)
                }
            }
        }
    }

    fn token(&mut self, text: &str, start: LineColumn, end: LineColumn, joint: bool) {
        if text.is_empty() {
            return;
        }
        let known = start.line > 0;
        if let Some(prev) = self.last_end {
            let gap = if known && prev.line > 0 {
                start.line != prev.line || start.column > prev.column
            } else {
                !self.last_joint && needs_space(&self.text, text)
            };
            if gap && !self.text.ends_with(' ') {
                self.text.push(' ');
            }
        }
        self.text.push_str(text);
        self.last_end = Some(end);
        self.last_joint = joint;
    }
}

/// Conventional spacing when positions are unknown.
fn needs_space(before: &str, next: &str) -> bool {
    let prev = before.chars().last().unwrap_or(' ');
    !matches!(prev, '(' | '[' | '.' | '&' | '!' | '|' | ' ')
        && !matches!(next, ")" | "]" | "." | "," | ";" | "(" | "?" | ":")
}
