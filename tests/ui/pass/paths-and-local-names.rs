//! Valid forms the checks must accept: capabilities named by `crate::` and
//! `self::` paths, a call to a bodiless op, and local types whose names are
//! also std's (`Command`, `File`).
#![allow(dead_code)]

use skill_runtime::prelude::*;

mod caps {
    use skill_runtime::prelude::*;

    /// Read the store.
    #[capability(id = "store.read", effect = "database", operation = "read")]
    pub struct StoreRead;

    /// Write the store.
    #[capability(id = "store.write", effect = "database", operation = "write")]
    pub struct StoreWrite;

    /// Call a tool of the MCP server.
    #[capability(id = "tools.call", effect = "api", operation = "execute")]
    pub struct ToolCall;
}

#[derive(Deserialize, Serialize, JsonSchema)]
pub struct Text {
    pub text: String,
}

/// A command of this domain, not a process.
pub struct Command {
    pub verb: String,
}

impl Command {
    pub fn new(verb: &str) -> Command {
        Command { verb: verb.to_owned() }
    }
}

/// A file of this domain, not the file system's.
pub struct File;

impl File {
    pub fn create(name: &str) -> String {
        name.to_owned()
    }
}

/// Summarize with the MCP server's tool.
#[op(version = "1.0.0", runtime = "mcp", tool = "summarize_text", capabilities(caps::ToolCall))]
pub async fn summarize(input: Text) -> Text;

/// Look a key up.
#[skill(capabilities(self::caps::StoreRead, crate::caps::StoreWrite),
    side_effects(crate::caps::StoreWrite(target = "store", reversible = true, description = "Writes the key")))]
pub async fn lookup(ctx: Ctx, input: Text) -> Text {
    let _ = ctx.resource::<caps::StoreRead>();
    let c = Command::new(&input.text);
    Text { text: File::create(&c.verb) }
}

/// Summarize through the op.
#[skill(calls(summarize), capabilities(caps::ToolCall))]
pub async fn brief(ctx: Ctx, input: Text) -> Text {
    match ctx.call::<summarize>(input).await {
        Ok(summary) => summary,
        Err(_) => Text { text: String::new() },
    }
}

/// A skill awaits plain futures, methods and other skills it lists.
#[skill(calls(lookup_plain))]
pub async fn chain(ctx: Ctx, input: Text) -> Text {
    let t = lookup_plain(&ctx, input).await;
    let held = lookup_plain(&ctx, t);
    let t = held.await;
    let t = std::future::ready(t).await;
    let t = async { t }.await;
    helper(t).await
}

/// Echo.
#[skill]
pub async fn lookup_plain(input: Text) -> Text {
    input
}

/// Cannot fail, said the std way: no failure modes.
#[skill]
pub async fn never_fails(input: Text) -> Result<Text, std::convert::Infallible> {
    Ok(input)
}

async fn helper(t: Text) -> Text {
    t
}

fn main() {
    // Outside skills, code that owns a runtime calls any skill with its
    // context.
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let registry = std::sync::Arc::new(skill_runtime::Registry::from_inventory().unwrap());
    let runtime = skill_runtime::Runtime::builder(registry).build().unwrap();
    let app = runtime.context();
    let out = rt.block_on(async { lookup_plain(&app, Text { text: "x".into() }).await });
    assert_eq!(out.text, "x");
    let fut = lookup_plain(&app, Text { text: "y".into() });
    assert_eq!(rt.block_on(fut).text, "y");
    let out = rt.block_on(never_fails(&app, Text { text: "z".into() }));
    assert_eq!(out.map(|t| t.text).ok(), Some("z".to_owned()));
    let entry = skill_runtime::Registry::from_inventory().unwrap();
    let entry = entry.get("never_fails").unwrap();
    assert!(entry.entry.failure_modes.is_empty());
}
