//! A front door, public API: a type's schemas, for tools and tests.
//!
//! JSON Schemas of skill inputs and outputs: generated from the Rust types
//! ([`input_schema_for`], [`output_schema_for`]), compiled once and reused for
//! every call ([`CompiledSchema`]), and reduced to what a value of the type can
//! still violate ([`residual()`]).

pub(crate) mod compiled;
pub(crate) mod formats;
pub(crate) mod generate;
pub(crate) mod residual;

pub use self::compiled::{CompiledSchema, SchemaViolation};
pub use self::formats::{STANDARD_FORMATS, standard_formats_only, with_standard_formats};
pub use self::generate::{input_schema_for, output_schema_for};
pub use self::residual::{implied_by_type, residual, shapes_only_at_the_top};

#[cfg(test)]
mod tests;
