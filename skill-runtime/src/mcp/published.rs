//! What an MCP server publishes besides its skills: resources the app
//! gives (a document, an image, a resource template read by a function),
//! and prompts (who is told when a resource changes: `subscribers.rs`).
//!
//! They are the app's, not a skill's: every caller that may reach the
//! server sees them (a skill's manifest, `skill://skills/{tool}`, only the
//! callers of its tool).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rmcp::model::{
    ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource,
    ResourceContents, ResourceTemplate, Role,
};

use crate::model::content::{Block, Body, Embedded};

/// The arguments of a prompt, or the variables of a resource template's
/// URI, by name.
pub type Args = BTreeMap<String, String>;

/// How a template's resource is read: from the URI's variables, its
/// contents, or why not (the client gets "resource not found").
type ReadFn = Arc<dyn Fn(&Args) -> Result<Body, String> + Send + Sync>;

/// How a prompt's messages are made from its arguments.
type RenderFn = Arc<dyn Fn(&Args) -> Vec<PromptLine> + Send + Sync>;

/// Known values, by argument or variable name.
type Known = BTreeMap<String, Vec<String>>;

/// `values` are what `name` may be.
fn known<V: Into<String>>(
    known: &mut Known,
    name: impl Into<String>,
    values: impl IntoIterator<Item = V>,
) {
    known.insert(name.into(), values.into_iter().map(Into::into).collect());
}

/// A resource the server publishes: a document or an image, as it is or
/// read anew at each `resources/read` (tell subscribers it changed with
/// [`McpServer::resource_updated`](crate::mcp::McpServer::resource_updated)).
#[derive(Clone)]
pub struct McpResource {
    name: String,
    description: Option<String>,
    uri: String,
    mime_type: Option<String>,
    read: Arc<dyn Fn() -> Result<Body, String> + Send + Sync>,
}

impl McpResource {
    /// The resource `contents` (its URI, media type and body), listed as
    /// `name`.
    pub fn new(name: impl Into<String>, contents: Embedded) -> McpResource {
        let Embedded {
            uri,
            mime_type,
            body,
        } = contents;
        McpResource {
            name: name.into(),
            description: None,
            uri,
            mime_type,
            read: Arc::new(move || Ok(body.clone())),
        }
    }

    /// The resource at `uri` of type `mime_type`, listed as `name`, its
    /// body read by `read` at each `resources/read` (an `Err` is "resource
    /// not found", with its text).
    pub fn computed(
        name: impl Into<String>,
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        read: impl Fn() -> Result<Body, String> + Send + Sync + 'static,
    ) -> McpResource {
        McpResource {
            name: name.into(),
            description: None,
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            read: Arc::new(read),
        }
    }

    /// What it is, for the client's listing.
    pub fn description(mut self, description: impl Into<String>) -> McpResource {
        self.description = Some(description.into());
        self
    }
}

impl fmt::Debug for McpResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpResource")
            .field("uri", &self.uri)
            .field("mime_type", &self.mime_type)
            .finish_non_exhaustive()
    }
}

/// A resource template (RFC 6570, level 1: `test://items/{id}/data`), read
/// by a function of its URI's variables. A variable matches one path
/// segment or more characters up to the template's next literal part.
#[derive(Clone)]
pub struct McpTemplate {
    uri_template: String,
    name: String,
    description: Option<String>,
    mime_type: String,
    read: ReadFn,
    /// Known values of its variables, for `completion/complete`.
    values: Known,
}

impl McpTemplate {
    /// The template `uri_template` of resources of type `mime_type`, listed
    /// as `name`, each read by `read` from the URI's variables.
    pub fn new(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        read: impl Fn(&Args) -> Result<Body, String> + Send + Sync + 'static,
    ) -> McpTemplate {
        McpTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            description: None,
            mime_type: mime_type.into(),
            read: Arc::new(read),
            values: Known::new(),
        }
    }

    /// What its resources are, for the client's listing.
    pub fn description(mut self, description: impl Into<String>) -> McpTemplate {
        self.description = Some(description.into());
        self
    }

    /// The values its variable `name` may take, offered by
    /// `completion/complete` (those that start with what was typed).
    pub fn values<I, V>(mut self, name: impl Into<String>, values: I) -> McpTemplate
    where
        I: IntoIterator<Item = V>,
        V: Into<String>,
    {
        known(&mut self.values, name, values);
        self
    }
}

impl fmt::Debug for McpTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTemplate")
            .field("uri_template", &self.uri_template)
            .field("mime_type", &self.mime_type)
            .finish_non_exhaustive()
    }
}

/// Who says a prompt's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speaker {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt: who says it, and what.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptLine {
    /// Who says it.
    pub speaker: Speaker,
    /// What: text, an image, a sound or an embedded resource.
    pub content: Block,
}

impl PromptLine {
    /// The user says `content`.
    pub fn user(content: Block) -> PromptLine {
        PromptLine {
            speaker: Speaker::User,
            content,
        }
    }

    /// The model says `content`.
    pub fn assistant(content: Block) -> PromptLine {
        PromptLine {
            speaker: Speaker::Assistant,
            content,
        }
    }
}

/// A prompt the server publishes: its arguments, and the messages it makes
/// of them. A `prompts/get` missing a required argument is refused
/// (-32602) before `render` runs.
#[derive(Clone)]
pub struct McpPrompt {
    prompt: Prompt,
    render: RenderFn,
    /// Known values of its arguments, for `completion/complete`.
    values: Known,
}

impl McpPrompt {
    /// The prompt `name`, described by `description`, its messages made by
    /// `render` from the arguments the client gives.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        render: impl Fn(&Args) -> Vec<PromptLine> + Send + Sync + 'static,
    ) -> McpPrompt {
        McpPrompt {
            prompt: Prompt::new(name, Some(description), None),
            render: Arc::new(render),
            values: Known::new(),
        }
    }

    /// The values its argument `name` may take, offered by
    /// `completion/complete` (those that start with what was typed).
    pub fn values<I, V>(mut self, name: impl Into<String>, values: I) -> McpPrompt
    where
        I: IntoIterator<Item = V>,
        V: Into<String>,
    {
        known(&mut self.values, name, values);
        self
    }

    /// It takes the argument `name` (`required` or not).
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> McpPrompt {
        let argument = PromptArgument::new(name)
            .with_description(description)
            .with_required(required);
        self.prompt
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }
}

impl fmt::Debug for McpPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpPrompt")
            .field("name", &self.prompt.name)
            .finish_non_exhaustive()
    }
}

/// Everything an app publishes besides its skills.
#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    pub(crate) resources: Vec<McpResource>,
    pub(crate) templates: Vec<McpTemplate>,
    pub(crate) prompts: Vec<McpPrompt>,
}

impl Published {
    /// Its resources as `resources/list` lists them.
    pub(crate) fn listed(&self) -> impl Iterator<Item = Resource> + '_ {
        self.resources.iter().map(|r| {
            let mut resource = Resource::new(r.uri.clone(), r.name.clone());
            resource.description = r.description.clone();
            resource.mime_type = r.mime_type.clone();
            resource
        })
    }

    /// Its templates as `resources/templates/list` lists them.
    pub(crate) fn templates(&self) -> impl Iterator<Item = ResourceTemplate> + '_ {
        self.templates.iter().map(|t| {
            let template = ResourceTemplate::new(t.uri_template.clone(), t.name.clone())
                .with_mime_type(t.mime_type.clone());
            match &t.description {
                Some(d) => template.with_description(d.clone()),
                None => template,
            }
        })
    }

    /// `uri`'s contents, when it is one of these resources or matches one
    /// of these templates; `Err` says why a matching template could not.
    pub(crate) fn read(&self, uri: &str) -> Option<Result<ResourceContents, String>> {
        if let Some(r) = self.resources.iter().find(|r| r.uri == uri) {
            return Some((r.read)().map(|body| {
                contents(&Embedded {
                    uri: r.uri.clone(),
                    mime_type: r.mime_type.clone(),
                    body,
                })
            }));
        }
        self.templates.iter().find_map(|t| {
            let args = matched(&t.uri_template, uri)?;
            Some((t.read)(&args).map(|body| {
                contents(&Embedded {
                    uri: uri.to_owned(),
                    mime_type: Some(t.mime_type.clone()),
                    body,
                })
            }))
        })
    }

    /// Whether `uri` is one of these resources or matches a template.
    pub(crate) fn knows(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.uri == uri)
            || self
                .templates
                .iter()
                .any(|t| matched(&t.uri_template, uri).is_some())
    }

    /// The known values of argument `argument` of the prompt `prompt`, or
    /// of variable `argument` of the template `template`, when declared.
    pub(crate) fn known(
        &self,
        prompt: Option<&str>,
        template: Option<&str>,
        argument: &str,
    ) -> Option<&[String]> {
        let values = if let Some(name) = prompt {
            &self.prompts.iter().find(|p| p.prompt.name == name)?.values
        } else {
            &self
                .templates
                .iter()
                .find(|t| Some(t.uri_template.as_str()) == template)?
                .values
        };
        values.get(argument).map(Vec::as_slice)
    }

    /// The prompts, as `prompts/list` lists them.
    pub(crate) fn prompts(&self) -> Vec<Prompt> {
        self.prompts.iter().map(|p| p.prompt.clone()).collect()
    }

    /// `prompts/get` of `name` with `args`: `None` when there is no such
    /// prompt, `Err` naming the required arguments missing.
    pub(crate) fn prompt(
        &self,
        name: &str,
        args: &Args,
    ) -> Option<Result<GetPromptResult, String>> {
        let p = self.prompts.iter().find(|p| p.prompt.name == name)?;
        let missing: Vec<&str> = p
            .prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Some(Err(format!(
                "prompt `{name}` needs the argument(s) {}",
                missing.join(", ")
            )));
        }
        let messages = (p.render)(args)
            .into_iter()
            .map(|line| {
                let role = match line.speaker {
                    Speaker::User => Role::User,
                    Speaker::Assistant => Role::Assistant,
                };
                PromptMessage::new(role, block(&line.content))
            })
            .collect();
        let mut result = GetPromptResult::new(messages);
        result.description = p.prompt.description.clone();
        Some(Ok(result))
    }
}

/// A block as MCP's: our blocks are written as MCP writes its own.
pub(crate) fn block(b: &Block) -> ContentBlock {
    serde_json::to_value(b)
        .and_then(serde_json::from_value)
        .unwrap_or_else(|e| ContentBlock::text(format!("(a block MCP cannot carry: {e})")))
}

fn contents(e: &Embedded) -> ResourceContents {
    match &e.body {
        Body::Text(text) => ResourceContents::TextResourceContents {
            uri: e.uri.clone(),
            mime_type: e.mime_type.clone(),
            text: text.clone(),
            meta: None,
        },
        Body::Blob(blob) => ResourceContents::BlobResourceContents {
            uri: e.uri.clone(),
            mime_type: e.mime_type.clone(),
            blob: blob.clone(),
            meta: None,
        },
    }
}

/// The variables of `template` that `uri` gives, when it matches: literal
/// parts equal, each `{name}` one or more characters up to the next
/// literal part (not across a `/` when that part does not start with one).
pub(crate) fn matched(template: &str, uri: &str) -> Option<Args> {
    let mut args = Args::new();
    let mut rest = uri;
    let mut parts = template.split('{');
    let head = parts.next()?;
    rest = rest.strip_prefix(head)?;
    for part in parts {
        let (name, literal) = part.split_once('}')?;
        let end = if literal.is_empty() {
            rest.find('/').unwrap_or(rest.len())
        } else {
            rest.find(literal)?
        };
        let value = &rest[..end];
        if value.is_empty() || value.contains('/') {
            return None;
        }
        args.insert(name.to_owned(), value.to_owned());
        rest = &rest[end + literal.len()..];
    }
    rest.is_empty().then_some(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_their_variables() {
        let args = matched("test://template/{id}/data", "test://template/123/data").unwrap();
        assert_eq!(args["id"], "123");
        assert!(matched("test://template/{id}/data", "test://template//data").is_none());
        assert!(matched("test://template/{id}/data", "test://template/1/2/data").is_none());
        assert!(matched("test://template/{id}/data", "test://template/1/datum").is_none());
        let args = matched("db://{table}/{row}", "db://users/7").unwrap();
        assert_eq!(
            (args["table"].as_str(), args["row"].as_str()),
            ("users", "7")
        );
    }
}
