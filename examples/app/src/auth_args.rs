//! How a server over HTTP (`mcp --http`, `console --http`) knows who each
//! request is from: `--auth none|jwt|api-keys FILE` and the flags of each
//! mode, read into one authenticator.

use std::sync::Arc;

use skill_runtime::mcp::auth::Authenticator;

#[derive(clap::Args)]
pub struct AuthArgs {
    /// With --http: who each request is from. `none` (the default, loopback
    /// only): every request is the caller the flags above describe; `jwt`:
    /// OAuth 2.1 / OIDC bearer tokens (--jwks, --issuer, --audience);
    /// `api-keys FILE`: keys of FILE (`api-key new` writes it).
    #[arg(long, num_args = 1..=2, value_names = ["MODE", "FILE"], requires = "http")]
    auth: Vec<String>,
    /// With --auth jwt: the issuer's key set, a URL (https://.../jwks.json)
    /// or a file.
    #[arg(long, value_name = "URL|FILE")]
    jwks: Option<String>,
    /// With --auth jwt: the issuer tokens must come from (`iss`).
    #[arg(long, value_name = "ISSUER")]
    issuer: Option<String>,
    /// With --auth jwt: the audience tokens must be for (`aud`), this
    /// server's identifier; by default its --resource-url.
    #[arg(long, value_name = "AUDIENCE")]
    audience: Option<String>,
    /// With --auth jwt: the claim that names the caller's agent role.
    #[arg(long, value_name = "CLAIM")]
    role_claim: Option<String>,
    /// With --auth jwt: the least time between two fetches of the key set
    /// for tokens naming an unknown key.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    jwks_refetch_secs: u64,
    /// With --auth jwt: how often the key set is fetched again; a key the
    /// issuer withdrew stops verifying tokens within this long.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    jwks_refresh_secs: u64,
    /// With --auth api-keys: the key file, when not given after it.
    #[arg(long, value_name = "FILE")]
    api_keys: Option<std::path::PathBuf>,
}

/// How requests over HTTP are authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthMode {
    /// Every request is the server's own caller: loopback only.
    None,
    /// OAuth 2.1 / OIDC bearer JWTs.
    Jwt,
    /// API keys from a file of hashed keys.
    ApiKeys(std::path::PathBuf),
}

impl AuthArgs {
    /// `--auth MODE [FILE]` read: the mode, and for `api-keys` its file
    /// (after the mode, or `--api-keys FILE`).
    pub fn mode(&self) -> Result<AuthMode, String> {
        let file = self.auth.get(1).map(std::path::PathBuf::from);
        let mode = match self.auth.first().map(String::as_str) {
            None | Some("none") => AuthMode::None,
            Some("jwt") => AuthMode::Jwt,
            Some("api-keys") => {
                return match file.or_else(|| self.api_keys.clone()) {
                    Some(path) => Ok(AuthMode::ApiKeys(path)),
                    None => Err("--auth api-keys needs the key file: --auth api-keys FILE (`skill-examples api-key new NAME --file FILE` makes one)".to_owned()),
                };
            }
            Some(other) => {
                return Err(format!(
                    "--auth {other}: the modes are `none`, `jwt` and `api-keys FILE`"
                ));
            }
        };
        match file {
            Some(f) => Err(format!(
                "--auth {} takes no file (`{}`); only `api-keys FILE` does",
                self.auth[0],
                f.display()
            )),
            None => Ok(mode),
        }
    }

    /// The authenticator `mode` asks for (none for `none`); a JWT's audience
    /// is `default_audience` unless --audience names it.
    pub async fn authenticator(
        &self,
        mode: &AuthMode,
        default_audience: Option<&str>,
    ) -> Result<Option<Arc<dyn Authenticator>>, String> {
        use skill_runtime::mcp::auth::{ApiKeys, JwksSource, JwtAuth, JwtConfig};
        match mode {
            AuthMode::None => Ok(None),
            AuthMode::ApiKeys(path) => {
                let keys = ApiKeys::open(path)
                    .map_err(|e| format!("--auth api-keys {}: {e}", path.display()))?;
                Ok(Some(Arc::new(keys)))
            }
            AuthMode::Jwt => {
                let (Some(jwks), Some(issuer)) = (&self.jwks, &self.issuer) else {
                    return Err("--auth jwt needs --jwks and --issuer".to_owned());
                };
                let audience = self
                    .audience
                    .clone()
                    .or_else(|| default_audience.map(str::to_owned))
                    .ok_or("--auth jwt needs --audience (or --resource-url, its default)")?;
                let mut config = JwtConfig::new(JwksSource::parse(jwks), issuer.clone(), audience);
                config.role_claim = self.role_claim.clone();
                config.refetch_after = std::time::Duration::from_secs(self.jwks_refetch_secs);
                config.refresh_every = std::time::Duration::from_secs(self.jwks_refresh_secs);
                let auth = JwtAuth::connect(config)
                    .await
                    .map_err(|e| format!("--jwks: {e}"))?;
                Ok(Some(Arc::new(auth)))
            }
        }
    }
}
