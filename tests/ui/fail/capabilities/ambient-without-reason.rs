use skill_runtime::prelude::*;

pub struct Folder;

/// Deliver messages through a folder.
#[capability(
    id = "outbox.write",
    effect = "event",
    operation = "write",
    resource = Folder,
    ambient(file_write = " ", network = "sends a copy")
)]
pub struct OutboxWrite;

/// An allowance kind that does not exist.
#[capability(id = "outbox.read", effect = "event", operation = "read", ambient(files = "why"))]
pub struct OutboxRead;

fn main() {}
