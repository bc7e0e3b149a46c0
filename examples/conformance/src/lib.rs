//! The fixture tools, resources and prompts of the MCP conformance suite
//! (`@modelcontextprotocol/conformance`): each scenario names what it calls
//! and what it must answer. The tools are skills (the content ones answer
//! [`Content`] blocks; the sampling and elicitation ones ask the client
//! through their [`Ctx`]); the resources and prompts are published by the
//! server (`published()`), as an app publishes its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use skill_runtime::ask::Elicited;
use skill_runtime::content::{Block, Body, Embedded};
use skill_runtime::mcp::{McpOptions, McpPrompt, McpResource, McpTemplate, PromptLine};
use skill_runtime::prelude::*;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoInput {}

/// A line of text.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

/// Answers a fixed line of text (scenario `tools-call-simple-text`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_simple_text(_input: NoInput) -> Text {
    Text {
        text: "This is a simple text response for testing.".to_owned(),
    }
}

/// Why `test_error_handling` fails: always, on purpose.
#[derive(Debug, thiserror::Error, FailureModes)]
pub enum Fails {
    /// The tool's only answer.
    #[error("This tool intentionally returns an error for testing")]
    #[failure(code = "intentional_error", retryable = false)]
    Intentional,
}

/// Always fails (scenario `tools-call-error`): a tool error, `isError: true`.
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn test_error_handling(_input: NoInput) -> Result<Text, Fails> {
    Err(Fails::Intentional)
}

/// Logs three lines while it runs (scenario `tools-call-with-logging`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_tool_with_logging(ctx: Ctx, _input: NoInput) -> Text {
    for (n, level) in [LogLevel::Info, LogLevel::Notice, LogLevel::Warning]
        .into_iter()
        .enumerate()
    {
        ctx.log(level, format!("log line {} of 3", n + 1));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Text {
        text: "Logged three lines.".to_owned(),
    }
}

/// Reports 0, 50 and 100 of 100, a little apart (scenario
/// `tools-call-with-progress`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_tool_with_progress(ctx: Ctx, _input: NoInput) -> Text {
    for done in [0, 50, 100] {
        ctx.report_progress(done, Some(100), None);
        if done < 100 {
            // Past PROGRESS_EVERY, so that no report is coalesced away.
            tokio::time::sleep(Duration::from_millis(60)).await;
        }
    }
    Text {
        text: "Reported progress to 100 of 100.".to_owned(),
    }
}

/// The resource `tick` changes.
pub const WATCHED: &str = "test://watched-resource";

/// The version of [`WATCHED`].
static WATCHED_VERSION: AtomicU64 = AtomicU64::new(1);

/// Change [`WATCHED`] (the fixture server then tells its subscribers).
pub fn tick() {
    WATCHED_VERSION.fetch_add(1, Ordering::Relaxed);
}

/// A 1x1 red PNG, in base64.
pub const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn red_pixel() -> Block {
    Block::Image {
        data: RED_PIXEL_PNG.to_owned(),
        mime_type: "image/png".to_owned(),
    }
}

/// A WAV file of one silent sample (8 kHz, 16-bit, mono).
fn silent_wav() -> Vec<u8> {
    let mut wav = Vec::with_capacity(46);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&38u32.to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&16000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&2u32.to_le_bytes());
    wav.extend_from_slice(&[0, 0]);
    wav
}

/// Answers an image (scenario `tools-call-image`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_image_content(_input: NoInput) -> Content {
    Content::new().with(red_pixel())
}

/// Answers a sound (scenario `tools-call-audio`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_audio_content(_input: NoInput) -> Content {
    Content::new().with(Block::audio(&silent_wav(), "audio/wav"))
}

/// Answers an embedded resource (scenario `tools-call-embedded-resource`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_embedded_resource(_input: NoInput) -> Content {
    Content::new().with(Block::resource(Embedded::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )))
}

/// Answers text, an image and a resource (scenario
/// `tools-call-mixed-content`).
#[skill(version = "1.0.0", mcp)]
pub async fn test_multiple_content_types(_input: NoInput) -> Content {
    Content::new()
        .with(Block::text("Multiple content types test:"))
        .with(red_pixel())
        .with(Block::resource(Embedded::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )))
}

/// What to ask the client's model.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Prompted {
    /// The prompt to send to the model.
    pub prompt: String,
}

/// Why a question to the client found no answer.
#[derive(Debug, thiserror::Error, FailureModes)]
pub enum NotAsked {
    /// The client could not be asked, or did not answer.
    #[error("{0}")]
    #[failure(code = "client_not_asked", retryable = false)]
    Ask(#[from] skill_runtime::ask::AskError),
}

/// Asks the client's model and answers what it said (scenario
/// `tools-call-sampling`).
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn test_sampling(ctx: Ctx, input: Prompted) -> Result<Content, NotAsked> {
    let answer = ctx
        .sample(json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": input.prompt } }],
            "maxTokens": 100,
        }))
        .await?;
    let text = answer["content"]["text"].as_str().unwrap_or_default();
    Ok(Content::new().with(Block::text(format!("LLM response: {text}"))))
}

/// What to tell the user.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Message {
    /// The message to show the user.
    pub message: String,
}

fn answered(prefix: &str, answer: &Elicited) -> Content {
    let (action, content) = match answer {
        Elicited::Accept(values) => ("accept", serde_json::Value::Object(values.clone())),
        Elicited::Decline => ("decline", json!({})),
        Elicited::Cancel => ("cancel", json!({})),
    };
    Content::new().with(Block::text(format!(
        "{prefix}: action={action}, content={content}"
    )))
}

/// Asks the client's user for a name and an email (scenario
/// `tools-call-elicitation`).
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn test_elicitation(ctx: Ctx, input: Message) -> Result<Content, NotAsked> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": { "type": "string", "description": "User's response" },
            "email": { "type": "string", "description": "User's email address" },
        },
        "required": ["username", "email"],
    });
    let answer = ctx.elicit(input.message, schema).await?;
    Ok(answered("User response", &answer))
}

/// Asks with a default for every primitive type (scenario
/// `elicitation-sep1034-defaults`).
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn test_elicitation_sep1034_defaults(
    ctx: Ctx,
    _input: NoInput,
) -> Result<Content, NotAsked> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "score": { "type": "number", "default": 95.5 },
            "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "default": true },
        },
    });
    let answer = ctx.elicit("Please review your details", schema).await?;
    Ok(answered("Elicitation completed", &answer))
}

/// Asks with each of the five kinds of enum (scenario
/// `elicitation-sep1330-enums`).
#[skill(version = "1.0.0", retries = 0, mcp)]
pub async fn test_elicitation_sep1330_enums(
    ctx: Ctx,
    _input: NoInput,
) -> Result<Content, NotAsked> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
            "titledSingle": { "type": "string", "oneOf": [
                { "const": "value1", "title": "First Option" },
                { "const": "value2", "title": "Second Option" },
                { "const": "value3", "title": "Third Option" },
            ] },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": { "type": "array", "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
            "titledMulti": { "type": "array", "items": { "anyOf": [
                { "const": "value1", "title": "First Choice" },
                { "const": "value2", "title": "Second Choice" },
                { "const": "value3", "title": "Third Choice" },
            ] } },
        },
    });
    let answer = ctx.elicit("Please choose", schema).await?;
    Ok(answered("Elicitation completed", &answer))
}

/// The suite's resources, resource template and prompts, published on
/// `options`.
pub fn published(options: McpOptions) -> McpOptions {
    let text = |s: &str| PromptLine::user(Block::text(s));
    options
        .resource(McpResource::new(
            "static-text",
            Embedded::text(
                "test://static-text",
                "text/plain",
                "This is the content of the static text resource.",
            ),
        ))
        .resource(McpResource::new(
            "static-binary",
            Embedded {
                uri: "test://static-binary".to_owned(),
                mime_type: Some("image/png".to_owned()),
                body: Body::Blob(RED_PIXEL_PNG.to_owned()),
            },
        ))
        .resource(
            McpResource::computed("watched-resource", WATCHED, "text/plain", || {
                Ok(Body::Text(format!(
                    "Watched content, version {}.",
                    WATCHED_VERSION.load(Ordering::Relaxed)
                )))
            })
            .description("A resource to subscribe to: `tick` changes it"),
        )
        .resource_template(
            McpTemplate::new(
                "test://template/{id}/data",
                "template-data",
                "application/json",
                |args| {
                    let id = &args["id"];
                    Ok(Body::Text(
                        json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
                            .to_string(),
                    ))
                },
            )
            .values("id", ["1", "2", "123"]),
        )
        .prompt(McpPrompt::new(
            "test_simple_prompt",
            "A prompt with no arguments",
            move |_| vec![text("This is a simple prompt for testing.")],
        ))
        .prompt(
            McpPrompt::new(
                "test_prompt_with_arguments",
                "A prompt with two arguments",
                move |args| {
                    vec![text(&format!(
                        "Prompt with arguments: arg1='{}', arg2='{}'",
                        args["arg1"], args["arg2"]
                    ))]
                },
            )
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true)
            .values("arg1", ["alpha", "beta", "test-value"]),
        )
        .prompt(
            McpPrompt::new(
                "test_prompt_with_embedded_resource",
                "A prompt embedding a resource",
                move |args| {
                    vec![
                        PromptLine::user(Block::resource(Embedded::text(
                            args["resourceUri"].clone(),
                            "text/plain",
                            "Embedded resource content for testing.",
                        ))),
                        text("Please process the embedded resource above."),
                    ]
                },
            )
            .argument("resourceUri", "URI of the resource to embed", true),
        )
        .prompt(McpPrompt::new(
            "test_prompt_with_image",
            "A prompt with an image",
            move |_| {
                vec![
                    PromptLine::user(red_pixel()),
                    text("Please analyze the image above."),
                ]
            },
        ))
}
