//! The AI-COS skill model's examples: `seo_role_audit`, `rag_reindex`,
//! `vlevel_calculator` and `routes_sync`.

mod rag;
mod routes;
mod seo;

pub use self::rag::*;
pub use self::routes::*;
pub use self::seo::*;
