//! Which format a registry file is in, and the file as the rules and views
//! read it. Two formats are read: what skill-build exports, held to
//! `skill-registry.schema.json` (and `op-registry.schema.json`); and a Brain
//! OS registry as other runtimes write it (majors 1 and 2; Python, HTTP and
//! script entrypoints), held to `brainos-registry.schema.json`, which states
//! the format document's own rules and defaults. A file valid in either is
//! valid; one valid in neither is reported against the format it comes
//! closest to.

use serde_json::{Map, Value, json};
use skill_runtime::schema::CompiledSchema;

/// The Brain OS registry format, as its document defines it: the file
/// [`brainos_schema`] writes from the export's formats.
pub const BRAINOS_SCHEMA: &str = include_str!("../schemas/brainos-registry.schema.json");

/// The fields the Brain OS format requires of every skill.
const SKILL_REQUIRED: &[&str] = &[
    "name",
    "version",
    "status",
    "description",
    "kind",
    "inputs_schema",
    "outputs_schema",
    "capabilities",
    "autonomy",
    "failure_modes",
];

/// The fields the Brain OS format requires of every op.
const OP_REQUIRED: &[&str] = &[
    "name",
    "version",
    "status",
    "description",
    "inputs_schema",
    "outputs_schema",
    "capabilities",
    "autonomy",
    "runtime",
    "failure_modes",
];

/// The Brain OS format, written from the export's formats (`skills`: the
/// skill registry's schema, `ops`: the op registry's): the same definitions
/// for every field both know, so a field this project reads (`execution`,
/// `mcp`, ...) means the same in a file another runtime wrote, with what the
/// Brain OS document relaxes: registry versions 1.x and 2.x, only its own
/// fields required, `retryable` optional (false), deprecation without notes,
/// descriptions of any length, entrypoints and op modules of any runtime
/// (`python` with a dotted module, `http`, `script`), and fields of other
/// runtimes kept.
pub fn brainos_schema(skills: &Value, ops: &Value) -> Value {
    let mut s = skills.clone();
    let mut root = s.as_object().cloned().unwrap_or_default();
    root.insert(
        "$id".into(),
        json!("https://skill-runtime.dev/schemas/brainos-registry/1.0.0"),
    );
    root.insert(
        "title".into(),
        json!("A Brain OS skill registry, as other runtimes write it"),
    );
    root.insert(
        "description".into(),
        json!(
            "The Brain OS skill registry (majors 1 and 2) as its format document defines it, for files other runtimes write: `skill-registry validate`, `diff` and `convert` read them. Generated from skill-registry.schema.json and op-registry.schema.json: a field both formats know has the same definition; only the format document's fields are required, `retryable` defaults to false, entrypoints are `python` (module + handler), `http` (url), `script` (command) or `native`, and other fields are kept. `$defs/op_registry` is its op registry."
        ),
    );
    root.remove("additionalProperties");
    s = Value::Object(root);
    s["properties"]["registry_version"] = json!({
        "description": "Semver, of major 1 or 2.",
        "type": "string",
        "pattern": "^[12]\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)$"
    });
    relax(&mut s["$defs"]["skill"], SKILL_REQUIRED);
    s["$defs"]["skill"]["properties"]["entrypoint"] = json!({
        "description": "Where the implementation is: a Python callable, an HTTP endpoint, a command, or native code of the runtime that wrote the file.",
        "type": "object",
        "required": ["runtime"],
        "properties": {
            "runtime": {"enum": ["python", "http", "script", "native"]},
            "module": {"type": "string", "minLength": 1},
            "handler": {"type": "string", "minLength": 1},
            "url": {"type": "string", "minLength": 1},
            "command": {"type": "string", "minLength": 1}
        },
        "allOf": [
            needs("runtime", json!({"enum": ["python", "native"]}), &["module", "handler"]),
            needs("runtime", json!({"const": "http"}), &["url"]),
            needs("runtime", json!({"const": "script"}), &["command"])
        ]
    });
    let mut op = ops["$defs"]["op"].clone();
    relax(&mut op, OP_REQUIRED);
    for field in ["module", "handler", "url", "command"] {
        op["properties"][field] = json!({"type": "string", "minLength": 1});
    }
    let mut defs = s["$defs"].as_object().cloned().unwrap_or_default();
    if let Some(op_defs) = ops.get("$defs").and_then(Value::as_object) {
        for (k, v) in op_defs {
            defs.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    defs.insert("op".into(), op);
    defs.insert(
        "op_registry".into(),
        json!({
            "type": "object",
            "required": ["registry_version", "ops"],
            "properties": {
                "registry_version": {"$ref": "#/properties/registry_version"},
                "ops": {"type": "array", "items": {"$ref": "#/$defs/op"}}
            }
        }),
    );
    s["$defs"] = Value::Object(defs);
    s
}

/// An entry's definition with only `required` required, other fields taken,
/// and the Brain OS defaults.
fn relax(def: &mut Value, required: &[&str]) {
    def["required"] = json!(required);
    if let Some(d) = def.as_object_mut() {
        d.remove("additionalProperties");
    }
    let props = &mut def["properties"];
    if let Some(description) = props.get_mut("description").and_then(Value::as_object_mut) {
        description.remove("maxLength");
    }
    props["failure_modes"]["items"]["required"] = json!(["code", "description"]);
    props["deprecation"]["required"] = json!(["deprecated"]);
}

/// `if field matches condition then fields are required`.
fn needs(field: &str, condition: Value, fields: &[&str]) -> Value {
    let present: Map<String, Value> = fields
        .iter()
        .map(|f| ((*f).to_owned(), Value::Bool(true)))
        .collect();
    json!({
        "if": {"type": "object", "properties": {field: condition}, "required": [field]},
        "then": {"type": "object", "properties": present, "required": fields}
    })
}

/// What a registry says that holds but will not work: a skill whose code is
/// native (run in the runtime's own process) declared to run in a DOCKER or
/// WASM sandbox, which the runtime refuses to run.
pub fn warnings(path: &str, registry: &Value) -> Vec<String> {
    let skills = registry.get("skills").and_then(Value::as_array);
    skills
        .into_iter()
        .flatten()
        .filter_map(|s| {
            let native = s.pointer("/entrypoint/runtime").and_then(Value::as_str) == Some("native");
            let sandbox = s.pointer("/constraints/sandbox_type").and_then(Value::as_str)?;
            (native && sandbox != "LOCAL").then(|| {
                format!(
                    "{path}: warning: skill `{}@{}` is native code, run in the runtime's own process, yet declares sandbox {sandbox}: a runtime refuses to run it (sandbox_unavailable)",
                    s.get("name").and_then(Value::as_str).unwrap_or_default(),
                    s.get("version").and_then(Value::as_str).unwrap_or_default(),
                )
            })
        })
        .collect()
}

/// The format a registry file was read in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// What skill-build exports.
    Export,
    /// A Brain OS registry written by another runtime.
    BrainOs,
}

impl Format {
    /// For people.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Export => "skill-build export",
            Format::BrainOs => "Brain OS registry",
        }
    }

    /// For `--json`.
    pub fn word(self) -> &'static str {
        match self {
            Format::Export => "export",
            Format::BrainOs => "brainos",
        }
    }
}

/// What reading a file against both formats found.
pub struct Read {
    /// The format it is valid in, or the one it comes closest to.
    pub format: Format,
    /// What breaks that format (empty: valid).
    pub problems: Vec<String>,
}

/// Which of the two formats `doc` (a skill registry when `list` is `skills`,
/// an op registry when it is `ops`) is valid in, checking the strict one
/// (`export_schema`) first; each problem prefixed with `path`.
pub fn read(path: &str, doc: &Value, list: &str, export_schema: &str) -> Read {
    let export = problems(path, doc, list, export_schema, None);
    // A file that says it is an export is held to the export's format: a
    // broken export is not a valid Brain OS registry by accident.
    if export.is_empty() || exported(doc, list) {
        return Read {
            format: Format::Export,
            problems: export,
        };
    }
    let definition = (list == "ops").then_some("op_registry");
    let brainos = problems(path, doc, list, BRAINOS_SCHEMA, definition);
    if brainos.len() < export.len() {
        Read {
            format: Format::BrainOs,
            problems: brainos,
        }
    } else {
        Read {
            format: Format::Export,
            problems: export,
        }
    }
}

/// The fields only an export writes: no Brain OS runtime writes them (its
/// format allows them, so that an export reads as Brain OS too).
const EXPORT_ONLY: [&str; 6] = [
    "execution",
    "mcp",
    "reusable_by",
    "constraints",
    "side_effect_details",
    "ambient_allowances",
];

/// Whether `doc` says it is an export: an entry run by the runtime itself
/// (`entrypoint.runtime: native`, which no Brain OS runtime is), or an
/// entry with a field only an export writes.
fn exported(doc: &Value, list: &str) -> bool {
    let entries = doc.get(list).and_then(Value::as_array);
    entries.into_iter().flatten().any(|v| {
        v.pointer("/entrypoint/runtime").and_then(Value::as_str) == Some("native")
            || EXPORT_ONLY.iter().any(|k| v.get(*k).is_some())
    })
}

/// `doc` against `schema_text` (its `$defs/definition` when given), then
/// each entry's input and output schemas compiled.
fn problems(
    path: &str,
    doc: &Value,
    list: &str,
    schema_text: &str,
    definition: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut schema: Value = match serde_json::from_str(schema_text) {
        Ok(s) => s,
        Err(e) => {
            out.push(format!("{path}: the format schema does not parse: {e}"));
            return out;
        }
    };
    if let Some(d) = definition {
        schema["$ref"] = Value::String(format!("#/$defs/{d}"));
        // The root's own `required` is the skill registry's.
        if let Some(o) = schema.as_object_mut() {
            o.remove("required");
        }
    }
    match CompiledSchema::compile(&schema) {
        Ok(c) => out.extend(
            c.violations(doc)
                .into_iter()
                .map(|v| format!("{path}: {v}")),
        ),
        Err(e) => out.push(format!("{path}: the format schema does not compile: {e}")),
    }
    for v in doc
        .get(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["inputs_schema", "outputs_schema"] {
            if let Some(s) = v.get(key)
                && let Err(e) = CompiledSchema::compile(s)
            {
                out.push(format!(
                    "{path}: `{}@{}`: {key}: {e}",
                    v.get("name").and_then(Value::as_str).unwrap_or_default(),
                    v.get("version").and_then(Value::as_str).unwrap_or_default()
                ));
            }
        }
    }
    out
}

/// A Brain OS registry (skills under `list`) with the format's defaults
/// written out, as an export writes every field: `retryable` false,
/// `side_effects` and `call_targets` empty; and, since that format says
/// nothing of MCP, every skill offered as a tool of its own name, so that
/// `convert` gives a client the registry's skills. An export is returned as
/// it is: it writes every field.
pub fn normalized(mut doc: Value, format: Format, list: &str) -> Value {
    if format == Format::Export {
        return doc;
    }
    let entries = doc
        .get_mut(list)
        .and_then(Value::as_array_mut)
        .map(|a| a.as_mut_slice())
        .unwrap_or_default();
    for entry in entries {
        let Some(e) = entry.as_object_mut() else {
            continue;
        };
        for mode in e
            .get_mut("failure_modes")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(m) = mode.as_object_mut() {
                m.entry("retryable").or_insert(Value::Bool(false));
            }
        }
        e.entry("side_effects")
            .or_insert_with(|| Value::Array(Vec::new()));
        if list == "skills" {
            if e.get("kind").and_then(Value::as_str) == Some("logic") {
                e.entry("call_targets")
                    .or_insert_with(|| Value::Array(Vec::new()));
            }
            e.entry("mcp").or_insert_with(|| json!({"exposed": true}));
        }
    }
    doc
}
