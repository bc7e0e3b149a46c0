//! A front door, public API: what a registry's build reports ([`RegistryError`],
//! [`Problem`]), a skill as registered, and contracts read back.
//!
//! The registry: every skill, op and capability of the linked crates, checked
//! once by one rule set (`rules`, public as [`crate::rules`]) and sorted
//! (`index`); the JSON artifacts it is exported as ([`crate::export`]), and
//! other tools' views of them ([`crate::views`]).

pub(crate) mod build;
pub(crate) mod contract;
pub(crate) mod export;
pub(crate) mod index;
pub(crate) mod json;
pub(crate) mod rules;
pub(crate) mod skill;
pub(crate) mod views;

pub use self::build::{Problem, RegistryError};
pub use self::contract::{Contract, ContractError};
pub use self::skill::RegisteredSkill;
pub use crate::contract::entry::SkillEntry;
pub use crate::files::read_json as read_json_file;
pub use crate::model::envelope::split_reference;
pub use skill_core::names::{MAX_DESCRIPTION, is_mcp_tool_name};
