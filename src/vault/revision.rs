//! Revisions: the sha256 of a file's exact bytes, in lower-case hex.
//!
//! A revision names content, not time, so two writers that produce identical bytes agree and a
//! touched-but-unchanged file keeps its revision.

use std::fmt;

use sha2::{Digest, Sha256};

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Revision(String);

impl Revision {
    pub fn of(bytes: &[u8]) -> Revision {
        Revision(hex::encode(Sha256::digest(bytes)))
    }

    /// Accepts a client-supplied revision: 64 hex digits, any case.
    pub fn parse(raw: &str) -> Option<Revision> {
        let trimmed = raw.trim();
        (trimmed.len() == 64 && trimmed.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Revision(trimmed.to_ascii_lowercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Revision({})", &self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_bytes() {
        assert_eq!(
            Revision::of(b"").as_str(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let upper = Revision::of(b"x").as_str().to_ascii_uppercase();
        assert_eq!(Revision::parse(&upper), Some(Revision::of(b"x")));
        assert_eq!(Revision::parse("abc"), None);
    }
}
