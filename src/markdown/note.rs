//! One reading of a note's text that the extractors share: the properties block split off and read,
//! and the block scan (each line's kind, and the headings). Indexing a note asks for its tags, links,
//! headings, tasks and chunks; each reading them on its own scanned the blocks up to six times and
//! parsed the YAML three times.

use serde_json::{Map, Value};

use super::blocks::{self, Line};
use super::frontmatter::{self, FrontmatterSplit};
use super::headings::{self, Heading};

/// A note's text read once.
pub struct NoteText<'a> {
    pub text: &'a str,
    pub split: FrontmatterSplit<'a>,
    /// The properties block as Obsidian reads it; empty without one, or when it is not valid YAML
    /// (Obsidian then shows no properties either).
    pub properties: Map<String, Value>,
    pub(crate) lines: Vec<Line<'a>>,
    pub headings: Vec<Heading>,
}

impl<'a> NoteText<'a> {
    pub fn read(text: &'a str) -> NoteText<'a> {
        let split = frontmatter::split(text);
        let properties = split
            .yaml
            .and_then(|yaml| frontmatter::parse_properties(yaml).ok())
            .unwrap_or_default();
        let scan = blocks::scan(text);
        NoteText {
            text,
            split,
            properties,
            lines: scan.lines,
            headings: headings::sections(text, scan.headings),
        }
    }
}
