//! An output made of MCP content blocks (text, images, audio, embedded
//! resources) rather than structured data: what a skill returns when its
//! answer is a picture, a sound or a document, for a client to show.

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The key an output schema carries when the output is [`Content`]: the
/// MCP server then answers the blocks themselves, with no `outputSchema`
/// and no `structuredContent`.
pub const CONTENT_MARKER: &str = "x-mcp-content";

/// A skill's output as MCP content blocks, in order.
///
/// A skill that returns `Content` is served over MCP as a tool whose result
/// is these blocks (no `outputSchema`, no `structuredContent`); its run
/// record and a queued job's result keep them as JSON, `{"content": [...]}`,
/// binary data in base64.
///
/// ```
/// use skill_runtime::content::{Block, Content};
///
/// let answer = Content::new()
///     .with(Block::text("A red pixel:"))
///     .with(Block::image(&[0x89, b'P', b'N', b'G'], "image/png"));
/// assert_eq!(answer.content.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-mcp-content" = true))]
pub struct Content {
    /// The blocks, in the order a client shows them.
    pub content: Vec<Block>,
}

impl Content {
    /// No block yet.
    pub fn new() -> Content {
        Content::default()
    }

    /// These blocks, then `block`.
    pub fn with(mut self, block: Block) -> Content {
        self.content.push(block);
        self
    }
}

impl From<Vec<Block>> for Content {
    fn from(content: Vec<Block>) -> Content {
        Content { content }
    }
}

/// One content block, as MCP's `ContentBlock` writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image's bytes, in base64.
        data: String,
        /// Its media type (`image/png`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// The sound's bytes, in base64.
        data: String,
        /// Its media type (`audio/wav`).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The resource.
        resource: Embedded,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text { text: text.into() }
    }

    /// An image block of `bytes` (encoded here) of type `mime_type`.
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Block {
        Block::Image {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A sound block of `bytes` (encoded here) of type `mime_type`.
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Block {
        Block::Audio {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource block.
    pub fn resource(resource: Embedded) -> Block {
        Block::Resource { resource }
    }
}

/// A resource's contents: its URI, its media type, and its text or bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Embedded {
    /// Where the resource is.
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text, or its bytes in base64.
    #[serde(flatten)]
    pub body: Body,
}

impl Embedded {
    /// A text resource.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Embedded {
        Embedded {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: Body::Text(text.into()),
        }
    }

    /// A binary resource of `bytes` (encoded here).
    pub fn blob(uri: impl Into<String>, mime_type: impl Into<String>, bytes: &[u8]) -> Embedded {
        Embedded {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: Body::Blob(base64::engine::general_purpose::STANDARD.encode(bytes)),
        }
    }
}

/// What a resource holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Body {
    /// Text.
    Text(String),
    /// Bytes, in base64.
    Blob(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_are_written_as_mcp_writes_them() {
        let content = Content::new()
            .with(Block::text("hi"))
            .with(Block::image(b"\x89PNG", "image/png"))
            .with(Block::resource(Embedded::text(
                "test://r",
                "text/plain",
                "body",
            )));
        let value = serde_json::to_value(&content).unwrap();
        assert_eq!(
            value,
            json!({ "content": [
                { "type": "text", "text": "hi" },
                { "type": "image", "data": "iVBORw==", "mimeType": "image/png" },
                { "type": "resource", "resource": { "uri": "test://r", "mimeType": "text/plain", "text": "body" } },
            ]})
        );
        assert_eq!(serde_json::from_value::<Content>(value).unwrap(), content);
    }

    #[test]
    fn its_schema_carries_the_marker() {
        let schema = crate::schema::generate::output_schema_for::<Content>();
        assert_eq!(schema[CONTENT_MARKER], json!(true));
    }
}
