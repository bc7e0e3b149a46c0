//! The registry rules that span skills, checked over the exported JSON.
//!
//! Pipelines are checked here (targets, references, types, required inputs,
//! outputs, cycles, capability closures), and so are the cross-skill rules of a
//! registry file. [`Registry::build`](crate::Registry::build) runs the pipeline
//! rules on its own export, and the `skill-registry validate` command runs all
//! of them on files from anywhere: one implementation, so a registry built from
//! Rust and a registry written by hand are held to the same rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::capability::is_capability_id;
use crate::manifest::is_snake_case;
use crate::registry::MAX_DESCRIPTION;
use crate::views::str_of;

/// One broken rule: what it concerns (`skill `x@1.0.0``) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub subject: String,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.subject, self.message)
    }
}

/// What a pipeline can do: the union over every skill and op it reaches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Closure {
    pub capabilities: BTreeSet<String>,
    pub side_effects: BTreeSet<String>,
}

/// A reference in a step's mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference<'a> {
    /// `$inputs.<field>`: a field of the pipeline's input.
    Input(&'a str),
    /// `$step.<id>.<field>`: an output field of an earlier step.
    Step(&'a str, &'a str),
    /// `$outputs.<name>`: a field of the pipeline's output (a destination).
    Output(&'a str),
}

impl<'a> Reference<'a> {
    /// `None` when `text` is none of the three forms.
    pub fn parse(text: &'a str) -> Option<Reference<'a>> {
        let field = |s: &'a str| (!s.is_empty() && !s.contains('.')).then_some(s);
        if let Some(rest) = text.strip_prefix("$inputs.") {
            return field(rest).map(Reference::Input);
        }
        if let Some(rest) = text.strip_prefix("$outputs.") {
            return field(rest).map(Reference::Output);
        }
        let rest = text.strip_prefix("$step.")?;
        let (id, f) = rest.split_once('.')?;
        Some(Reference::Step(field(id)?, field(f)?))
    }
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn label(v: &Value) -> String {
    format!("{}@{}", str_of(v, "name"), str_of(v, "version"))
}

fn subject(kind: &str, v: &Value) -> String {
    format!("{kind} `{}`", label(v))
}

/// Skills and ops by name, each name's versions highest first.
struct Index<'a> {
    skills: BTreeMap<&'a str, Vec<(&'a Value, semver::Version)>>,
    ops: BTreeMap<&'a str, Vec<(&'a Value, semver::Version)>>,
}

impl<'a> Index<'a> {
    fn new(skills: &'a [Value], ops: &'a [Value]) -> Self {
        let group = |items: &'a [Value]| {
            let mut map: BTreeMap<&str, Vec<(&Value, semver::Version)>> = BTreeMap::new();
            for v in items {
                let version = semver::Version::parse(str_of(v, "version"))
                    .unwrap_or(semver::Version::new(0, 0, 0));
                map.entry(str_of(v, "name")).or_default().push((v, version));
            }
            for versions in map.values_mut() {
                versions.sort_by(|a, b| b.1.cmp(&a.1));
            }
            map
        };
        Index {
            skills: group(skills),
            ops: group(ops),
        }
    }

    /// A `{kind, name, version?}` target: the named version, else the highest.
    fn target(&self, target: &Value) -> Result<(&'a Value, bool), String> {
        let kind = str_of(target, "kind");
        let name = str_of(target, "name");
        let version = target.get("version").and_then(Value::as_str);
        let (map, what) = match kind {
            "skill" => (&self.skills, "skill"),
            "op" => (&self.ops, "op"),
            other => return Err(format!("target kind `{other}` is neither `skill` nor `op`")),
        };
        let shown = match version {
            Some(v) => format!("{what} `{name}@{v}`"),
            None => format!("{what} `{name}`"),
        };
        let versions = map.get(name).map(Vec::as_slice).unwrap_or_default();
        let found = match version {
            None => versions.first(),
            Some(v) => {
                let parsed = semver::Version::parse(v).ok();
                versions
                    .iter()
                    .find(|(_, have)| Some(have) == parsed.as_ref())
            }
        };
        match found {
            Some((v, _)) => Ok((v, kind == "op")),
            None if what == "op" && map.is_empty() => Err(format!(
                "{shown} is not in the registry, which has no ops (pass the op registry: --ops FILE)"
            )),
            None if versions.is_empty() => Err(format!("{shown} is not in the registry")),
            None => Err(format!(
                "{shown} is not in the registry (versions: {})",
                versions
                    .iter()
                    .map(|(_, v)| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// Follow `$ref`s that point into `root` (`#/$defs/...`).
pub fn resolve<'a>(mut schema: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..16 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with('#') => match root.pointer(&r[1..]) {
                Some(target) => schema = target,
                None => return schema,
            },
            _ => return schema,
        }
    }
    schema
}

/// The schema of property `field` of an object schema and whether it is
/// required; `allOf` members (flattened structs) count.
pub fn property<'a>(root: &'a Value, field: &str) -> Option<(&'a Value, bool)> {
    property_at(root, root, field)
}

/// [`property`] of an object schema nested anywhere in `root` (its `$ref`s
/// resolve there).
pub fn property_at<'a>(
    root: &'a Value,
    schema: &'a Value,
    field: &str,
) -> Option<(&'a Value, bool)> {
    let schema = resolve(schema, root);
    if let Some(p) = schema.get("properties").and_then(|p| p.get(field)) {
        let required = array(schema, "required")
            .iter()
            .any(|r| r.as_str() == Some(field));
        return Some((p, required));
    }
    array(schema, "allOf")
        .iter()
        .find_map(|s| property_at(root, s, field))
}

/// The required properties of an object schema.
fn required(root: &Value) -> Vec<&str> {
    let schema = resolve(root, root);
    let mut out: Vec<&str> = array(schema, "required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for s in array(schema, "allOf") {
        out.extend(
            array(resolve(s, root), "required")
                .iter()
                .filter_map(Value::as_str),
        );
    }
    out
}

/// The JSON types a schema admits; `None` when it does not say (any type).
pub fn types_of(schema: &Value, root: &Value) -> Option<BTreeSet<String>> {
    let schema = resolve(schema, root);
    match schema.get("type") {
        Some(Value::String(t)) => return Some(BTreeSet::from([t.clone()])),
        Some(Value::Array(ts)) => {
            return Some(
                ts.iter()
                    .filter_map(|t| t.as_str().map(String::from))
                    .collect(),
            );
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut all = BTreeSet::new();
            for b in branches {
                all.extend(types_of(b, root)?);
            }
            return Some(all);
        }
    }
    let values: Vec<&Value> = match (schema.get("const"), schema.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Value::Array(e))) => e.iter().collect(),
        _ => return None,
    };
    Some(
        values
            .into_iter()
            .map(|v| json_type(v).to_owned())
            .collect(),
    )
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether every value of types `source` is of one of types `target`.
pub fn accepts(target: &BTreeSet<String>, source: &BTreeSet<String>) -> bool {
    source
        .iter()
        .all(|s| target.contains(s) || (s == "integer" && target.contains("number")))
}

fn shown(types: &BTreeSet<String>) -> String {
    types.iter().cloned().collect::<Vec<_>>().join(" | ")
}

/// Check every pipeline of `skills` against `skills` and `ops`, and compute the
/// capability closure of each (keyed by `name@version`). Skills and ops that
/// are not pipelines are taken as they are.
pub fn check_pipelines(
    skills: &[Value],
    ops: &[Value],
) -> (Vec<Finding>, BTreeMap<String, Closure>) {
    let index = Index::new(skills, ops);
    let mut findings = Vec::new();
    for p in skills.iter().filter(|s| str_of(s, "kind") == "pipeline") {
        check_steps(p, &index, &mut findings);
    }
    let mut closures = BTreeMap::new();
    let mut visiting = Vec::new();
    for p in skills.iter().filter(|s| str_of(s, "kind") == "pipeline") {
        closure(p, &index, &mut closures, &mut visiting, &mut findings);
    }
    (findings, closures)
}

/// A value's place on one side of a mapping: the schema of the field, the
/// document its `$ref`s resolve in, and whether the field is required there
/// (always present, for a source; needed, for a destination).
#[derive(Clone, Copy)]
struct Slot<'a> {
    root: &'a Value,
    schema: &'a Value,
    required: bool,
}

impl<'a> Slot<'a> {
    /// Property `field` of the object schema `root`.
    fn of(root: &'a Value, field: &str) -> Option<Slot<'a>> {
        property(root, field).map(|(schema, required)| Slot {
            root,
            schema,
            required,
        })
    }
}

/// Why values from `from` may not fit `to`: the types they disagree on
/// (`have`, `want`), and whether an optional source feeds a required field.
fn misfit(from: Slot<'_>, to: Slot<'_>) -> (Option<(String, String)>, bool) {
    let types = match (
        types_of(from.schema, from.root),
        types_of(to.schema, to.root),
    ) {
        (Some(have), Some(want)) if !accepts(&want, &have) => Some((shown(&have), shown(&want))),
        _ => None,
    };
    (types, to.required && !from.required)
}

/// One pipeline's steps, in order, against the registry.
struct StepCheck<'a> {
    index: &'a Index<'a>,
    /// The pipeline's input and output schemas.
    inputs: &'a Value,
    outputs: &'a Value,
    all_ids: BTreeSet<&'a str>,
    /// Earlier steps' ids and their targets' output schemas.
    earlier: BTreeMap<&'a str, Option<&'a Value>>,
    /// Pipeline output -> the step that writes it.
    produced: BTreeMap<&'a str, &'a str>,
    problems: Vec<String>,
}

fn check_steps<'a>(p: &'a Value, index: &'a Index<'a>, findings: &mut Vec<Finding>) {
    let steps = array(p, "steps");
    let mut c = StepCheck {
        index,
        inputs: p.get("inputs_schema").unwrap_or(&Value::Null),
        outputs: p.get("outputs_schema").unwrap_or(&Value::Null),
        all_ids: steps.iter().map(|s| str_of(s, "id")).collect(),
        earlier: BTreeMap::new(),
        produced: BTreeMap::new(),
        problems: Vec::new(),
    };
    if steps.is_empty() {
        c.problems.push("has no steps".to_owned());
    }
    for step in steps {
        c.step(step);
    }
    for r in required(c.outputs) {
        if !c.produced.contains_key(r) {
            c.problems.push(format!(
                "required output `{r}` is written by no step (map a step output to `$outputs.{r}`)"
            ));
        }
    }
    let who = subject("pipeline", p);
    findings.extend(c.problems.into_iter().map(|message| Finding {
        subject: who.clone(),
        message,
    }));
}

impl<'a> StepCheck<'a> {
    fn step(&mut self, step: &'a Value) {
        let id = str_of(step, "id");
        if id.is_empty() {
            self.problems.push("a step has no `id`".to_owned());
        }
        if self.earlier.contains_key(id) {
            self.problems.push(format!("step id `{id}` is used twice"));
        }
        let target = match step.get("target").map(|t| self.index.target(t)) {
            Some(Ok((v, _))) => Some(v),
            Some(Err(e)) => {
                self.problems.push(format!("step `{id}`: {e}"));
                None
            }
            None => {
                self.problems.push(format!("step `{id}` has no `target`"));
                None
            }
        };
        if let Some(t) = target
            && str_of(t, "status") == "disabled"
        {
            self.problems
                .push(format!("step `{id}`: target `{}` is disabled", label(t)));
        }
        let t_name = target.map(label).unwrap_or_default();
        let t_in = target.and_then(|t| t.get("inputs_schema"));
        let t_out = target.and_then(|t| t.get("outputs_schema"));

        let mapping = step.get("inputs").and_then(Value::as_object);
        for (field, source) in mapping.into_iter().flatten() {
            self.input(id, &t_name, t_in, field, source);
        }
        if let Some(t_in) = t_in {
            for r in required(t_in) {
                if mapping.is_none_or(|m| !m.contains_key(r)) {
                    self.problems.push(format!(
                        "step `{id}` does not map required input `{r}` of `{t_name}`"
                    ));
                }
            }
        }
        let mapping = step.get("outputs").and_then(Value::as_object);
        for (field, dest) in mapping.into_iter().flatten() {
            self.output(id, &t_name, t_out, field, dest);
        }
        self.earlier.insert(id, t_out);
    }

    /// Target input `field` read from `source`.
    fn input(
        &mut self,
        id: &str,
        t_name: &str,
        t_in: Option<&'a Value>,
        field: &str,
        source: &'a Value,
    ) {
        let Some(text) = source.as_str() else {
            self.problems.push(format!(
                "step `{id}`: input `{field}` is not a reference string"
            ));
            return;
        };
        let to = t_in.and_then(|s| Slot::of(s, field));
        if t_in.is_some() && to.is_none() {
            self.problems.push(format!(
                "step `{id}`: `{field}` is not an input field of `{t_name}`"
            ));
        }
        let Some(from) = self.source(id, field, text) else {
            return;
        };
        if let Some(to) = to {
            let (types, absent) = misfit(from, to);
            if let Some((have, want)) = types {
                self.problems.push(format!(
                    "step `{id}`: `{text}` is {have} but input `{field}` of `{t_name}` takes {want}"
                ));
            }
            if absent {
                self.problems.push(format!(
                    "step `{id}`: `{text}` may be absent but input `{field}` of `{t_name}` is required"
                ));
            }
        }
    }

    /// Where `text` (read by step `id` for its input `field`) points, when it
    /// points somewhere known.
    fn source(&mut self, id: &str, field: &str, text: &str) -> Option<Slot<'a>> {
        let problem = match Reference::parse(text) {
            None => {
                format!("step `{id}`: `{text}` is not `$inputs.<field>` or `$step.<id>.<field>`")
            }
            Some(Reference::Output(_)) => format!(
                "step `{id}`: input `{field}` reads `{text}`, but `$outputs` is where results go; read `$inputs.<field>` or `$step.<id>.<field>`"
            ),
            Some(Reference::Input(f)) => match Slot::of(self.inputs, f) {
                Some(slot) => return Some(slot),
                None => format!("step `{id}`: `{text}` is not a field of the pipeline's input"),
            },
            Some(Reference::Step(s, f)) => match self.earlier.get(s) {
                Some(Some(out)) => match Slot::of(out, f) {
                    Some(slot) => return Some(slot),
                    None => {
                        format!("step `{id}`: `{text}`: `{f}` is not an output field of step `{s}`")
                    }
                },
                // The earlier step's target is unknown, which is reported there.
                Some(None) => return None,
                None if s == id => format!("step `{id}`: `{text}` refers to the step itself"),
                None if self.all_ids.contains(s) => {
                    format!("step `{id}`: `{text}` refers to step `{s}`, which runs later")
                }
                None => format!("step `{id}`: `{text}` names no step"),
            },
        };
        self.problems.push(problem);
        None
    }

    /// Target output `field` written to `dest`.
    fn output(
        &mut self,
        id: &'a str,
        t_name: &str,
        t_out: Option<&'a Value>,
        field: &str,
        dest: &'a Value,
    ) {
        let from = t_out.and_then(|s| Slot::of(s, field));
        if t_out.is_some() && from.is_none() {
            self.problems.push(format!(
                "step `{id}`: `{field}` is not an output field of `{t_name}`"
            ));
        }
        let name = match dest.as_str().and_then(Reference::parse) {
            Some(Reference::Output(name)) => name,
            // The seed's way of naming a step output for later steps.
            Some(Reference::Step(s, f)) if s == id && f == field => return,
            _ => {
                self.problems.push(format!(
                    "step `{id}`: output `{field}` goes to {dest}; write `$outputs.<name>` (or `$step.{id}.{field}`)"
                ));
                return;
            }
        };
        if let Some(first) = self.produced.insert(name, id) {
            self.problems.push(format!(
                "pipeline output `{name}` is written by step `{first}` and by step `{id}`"
            ));
        }
        let Some(to) = Slot::of(self.outputs, name) else {
            self.problems.push(format!(
                "step `{id}`: `$outputs.{name}` is not a field of the pipeline's output"
            ));
            return;
        };
        if let Some(from) = from {
            let (types, absent) = misfit(from, to);
            if let Some((have, want)) = types {
                self.problems.push(format!(
                    "step `{id}`: output `{field}` of `{t_name}` is {have} but `$outputs.{name}` is {want}"
                ));
            }
            if absent {
                self.problems.push(format!(
                    "step `{id}`: output `{field}` of `{t_name}` may be absent but `$outputs.{name}` is required"
                ));
            }
        }
    }
}

/// The closure of pipeline `p`, memoized in `done`; a cycle is a finding.
fn closure(
    p: &Value,
    index: &Index<'_>,
    done: &mut BTreeMap<String, Closure>,
    visiting: &mut Vec<String>,
    findings: &mut Vec<Finding>,
) -> Closure {
    let me = label(p);
    if let Some(c) = done.get(&me) {
        return c.clone();
    }
    if let Some(at) = visiting.iter().position(|v| *v == me) {
        let mut cycle = visiting[at..].to_vec();
        cycle.push(me.clone());
        findings.push(Finding {
            subject: subject("pipeline", p),
            message: format!("steps form a cycle: {}", cycle.join(" -> ")),
        });
        return Closure::default();
    }
    visiting.push(me.clone());
    let mut c = Closure::default();
    for step in array(p, "steps") {
        let Some(Ok((t, _))) = step.get("target").map(|t| index.target(t)) else {
            continue;
        };
        let part = if str_of(t, "kind") == "pipeline" {
            closure(t, index, done, visiting, findings)
        } else {
            Closure {
                capabilities: strings(t, "capabilities"),
                side_effects: strings(t, "side_effects"),
            }
        };
        c.capabilities.extend(part.capabilities);
        c.side_effects.extend(part.side_effects);
    }
    visiting.pop();
    done.insert(me, c.clone());
    c
}

fn strings(v: &Value, key: &str) -> BTreeSet<String> {
    array(v, key)
        .iter()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

/// Every cross-skill rule of a `skill-registry.json` value, with its ops
/// (`op-registry.json`) and capability catalog (`capabilities.json`) when given.
/// The format itself (field names and types) is the published JSON Schema's
/// business; this checks what a schema cannot say.
pub fn check_registry(
    registry: &Value,
    ops: Option<&Value>,
    catalog: Option<&Value>,
) -> Vec<Finding> {
    let skills = array(registry, "skills");
    let op_list = ops.map(|o| array(o, "ops")).unwrap_or_default();
    let known: Option<BTreeMap<&str, &Value>> = catalog.map(|c| {
        array(c, "capabilities")
            .iter()
            .map(|k| (str_of(k, "id"), k))
            .collect()
    });
    let index = Index::new(skills, op_list);
    let mut findings = Vec::new();
    for (kind, items) in [("skill", skills), ("op", op_list)] {
        let mut seen = BTreeSet::new();
        for v in items {
            let who = subject(kind, v);
            let mut problem = |message: String| {
                findings.push(Finding {
                    subject: who.clone(),
                    message,
                })
            };
            if !seen.insert(label(v)) {
                problem("appears twice".to_owned());
            }
            one_entry(v, known.as_ref(), &mut problem);
            if let Some(d) = v.get("deprecation") {
                if let Some(r) = d.get("replaced_by").and_then(Value::as_str)
                    && !(if kind == "op" {
                        &index.ops
                    } else {
                        &index.skills
                    })
                    .contains_key(r)
                {
                    problem(format!(
                        "replaced_by names `{r}`, which is not in the registry"
                    ));
                }
                if let (Some(removal), Ok(version)) = (
                    d.get("removal_version").and_then(Value::as_str),
                    semver::Version::parse(str_of(v, "version")),
                ) && semver::Version::parse(removal).is_ok_and(|r| r <= version)
                {
                    problem(format!(
                        "removal_version `{removal}` is not after version `{version}`"
                    ));
                }
            }
            for t in array(v, "call_targets") {
                if str_of(t, "kind") == "op" && ops.is_none() {
                    problem(format!(
                        "call target op `{}` cannot be checked without the op registry (pass --ops FILE)",
                        str_of(t, "name")
                    ));
                } else if let Err(e) = index.target(t) {
                    problem(format!("call target {e}"));
                }
            }
        }
    }

    let mut tools: BTreeMap<&str, &str> = BTreeMap::new();
    for s in skills {
        if s.pointer("/mcp/exposed").and_then(Value::as_bool) == Some(true) {
            let tool = crate::views::tool_name(s);
            let name = str_of(s, "name");
            if let Some(other) = tools.insert(tool, name)
                && other != name
            {
                findings.push(Finding {
                    subject: subject("skill", s),
                    message: format!("MCP tool name `{tool}` is also used by skill `{other}`"),
                });
            }
        }
    }

    let (pipeline_findings, closures) = check_pipelines(skills, op_list);
    findings.extend(pipeline_findings);
    for p in skills.iter().filter(|s| str_of(s, "kind") == "pipeline") {
        let Some(c) = closures.get(&label(p)) else {
            continue;
        };
        let declared = strings(p, "capabilities");
        if declared != c.capabilities {
            findings.push(Finding {
                subject: subject("pipeline", p),
                message: format!(
                    "capabilities are [{}] but its steps need [{}]; a pipeline's capabilities are the union of its steps'",
                    declared.into_iter().collect::<Vec<_>>().join(", "),
                    c.capabilities.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    findings
}

/// The rules of one skill or op on its own.
fn one_entry(
    v: &Value,
    catalog: Option<&BTreeMap<&str, &Value>>,
    problem: &mut impl FnMut(String),
) {
    let name = str_of(v, "name");
    if !is_snake_case(name) {
        problem(format!("name `{name}` is not snake_case"));
    }
    if let Err(e) = semver::Version::parse(str_of(v, "version")) {
        problem(format!(
            "version `{}` is not semver: {e}",
            str_of(v, "version")
        ));
    }
    let description = str_of(v, "description");
    if description.trim().is_empty() {
        problem("description is empty".to_owned());
    } else if description.chars().count() > MAX_DESCRIPTION {
        problem(format!(
            "description is longer than {MAX_DESCRIPTION} characters"
        ));
    }
    let capabilities = strings(v, "capabilities");
    let side_effects = strings(v, "side_effects");
    for c in &capabilities {
        if !is_capability_id(c) {
            problem(format!("capability `{c}` is not of the form `domain.verb`"));
        }
        match catalog.map(|k| k.get(c.as_str())) {
            Some(None) => problem(format!("capability `{c}` is not in the capability catalog")),
            Some(Some(info)) => {
                let effect = str_of(info, "effect_type");
                let operation = str_of(info, "operation");
                let effectful = matches!(operation, "write" | "delete" | "upsert")
                    || matches!(effect, "network" | "process");
                if effectful && !side_effects.contains(c) {
                    problem(format!(
                        "capability `{c}` changes the world ({effect} {operation}) but is not listed in side_effects"
                    ));
                }
            }
            None => {}
        }
    }
    for s in side_effects.difference(&capabilities) {
        problem(format!("side effect `{s}` is not among the capabilities"));
    }
    let mut codes = BTreeSet::new();
    for f in array(v, "failure_modes") {
        let code = str_of(f, "code");
        if !codes.insert(code) {
            problem(format!("failure mode code `{code}` appears twice"));
        }
    }
    match (str_of(v, "status"), v.get("deprecation")) {
        ("deprecated", None) => {
            problem("status is `deprecated` but there is no deprecation metadata".to_owned())
        }
        ("enabled" | "disabled", Some(_)) => {
            problem("has deprecation metadata but its status is not `deprecated`".to_owned())
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_in_three_forms_only() {
        assert_eq!(
            Reference::parse("$inputs.path"),
            Some(Reference::Input("path"))
        );
        assert_eq!(
            Reference::parse("$step.read.content"),
            Some(Reference::Step("read", "content"))
        );
        assert_eq!(
            Reference::parse("$outputs.summary"),
            Some(Reference::Output("summary"))
        );
        for bad in [
            "inputs.path",
            "$inputs.",
            "$inputs.a.b",
            "$step.read",
            "$step..x",
            "$output.x",
        ] {
            assert_eq!(Reference::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn integers_fit_numbers_but_not_the_other_way() {
        let n = BTreeSet::from(["number".to_owned()]);
        let i = BTreeSet::from(["integer".to_owned()]);
        assert!(accepts(&n, &i));
        assert!(!accepts(&i, &n));
        let root = serde_json::json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
        assert_eq!(
            types_of(&root, &root),
            Some(BTreeSet::from(["null".to_owned(), "string".to_owned()]))
        );
    }
}
