//! For bench/mcp-http.sh: make an Ed25519 key, write its JWKS to the file
//! given, and print one token of issuer `https://issuer.bench` for audience
//! `http://mcp.bench/mcp`, valid for a day, with scope `skills:execute`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: mint-token JWKS_FILE")?;
    let key = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
    let jwks = json!({"keys": [{
        "kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "bench",
        "x": URL_SAFE_NO_PAD.encode(key.verifying_key().to_bytes()),
    }]});
    std::fs::write(&path, jwks.to_string())?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let claims = json!({
        "iss": "https://issuer.bench", "aud": "http://mcp.bench/mcp", "sub": "bench",
        "scope": "skills:execute", "iat": now, "exp": now + 86_400,
    });
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("bench".to_owned());
    let der = key.to_pkcs8_der()?;
    println!(
        "{}",
        encode(&header, &claims, &EncodingKey::from_ed_der(der.as_bytes()))?
    );
    Ok(())
}
