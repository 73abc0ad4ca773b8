//! The links of a note or canvas as Obsidian's metadata cache reports them, and how a link path
//! resolves to a file of the vault.
//!
//! It owns the link grammar (wikilinks and embeds, markdown links and images, links in property
//! values, canvas file nodes and the links of canvas text cards), each link's position, and
//! Obsidian's resolution rules over a list of vault paths. It must never report a link Obsidian
//! would not, never touch the disk, and never panic on any input.

use super::blocks::LineKind;
use super::note::NoteText;
use line::{LinkLine, inline_links};
use places::{JsonStringPlaces, first_unused_occurrences};
use positions::{Positions, find_from, line_starts, offset_in};
use properties::property_links;

pub use canvas::{canvas_links, json_string_body};
pub use resolve::{Resolver, fold, link_lookup_name, lookup_name};
pub use rewrite::{PathStyle, path_style, path_text, spells_md, strip_md, with_new_path};

mod canvas;
mod line;
mod places;
mod positions;
mod properties;
mod resolve;
mod rewrite;
#[cfg(test)]
mod tests;

/// How a link is written, which decides how a move rewrites it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkForm {
    /// `[[target|alias]]` or `![[target]]`.
    Wiki,
    /// `[text](target)` or `![alt](target)`.
    Markdown,
    /// A property value that is a wikilink: `up: "[[target]]"`.
    Property,
    /// A canvas node of type `file`: `"file": "Folder/Note.md"`.
    CanvasFile,
}

/// One link, as Obsidian's `LinkCache` describes it, plus what a rewrite needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub form: LinkForm,
    pub embed: bool,
    /// Obsidian's `link`: the target with its `#heading` or `#^block` part, percent-decoded for
    /// markdown links, trimmed for wikilinks.
    pub link: String,
    /// Obsidian's `displayText`: the alias, the markdown link text, or the target with `#` shown as ` > `.
    pub display: String,
    /// The link exactly as written (for properties: the wikilink inside the value).
    pub original: String,
    /// Byte range of `original` in the text the link was read from.
    pub start: usize,
    pub end: usize,
    /// 1-based line of the link's start.
    pub line: usize,
    /// 0-based character offset of the link's start within its line.
    pub column: usize,
    /// The property key (`key`, `key.0` for a list item) of a property link.
    pub key: Option<String>,
}

impl Link {
    /// The path part of the link (before the first `#`), which is what resolves to a file.
    pub fn path(&self) -> &str {
        link_path(&self.link)
    }

    /// The `#heading`/`#^block` part, with its `#`, when there is one.
    pub fn subpath(&self) -> Option<&str> {
        self.link.find('#').map(|at| &self.link[at..])
    }
}

/// The path part of an Obsidian link text (before the first `#`).
pub fn link_path(link: &str) -> &str {
    match link.find('#') {
        Some(at) => &link[..at],
        None => link,
    }
}

/// Every link, embed and property link of a note, in document order (properties first).
///
/// Rules, each checked against Obsidian's own output (`../shared/oracles/obsidian-metadata-cache`):
/// - Wikilinks `[[...]]` lie on one line and are not empty; a `|` splits the alias off unless it is
///   the first character (`[[|alias]]` links to `|alias`); `\|` (inside tables) also splits.
///   The target is trimmed. `![[...]]` is an embed.
/// - Markdown links `[text](destination)` with a non-empty destination that is not a URL with a
///   scheme (`https:`, `mailto:`, `obsidian:`); `<angle brackets>` allow spaces; the destination is
///   percent-decoded; `![alt](...)` is an embed.
/// - Nothing is read inside code spans, fenced or indented code, math, HTML blocks or `<!-- -->`
///   comments. Links inside `%% %%` comments *are* read, as Obsidian's metadata cache does (the
///   `comments_markdown_style` oracle note), so a move also rewrites them.
/// - A property value (or list item) that is exactly a wikilink is a property link.
pub fn note_links(text: &str) -> Vec<Link> {
    links_of(&NoteText::read(text))
}

/// `note_links` of a note already read.
pub fn links_of(note: &NoteText) -> Vec<Link> {
    let text = note.text;
    let line_starts = line_starts(text);
    let mut links = property_links(note, &line_starts);
    let mut in_html_comment = false;
    for line in &note.lines {
        match line.kind {
            LineKind::Text | LineKind::Heading | LineKind::Comment => {
                let Some(offset) = offset_in(text, line.content) else {
                    continue;
                };
                inline_links(
                    text,
                    offset,
                    line.content,
                    &line_starts,
                    &mut in_html_comment,
                    &mut links,
                );
            }
            _ => in_html_comment = false,
        }
    }
    links
}

/// Obsidian's display text for a link without alias: `#` parts shown as ` > `, a leading `#` dropped.
fn display_of(link: &str) -> String {
    link.split('#')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" > ")
}

/// The `link` and `displayText` of a wikilink's inner text, or `None` when Obsidian reads no link.
fn parse_wikilink_inner(inner: &str) -> Option<(String, String)> {
    if inner.is_empty() {
        return None;
    }
    let (target, alias) = match inner.find('|') {
        Some(at) if at > 0 => {
            let target = &inner[..at];
            (
                target.strip_suffix('\\').unwrap_or(target),
                Some(&inner[at + 1..]),
            )
        }
        _ => (inner, None),
    };
    let link = target.trim().to_owned();
    let display = match alias {
        Some(alias) => alias.to_owned(),
        None => display_of(&link),
    };
    Some((link, display))
}
