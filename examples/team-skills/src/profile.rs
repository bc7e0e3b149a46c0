//! `handle_profile`: a creator profile card, built on the seed's
//! `normalize_handle` from another crate.

use seed_skills::{HandleError, NormalizeHandleInput, Platform, normalize_handle};
use skill_runtime::prelude::*;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ProfileInput {
    /// The handle as typed or pasted.
    pub handle: String,
    /// Display name; derived from the handle when absent.
    #[serde(default)]
    pub display_name: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProfileOutput {
    pub handle: String,
    pub platform: Option<Platform>,
    pub display_name: String,
    /// URL-safe identifier of the profile.
    pub slug: String,
}

#[derive(Debug, thiserror::Error, FailureModes)]
pub enum ProfileError {
    /// The handle could not be normalized.
    #[error(transparent)]
    InvalidHandle(#[from] HandleError),
}

/// Build a creator profile card from a social handle.
#[skill(
    version = "1.2.0",
    domain = "data",
    owners("growth-team"),
    autonomy = "L2",
    calls(normalize_handle),
    reusable_by(executor = "execute"),
    idempotent,
    retries = 0,
    mcp(tool_name = "creator_profile")
)]
pub async fn handle_profile(ctx: Ctx, input: ProfileInput) -> Result<ProfileOutput, ProfileError> {
    let normalized = ctx
        .call::<normalize_handle>(NormalizeHandleInput {
            handle: input.handle,
        })
        .await?;
    let bare = normalized.handle.trim_start_matches('@');
    let display_name = if input.display_name.trim().is_empty() {
        bare.split(['_', '.', '-'])
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect::<String>())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        input.display_name.trim().to_owned()
    };
    let platform = normalized.platform;
    let slug = match platform {
        Some(p) => format!("{}-{bare}", serde_plain(p)),
        None => bare.to_owned(),
    }
    .replace(['.', '_'], "-");
    Ok(ProfileOutput {
        handle: normalized.handle,
        platform,
        display_name,
        slug,
    })
}

fn serde_plain(p: Platform) -> &'static str {
    match p {
        Platform::Twitter => "twitter",
        Platform::Instagram => "instagram",
        Platform::Tiktok => "tiktok",
        Platform::Youtube => "youtube",
        Platform::Github => "github",
    }
}
