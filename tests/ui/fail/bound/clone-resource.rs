use skill_runtime::prelude::*;

/// A client any clone of which reaches the store.
#[derive(Clone)]
pub struct StoreClient {
    pub url: String,
}

/// Write the store.
#[capability(id = "store.write", effect = "database", operation = "write", resource = StoreClient)]
pub struct StoreWrite;

fn main() {}
