//! Helpers take the context generically and carry the capability bound, so
//! they compose across skills that declare the capability.

use skill_runtime::prelude::*;
use skill_runtime::{Ctx, capability::Declares};

pub struct Log(std::sync::Mutex<Vec<String>>);

/// Append to the audit log.
#[capability(id = "audit.write", effect = "database", operation = "write", resource = Log)]
pub struct AuditWrite;

fn audit<S: Declares<AuditWrite>>(ctx: &Ctx<S>, line: &str) {
    if let Ok(mut log) = ctx.resource::<AuditWrite>().0.lock() {
        log.push(line.to_owned());
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct In {
    pub x: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Out {
    pub y: String,
}

/// First user of the helper.
#[skill(capabilities(AuditWrite), side_effects(AuditWrite(target = "audit_log", reversible = false)))]
pub async fn first(ctx: Ctx, input: In) -> Out {
    audit(&ctx, &input.x);
    Out { y: input.x }
}

/// Second user of the helper.
#[skill(capabilities(AuditWrite), side_effects(AuditWrite(target = "audit_log", reversible = false)))]
pub async fn second(ctx: Ctx, input: In) -> Out {
    audit(&ctx, "second");
    Out { y: input.x }
}

fn main() {}
