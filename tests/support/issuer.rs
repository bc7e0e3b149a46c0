//! A real token issuer for the authentication tests: keys made per run
//! (Ed25519 and P-256), tokens signed with them, and their JWKS served over
//! HTTP on a loopback port, counting how often it is fetched.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};

/// The issuer every test token names.
pub const ISSUER: &str = "https://issuer.test";

/// One signing key: its id, algorithm, private key and public JWK.
pub struct Key {
    pub kid: String,
    pub alg: Algorithm,
    encoding: EncodingKey,
    pub jwk: Jwk,
}

impl Key {
    /// A fresh Ed25519 key.
    pub fn ed25519(kid: &str) -> Key {
        let signing = ed25519_dalek::SigningKey::generate(&mut rand_core::OsRng);
        let der = signing.to_pkcs8_der().expect("a PKCS#8 key");
        // The JWT crate does not write Ed25519 JWKs: an OKP key by hand.
        let jwk: Jwk = serde_json::from_value(json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "alg": "EdDSA",
            "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(signing.verifying_key().to_bytes()),
        }))
        .expect("an OKP JWK");
        Key {
            kid: kid.to_owned(),
            alg: Algorithm::EdDSA,
            encoding: EncodingKey::from_ed_der(der.as_bytes()),
            jwk,
        }
    }

    /// A fresh P-256 key, for ES256.
    pub fn p256(kid: &str) -> Key {
        let secret = p256::SecretKey::random(&mut rand_core::OsRng);
        let der = p256::pkcs8::EncodePrivateKey::to_pkcs8_der(&secret).expect("a PKCS#8 key");
        Key::of(
            kid,
            Algorithm::ES256,
            EncodingKey::from_ec_der(der.as_bytes()),
        )
    }

    fn of(kid: &str, alg: Algorithm, encoding: EncodingKey) -> Key {
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).expect("a public JWK");
        jwk.common.key_id = Some(kid.to_owned());
        Key {
            kid: kid.to_owned(),
            alg,
            encoding,
            jwk,
        }
    }

    /// A token with `claims`, signed with this key, naming it.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_critical(claims, None)
    }

    /// A token with `claims`, signed with this key, naming it, whose header
    /// lists `crit` extensions when given.
    pub fn sign_critical(&self, claims: &Value, crit: Option<&[&str]>) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        header.crit = crit.map(|c| c.iter().map(|s| (*s).to_owned()).collect());
        encode(&header, claims, &self.encoding).expect("a signed token")
    }
}

/// Seconds since the epoch, `delta` from now.
pub fn at(delta: i64) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    now + delta
}

/// Claims of a token for `audience` from [`ISSUER`], valid for an hour,
/// with `scope`, for an `executor` (in the `role` claim: a server reads it
/// with `--role-claim role`).
pub fn claims(audience: &str, sub: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER,
        "aud": audience,
        "sub": sub,
        "scope": scope,
        "role": "executor",
        "iat": at(0),
        "exp": at(3600),
    })
}

/// A token with `alg: none`: claims and no signature.
pub fn unsigned(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let body = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{body}.")
}

/// A token "signed" with HS256, the public key's JWK text as the secret:
/// the confusion attack on verifiers that take the key's bytes for a secret.
pub fn hmac_with_public_key(key: &Key, claims: &Value) -> String {
    let secret = serde_json::to_vec(&key.jwk).expect("a JWK");
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(key.kid.clone());
    encode(&header, claims, &EncodingKey::from_secret(&secret)).expect("a token")
}

/// `token` with one character of its payload changed: a signature that no
/// longer verifies.
pub fn tampered(token: &str) -> String {
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let payload = URL_SAFE_NO_PAD.decode(&parts[1]).expect("a payload");
    let mut claims: Value = serde_json::from_slice(&payload).expect("JSON claims");
    claims["scope"] = json!("seo:read seo:write rag:admin skills:admin");
    parts[1] = URL_SAFE_NO_PAD.encode(claims.to_string());
    parts.join(".")
}

/// How the JWKS server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answering {
    /// The key set.
    Keys,
    /// 500, at once.
    Fails,
    /// Nothing: the request is read and the connection held open.
    Hangs,
}

/// The JWKS of the keys given, served over HTTP on a loopback port.
pub struct JwksServer {
    pub url: String,
    keys: Arc<Mutex<Vec<Jwk>>>,
    fetched: Arc<AtomicUsize>,
    answering: Arc<Mutex<Answering>>,
}

impl JwksServer {
    /// Serve `keys`' public halves at `http://127.0.0.1:PORT/jwks.json`.
    pub fn start(keys: &[&Key]) -> JwksServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!(
            "http://{}/jwks.json",
            listener.local_addr().expect("an address")
        );
        let jwks: Arc<Mutex<Vec<Jwk>>> =
            Arc::new(Mutex::new(keys.iter().map(|k| k.jwk.clone()).collect()));
        let fetched = Arc::new(AtomicUsize::new(0));
        let answering = Arc::new(Mutex::new(Answering::Keys));
        let (served, count, how) = (jwks.clone(), fetched.clone(), answering.clone());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("a stream"));
                let mut line = String::new();
                // The request's head, up to its blank line.
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                count.fetch_add(1, Ordering::SeqCst);
                match *how.lock().unwrap_or_else(|e| e.into_inner()) {
                    Answering::Keys => {}
                    Answering::Fails => {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        );
                        continue;
                    }
                    Answering::Hangs => {
                        held.push(stream);
                        continue;
                    }
                }
                let set = JwkSet {
                    keys: served.lock().unwrap_or_else(|e| e.into_inner()).clone(),
                };
                let body = serde_json::to_string(&set).expect("a JWKS");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        JwksServer {
            url,
            keys: jwks,
            fetched,
            answering,
        }
    }

    /// Withdraw the key named `kid`.
    pub fn remove(&self, kid: &str) {
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| k.common.key_id.as_deref() != Some(kid));
    }

    /// Answer from now on as `how` says.
    pub fn answer(&self, how: Answering) {
        *self.answering.lock().unwrap_or_else(|e| e.into_inner()) = how;
    }

    /// Publish `key` too (a rotation).
    pub fn add(&self, key: &Key) {
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(key.jwk.clone());
    }

    /// How many times the set was fetched.
    pub fn fetched(&self) -> usize {
        self.fetched.load(Ordering::SeqCst)
    }
}
