//! A runtime reached from inside a handler (kept in a static, as a
//! careless colleague would) runs nothing: a job started through it is
//! refused `denied`, and its context and resources refuse to be used there;
//! the job the handler is in fails, saying why. Outside handlers, the same
//! runtime serves as always.

use std::sync::{Arc, OnceLock};

use serde_json::json;
use skill_runtime::prelude::*;
use skill_runtime::{JobEnvelope, Registry, Runtime};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    pub name: String,
}

/// The skill nobody here lists.
#[skill]
pub async fn purge(input: Target) -> Target {
    PURGED.lock().unwrap().push(input.name.clone());
    input
}

static PURGED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The runtime, kept where any code reaches it.
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Declares nothing, and starts a job through the kept runtime.
#[skill]
pub async fn through_invoke(input: Target) -> Target {
    let rt = RUNTIME.get().unwrap();
    let _ = rt
        .invoke(JobEnvelope::new("purge", json!({"name": "by-invoke"})))
        .await;
    input
}

/// Declares nothing, and runs purge with the kept runtime's context.
#[skill]
pub async fn through_context(input: Target) -> Target {
    let rt = RUNTIME.get().unwrap();
    purge(
        &rt.context(),
        Target {
            name: "by-context".into(),
        },
    )
    .await;
    input
}

/// Declares nothing, and reaches for the kept runtime's resources.
#[skill]
pub async fn through_resources(input: Target) -> Target {
    let rt = RUNTIME.get().unwrap();
    let _ = rt.resources();
    input
}

/// An agent runner, kept where any code reaches it.
static RUNNER: OnceLock<skill_runtime::agents::AgentRunner> = OnceLock::new();

/// Declares nothing, and starts an agent through the kept runner.
#[skill]
pub async fn through_runner(input: Target) -> Target {
    let said = match RUNNER
        .get()
        .unwrap()
        .run("agent.any", json!({}), Caller::default(), false)
        .await
    {
        Ok(_) => "ran".to_owned(),
        Err(e) => e.to_string(),
    };
    Target {
        name: format!("{}: {said}", input.name),
    }
}

fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
        Runtime::builder(registry).build().expect("runtime starts")
    })
}

#[tokio::test]
async fn a_runtime_kept_where_a_handler_reaches_it_runs_nothing_there() {
    let rt = runtime();
    let input = || json!({"name": "x"});
    // A job started from the handler: refused, and the handler's own job
    // goes on (it ignored the answer).
    rt.invoke_json("through_invoke", input(), Caller::default())
        .await
        .expect("the outer job ran");
    let refused = rt
        .memory_records()
        .unwrap()
        .records()
        .iter()
        .find(|r| r.skill.starts_with("purge"))
        .cloned()
        .expect("the refused job has its record");
    assert_eq!(
        refused.error.as_ref().unwrap().code,
        "denied",
        "{refused:?}"
    );
    assert!(
        refused
            .error
            .as_ref()
            .unwrap()
            .message
            .contains("never through a runtime"),
        "{refused:?}"
    );
    // The context and the resources: the handler's job fails, saying why.
    for skill in ["through_context", "through_resources"] {
        let e = rt
            .invoke_json(skill, input(), Caller::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "panicked", "{skill}: {e}");
        assert!(
            e.to_string().contains("used while a skill's handler runs"),
            "{skill}: {e}"
        );
    }
    assert!(
        PURGED.lock().unwrap().is_empty(),
        "purge ran: {:?}",
        PURGED.lock().unwrap()
    );
    // A runner: refused too.
    RUNNER.get_or_init(|| {
        let agents = Arc::new(skill_runtime::agents::AgentRegistry::from_inventory().unwrap());
        skill_runtime::agents::AgentRunner::new(rt.clone(), agents)
    });
    let said = rt
        .invoke_json("through_runner", input(), Caller::default())
        .await
        .unwrap();
    assert!(
        said.data["name"]
            .as_str()
            .unwrap()
            .contains("started through a runner while a skill's handler runs"),
        "{:?}",
        said.data
    );
    // Outside handlers, the runtime serves.
    rt.invoke_json("purge", input(), Caller::default())
        .await
        .unwrap();
    purge(&rt.context(), Target { name: "app".into() }).await;
    assert_eq!(*PURGED.lock().unwrap(), ["x", "app"]);
}
