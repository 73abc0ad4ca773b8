//! One ACL rule: `"/"` (the whole vault), `"Folder/"` (that folder and everything below it) or
//! `"Folder/Note.md"` (exactly that path), parsed once from configuration text.
//!
//! A rule keeps both its NFC target, for allow matching, and its folded skeleton, for deny
//! matching. Anything that could be misread (globs, `..`, hidden segments, backslashes) is refused
//! at parse time, so a rule means exactly what it says.

use unicode_normalization::UnicodeNormalization;

use super::fold;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    All,
    Folder(String),
    File(String),
}

/// A parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    raw: String,
    target: Target,
    folded: String,
}

/// Why a rule's text is not a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("a rule cannot be empty; use \"/\" for the whole vault")]
    Empty,
    #[error(
        "{0:?} starts with '/'; rules are vault-relative (\"Folder/\" or \"Folder/Note.md\"), and \"/\" alone means the whole vault"
    )]
    Absolute(String),
    #[error("{0:?} contains a backslash, NUL or a control character; use '/' between folders")]
    BadCharacter(String),
    #[error("{0:?} has an empty, '.' or '..' segment")]
    BadSegment(String),
    #[error("{0:?} names a hidden path; hidden paths are always denied")]
    Hidden(String),
    #[error(
        "{0:?} contains '*', '?' or '['; rules are folders (\"Folder/\") or exact paths, not globs"
    )]
    Glob(String),
}

pub(super) fn nfc(text: &str) -> String {
    // ASCII text is already in NFC.
    if text.is_ascii() {
        return text.to_owned();
    }
    text.nfc().collect()
}

impl Rule {
    pub fn parse(raw: &str) -> Result<Rule, RuleError> {
        if raw.is_empty() {
            return Err(RuleError::Empty);
        }
        if raw == "/" {
            return Ok(Rule {
                raw: raw.to_string(),
                target: Target::All,
                folded: String::new(),
            });
        }
        if raw.starts_with('/') {
            return Err(RuleError::Absolute(raw.to_string()));
        }
        if raw.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(RuleError::BadCharacter(raw.to_string()));
        }
        if raw.contains(['*', '?', '[']) {
            return Err(RuleError::Glob(raw.to_string()));
        }
        let is_folder = raw.ends_with('/');
        let body = nfc(raw.trim_end_matches('/'));
        for segment in body.split('/') {
            if segment.is_empty() || segment == "." || segment == ".." {
                return Err(RuleError::BadSegment(raw.to_string()));
            }
            if fold(segment).starts_with('.') {
                return Err(RuleError::Hidden(raw.to_string()));
            }
        }
        let folded = fold(&body);
        let target = if is_folder {
            Target::Folder(body)
        } else {
            Target::File(body)
        };
        Ok(Rule {
            raw: raw.to_string(),
            target,
            folded,
        })
    }

    /// The path the rule names, without a trailing `/` (`""` for the whole vault).
    pub fn target(&self) -> &str {
        match &self.target {
            Target::All => "",
            Target::Folder(path) | Target::File(path) => path,
        }
    }

    /// Whether the rule covers `path` (NFC), compared exactly.
    pub fn covers(&self, path: &str) -> bool {
        match &self.target {
            Target::All => true,
            Target::Folder(folder) => within(path, folder),
            Target::File(file) => path == file,
        }
    }

    /// Whether the rule covers a path given as its folded skeleton.
    pub fn covers_folded(&self, folded_path: &str) -> bool {
        match &self.target {
            Target::All => true,
            Target::Folder(_) => within(folded_path, &self.folded),
            Target::File(_) => folded_path == self.folded,
        }
    }

    /// Whether the rule can cover a note (a name ending in `.md`, any case) directly inside
    /// `folder` (`""` is the root) without covering the folder: by folded skeleton when `folded`
    /// (`folder` folded too, as deny rules match), else exactly (`folder` in NFC, as allow rules
    /// match). A folder rule covers such a note only when spelled as its path.
    pub(super) fn names_note_in(&self, folder: &str, folded: bool) -> bool {
        let target = match (&self.target, folded) {
            (Target::All, _) => return false,
            (_, true) => self.folded.as_str(),
            (Target::Folder(target) | Target::File(target), false) => target.as_str(),
        };
        let (parent, name) = target.rsplit_once('/').unwrap_or(("", target));
        let names_a_note =
            matches!(self.target, Target::File(_)) || name.to_lowercase().ends_with(".md");
        names_a_note && parent == folder
    }

    /// Whether the rule's target lies strictly below `folder` (`""` is the root).
    pub fn is_below(&self, folder: &str) -> bool {
        let target = self.target();
        if target.is_empty() {
            return false;
        }
        folder.is_empty()
            || target
                .strip_prefix(folder)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

fn within(path: &str, folder: &str) -> bool {
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.raw)
    }
}
