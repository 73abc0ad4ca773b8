//! Who may connect: `[acl]` and `[[identity]]` lowered into the policy and the identities' tokens.
//! Names, rules and tokens are checked here; a token too short or shared by two identities
//! refuses the configuration, while one that cannot be found only leaves its identity out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::load::absolute;
use super::raw::{RawAcl, RawIdentity};
use super::secret::{SecretFileError, read_secret_file};
use super::{ConfigError, Environment};
use crate::acl::{IdentityRules, Policy, Rule};

/// The shortest identity token accepted: long enough that guessing is hopeless.
pub const MIN_TOKEN_CHARS: usize = 32;

/// Who may connect and what each identity may do.
#[derive(Clone, Default)]
pub struct Access {
    pub policy: Policy,
    /// Identities whose token was found: (name, token).
    pub tokens: Vec<(String, String)>,
    /// Identities left out because their token is missing: (name, why), for the log.
    pub disabled: Vec<(String, String)>,
    /// Whether any `[[identity]]` is configured; then the owner token is not used over HTTP.
    pub has_identities: bool,
    /// Every `token_file`, so the sandbox lets a reload read them again.
    pub token_files: Vec<PathBuf>,
}

impl std::fmt::Debug for Access {
    // Never print the tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("policy", &self.policy)
            .field(
                "tokens",
                &self.tokens.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("disabled", &self.disabled)
            .finish()
    }
}

fn parse_rules(key: &str, raw: &[String]) -> Result<Vec<Rule>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(at, text)| {
            Rule::parse(text).map_err(|error| ConfigError::Access {
                key: format!("{key}[{at}]"),
                message: error.to_string(),
            })
        })
        .collect()
}

/// Lowers `[acl]` and `[[identity]]`: rules parsed, names and tokens checked, tokens read.
pub(super) fn access(
    acl: &RawAcl,
    identities: &[RawIdentity],
    file_dir: &Path,
    env: &Environment,
) -> Result<Access, ConfigError> {
    let always_deny = parse_rules("acl.always_deny", &acl.always_deny)?;
    let mut rules = BTreeMap::new();
    let mut tokens: Vec<(String, String)> = Vec::new();
    let mut disabled = Vec::new();
    let mut token_files = Vec::new();
    for (at, identity) in identities.iter().enumerate() {
        let key = format!("identity[{at}]");
        let name = identity_name(&key, identity)?;
        if rules
            .insert(name.to_string(), identity_rules(&key, identity)?)
            .is_some()
        {
            return Err(ConfigError::Access {
                key: format!("{key}.name"),
                message: format!("the identity {name:?} is configured twice"),
            });
        }
        let token = match read_token(&key, identity, file_dir, env, &mut token_files)? {
            Ok(token) if !token.is_empty() => token,
            Ok(_) => {
                disabled.push((name.to_string(), "its token file is empty".to_string()));
                continue;
            }
            Err(why) => {
                disabled.push((name.to_string(), why));
                continue;
            }
        };
        check_token(&key, name, &token, &tokens)?;
        tokens.push((name.to_string(), token));
    }
    Ok(Access {
        policy: Policy::new(always_deny, rules),
        tokens,
        disabled,
        has_identities: !identities.is_empty(),
        token_files,
    })
}

/// The identity's name, trimmed: letters, digits, '-', '_' or '.', and not the owner's.
fn identity_name<'a>(key: &str, identity: &'a RawIdentity) -> Result<&'a str, ConfigError> {
    let name = identity.name.trim();
    let valid_name = !name.is_empty()
        && name != "owner"
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid_name {
        return Err(ConfigError::Access {
            key: format!("{key}.name"),
            message: format!(
                "{:?} is not a usable name; use letters, digits, '-', '_' or '.' (and not \"owner\")",
                identity.name
            ),
        });
    }
    Ok(name)
}

fn identity_rules(key: &str, identity: &RawIdentity) -> Result<IdentityRules, ConfigError> {
    Ok(IdentityRules {
        read: parse_rules(&format!("{key}.read"), &identity.read)?,
        write: parse_rules(&format!("{key}.write"), &identity.write)?,
        deny: parse_rules(&format!("{key}.deny"), &identity.deny)?,
    })
}

/// The identity's token from its one source, trimmed. The outer error refuses the whole
/// configuration; the inner one (a file that cannot be read, a variable not set) only leaves the
/// identity out, saying why. Every `token_file` is recorded in `token_files`, read or not.
fn read_token(
    key: &str,
    identity: &RawIdentity,
    file_dir: &Path,
    env: &Environment,
    token_files: &mut Vec<PathBuf>,
) -> Result<Result<String, String>, ConfigError> {
    match (&identity.token_file, &identity.token_env) {
        (Some(_), Some(_)) | (None, None) => Err(ConfigError::Access {
            key: key.to_string(),
            message: "set exactly one of token_file (a file holding the token, e.g. a systemd credential) or token_env (an environment variable, for development)".into(),
        }),
        (Some(file), None) => {
            let path = absolute(file_dir, file);
            token_files.push(path.clone());
            match read_secret_file(&path) {
                Ok(text) => Ok(Ok(text.trim().to_string())),
                Err(SecretFileError::Exposed { mode }) => Err(ConfigError::Access {
                    key: format!("{key}.token_file"),
                    message: format!(
                        "{} can be read by other users (mode {mode:o}); run chmod 600 on it (or let systemd pass it with LoadCredential=)",
                        path.display()
                    ),
                }),
                Err(SecretFileError::Io(error)) => Ok(Err(format!(
                    "cannot read token_file {}: {error}",
                    path.display()
                ))),
            }
        }
        (None, Some(variable)) => Ok(env
            .variables
            .get(variable)
            .map(|value| value.trim().to_string())
            .filter(|value| !value.is_empty())
            .ok_or_else(|| format!("the environment variable {variable} is not set"))),
    }
}

/// A token long enough that guessing is hopeless, and not another identity's.
fn check_token(
    key: &str,
    name: &str,
    token: &str,
    tokens: &[(String, String)],
) -> Result<(), ConfigError> {
    if token.chars().count() < MIN_TOKEN_CHARS {
        return Err(ConfigError::Access {
            key: format!("{key}.token"),
            message: format!(
                "the token of {name:?} has fewer than {MIN_TOKEN_CHARS} characters; create one with `quire token new --identity {name}`"
            ),
        });
    }
    if let Some((other, _)) = tokens.iter().find(|(_, existing)| existing == token) {
        return Err(ConfigError::Access {
            key: format!("{key}.token"),
            message: format!(
                "{name:?} has the same token as {other:?}; every identity needs its own"
            ),
        });
    }
    Ok(())
}
