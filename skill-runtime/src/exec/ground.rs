//! Grounding: whether a tool call a model proposed would get past the
//! runtime's resolution and input checks, answered without running anything.
//!
//! The TypeScript and Python packages (`clients/`) give the same answer from
//! `skill-registry.json`; this is the answer they are tested against, and it
//! is the job's own path: [`resolve`] and the input stage's `decode`, not a
//! second implementation of either.

use serde_json::Value;

use crate::exec::runtime::Runtime;
use crate::exec::stages::{input, resolve};
use crate::exec::state::Refused;
use crate::model::envelope::JobEnvelope;
use crate::model::error::InvokeError;
use crate::registry::skill::RegisteredSkill;

/// A call that grounds: the skill it names, and what running it asks of the
/// caller.
#[derive(Clone, Copy, Debug)]
pub struct Grounded<'r> {
    /// The skill the call names (by its name, or its MCP or OpenAI tool name).
    pub skill: &'r RegisteredSkill,
    /// The skill destroys data: its caller must acknowledge it.
    pub is_destructive: bool,
    /// A person approves each run.
    pub requires_hitl: bool,
}

impl Runtime {
    /// Ground the tool call `name(arguments)`, `arguments` as JSON text (as a
    /// model's tool call carries them): `name` is a skill's name, or an
    /// exposed skill's tool name; the arguments go through the input stage
    /// of a job (size and depth limits, the input schema, decoding into the
    /// input type). Nothing runs, nothing is recorded, and the caller is not
    /// asked about: the answer is the registry's, for any caller. The
    /// preconditions, which are the skill's own code, are not run.
    ///
    /// # Errors
    ///
    /// The error the job would end with at resolution
    /// ([`InvokeError::UnknownSkill`], a disabled skill's
    /// [`InvokeError::Denied`]) or at its input stage
    /// ([`InvokeError::InvalidInput`] with each violation's path,
    /// [`InvokeError::MalformedJson`], [`InvokeError::MalformedInput`],
    /// [`InvokeError::TooLarge`], [`InvokeError::TooDeep`]).
    pub fn ground(&self, name: &str, arguments: &str) -> Result<Grounded<'_>, InvokeError> {
        let registry = &self.inner.registry;
        let skills = registry.skills();
        let named = skills.iter().any(|s| !s.is_op() && s.name() == name);
        let skill_name = match named {
            true => name,
            false => skills
                .iter()
                .find(|s| {
                    let mcp = &s.entry.manifest.mcp;
                    !s.is_op() && mcp.exposed && mcp.tool_name == Some(name)
                })
                .map_or(name, |s| s.name()),
        };
        // An empty name would make the job look for a skill by its intent.
        if name.is_empty() {
            return Err(InvokeError::UnknownSkill {
                reference: String::new(),
                hint: String::new(),
            });
        }
        let limits = self.inner.limits;
        let job = JobEnvelope::for_reference(skill_name, Value::Null);
        // No span: grounding is not a job.
        let mut st =
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::new(), || {
                self.state(job, None, None)
            });
        st.text_len = Some(arguments.len());
        match arguments.len() > limits.max_input_bytes {
            true => st.refused = Some(Refused::TooLarge),
            false => st.text = Some(arguments.to_owned()),
        }
        let checked = resolve::resolve(registry, &mut st).and_then(|i| {
            let skill = &skills[i];
            input::decode(limits, skill, &mut st).map(|_| skill)
        });
        st.let_go();
        let skill = checked?;
        let constraints = &skill.entry.manifest.constraints;
        Ok(Grounded {
            skill,
            is_destructive: constraints.is_destructive,
            requires_hitl: constraints.requires_hitl,
        })
    }
}
