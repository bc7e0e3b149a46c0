//! The semantic model of one `#[skill]`: typed arguments built from the attribute
//! tree ([`types`], read by [`skill_args`] with [`read`] and [`parts`]), and the
//! shape of the annotated function ([`func`]). Every value keeps its span.

pub mod func;
pub mod parts;
pub mod read;
pub mod skill_args;
pub mod types;
