//! Raw inputs of a call turned into domain types, with errors an agent can act on: a path, an
//! expected revision, a heading named by its text (and level).

use super::error::OpsError;
use crate::markdown::headings;
use crate::vault::{Revision, VaultPath};

pub(super) fn parse_path(raw: &str) -> Result<VaultPath, OpsError> {
    VaultPath::parse(raw).map_err(|e| OpsError::path(raw, e))
}

pub(super) fn parse_revision(raw: Option<&str>) -> Result<Option<Revision>, OpsError> {
    raw.map(|raw| {
        Revision::parse(raw).ok_or_else(|| {
            OpsError::invalid_argument(format!(
                "expected_revision {raw:?} is not a revision; pass the 64-hex-digit revision returned by the last read or write of the note"
            ))
        })
    })
    .transpose()
}

pub(super) fn find_heading(
    path: &VaultPath,
    text: &str,
    wanted: &str,
    level: Option<u8>,
) -> Result<headings::Heading, OpsError> {
    let all = headings::headings(text);
    let wanted_trimmed = wanted.trim().trim_start_matches('#').trim();
    let at_level = |h: &&headings::Heading| level.is_none_or(|level| h.level == level);
    let mut candidates: Vec<&headings::Heading> = all
        .iter()
        .filter(|h| h.text == wanted_trimmed)
        .filter(at_level)
        .collect();
    if candidates.is_empty() {
        // Models often change a heading's case; accept that when it is unambiguous.
        candidates = all
            .iter()
            .filter(|h| h.text.to_lowercase() == wanted_trimmed.to_lowercase())
            .filter(at_level)
            .collect();
    }
    match candidates.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(OpsError::HeadingNotFound {
            path: path.to_string(),
            heading: wanted.to_string(),
            level: level.map(|l| format!(" at level {l}")).unwrap_or_default(),
            available: describe_headings(all.iter()),
        }),
        many => Err(OpsError::AmbiguousHeading {
            path: path.to_string(),
            heading: wanted.to_string(),
            candidates: describe_headings(many.iter().copied()),
        }),
    }
}

fn describe_headings<'a>(headings: impl Iterator<Item = &'a headings::Heading>) -> String {
    let described: Vec<String> = headings
        .take(30)
        .map(|h| format!("{:?} (level {}, line {})", h.text, h.level, h.line))
        .collect();
    if described.is_empty() {
        "none".into()
    } else {
        described.join(", ")
    }
}
