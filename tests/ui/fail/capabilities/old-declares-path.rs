// `Declares` lives in `skill_runtime::capability` since the facade was
// trimmed; its old path still compiles, with a warning naming the new one
// (denied here to show it).
#![deny(deprecated)]
use skill_runtime::Declares;
use skill_runtime::prelude::*;

/// Read notes.
#[capability(id = "notes.read", effect = "file", operation = "read")]
pub struct NotesRead;

pub fn needs_notes<S: Declares<NotesRead>>() {}

fn main() {}
