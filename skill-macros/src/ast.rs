//! The semantic model of one `#[skill]`: typed arguments built from the attribute
//! tree, and the shape of the annotated function. Every value keeps its span.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    Expr, ExprLit, FnArg, GenericArgument, ItemFn, Lit, LitInt, LitStr, Path, PathArguments,
    ReturnType, Type,
};

use crate::args::{Entry, List, Node, NodeKind};
use crate::ctxt::Ctxt;
use crate::suggest::hint;

/// Keys `#[skill(...)]` accepts, in documentation order.
pub const SKILL_KEYS: &[&str] = &[
    "name",
    "title",
    "version",
    "description",
    "domain",
    "owners",
    "status",
    "deprecation",
    "kind",
    "autonomy",
    "policy_tags",
    "rate_limit",
    "redaction",
    "timeout_ms",
    "retries",
    "backoff",
    "idempotent",
    "destructive",
    "requires_hitl",
    "sandbox",
    "source",
    "mcp",
    "reusable_by",
    "capabilities",
    "side_effects",
    "calls",
    "precondition",
    "postcondition",
    "validation_rule",
    "ambient",
    "crate",
];

/// Keys that may appear more than once.
const REPEATABLE: &[&str] = &["precondition", "postcondition", "validation_rule", "step"];

/// Skill keys a pipeline does not take, and why.
const NOT_FOR_PIPELINES: &[(&str, &str)] = &[
    (
        "capabilities",
        "a pipeline's capabilities are computed from its steps (the union of what they reach); remove `capabilities`",
    ),
    (
        "side_effects",
        "a pipeline's side effects are its steps'; remove `side_effects`",
    ),
    (
        "calls",
        "a pipeline calls what its steps target; remove `calls` and add a `step(...)`",
    ),
    (
        "ambient",
        "a pipeline has no body to scan; remove `ambient`",
    ),
    (
        "precondition",
        "a pipeline's checks are its steps'; put the precondition on the first step's skill",
    ),
    (
        "postcondition",
        "a pipeline's checks are its steps'; put the postcondition on the last step's skill",
    ),
    (
        "validation_rule",
        "a pipeline's checks are its steps'; put the rule on a step's skill",
    ),
    ("kind", "`#[pipeline]` is the pipeline kind; remove `kind`"),
];

/// Skill keys an op does not take, and why.
const NOT_FOR_OPS: &[(&str, &str)] = &[
    ("kind", "an op has no kind; remove `kind`"),
    (
        "mcp",
        "ops are not served over MCP; expose a skill (or a pipeline) that calls the op",
    ),
];

/// Which attribute is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Skill,
    Pipeline,
    Op,
}

/// `runtime = "..."` of an op and its field (`tool`, `url` or `command`).
pub struct OpArgs {
    /// `Native`, `Mcp`, `Http` or `Script`.
    pub runtime: Option<Choice>,
    pub tool: Option<LitStr>,
    pub url: Option<LitStr>,
    pub command: Option<LitStr>,
}

/// `step(id = "...", skill = "name@version", inputs(field = "$inputs.x"), outputs(field = "$outputs.y"))`.
pub struct StepArgs {
    pub id: Option<LitStr>,
    /// `skill` or `op`, and the reference.
    pub target: Option<(&'static str, LitStr)>,
    pub inputs: Vec<(syn::Ident, LitStr)>,
    pub outputs: Vec<(syn::Ident, LitStr)>,
}

/// A choice among fixed words, kept as the runtime enum variant to emit.
#[derive(Clone, Copy)]
pub struct Choice {
    pub variant: &'static str,
    pub span: Span,
}

#[derive(Default)]
pub struct SkillArgs {
    pub krate: Option<Path>,
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub version: Option<LitStr>,
    pub description: Option<LitStr>,
    pub domain: Option<LitStr>,
    pub owners: Vec<LitStr>,
    pub status: Option<Choice>,
    pub deprecation: Option<DeprecationArgs>,
    pub kind: Option<Choice>,
    pub autonomy: Option<Choice>,
    pub policy_tags: Vec<LitStr>,
    pub rate_limit: Option<LitInt>,
    pub redact_inputs: Vec<LitStr>,
    pub redact_outputs: Vec<LitStr>,
    pub timeout_ms: Option<LitInt>,
    pub retries: Option<LitInt>,
    pub backoff: Option<Choice>,
    pub idempotent: bool,
    pub destructive: bool,
    pub requires_hitl: bool,
    pub sandbox: Option<Choice>,
    pub source: Option<Choice>,
    pub mcp: Option<McpArgs>,
    pub reusable_by: Vec<(Choice, Choice)>,
    pub capabilities: Vec<Path>,
    pub side_effects: Vec<SideEffectArgs>,
    pub calls: Vec<Path>,
    /// `ambient(kind = "reason")`: ambient uses allowed without a capability.
    pub ambient: Vec<(crate::ambient::Kind, LitStr)>,
    pub preconditions: Vec<PreconditionArgs>,
    pub postconditions: Vec<PostconditionArgs>,
    pub validation_rules: Vec<RuleArgs>,
    pub steps: Vec<StepArgs>,
    /// `Some` for `#[op]`.
    pub op: Option<OpArgs>,
}

pub struct DeprecationArgs {
    pub span: Span,
    pub replaced_by: Option<LitStr>,
    pub removal_version: Option<LitStr>,
    pub notes: Option<LitStr>,
}

pub struct McpArgs {
    pub exposed: bool,
    pub tool_name: Option<LitStr>,
    pub permissions: Vec<LitStr>,
}

pub struct SideEffectArgs {
    pub capability: Path,
    pub target: Option<LitStr>,
    pub reversible: Option<bool>,
    pub description: Option<LitStr>,
}

pub struct PreconditionArgs {
    pub span: Span,
    pub code: Option<LitStr>,
    pub message: Option<LitStr>,
    pub check: Option<Expr>,
}

pub struct PostconditionArgs {
    pub span: Span,
    pub check: Option<Expr>,
    pub rollback: Option<LitStr>,
}

pub struct RuleArgs {
    pub span: Span,
    pub id: Option<LitStr>,
    pub severity: Option<Choice>,
    pub message: Option<LitStr>,
    pub check: Option<Expr>,
}

impl SkillArgs {
    pub fn from_list_as(cx: &Ctxt, mut list: List, form: Form) -> SkillArgs {
        // A pipeline's and an op's keys: a skill's, less those refused, plus
        // their own.
        let (what, not, own): (_, &[(&str, &str)], &[&str]) = match form {
            Form::Skill => ("#[skill]", &[], &[]),
            Form::Pipeline => ("#[pipeline]", NOT_FOR_PIPELINES, &["step"]),
            Form::Op => ("#[op]", NOT_FOR_OPS, &["runtime", "tool", "url", "command"]),
        };
        // Each refused key is reported with its reason, then dropped.
        list.0.retain(|e| match e {
            Entry::Node(n) => match not.iter().find(|(k, _)| n.key() == *k) {
                Some((_, why)) => {
                    cx.error_at(n.span(), *why);
                    false
                }
                None => true,
            },
            Entry::Lit(_) => true,
        });
        let keys: Vec<&str> = SKILL_KEYS
            .iter()
            .copied()
            .filter(|k| !not.iter().any(|(n, _)| n == k))
            .chain(own.iter().copied())
            .collect();
        let mut a = SkillArgs::default();
        if form == Form::Op {
            a.op = Some(OpArgs {
                runtime: None,
                tool: None,
                url: None,
                command: None,
            });
        }
        for node in nodes(cx, list, what, &keys, REPEATABLE) {
            let key = node.key();
            match key.as_str() {
                "crate" => a.krate = str_lit(cx, &node).and_then(|s| parse_path(cx, &s)),
                "name" => a.name = str_lit(cx, &node),
                "title" => a.title = str_lit(cx, &node),
                "version" => a.version = str_lit(cx, &node),
                "description" => a.description = str_lit(cx, &node),
                "domain" => a.domain = str_lit(cx, &node),
                "owners" => a.owners = str_list(cx, &node),
                "status" => {
                    a.status = choice(
                        cx,
                        &node,
                        &[
                            ("enabled", "Enabled"),
                            ("disabled", "Disabled"),
                            ("deprecated", "Deprecated"),
                        ],
                    )
                }
                "deprecation" => a.deprecation = deprecation(cx, node),
                "kind" => a.kind = choice(cx, &node, &[("logic", "Logic")]),
                "autonomy" => {
                    a.autonomy = choice(
                        cx,
                        &node,
                        &[("L0", "L0"), ("L1", "L1"), ("L2", "L2"), ("L3", "L3")],
                    )
                }
                "policy_tags" => a.policy_tags = str_list(cx, &node),
                "rate_limit" => {
                    for n in nodes(
                        cx,
                        sub_list(cx, node),
                        "rate_limit(...)",
                        &["max_per_minute"],
                        &[],
                    ) {
                        a.rate_limit = int_lit(cx, &n);
                    }
                    if a.rate_limit.is_none() && !cx.has_errors() {
                        cx.error_at(
                            Span::call_site(),
                            "rate_limit(...) needs `max_per_minute = N`",
                        );
                    }
                }
                "redaction" => {
                    for n in nodes(
                        cx,
                        sub_list(cx, node),
                        "redaction(...)",
                        &["inputs", "outputs"],
                        &[],
                    ) {
                        match n.key().as_str() {
                            "inputs" => a.redact_inputs = str_list(cx, &n),
                            _ => a.redact_outputs = str_list(cx, &n),
                        }
                    }
                }
                "timeout_ms" => a.timeout_ms = int_lit(cx, &node),
                "retries" => a.retries = int_lit(cx, &node),
                "backoff" => {
                    a.backoff = choice(
                        cx,
                        &node,
                        &[
                            ("none", "None"),
                            ("linear", "Linear"),
                            ("exponential", "Exponential"),
                        ],
                    )
                }
                "idempotent" => a.idempotent = flag(cx, &node),
                "destructive" => a.destructive = flag(cx, &node),
                "requires_hitl" => a.requires_hitl = flag(cx, &node),
                "sandbox" => {
                    a.sandbox = choice(
                        cx,
                        &node,
                        &[("local", "Local"), ("docker", "Docker"), ("wasm", "Wasm")],
                    )
                }
                "source" => {
                    a.source = choice(cx, &node, &[("local", "Local"), ("global", "Global")])
                }
                "mcp" => a.mcp = Some(mcp(cx, node)),
                "reusable_by" => a.reusable_by = reusable_by(cx, node),
                "capabilities" => a.capabilities = path_list(cx, node, "capabilities"),
                "side_effects" => a.side_effects = side_effects(cx, node),
                "calls" => a.calls = path_list(cx, node, "calls"),
                "ambient" => {
                    for n in nodes(
                        cx,
                        sub_list(cx, node),
                        "ambient(...)",
                        crate::ambient::KINDS,
                        &[],
                    ) {
                        let kind = crate::ambient::Kind::from_key(&n.key());
                        match (kind, str_lit(cx, &n)) {
                            (Some(k), Some(reason)) if !reason.value().trim().is_empty() => a.ambient.push((k, reason)),
                            (Some(_), Some(reason)) => cx.error_spanned(
                                &reason,
                                "an ambient allowance needs a written reason: say why this skill may reach it without a capability",
                            ),
                            _ => {}
                        }
                    }
                }
                "precondition" => a.preconditions.push(precondition(cx, node)),
                "postcondition" => a.postconditions.push(postcondition(cx, node)),
                "validation_rule" => a.validation_rules.push(rule(cx, node)),
                "step" => a.steps.push(step(cx, node)),
                "runtime" | "tool" | "url" | "command" => {
                    let Some(op) = a.op.as_mut() else {
                        unreachable_key(cx, &node);
                        continue;
                    };
                    match node.key().as_str() {
                        "runtime" => {
                            op.runtime = choice(
                                cx,
                                &node,
                                &[
                                    ("native", "Native"),
                                    ("mcp", "Mcp"),
                                    ("http", "Http"),
                                    ("script", "Script"),
                                ],
                            )
                        }
                        "tool" => op.tool = str_lit(cx, &node),
                        "url" => op.url = str_lit(cx, &node),
                        _ => op.command = str_lit(cx, &node),
                    }
                }
                _ => unreachable_key(cx, &node),
            }
        }
        a
    }
}

fn step(cx: &Ctxt, node: Node) -> StepArgs {
    let span = node.span();
    let mut s = StepArgs {
        id: None,
        target: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
    };
    let mapping = |cx: &Ctxt, n: Node, what: &str| -> Vec<(syn::Ident, LitStr)> {
        let mut out = Vec::new();
        for entry in sub_list(cx, n).0 {
            match entry {
                Entry::Node(m) if m.path.get_ident().is_some() => {
                    if let (Some(field), Some(r)) = (m.path.get_ident().cloned(), str_lit(cx, &m)) {
                        out.push((field, r));
                    }
                }
                other => cx.error_at(
                    other.span(),
                    format!("expected `field = \"$...\"` in {what}(...)"),
                ),
            }
        }
        out
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "step(...)",
        &["id", "skill", "op", "inputs", "outputs"],
        &[],
    ) {
        match n.key().as_str() {
            "id" => s.id = str_lit(cx, &n),
            "skill" | "op" => {
                let kind = if n.key() == "op" { "op" } else { "skill" };
                if s.target.is_some() {
                    cx.error_at(
                        n.span(),
                        "a step has one target: `skill = \"...\"` or `op = \"...\"`, not both",
                    );
                } else if let Some(r) = str_lit(cx, &n) {
                    s.target = Some((kind, r));
                }
            }
            "inputs" => s.inputs = mapping(cx, n, "inputs"),
            _ => s.outputs = mapping(cx, n, "outputs"),
        }
    }
    if s.id.is_none() {
        cx.error_at(span, "a step needs an id: `step(id = \"read\", ...)`");
    }
    if s.target.is_none() {
        cx.error_at(
            span,
            "a step needs a target: `skill = \"name\"` (or `\"name@1.0.0\"`), or `op = \"name\"`",
        );
    }
    s
}

/// `nodes` already rejected unknown keys; reaching this is our bug, reported as one.
fn unreachable_key(cx: &Ctxt, node: &Node) {
    cx.error_at(
        node.span(),
        format!("internal error: unhandled key `{}`", node.key()),
    );
}

/// The named entries of `list`, with unknown and duplicate keys reported (each
/// once, at the offending key) and dropped. Literals are not keys.
pub fn nodes(cx: &Ctxt, list: List, what: &str, known: &[&str], repeatable: &[&str]) -> Vec<Node> {
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

fn sub_list(cx: &Ctxt, node: Node) -> List {
    match node.kind {
        NodeKind::List(list, _) => list,
        _ => {
            cx.error_at(node.span(), format!("expected `{}(...)`", node.key()));
            List(Vec::new())
        }
    }
}

fn value<'a>(cx: &Ctxt, node: &'a Node, expected: &str) -> Option<&'a Expr> {
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

fn lit(e: &Expr) -> Option<&Lit> {
    match e {
        Expr::Lit(ExprLit { lit, .. }) => Some(lit),
        Expr::Group(g) => lit(&g.expr),
        _ => None,
    }
}

pub fn str_lit(cx: &Ctxt, node: &Node) -> Option<LitStr> {
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

fn int_lit(cx: &Ctxt, node: &Node) -> Option<LitInt> {
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
pub fn flag(cx: &Ctxt, node: &Node) -> bool {
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

pub fn choice(cx: &Ctxt, node: &Node, options: &[(&str, &'static str)]) -> Option<Choice> {
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

fn str_list(cx: &Ctxt, node: &Node) -> Vec<LitStr> {
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

fn path_list(cx: &Ctxt, node: Node, key: &str) -> Vec<Path> {
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

fn parse_path(cx: &Ctxt, s: &LitStr) -> Option<Path> {
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

fn deprecation(cx: &Ctxt, node: Node) -> Option<DeprecationArgs> {
    let span = node.span();
    let mut d = DeprecationArgs {
        span,
        replaced_by: None,
        removal_version: None,
        notes: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "deprecation(...)",
        &["replaced_by", "removal_version", "notes"],
        &[],
    ) {
        match n.key().as_str() {
            "replaced_by" => d.replaced_by = str_lit(cx, &n),
            "removal_version" => d.removal_version = str_lit(cx, &n),
            _ => d.notes = str_lit(cx, &n),
        }
    }
    Some(d)
}

fn mcp(cx: &Ctxt, node: Node) -> McpArgs {
    let mut m = McpArgs {
        exposed: true,
        tool_name: None,
        permissions: Vec::new(),
    };
    if let NodeKind::Bare = node.kind {
        return m;
    }
    for n in nodes(
        cx,
        sub_list(cx, node),
        "mcp(...)",
        &["exposed", "tool_name", "permissions"],
        &[],
    ) {
        match n.key().as_str() {
            "exposed" => m.exposed = flag(cx, &n),
            "tool_name" => m.tool_name = str_lit(cx, &n),
            _ => m.permissions = str_list(cx, &n),
        }
    }
    m
}

const ROLES: &[(&str, &str)] = &[
    ("architect", "Architect"),
    ("analyzer", "Analyzer"),
    ("executor", "Executor"),
    ("validator", "Validator"),
    ("orchestrator", "Orchestrator"),
];
const LEVELS: &[(&str, &str)] = &[("read", "Read"), ("execute", "Execute"), ("admin", "Admin")];

/// `reusable_by(executor = "execute", orchestrator = "admin")`
fn reusable_by(cx: &Ctxt, node: Node) -> Vec<(Choice, Choice)> {
    let roles: Vec<&str> = ROLES.iter().map(|(r, _)| *r).collect();
    nodes(cx, sub_list(cx, node), "reusable_by(...)", &roles, &[])
        .into_iter()
        .filter_map(|n| {
            let key = n.key();
            let role = ROLES.iter().find(|(r, _)| *r == key)?;
            let level = choice(cx, &n, LEVELS)?;
            Some((
                Choice {
                    variant: role.1,
                    span: n.span(),
                },
                level,
            ))
        })
        .collect()
}

/// `side_effects(DatabaseWrite(target = "...", reversible = true, description = "..."))`
fn side_effects(cx: &Ctxt, node: Node) -> Vec<SideEffectArgs> {
    let span = node.span();
    let NodeKind::List(list, _) = node.kind else {
        cx.error_at(
            span,
            "expected `side_effects(Capability(target = \"...\", reversible = ...), ...)`",
        );
        return Vec::new();
    };
    let mut out: Vec<SideEffectArgs> = Vec::new();
    for e in list.0 {
        let Entry::Node(n) = e else {
            cx.error_at(e.span(), "side_effects(...) takes capability paths, like `DatabaseWrite(target = \"audit_log\", reversible = true)`");
            continue;
        };
        let capability = n.path.clone();
        if out.iter().any(|s| same_path(&s.capability, &capability)) {
            cx.error_spanned(
                &capability,
                format!("side effect `{}` is listed twice", n.key()),
            );
            continue;
        }
        let mut s = SideEffectArgs {
            capability,
            target: None,
            reversible: None,
            description: None,
        };
        let key = n.key();
        let span = n.span();
        match n.kind {
            NodeKind::List(list, _) => {
                for a in nodes(cx, list, "side effect", &["target", "reversible", "description"], &[]) {
                    match a.key().as_str() {
                        "target" => s.target = str_lit(cx, &a),
                        "reversible" => s.reversible = Some(flag(cx, &a)),
                        _ => s.description = str_lit(cx, &a),
                    }
                }
                if s.target.is_none() {
                    cx.error_at(span, format!("side effect `{key}` needs `target = \"...\"`: the table, file or endpoint it touches"));
                }
                if s.reversible.is_none() {
                    cx.error_at(span, format!("side effect `{key}` needs `reversible = true` or `reversible = false`"));
                }
            }
            _ => cx.error_at(
                span,
                format!("side effect `{key}` needs its details: `{key}(target = \"...\", reversible = true)`"),
            ),
        }
        out.push(s);
    }
    out
}

fn expr(cx: &Ctxt, node: &Node) -> Option<Expr> {
    value(cx, node, "|input| ...").cloned()
}

fn precondition(cx: &Ctxt, node: Node) -> PreconditionArgs {
    let mut p = PreconditionArgs {
        span: node.span(),
        code: None,
        message: None,
        check: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "precondition(...)",
        &["code", "message", "check"],
        &[],
    ) {
        match n.key().as_str() {
            "code" => p.code = str_lit(cx, &n),
            "message" => p.message = str_lit(cx, &n),
            _ => p.check = expr(cx, &n),
        }
    }
    for (missing, what) in [
        (p.code.is_none(), "code = \"ERROR_CODE\""),
        (p.message.is_none(), "message = \"...\""),
        (p.check.is_none(), "check = |input| ..."),
    ] {
        if missing {
            cx.error_at(p.span, format!("precondition(...) needs `{what}`"));
        }
    }
    p
}

fn postcondition(cx: &Ctxt, node: Node) -> PostconditionArgs {
    let mut p = PostconditionArgs {
        span: node.span(),
        check: None,
        rollback: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "postcondition(...)",
        &["check", "rollback"],
        &[],
    ) {
        match n.key().as_str() {
            "check" => p.check = expr(cx, &n),
            _ => p.rollback = str_lit(cx, &n),
        }
    }
    if p.check.is_none() {
        cx.error_at(
            p.span,
            "postcondition(...) needs `check = |input, output| ...`",
        );
    }
    p
}

fn rule(cx: &Ctxt, node: Node) -> RuleArgs {
    let mut r = RuleArgs {
        span: node.span(),
        id: None,
        severity: None,
        message: None,
        check: None,
    };
    for n in nodes(
        cx,
        sub_list(cx, node),
        "validation_rule(...)",
        &["id", "severity", "message", "check"],
        &[],
    ) {
        match n.key().as_str() {
            "id" => r.id = str_lit(cx, &n),
            "severity" => {
                r.severity = choice(
                    cx,
                    &n,
                    &[("error", "Error"), ("warning", "Warning"), ("info", "Info")],
                )
            }
            "message" => r.message = str_lit(cx, &n),
            _ => r.check = expr(cx, &n),
        }
    }
    for (missing, what) in [
        (r.id.is_none(), "id = \"rule_id\""),
        (
            r.severity.is_none(),
            "severity = \"error\" | \"warning\" | \"info\"",
        ),
        (r.message.is_none(), "message = \"...\""),
        (r.check.is_none(), "check = |input, output| ..."),
    ] {
        if missing {
            cx.error_at(r.span, format!("validation_rule(...) needs `{what}`"));
        }
    }
    r
}

/// The annotated function, taken apart.
pub struct SkillFn {
    /// The function with an empty body: its signature and attributes.
    pub item: ItemFn,
    /// The body as written, never parsed: it is the user's code, passed through
    /// to rustc unchanged (and scanned as tokens for ambient authority).
    pub body: proc_macro2::Group,
    /// Index of the context parameter, if the function takes one.
    pub ctx_param: Option<usize>,
    /// Whether the context type was written without its skill parameter (`Ctx`).
    pub ctx_needs_marker: bool,
    pub input: Option<Type>,
    pub output: Option<Type>,
    /// `Some` when the function returns `Result<_, E>`.
    pub error: Option<Type>,
    pub doc: Option<(String, Span)>,
}

impl SkillFn {
    pub fn from_item(cx: &Ctxt, FnWithBody { item, body }: FnWithBody) -> SkillFn {
        let mut f = SkillFn {
            body,
            ctx_param: None,
            ctx_needs_marker: false,
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
                "#[skill] functions must be `async fn`; add `async` before `fn`",
            );
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned(&sig.generics, "#[skill] functions cannot be generic: a skill has one input and one output type; write a skill per type");
        }
        let mut typed = Vec::new();
        for (i, arg) in sig.inputs.iter().enumerate() {
            match arg {
                FnArg::Receiver(r) => cx.error_spanned(
                    r,
                    "#[skill] functions cannot take `self`; make it a free function",
                ),
                FnArg::Typed(t) => typed.push((i, t)),
            }
        }
        // Know the context parameter even when the shape is wrong, so the fallback
        // completes its type and the shape error stays the only error.
        if let Some((0, first)) = typed.first()
            && let Some(has_args) = is_ctx(&first.ty)
        {
            f.ctx_param = Some(0);
            f.ctx_needs_marker = !has_args;
        }
        match typed.as_slice() {
            [(_, input)] if is_ctx(&input.ty).is_none() => f.input = Some((*input.ty).clone()),
            [(0, ctx), (_, input)] if is_ctx(&ctx.ty).is_some() => {
                f.ctx_param = Some(0);
                f.ctx_needs_marker = is_ctx(&ctx.ty) == Some(false);
                f.input = Some((*input.ty).clone());
            }
            [] | [_] if sig.receiver().is_none() => cx.error_at(
                sig.paren_token.span.join(),
                "a #[skill] function takes its input as a parameter: `(input: MyInput)` or `(ctx: Ctx, input: MyInput)`",
            ),
            _ if sig.receiver().is_none() => cx.error_spanned(
                &sig.inputs,
                "a #[skill] function takes `(input: MyInput)` or `(ctx: Ctx, input: MyInput)`; put several values in one input struct",
            ),
            _ => {}
        }
        match &sig.output {
            ReturnType::Default => cx.error_spanned(
                &sig.ident,
                "a #[skill] function must return its output: `-> MyOutput` or `-> Result<MyOutput, MyError>`",
            ),
            ReturnType::Type(_, ty) => match result_parts(ty) {
                Some((ok, err)) => {
                    f.output = Some(ok);
                    f.error = Some(err);
                }
                None => f.output = Some((**ty).clone()),
            },
        }
        f
    }
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
fn is_ctx(ty: &Type) -> Option<bool> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Ctx" {
        return None;
    }
    Some(!matches!(last.arguments, PathArguments::None))
}

/// `Result<T, E>` → `(T, E)`.
fn result_parts(ty: &Type) -> Option<(Type, Type)> {
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
