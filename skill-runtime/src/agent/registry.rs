//! Agents collected across crates, like skills: each `#[agent]` submits an
//! [`AgentEntry`] to `inventory`; [`AgentRegistry::from_inventory`] sorts them
//! by id, refuses two with one id (naming both places), and compiles their
//! input schemas. Its JSON (`agent-registry.json`) is built in `export`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::agent::contract::AgentContract;
use crate::agent::handler::Agent;
use crate::agent::run::{Finished, Started, run_typed};
use crate::exec::runtime::Runtime;
use crate::schema::compiled::CompiledSchema;
use crate::schema::generate::{RootFns, input_schema, output_schema};
use crate::sync::BoxFuture;

/// The type-erased agent `#[agent]` submits.
pub struct AgentEntry {
    /// The contract `#[agent]` declared.
    pub contract: &'static AgentContract,
    input_root: &'static RootFns,
    output_root: &'static RootFns,
    pub(crate) run: for<'a> fn(&'a Runtime, Started) -> BoxFuture<'a, Finished>,
}

impl AgentEntry {
    #[doc(hidden)]
    pub const fn of<A: Agent>() -> AgentEntry {
        AgentEntry {
            contract: A::CONTRACT,
            input_root: RootFns::of::<A::Input>(),
            output_root: RootFns::of::<A::Output>(),
            run: run_erased::<A>,
        }
    }
}

fn run_erased<A: Agent>(runtime: &Runtime, started: Started) -> BoxFuture<'_, Finished> {
    Box::pin(run_typed::<A>(runtime, started))
}

inventory::collect!(AgentEntry);

/// One agent of a registry, with its schemas.
pub struct RegisteredAgent {
    /// The registration.
    pub entry: &'static AgentEntry,
    /// The input schema, generated from the input type.
    pub input_schema: Value,
    /// The output schema, generated from the output type.
    pub output_schema: Value,
    pub(crate) validator: CompiledSchema,
    pub(crate) output_validator: CompiledSchema,
}

impl RegisteredAgent {
    /// The agent's contract.
    pub fn contract(&self) -> &'static AgentContract {
        self.entry.contract
    }
}

/// Why agents could not be put together.
#[derive(Debug, thiserror::Error)]
#[error("{}", .problems.join("\n"))]
pub struct AgentRegistryError {
    /// Every problem found, one line each.
    pub problems: Vec<String>,
}

/// Every agent linked into the program, by id.
pub struct AgentRegistry {
    agents: Vec<RegisteredAgent>,
}

impl AgentRegistry {
    /// The agents every linked crate submitted. Two with one id fail, with
    /// both locations; so does an escalation target that is no agent.
    pub fn from_inventory() -> Result<AgentRegistry, AgentRegistryError> {
        AgentRegistry::from_entries(inventory::iter::<AgentEntry>.into_iter().collect())
    }

    pub(crate) fn from_entries(
        mut entries: Vec<&'static AgentEntry>,
    ) -> Result<AgentRegistry, AgentRegistryError> {
        entries.sort_by_key(|e| e.contract.id);
        let mut problems = Vec::new();
        let mut by_id: BTreeMap<&str, &AgentContract> = BTreeMap::new();
        for e in &entries {
            let c = e.contract;
            if let Some(first) = by_id.insert(c.id, c) {
                problems.push(format!(
                    "agent id `{}` is declared twice: by `{}` at {}:{} and by `{}` at {}:{}; give one of them another id",
                    c.id,
                    first.handler,
                    first.location.file,
                    first.location.line,
                    c.handler,
                    c.location.file,
                    c.location.line
                ));
            }
        }
        for e in &entries {
            let c = e.contract;
            if let Some(esc) = &c.escalation
                && !by_id.contains_key(esc.target_agent)
            {
                problems.push(format!(
                    "agent `{}` ({}:{}) escalates to `{}`, which is not an agent of this registry; declare it with #[agent(id = \"{}\", ...)] or name an existing agent",
                    c.id, c.location.file, c.location.line, esc.target_agent, esc.target_agent
                ));
            }
        }
        let mut agents = Vec::with_capacity(entries.len());
        for e in entries {
            let input = input_schema(e.input_root);
            let output = output_schema(e.output_root);
            let compiled = |schema: &Value, side: &str, problems: &mut Vec<String>| {
                CompiledSchema::compile(schema)
                    .map_err(|err| {
                        problems.push(format!(
                            "agent `{}`: its {side} schema does not compile: {err}",
                            e.contract.id
                        ));
                    })
                    .ok()
            };
            let (Some(validator), Some(output_validator)) = (
                compiled(&input, "input", &mut problems),
                compiled(&output, "output", &mut problems),
            ) else {
                continue;
            };
            agents.push(RegisteredAgent {
                entry: e,
                input_schema: input,
                output_schema: output,
                validator,
                output_validator,
            });
        }
        if problems.is_empty() {
            Ok(AgentRegistry { agents })
        } else {
            Err(AgentRegistryError { problems })
        }
    }

    /// The agents, sorted by id.
    pub fn agents(&self) -> &[RegisteredAgent] {
        &self.agents
    }

    /// The agent with this id.
    pub fn get(&self, id: &str) -> Option<&RegisteredAgent> {
        self.agents
            .binary_search_by(|a| a.contract().id.cmp(id))
            .ok()
            .map(|i| &self.agents[i])
    }

    /// Whether no agent is registered.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }
}
