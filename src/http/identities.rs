//! The identity tokens `[[identity]]` configures, as one registry that a configuration reload
//! replaces as a whole: bearer authentication (`auth`) identifies a caller by its token, and the
//! OAuth server (`oauth`) checks each grant against its identity's current token.
//!
//! Tokens are compared in constant time and never printed.

use std::sync::{Arc, RwLock};

use subtle::ConstantTimeEq;

/// The identity tokens, replaceable as a whole when the configuration reloads.
#[derive(Clone, Default)]
pub struct IdentityTokens(Arc<RwLock<Vec<(String, String)>>>);

impl IdentityTokens {
    /// `tokens` are (identity name, token) pairs.
    pub fn new(tokens: Vec<(String, String)>) -> IdentityTokens {
        IdentityTokens(Arc::new(RwLock::new(tokens)))
    }

    pub fn replace(&self, tokens: Vec<(String, String)>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = tokens;
    }

    /// The current token of `name`, when it is a configured identity with one: OAuth grants are
    /// checked against it.
    pub fn token_of(&self, name: &str) -> Option<String> {
        self.0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(known, _)| known == name)
            .map(|(_, token)| token.clone())
    }

    /// The identity whose token `presented` is. Every token is compared, in constant time, so
    /// the time taken says nothing about which one (or how much of one) matched.
    pub fn identify(&self, presented: &str) -> Option<String> {
        let tokens = self.0.read().unwrap_or_else(|p| p.into_inner());
        let mut found = None;
        for (name, token) in tokens.iter() {
            if bool::from(presented.as_bytes().ct_eq(token.as_bytes())) {
                found = Some(name.clone());
            }
        }
        found
    }
}
