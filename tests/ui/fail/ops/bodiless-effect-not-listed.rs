use skill_runtime::prelude::*;

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct In {
    pub text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
pub struct Out {
    pub id: String,
}

/// Post to the CRM.
#[capability(id = "crm.write", effect = "api", operation = "write")]
pub struct CrmWrite;

/// Create a lead in the CRM, over HTTP: its capability writes, so it is a
/// side effect even with no body to check.
#[op(version = "1.0.0", runtime = "http", url = "http://127.0.0.1:9/leads", capabilities(CrmWrite))]
pub async fn create_lead(input: In) -> Out;

/// Calls the op without its capability.
#[skill(calls(create_lead))]
pub async fn qualify(input: In) -> Out {
    Out { id: input.text }
}

fn main() {}
