//! Authorisation, pure: who is asking (`Principal`), what each identity may do (`Policy`), and
//! `Policy::check`, which decides one action on one vault-relative path and says why.
//!
//! Precedence is `always_deny` > `deny` > `write` > `read`; write implies read. Deny rules match on a
//! folded skeleton (`fold`), so no spelling of a denied folder (case, accents, full-width letters,
//! Turkish dotted or dotless i, NFC or NFD) slips through; allow rules match the path exactly (after
//! NFC), so an allow never grants more than it names. This module does no I/O and knows nothing of
//! other Quire modules: callers pass paths that `vault` already validated.

mod fold;
mod rule;

use std::collections::BTreeMap;

pub use fold::fold;
pub use rule::{Rule, RuleError};

/// The identity a request acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The vault's owner: a local stdio client, or the holder of the owner token.
    Owner,
    /// A configured agent identity, optionally acting through an OAuth client.
    Identity {
        name: String,
        client_id: Option<String>,
    },
}

impl Principal {
    /// The identity's name for logs and the audit log (`owner` for the owner).
    pub fn name(&self) -> &str {
        match self {
            Principal::Owner => "owner",
            Principal::Identity { name, .. } => name,
        }
    }

    pub fn client_id(&self) -> Option<&str> {
        match self {
            Principal::Owner => None,
            Principal::Identity { client_id, .. } => client_id.as_deref(),
        }
    }
}

/// What a caller wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read a file (and so learn that it exists).
    Read,
    /// Create, change or delete a file.
    Write,
    /// See a folder (`""` is the vault root) as a place that exists; its entries are checked one
    /// by one with `Read`.
    List,
}

/// One identity's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityRules {
    pub read: Vec<Rule>,
    pub write: Vec<Rule>,
    pub deny: Vec<Rule>,
}

/// Every identity's rules plus the rules that bind everyone, the owner included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    always_deny: Vec<Rule>,
    identities: BTreeMap<String, IdentityRules>,
}

/// Why `check` decided as it did; `quire acl explain` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Owner,
    /// A dot-prefixed segment (`.obsidian`, `.trash`, ...): never reachable.
    Hidden,
    AlwaysDeny(String),
    Deny(String),
    Write(String),
    Read(String),
    /// A folder that is on the way to a readable rule's target.
    LeadsTo(String),
    /// Readable through this rule, but no write rule covers it.
    ReadOnly(String),
    NoRule,
    UnknownIdentity,
}

/// The outcome of `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: Reason,
}

impl Decision {
    fn allow(reason: Reason) -> Decision {
        Decision {
            allowed: true,
            reason,
        }
    }

    fn deny(reason: Reason) -> Decision {
        Decision {
            allowed: false,
            reason,
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.allowed { "allowed" } else { "denied" };
        match &self.reason {
            Reason::Owner => write!(f, "{verdict}: the owner may do anything not always denied"),
            Reason::Hidden => write!(f, "{verdict}: hidden paths are always denied"),
            Reason::AlwaysDeny(rule) => write!(f, "{verdict} by acl.always_deny rule {rule:?}"),
            Reason::Deny(rule) => write!(f, "{verdict} by deny rule {rule:?}"),
            Reason::Write(rule) => write!(f, "{verdict} by write rule {rule:?}"),
            Reason::Read(rule) => write!(f, "{verdict} by read rule {rule:?}"),
            Reason::LeadsTo(rule) => write!(
                f,
                "{verdict}: the folder leads to {rule:?}, so it is listable but shows only that"
            ),
            Reason::ReadOnly(rule) => {
                write!(
                    f,
                    "{verdict}: read rule {rule:?} covers it, no write rule does"
                )
            }
            Reason::NoRule => write!(f, "{verdict}: no rule covers it"),
            Reason::UnknownIdentity => write!(f, "{verdict}: the identity is not configured"),
        }
    }
}

impl Policy {
    pub fn new(always_deny: Vec<Rule>, identities: BTreeMap<String, IdentityRules>) -> Policy {
        Policy {
            always_deny,
            identities,
        }
    }

    pub fn has_identities(&self) -> bool {
        !self.identities.is_empty()
    }

    pub fn identity(&self, name: &str) -> Option<&IdentityRules> {
        self.identities.get(name)
    }

    /// Whether any rule can restrict this principal (an identity always can; the owner only
    /// through `always_deny`), so callers can skip filtering work when nothing is restricted.
    pub fn has_rules_for(&self, principal: &Principal) -> bool {
        match principal {
            Principal::Owner => !self.always_deny.is_empty(),
            Principal::Identity { .. } => true,
        }
    }

    /// Whether the principal may read the whole vault: the owner, or an identity whose read rules
    /// cover the root with nothing denied. Anyone else is restricted, and learns no other
    /// identity's name (the history shows them as `another identity`).
    pub fn reads_everything(&self, principal: &Principal) -> bool {
        match principal {
            Principal::Owner => true,
            Principal::Identity { name, .. } => {
                self.always_deny.is_empty()
                    && self.identities.get(name).is_some_and(|rules| {
                        rules.deny.is_empty() && self.allows(principal, Action::Read, "any-note.md")
                    })
            }
        }
    }

    /// Whether the principal has any write rule at all: without one, write tools are not offered.
    pub fn may_write_somewhere(&self, principal: &Principal) -> bool {
        match principal {
            Principal::Owner => true,
            Principal::Identity { name, .. } => self
                .identities
                .get(name)
                .is_some_and(|rules| !rules.write.is_empty()),
        }
    }

    /// Whether `principal` may read the notes directly inside `folder` (`""` is the root) when the
    /// rules decide them all alike; `None` when a rule names a note directly inside it, so its
    /// notes must be checked one by one. It holds for every note (a name ending in `.md`) whose name, in compatibility
    /// form without marks, has no `/` and does not start with `.`: such a name folds to one
    /// segment below the folder's, so only rules on the folder or above it can cover the note.
    /// A restricted caller's counts sum whole folders through this instead of checking each note.
    pub fn folder_reads(&self, principal: &Principal, folder: &str) -> Option<bool> {
        let folder = folder.trim_matches('/');
        let folded = fold(folder);
        let normal = rule::nfc(folder);
        let by_fold = |rules: &[Rule]| rules.iter().any(|rule| rule.names_note_in(&folded, true));
        let exactly = |rules: &[Rule]| rules.iter().any(|rule| rule.names_note_in(&normal, false));
        if by_fold(&self.always_deny) {
            return None;
        }
        if let Principal::Identity { name, .. } = principal
            && let Some(rules) = self.identities.get(name)
            && (by_fold(&rules.deny) || exactly(&rules.read) || exactly(&rules.write))
        {
            return None;
        }
        // Any name no rule names stands for every note of the folder.
        let probe = if folder.is_empty() {
            "any-note.md".to_owned()
        } else {
            format!("{folder}/any-note.md")
        };
        Some(self.allows(principal, Action::Read, &probe))
    }

    /// Shorthand for `check(..).allowed`.
    pub fn allows(&self, principal: &Principal, action: Action, path: &str) -> bool {
        self.check(principal, action, path).allowed
    }

    /// Decides `action` on `path` (vault-relative, `/`-separated, no leading `/`; `""` is the
    /// root folder) for `principal`.
    pub fn check(&self, principal: &Principal, action: Action, path: &str) -> Decision {
        let path = path.trim_matches('/');
        if path
            .split('/')
            .any(|segment| fold(segment).starts_with('.'))
        {
            return Decision::deny(Reason::Hidden);
        }
        let folded = fold(path);
        if let Some(rule) = first_covering_folded(&self.always_deny, &folded) {
            return Decision::deny(Reason::AlwaysDeny(rule.to_string()));
        }
        let rules = match principal {
            Principal::Owner => return Decision::allow(Reason::Owner),
            Principal::Identity { name, .. } => match self.identities.get(name) {
                Some(rules) => rules,
                None => return Decision::deny(Reason::UnknownIdentity),
            },
        };
        if let Some(rule) = first_covering_folded(&rules.deny, &folded) {
            return Decision::deny(Reason::Deny(rule.to_string()));
        }
        let normal = rule::nfc(path);
        let writer = rules.write.iter().find(|rule| rule.covers(&normal));
        let reader = rules.read.iter().find(|rule| rule.covers(&normal));
        match (action, writer, reader) {
            (_, Some(rule), _) => Decision::allow(Reason::Write(rule.to_string())),
            (Action::Write, None, Some(rule)) => Decision::deny(Reason::ReadOnly(rule.to_string())),
            (Action::Write, None, None) => Decision::deny(Reason::NoRule),
            (_, None, Some(rule)) => Decision::allow(Reason::Read(rule.to_string())),
            (Action::Read, None, None) => Decision::deny(Reason::NoRule),
            (Action::List, None, None) => {
                // A folder on the way to a readable target is listable, so an agent can navigate
                // to it; the entries it shows are each checked with `Read`.
                let leads_to = rules.write.iter().chain(&rules.read).find(|rule| {
                    rule.is_below(&normal)
                        && first_covering_folded(&self.always_deny, &fold(rule.target())).is_none()
                        && first_covering_folded(&rules.deny, &fold(rule.target())).is_none()
                });
                match leads_to {
                    Some(rule) => Decision::allow(Reason::LeadsTo(rule.to_string())),
                    None => Decision::deny(Reason::NoRule),
                }
            }
        }
    }
}

fn first_covering_folded<'a>(rules: &'a [Rule], folded_path: &str) -> Option<&'a Rule> {
    rules.iter().find(|rule| rule.covers_folded(folded_path))
}

#[cfg(test)]
mod tests;
