//! The AI-COS skill model's examples: `seo_role_audit`, `rag_reindex`,
//! `vlevel_calculator`, `canonical_check` and `routes_sync`.

mod canonical;
mod rag;
mod routes;
mod seo;

pub use self::canonical::*;
pub use self::rag::*;
pub use self::routes::*;
pub use self::seo::*;
