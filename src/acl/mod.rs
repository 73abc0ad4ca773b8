//! Authorisation, pure: who is asking. Policy rules and `check` arrive with per-agent identities.
//!
//! Every request into `ops` carries a `Principal`, so transports never decide access themselves
//! and the ACL can be enforced in exactly one place.

/// The identity a request acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The vault's owner: a local stdio client, or the holder of the owner token.
    Owner,
}
