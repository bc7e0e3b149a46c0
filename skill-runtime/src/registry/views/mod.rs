//! Other tools' views of a registry: MCP tool definitions (the `tools/list`
//! result), OpenAI function tools, and the ADR's UnifiedSkillContract v1.
//!
//! Every view is computed from the exported `skill-registry.json` value (and,
//! where a view needs to know what a capability touches, `capabilities.json`),
//! not from the linked skills: the MCP server, `skill-examples export --format`
//! and tools that only have the published files all share this code, so they
//! cannot disagree.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::model::content::CONTENT_MARKER;
use crate::registry::json::{bool_of, str_of};
use crate::registry::views::inline::self_contained;
use crate::schema::standard_formats_only;

pub mod inline;

/// The `_meta` key under which MCP tools carry our manifest fields (MCP's rule:
/// reverse-DNS prefix, a slash, a name).
pub const META_KEY: &str = "dev.skill-runtime/manifest";

/// A skill in a registry that one view cannot represent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("skill `{skill}`: {message}")]
pub struct ViewError {
    /// The skill.
    pub skill: String,
    /// Why the view cannot represent it.
    pub message: String,
}

/// The MCP tool name of a skill: `mcp.tool_name`, else the skill name.
pub fn tool_name(skill: &Value) -> &str {
    match skill.pointer("/mcp/tool_name").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => t,
        _ => str_of(skill, "name"),
    }
}

/// The skills a registry serves as MCP tools, ordered by tool name: exposed, not
/// disabled, and of several versions of one skill only the highest.
pub fn exposed_skills(registry: &Value) -> Vec<&Value> {
    let mut by_tool: BTreeMap<&str, (&Value, semver::Version)> = BTreeMap::new();
    let skills = registry.get("skills").and_then(Value::as_array);
    for skill in skills.into_iter().flatten() {
        if !bool_of(skill, "/mcp/exposed") || str_of(skill, "status") == "disabled" {
            continue;
        }
        let version = semver::Version::parse(str_of(skill, "version"))
            .unwrap_or(semver::Version::new(0, 0, 0));
        let name = tool_name(skill);
        if by_tool.get(name).is_none_or(|(_, kept)| version > *kept) {
            by_tool.insert(name, (skill, version));
        }
    }
    by_tool.into_values().map(|(s, _)| s).collect()
}

/// Effect types of the capabilities in a `capabilities.json` value, by id.
fn effect_types(catalog: Option<&Value>) -> BTreeMap<&str, &str> {
    let caps = catalog
        .and_then(|c| c.get("capabilities"))
        .and_then(Value::as_array);
    caps.into_iter()
        .flatten()
        .map(|c| (str_of(c, "id"), str_of(c, "effect_type")))
        .collect()
}

/// The MCP tool definition of one skill of a registry.
///
/// Annotations are derived from the manifest, never guessed:
/// - `readOnlyHint`: true when the skill declares no side effect (effectful
///   capabilities must be listed as side effects, which the macro enforces);
/// - `destructiveHint` (only for tools that are not read-only): true when the
///   skill is marked destructive, deletes, or has an irreversible side effect
///   other than publishing an event; false otherwise;
/// - `idempotentHint` (only for tools that are not read-only): the execution
///   policy's `idempotent`;
/// - `openWorldHint`: true when a capability reaches an external API or the
///   network, false when every capability's effect type is known and none does,
///   unset when a capability's effect type is unknown (no catalog given).
pub fn mcp_tool(skill: &Value, catalog: Option<&Value>) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), tool_name(skill).into());
    if let Some(title) = skill.get("title").and_then(Value::as_str) {
        tool.insert("title".into(), title.into());
    }
    let mut description = str_of(skill, "description").to_owned();
    if let Some(dep) = skill.get("deprecation") {
        description.push_str(" Deprecated");
        if let Some(r) = dep.get("replaced_by").and_then(Value::as_str) {
            description.push_str(&format!(": use `{r}` instead"));
        }
        description.push('.');
    }
    tool.insert("description".into(), description.into());
    let null = Value::Null;
    let input = skill.get("inputs_schema").unwrap_or(&null);
    let output = skill.get("outputs_schema").unwrap_or(&null);
    tool.insert("inputSchema".into(), portable(input));
    // A tool answering content blocks has no structured output to describe.
    if output.get(CONTENT_MARKER) != Some(&Value::Bool(true)) {
        tool.insert("outputSchema".into(), portable(output));
    }
    tool.insert("annotations".into(), annotations(skill, catalog));
    tool.insert("_meta".into(), json!({ META_KEY: meta(skill) }));
    Value::Object(tool)
}

fn annotations(skill: &Value, catalog: Option<&Value>) -> Value {
    let effects: &[Value] = skill
        .get("side_effect_details")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let mut a = Map::new();
    if let Some(title) = skill.get("title").and_then(Value::as_str) {
        a.insert("title".into(), title.into());
    }
    let read_only = effects.is_empty();
    a.insert("readOnlyHint".into(), read_only.into());
    if !read_only {
        let destructive = bool_of(skill, "/constraints/is_destructive")
            || effects.iter().any(|e| {
                str_of(e, "operation") == "delete"
                    || (!bool_of(e, "/reversible") && str_of(e, "type") != "event")
            });
        a.insert("destructiveHint".into(), destructive.into());
        a.insert(
            "idempotentHint".into(),
            bool_of(skill, "/execution/idempotent").into(),
        );
    }
    let known = effect_types(catalog);
    let mut open_world = Some(false);
    let side_effect_types = effects.iter().map(|e| Some(str_of(e, "type")));
    let capability_types = skill
        .get("capabilities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| c.as_str().and_then(|id| known.get(id).copied()));
    for t in side_effect_types.chain(capability_types) {
        match t {
            Some("api" | "network") => {
                open_world = Some(true);
                break;
            }
            Some(_) => {}
            None => open_world = None,
        }
    }
    if let Some(open) = open_world {
        a.insert("openWorldHint".into(), open.into());
    }
    Value::Object(a)
}

fn meta(skill: &Value) -> Value {
    let mut m = Map::new();
    for key in [
        "name",
        "version",
        "status",
        "domain",
        "autonomy",
        "capabilities",
        "side_effects",
        "side_effect_details",
        "constraints",
        "execution",
        "failure_modes",
        "deprecation",
    ] {
        if let Some(v) = skill.get(key) {
            m.insert(key.into(), v.clone());
        }
    }
    if let Some(p) = skill.pointer("/mcp/permissions") {
        m.insert("permissions".into(), p.clone());
    }
    Value::Object(m)
}

/// `schema` self-contained and with only standard formats: what tool views hand
/// to clients.
pub fn portable(schema: &Value) -> Value {
    let mut out = self_contained(schema);
    standard_formats_only(&mut out);
    out
}

/// The `tools/list` result for a registry: every exposed tool, ordered by name.
pub fn mcp_tools(registry: &Value, catalog: Option<&Value>) -> Value {
    mcp_tools_for(registry, catalog, McpProtocol::V2025_11_25)
}

/// An MCP protocol revision whose `tools/list` result a view is shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpProtocol {
    /// `2025-11-25`: `{"tools": [...]}`.
    #[default]
    V2025_11_25,
    /// `2026-07-28`: the result also carries `resultType` (`complete`),
    /// `cacheScope` (`public`: a registry export holds no user's data) and
    /// `ttlMs` (0: a file says nothing of when the server it describes
    /// changes, so a client re-fetches when it needs the list).
    V2026_07_28,
}

impl McpProtocol {
    /// The revisions, oldest first.
    pub const ALL: [McpProtocol; 2] = [McpProtocol::V2025_11_25, McpProtocol::V2026_07_28];

    /// The revision's date, as MCP writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            McpProtocol::V2025_11_25 => "2025-11-25",
            McpProtocol::V2026_07_28 => "2026-07-28",
        }
    }
}

impl std::str::FromStr for McpProtocol {
    type Err = String;

    fn from_str(s: &str) -> Result<McpProtocol, String> {
        McpProtocol::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("unknown MCP protocol revision `{s}`; choose 2025-11-25 or 2026-07-28")
            })
    }
}

/// The `tools/list` result for the exposed skills, shaped for `protocol`.
pub fn mcp_tools_for(registry: &Value, catalog: Option<&Value>, protocol: McpProtocol) -> Value {
    let tools: Vec<Value> = exposed_skills(registry)
        .into_iter()
        .map(|s| mcp_tool(s, catalog))
        .collect();
    match protocol {
        McpProtocol::V2025_11_25 => json!({ "tools": tools }),
        McpProtocol::V2026_07_28 => json!({
            "tools": tools,
            "resultType": "complete",
            "cacheScope": "public",
            "ttlMs": 0,
        }),
    }
}

/// OpenAI function tools (the Chat Completions `tools` array) for the exposed
/// skills. `strict` is set only where the parameters meet strict mode's rules
/// (every object closed and every property required).
pub fn openai_tools(registry: &Value) -> Result<Value, Vec<ViewError>> {
    let mut errors = Vec::new();
    let mut tools = Vec::new();
    for skill in exposed_skills(registry) {
        let name = tool_name(skill);
        if !is_openai_function_name(name) {
            errors.push(ViewError {
                skill: str_of(skill, "name").to_owned(),
                message: format!(
                    "tool name `{name}` is not a valid OpenAI function name (1 to 64 of A-Z a-z 0-9 _ -); set mcp(tool_name = \"...\")"
                ),
            });
            continue;
        }
        let null = Value::Null;
        let mut parameters = portable(skill.get("inputs_schema").unwrap_or(&null));
        if let Some(o) = parameters.as_object_mut() {
            o.remove("$schema");
        }
        let strict = is_strict(&parameters);
        tools.push(json!({
            "type": "function",
            "function": {
                "name": name,
                "description": str_of(skill, "description"),
                "parameters": parameters,
                "strict": strict,
            },
        }));
    }
    if errors.is_empty() {
        Ok(Value::Array(tools))
    } else {
        Err(errors)
    }
}

fn is_openai_function_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

/// Keywords OpenAI's strict mode (Structured Outputs) does not accept.
const NOT_STRICT: &[&str] = &[
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "minProperties",
    "maxProperties",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "uniqueItems",
];

/// The string formats strict mode accepts.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Whether a tool's parameters keep OpenAI's strict-mode rules, at every
/// depth (properties, array items, `anyOf` branches, map values, `$defs`):
/// the root is an object; every object forbids other properties
/// (`additionalProperties: false`, so a map-typed field is not strict) and
/// requires all of its own; no keyword or string format strict mode lacks;
/// references only into the schema's own `$defs`.
fn is_strict(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("object")) && strict_node(schema)
}

fn strict_node(schema: &Value) -> bool {
    let Value::Object(o) = schema else {
        // `true` and `false` schemas say nothing strict mode can enforce.
        return false;
    };
    if o.keys().any(|k| NOT_STRICT.contains(&k.as_str())) {
        return false;
    }
    if let Some(f) = o.get("format").and_then(Value::as_str)
        && !STRICT_FORMATS.contains(&f)
    {
        return false;
    }
    if let Some(r) = o.get("$ref").and_then(Value::as_str)
        && !(r == "#" || r.starts_with("#/$defs/"))
    {
        return false;
    }
    let is_object = match o.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => o.contains_key("properties") || o.contains_key("additionalProperties"),
    };
    let empty = serde_json::Map::new();
    let props = o
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if is_object {
        let required: BTreeSet<&str> = o
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if o.get("additionalProperties") != Some(&Value::Bool(false))
            || props.keys().any(|k| !required.contains(k.as_str()))
        {
            return false;
        }
    }
    let items = match o.get("items") {
        None => true,
        Some(items) => strict_node(items),
    };
    let branches = o
        .get("anyOf")
        .and_then(Value::as_array)
        .is_none_or(|b| b.iter().all(strict_node));
    let defs = o
        .get("$defs")
        .and_then(Value::as_object)
        .is_none_or(|d| d.values().all(strict_node));
    items && branches && defs && props.values().all(strict_node)
}

/// The ADR's UnifiedSkillContract v1 for every skill of a registry (all of them,
/// exposed or not: the contract is what an orchestrator grounds calls against).
/// `skill_id` is `name@version`, unique in any registry.
pub fn unified_contracts(registry: &Value) -> Value {
    let skills = registry.get("skills").and_then(Value::as_array);
    let null = Value::Null;
    let contracts: Vec<Value> = skills
        .into_iter()
        .flatten()
        .map(|s| {
            let name = str_of(s, "name");
            let version = str_of(s, "version");
            json!({
                "skill_id": format!("{name}@{version}"),
                "metadata": {
                    "name": s.get("title").and_then(Value::as_str).unwrap_or(name),
                    "description": str_of(s, "description"),
                    "source": s.pointer("/constraints/source").and_then(Value::as_str).unwrap_or("LOCAL"),
                    "version": version,
                    "status": str_of(s, "status"),
                },
                "interface": {
                    "input_schema": s.get("inputs_schema").unwrap_or(&null),
                    "output_schema": s.get("outputs_schema").unwrap_or(&null),
                },
                "constraints": {
                    "is_destructive": bool_of(s, "/constraints/is_destructive"),
                    "requires_hitl": bool_of(s, "/constraints/requires_hitl"),
                    "sandbox_type": s.pointer("/constraints/sandbox_type").and_then(Value::as_str).unwrap_or("LOCAL"),
                },
            })
        })
        .collect();
    Value::Array(contracts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_schemas_keep_standard_formats_and_properties_named_format() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255},
                "at": {"type": "string", "format": "date-time"},
                "format": {"type": "string"},
            },
        });
        let out = portable(&schema);
        assert_eq!(
            out["properties"]["n"],
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(out["properties"]["at"]["format"], "date-time");
        assert_eq!(out["properties"]["format"], json!({"type": "string"}));
    }

    #[test]
    fn strict_mode_needs_closed_objects_with_every_property_required() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
        let open =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let optional = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
        assert!(is_strict(&closed));
        assert!(!is_strict(&open));
        assert!(!is_strict(&optional));
    }

    /// Each way a schema breaks strict mode below its root.
    #[test]
    fn strict_mode_is_checked_at_every_depth() {
        let wrap = |field: Value| json!({"type": "object", "properties": {"f": field}, "required": ["f"], "additionalProperties": false});
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false});
        let open =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(is_strict(&wrap(closed.clone())));
        assert!(is_strict(&wrap(
            json!({"type": "array", "items": closed.clone()})
        )));
        assert!(is_strict(&wrap(
            json!({"anyOf": [closed.clone(), {"type": "null"}]})
        )));
        assert!(is_strict(&wrap(
            json!({"type": "string", "format": "date-time"})
        )));
        for (why, field) in [
            (
                "a map-typed field",
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
            ),
            (
                "an open object in array items",
                json!({"type": "array", "items": open.clone()}),
            ),
            (
                "an open object in anyOf",
                json!({"anyOf": [open.clone(), {"type": "null"}]}),
            ),
            ("allOf", json!({"allOf": [closed.clone()]})),
            (
                "a format strict mode lacks",
                json!({"type": "string", "format": "uri"}),
            ),
            (
                "uniqueItems",
                json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            ),
            (
                "a reference outside $defs",
                json!({"$ref": "other.json#/x"}),
            ),
            ("a true schema", json!(true)),
        ] {
            assert!(!is_strict(&wrap(field)), "{why}");
        }
        let via_defs = json!({
            "type": "object", "properties": {"f": {"$ref": "#/$defs/Open"}}, "required": ["f"],
            "additionalProperties": false, "$defs": {"Open": open},
        });
        assert!(!is_strict(&via_defs), "an open object behind a $ref");
        assert!(
            !is_strict(&json!({"type": "array", "items": closed})),
            "a root that is no object"
        );
    }
}
