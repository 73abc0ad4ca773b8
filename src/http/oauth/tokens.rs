//! JWT access tokens: HS256 under a key from the state directory, issuer = the public URL,
//! audience = its `/mcp`. Verification accepts exactly that algorithm, so `alg: none` and
//! algorithm substitution are refused before any claim is read.

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use serde::{Deserialize, Serialize};

/// The claims of an access token (RFC 9068 names, plus `gid`, the grant it belongs to).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AccessClaims {
    pub iss: String,
    pub aud: String,
    /// The identity the grant is bound to.
    pub sub: String,
    pub client_id: String,
    pub gid: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
}

pub struct Keys {
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl Keys {
    pub fn new(secret: &[u8]) -> Result<Keys, jsonwebtoken::errors::Error> {
        Ok(Keys {
            encoding: EncodingKey::from_secret(secret)?,
            decoding: DecodingKey::from_secret(secret)?,
        })
    }

    pub fn sign(&self, claims: &AccessClaims) -> Result<String, jsonwebtoken::errors::Error> {
        let mut header = Header::new(Algorithm::HS256);
        header.typ = Some("at+jwt".into());
        encode(&header, claims, &self.encoding)
    }

    pub fn verify(
        &self,
        token: &str,
        issuer: &str,
        audience: &str,
    ) -> Result<AccessClaims, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 5;
        decode::<AccessClaims>(token, &self.decoding, &validation).map(|data| data.claims)
    }
}
