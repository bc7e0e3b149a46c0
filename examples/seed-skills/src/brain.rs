//! The Brain OS registry v2 examples: `search_notes`, `read_note`, and
//! `summarize_text` (the two steps of the seed's `summarize_note` pipeline).

use std::collections::BTreeMap;

use skill_runtime::OverBudget;
use skill_runtime::prelude::*;

use crate::caps::{ObsidianRead, VaultSearch};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchNotesInput {
    pub query: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchNotesOutput {
    /// Matching note paths, best match first.
    pub results: Vec<String>,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum SearchError {
    /// Search backend error.
    #[error("search failed: {0}")]
    #[failure(retryable)]
    SearchFailed(String),
    /// The job's document budget ran out.
    #[error("{0}")]
    #[failure(code = "budget_exceeded")]
    OverBudget(#[from] OverBudget),
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Search notes in the Obsidian vault.
#[skill(
    version = "1.0.0",
    autonomy = "L1",
    owners("core"),
    policy_tags("requires_review"),
    rate_limit(max_per_minute = 10),
    redaction(inputs("query")),
    capabilities(ObsidianRead, VaultSearch),
    calls(obsidian_search),
    reusable_by(executor = "execute", analyzer = "read"),
    timeout_ms = 10_000,
    retries = 2,
    backoff = "linear",
    idempotent,
    mcp(permissions("obsidian:read"))
)]
pub async fn search_notes(
    ctx: Ctx,
    input: SearchNotesInput,
) -> Result<SearchNotesOutput, SearchError> {
    // The query is redacted: a client that reads log lines sees
    // `[REDACTED]` in its place.
    ctx.log(
        LogLevel::Debug,
        format!("searching the vault for {}", input.query),
    );
    ctx.call::<obsidian_search>(input).await
}

/// Search the Obsidian vault.
#[op(
    version = "1.0.0",
    autonomy = "L1",
    owners("core"),
    capabilities(ObsidianRead, VaultSearch),
    timeout_ms = 10_000,
    retries = 0,
    idempotent
)]
pub async fn obsidian_search(
    ctx: Ctx,
    input: SearchNotesInput,
) -> Result<SearchNotesOutput, SearchError> {
    let terms: Vec<String> = words(&input.query).collect();
    // Off the async threads: blocking reads there would stall other jobs and
    // escape the job's timeout.
    let root = ctx.resource::<VaultSearch>().root.clone();
    let notes = tokio::task::spawn_blocking(move || crate::stores::Vault::new(root).notes())
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())))
        .map_err(|e| SearchError::SearchFailed(e.to_string()))?;
    let mut scored: Vec<(usize, String)> = notes
        .into_iter()
        .filter_map(|(path, text)| {
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for w in words(&text).chain(words(&path)) {
                *counts.entry(w).or_default() += 1;
            }
            // Every term must appear; rank by total occurrences.
            let per_term: Vec<usize> = terms
                .iter()
                .map(|t| counts.get(t).copied().unwrap_or(0))
                .collect();
            (!terms.is_empty() && per_term.iter().all(|n| *n > 0))
                .then(|| (per_term.iter().sum(), path))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    // Each note found is a document retrieved, within the job's `maxDocs`.
    ctx.report_docs(scored.len() as u64)?;
    ctx.report_items(scored.len() as u64);
    Ok(SearchNotesOutput {
        results: scored.into_iter().map(|(_, p)| p).collect(),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadNoteInput {
    /// Path of the note inside the vault, like `projects/skills.md`.
    pub path: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadNoteOutput {
    pub path: String,
    pub content: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum ReadNoteError {
    /// The path would leave the vault (by its spelling or through a link), or
    /// names something that is not a regular file.
    #[error("`{0}` is not a path inside the vault")]
    InvalidPath(String),
    /// No note exists at the path.
    #[error("no note at `{0}`")]
    NoteNotFound(String),
    /// The note exists but could not be read.
    #[error("could not read `{0}`: {1}")]
    #[failure(retryable)]
    ReadFailed(String, String),
    /// The job's document budget ran out.
    #[error("{0}")]
    #[failure(code = "budget_exceeded")]
    OverBudget(#[from] OverBudget),
}

/// Read a note from the Obsidian vault.
#[skill(
    version = "1.0.0",
    autonomy = "L1",
    owners("core"),
    capabilities(ObsidianRead),
    reusable_by(executor = "execute", analyzer = "read"),
    timeout_ms = 5_000,
    retries = 2,
    backoff = "linear",
    idempotent,
    mcp(permissions("obsidian:read"))
)]
pub async fn read_note(ctx: Ctx, input: ReadNoteInput) -> Result<ReadNoteOutput, ReadNoteError> {
    // Off the async threads, like every file read of the examples.
    let (root, path) = (
        ctx.resource::<ObsidianRead>().root.clone(),
        input.path.clone(),
    );
    let read = tokio::task::spawn_blocking(move || {
        crate::stores::read_inside(&root, &path, crate::stores::NOTE_KINDS)
    })
    .await
    .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    match read {
        Ok(content) => {
            ctx.report_docs(1)?;
            ctx.report_items(1);
            Ok(ReadNoteOutput {
                path: input.path,
                content,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(ReadNoteError::NoteNotFound(input.path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            Err(ReadNoteError::InvalidPath(input.path))
        }
        Err(e) => Err(ReadNoteError::ReadFailed(input.path, e.to_string())),
    }
}

fn three() -> u8 {
    3
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SummarizeInput {
    pub text: String,
    /// How many sentences the summary keeps.
    #[serde(default = "three")]
    #[schemars(range(min = 1, max = 20))]
    pub max_sentences: u8,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SummarizeOutput {
    pub summary: String,
}

const STOPWORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "of", "to", "in", "is", "are", "it", "its", "on", "for", "be",
    "by", "with", "as", "at", "this", "that", "so", "when", "can", "not", "never", "every",
];

/// Summarize a text by keeping its most representative sentences.
#[skill(
    version = "1.0.0",
    autonomy = "L3",
    owners("core"),
    postcondition(check = |i: &SummarizeInput, o: &SummarizeOutput| o.summary.len() <= i.text.len()),
    reusable_by(executor = "execute", analyzer = "execute"),
    timeout_ms = 5_000, retries = 0, backoff = "none", idempotent,
    mcp,
)]
pub async fn summarize_text(input: SummarizeInput) -> SummarizeOutput {
    // Sentences: split after . ! ? and on line breaks; headings count as sentences.
    let sentences: Vec<&str> = input
        .text
        .split_inclusive(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.starts_with('#'))
        .collect();
    let mut freq: BTreeMap<String, f64> = BTreeMap::new();
    for w in sentences.iter().flat_map(|s| words(s)) {
        if !STOPWORDS.contains(&w.as_str()) {
            *freq.entry(w).or_default() += 1.0;
        }
    }
    let score = |s: &str| {
        let ws: Vec<String> = words(s)
            .filter(|w| !STOPWORDS.contains(&w.as_str()))
            .collect();
        ws.iter().map(|w| freq[w]).sum::<f64>() / (ws.len().max(1) as f64).sqrt()
    };
    let mut ranked: Vec<(usize, f64)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| (i, score(s)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut keep: Vec<usize> = ranked
        .iter()
        .take(usize::from(input.max_sentences))
        .map(|(i, _)| *i)
        .collect();
    keep.sort_unstable();
    SummarizeOutput {
        summary: keep
            .iter()
            .map(|i| sentences[*i])
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SummarizeNoteInput {
    /// Path of the note, relative to the vault root.
    pub path: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SummarizeNoteOutput {
    pub summary: String,
}

/// Read a note and summarize it.
#[pipeline(
    version = "1.0.0",
    autonomy = "L1",
    owners("core"),
    mcp(permissions("obsidian:read")),
    step(
        id = "read",
        skill = "read_note@1.0.0",
        inputs(path = "$inputs.path"),
        outputs(content = "$step.read.content")
    ),
    step(
        id = "summarize",
        skill = "summarize_text@1.0.0",
        inputs(text = "$step.read.content"),
        outputs(summary = "$outputs.summary")
    )
)]
pub async fn summarize_note(input: SummarizeNoteInput) -> SummarizeNoteOutput;
