//! The registry as MCP resources: `skill://registry`, the
//! `skill-registry.json` of the skills a caller may call, and
//! `skill://skills/{tool}`, one skill's entry in it (manifest, schemas,
//! conditions), with completion of the template's `tool` argument. A caller
//! reads exactly what `tools/list` shows it: an entry of a tool it lacks the
//! permissions for is "not found", as the tool is unknown to it.

use rmcp::ErrorData;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionInfo,
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use serde_json::json;

use crate::registry::export::REGISTRY_FORMAT_VERSION;

/// The registry of the caller's skills.
pub(crate) const REGISTRY_URI: &str = "skill://registry";
/// One skill's registry entry, by tool name.
pub(crate) const SKILL_TEMPLATE: &str = "skill://skills/{tool}";
const SKILL_PREFIX: &str = "skill://skills/";
const JSON: &str = "application/json";

/// One skill a caller may call: its tool's name, its description, and its
/// registry entry as JSON text.
pub(crate) struct Entry<'a> {
    pub(crate) tool: &'a str,
    pub(crate) description: Option<&'a str>,
    pub(crate) json: &'a str,
}

/// Whether `uri` is the registry or one skill's entry by its shape (which
/// skills a caller may read is decided when it reads).
pub(crate) fn names_registry(uri: &str) -> bool {
    uri == REGISTRY_URI
        || uri
            .strip_prefix(SKILL_PREFIX)
            .is_some_and(|tool| !tool.is_empty() && !tool.contains('/'))
}

/// `resources/list`: the registry, then each entry, in `tools/list` order.
pub(crate) fn list<'a>(entries: impl Iterator<Item = Entry<'a>>) -> ListResourcesResult {
    let registry = Resource::new(REGISTRY_URI, "skill-registry.json")
        .with_title("Skill registry")
        .with_description(
            "The skill-registry.json of the skills this caller may call: each one's \
             manifest, input and output schemas, capabilities and conditions.",
        )
        .with_mime_type(JSON);
    let skills = entries.map(|e| {
        let resource = Resource::new(format!("{SKILL_PREFIX}{}", e.tool), e.tool)
            .with_title(format!("Manifest of {}", e.tool))
            .with_mime_type(JSON)
            .with_size(e.json.len() as u64);
        match e.description {
            Some(d) => resource.with_description(d),
            None => resource,
        }
    });
    ListResourcesResult::with_all_items(std::iter::once(registry).chain(skills).collect())
}

/// `resources/templates/list`: one skill's entry by tool name.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(SKILL_TEMPLATE, "skill")
            .with_title("A skill's manifest")
            .with_description(
                "One skill's entry of skill-registry.json, by its MCP tool name \
                 (completion lists the names this caller may use).",
            )
            .with_mime_type(JSON),
    ])
}

/// `resources/read` of `uri` among `entries`; an unknown URI, or one of a
/// skill the caller may not call, is "resource not found" (-32002).
pub(crate) fn read<'a>(
    uri: &str,
    entries: impl Iterator<Item = Entry<'a>>,
) -> Result<ReadResourceResult, ErrorData> {
    let text = if uri == REGISTRY_URI {
        let skills: Vec<&str> = entries.map(|e| e.json).collect();
        format!(
            "{{\"registry_version\":\"{REGISTRY_FORMAT_VERSION}\",\"skills\":[{}]}}",
            skills.join(",")
        )
    } else {
        let found = uri
            .strip_prefix(SKILL_PREFIX)
            .and_then(|tool| entries.into_iter().find(|e| e.tool == tool));
        match found {
            Some(e) => e.json.to_owned(),
            None => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource `{uri}`: this server has `{REGISTRY_URI}` and \
                         `{SKILL_TEMPLATE}` for the tools `tools/list` shows you"
                    ),
                    Some(json!({ "uri": uri })),
                ));
            }
        }
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(JSON),
    ]))
}

/// `completion/complete` of the skill template's `tool` argument: the
/// caller's tool names that start with what was typed (see [`completed`]);
/// any other argument of it completes to nothing.
pub(crate) fn complete<'a>(
    request: &CompleteRequestParams,
    entries: impl Iterator<Item = Entry<'a>>,
) -> Result<CompleteResult, ErrorData> {
    let ArgumentInfo { name, value, .. } = &request.argument;
    if request.r#ref.as_resource_uri() != Some(SKILL_TEMPLATE) || name != "tool" {
        return Ok(CompleteResult::default());
    }
    completed(entries.map(|e| e.tool), value)
}

/// The values of `known` that start with `typed`: at most 100, the
/// protocol's bound, with the total.
pub(crate) fn completed<'a>(
    known: impl Iterator<Item = &'a str>,
    typed: &str,
) -> Result<CompleteResult, ErrorData> {
    let matching: Vec<String> = known
        .filter(|v| v.starts_with(typed))
        .map(str::to_owned)
        .collect();
    let total = matching.len();
    let shown: Vec<String> = matching
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .collect();
    let more = shown.len() < total;
    let completion = CompletionInfo::with_pagination(shown, u32::try_from(total).ok(), more)
        .map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(CompleteResult::new(completion))
}
