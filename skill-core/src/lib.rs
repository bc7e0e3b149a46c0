//! The manifest model shared by `skill-macros` and `skill-runtime`: what a
//! skill's manifest holds ([`manifest`]), the capabilities it declares
//! ([`capability`]), its failure modes ([`failure`]), the words each field
//! takes ([`words`]), and the validators every layer applies ([`names`]).
//!
//! `#[skill]` checks a manifest with these validators when the code compiles;
//! the registry and `skill-registry validate` check exported files with the
//! same ones. Nothing here depends on an async runtime or on JSON. Users do not
//! name this crate: `skill_runtime` re-exports what they need.

#![warn(missing_docs)]

#[macro_use]
pub mod words;
pub mod access;
pub mod agent;
pub mod capability;
pub mod failure;
pub mod manifest;
pub mod names;
pub mod steps;
