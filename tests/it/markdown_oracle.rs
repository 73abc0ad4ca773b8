//! Compares the markdown model with Obsidian's own metadata cache, captured from the real app for the
//! notes in `shared/oracles/obsidian-metadata-cache/` (headings, tags, properties).
//! It only reads the oracle files; every mismatch of every file is collected and reported in one failure,
//! and when the oracle folder is absent the tests say so on stderr and pass.

use quire::markdown::{frontmatter, headings, tags};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Differences that are provably outside the model's scope: (oracle file, aspect, why).
/// Keep this as short as possible; every entry needs a reason a reviewer can check.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[];

/// One captured note: its file name, text and Obsidian's answers.
struct OracleNote {
    name: String,
    contents: String,
    metadata: Value,
    all_tags: Value,
}

fn oracle_dir() -> PathBuf {
    crate::support::shared_dir().join("oracles/obsidian-metadata-cache")
}

/// Every oracle note, or `None` (after a visible notice) when the oracle folder is not there.
fn oracle_notes() -> Option<Vec<OracleNote>> {
    let dir = oracle_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        crate::support::skip_without_oracle("the Obsidian metadata-cache oracle", &dir);
        return None;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    paths.sort();
    let notes: Vec<OracleNote> = paths
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|error| panic!("reading {}: {error}", path.display()));
            let json: Value = serde_json::from_str(&text)
                .unwrap_or_else(|error| panic!("parsing {}: {error}", path.display()));
            OracleNote {
                name,
                contents: json["fileContents"].as_str().unwrap_or_default().to_owned(),
                metadata: json["cachedMetadata"].clone(),
                all_tags: json["getAllTags"].clone(),
            }
        })
        .collect();
    assert!(!notes.is_empty(), "no oracle notes in {}", dir.display());
    Some(notes)
}

fn is_known(name: &str, aspect: &str) -> bool {
    KNOWN_DIFFERENCES
        .iter()
        .any(|(file, known_aspect, _)| *file == name && *known_aspect == aspect)
}

/// Runs `compare` on every note and fails once, listing every unexpected mismatch; also fails when an
/// allowlisted difference has disappeared, so the allowlist cannot rot.
fn check(aspect: &str, compare: impl Fn(&OracleNote) -> Option<String>) {
    let Some(notes) = oracle_notes() else {
        return;
    };
    let mut problems = Vec::new();
    let mut matched = 0;
    for note in &notes {
        match (compare(note), is_known(&note.name, aspect)) {
            (Some(difference), false) => problems.push(format!("{}: {difference}", note.name)),
            (None, true) => problems.push(format!(
                "{}: listed in KNOWN_DIFFERENCES for {aspect} but now matches; remove the entry",
                note.name
            )),
            (None, false) => matched += 1,
            (Some(_), true) => {}
        }
    }
    eprintln!(
        "{aspect}: {matched} of {} oracle notes match Obsidian",
        notes.len()
    );
    assert!(
        problems.is_empty(),
        "{aspect} differs from Obsidian in {} notes:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Byte offset to JavaScript (UTF-16) offset, the unit of Obsidian's positions.
fn utf16_offset(text: &str, byte_offset: usize) -> usize {
    text.get(..byte_offset)
        .map_or(usize::MAX, |prefix| prefix.encode_utf16().count())
}

#[test]
fn headings_match_obsidian() {
    check("headings", |note| {
        let expected: Vec<(String, u64, u64, u64)> = note.metadata["headings"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|heading| {
                        let start = &heading["position"]["start"];
                        (
                            heading["heading"].as_str().unwrap_or_default().to_owned(),
                            heading["level"].as_u64().unwrap_or_default(),
                            start["line"].as_u64().unwrap_or_default() + 1,
                            start["offset"].as_u64().unwrap_or_default(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let actual: Vec<(String, u64, u64, u64)> = headings::headings(&note.contents)
            .into_iter()
            .map(|heading| {
                (
                    heading.text,
                    u64::from(heading.level),
                    heading.line as u64,
                    utf16_offset(&note.contents, heading.start) as u64,
                )
            })
            .collect();
        (expected != actual).then(|| {
            format!("expected (text, level, line, offset) {expected:?}\n    actual {actual:?}")
        })
    });
}

#[test]
fn tags_match_obsidian() {
    check("tags", |note| {
        let expected: BTreeSet<String> = note
            .all_tags
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(|tag| tag.trim_start_matches('#').to_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        let actual: BTreeSet<String> = tags::note_tags(&note.contents)
            .iter()
            .map(|tag| tag.to_lowercase())
            .collect();
        (expected != actual).then(|| format!("expected {expected:?}\n    actual {actual:?}"))
    });
}

#[test]
fn frontmatter_matches_obsidian() {
    check("frontmatter", |note| {
        let expected = note
            .metadata
            .get("frontmatter")
            .cloned()
            .unwrap_or(Value::Null);
        let actual = match frontmatter::split(&note.contents).yaml {
            None => Value::Null,
            Some(yaml) => match frontmatter::parse_properties(yaml) {
                Ok(map) => Value::Object(map),
                Err(error) => Value::String(format!("error: {error:?}")),
            },
        };
        (expected != actual).then(|| format!("expected {expected}\n    actual {actual}"))
    });
}

#[test]
fn rendered_properties_read_back_identically() {
    check("render round trip", |note| {
        let map = note.metadata.get("frontmatter")?.as_object()?;
        let rendered = frontmatter::render_properties(map);
        let reread = frontmatter::split(&rendered)
            .yaml
            .map(frontmatter::parse_properties);
        let expected = if map.is_empty() {
            None
        } else {
            Some(Ok(map.clone()))
        };
        (reread != expected).then(|| format!("rendered {rendered:?}\n    read back {reread:?}"))
    });
}
