//! The registry's pages: every skill in a table, and one skill's manifest
//! with its schemas, as `skill-registry.json` writes them.

use hyper::StatusCode;
use serde_json::Value;

use super::html::{esc, json_block, table, url_decode, url_part};
use super::pages::Shown;
use super::service::Shared;

/// A manifest's list of words, comma-separated.
fn words(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(esc)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

impl Shared {
    /// `/skills`: name, version, domain, capabilities, side effects, MCP
    /// tool and status of each skill.
    pub(super) fn skills_page(&self) -> (String, String) {
        let registry = &self.console.registry;
        let base = &self.console.base;
        let rows: Vec<Vec<String>> = registry["skills"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|s| {
                let name = s["name"].as_str().unwrap_or_default();
                let tool = match s["mcp"]["exposed"].as_bool() {
                    Some(true) => format!(
                        "<code>{}</code>",
                        esc(s["mcp"]["tool_name"].as_str().unwrap_or_default())
                    ),
                    _ => "<span class=muted>not exposed</span>".to_owned(),
                };
                vec![
                    format!(
                        "<a href=\"{base}/skills/{}\">{}</a>",
                        url_part(name),
                        esc(name)
                    ),
                    esc(s["version"].as_str().unwrap_or_default()),
                    esc(s["domain"].as_str().unwrap_or_default()),
                    words(&s["capabilities"]),
                    words(&s["side_effects"]),
                    tool,
                    esc(s["status"].as_str().unwrap_or_default()),
                ]
            })
            .collect();
        let body = table(
            &[
                "skill",
                "version",
                "domain",
                "capabilities",
                "side effects",
                "MCP tool",
                "status",
            ],
            &rows,
            "The registry has no skill.",
        );
        ("Skills".to_owned(), body)
    }

    /// `/skills/NAME`: its description, its manifest, its schemas.
    pub(super) fn skill_page(&self, name: &str) -> Shown {
        let name = url_decode(name).unwrap_or_default();
        let registry = &self.console.registry;
        let Some(skill) = registry["skills"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["name"] == name.as_str()))
        else {
            return Err((
                StatusCode::NOT_FOUND,
                format!("no skill {name} in the registry"),
            ));
        };
        let mut manifest = skill.clone();
        let (input, output) = match manifest.as_object_mut() {
            Some(m) => (
                m.remove("inputs_schema").unwrap_or_default(),
                m.remove("outputs_schema").unwrap_or_default(),
            ),
            None => (Value::Null, Value::Null),
        };
        let body = format!(
            "<p>{}</p><h2>Input schema</h2>{}<h2>Output schema</h2>{}<h2>Manifest</h2>{}",
            esc(skill["description"].as_str().unwrap_or_default()),
            json_block(&input),
            json_block(&output),
            json_block(&manifest)
        );
        Ok((
            format!("{name} {}", skill["version"].as_str().unwrap_or_default()),
            body,
        ))
    }
}
