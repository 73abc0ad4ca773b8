//! Memory files: plain notes in which agents keep dated facts about the user, one bullet per fact.
//!
//! ```text
//! ---
//! entry-policy: living
//! ---
//! > [!info] Scope of this file
//! > Routines the user follows now; an entry that no longer holds may be removed.
//!
//! ## Mornings
//! - 2026-11-30 — Runs before breakfast on weekdays.
//! - 2026-10-02 — Reads the news over coffee.
//! ```
//!
//! A file is read into lines that keep their exact bytes, so rendering an untouched file gives it
//! back byte for byte and an edit changes only the line it adds or removes. The reading is
//! lenient: a bullet whose text starts with a date (`2026-11-30`, optionally in `**` and followed
//! by `—`, `–`, `-` or `:`) is an entry; everything else is kept as written.

use std::ops::Range;

use super::frontmatter;

/// How a memory file treats its entries, from its `entry-policy` property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryPolicy {
    /// Every entry was true when written and stays: a timeline (the default).
    Timeline,
    /// A snapshot of how things are now: entries that no longer hold may be removed.
    Living,
}

impl EntryPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryPolicy::Timeline => "timeline",
            EntryPolicy::Living => "living",
        }
    }
}

/// One dated entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub text: String,
    /// 1-based line number in the file.
    pub line: usize,
}

/// A `##` section and its entries, in file order (newest first when Quire wrote them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub entries: Vec<Entry>,
}

/// What a memory file says about itself and holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// The text of the `> [!info] Scope of this file` callout, lines joined by spaces.
    pub scope: Option<String>,
    pub policy: EntryPolicy,
    pub sections: Vec<Section>,
}

/// Why an edit of a memory file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryEditError {
    #[error("{field} must be one line; remove the line breaks and retry")]
    LineBreak { field: &'static str },
    #[error("{field} is empty; give some text")]
    Empty { field: &'static str },
    #[error("date {0:?} is not a date; give it as YYYY-MM-DD")]
    BadDate(String),
    #[error(
        "section {0:?} has no entry dated {1} with that text; read the section with vault_get_memory and copy the entry exactly"
    )]
    NoSuchEntry(String, String),
    #[error(
        "{count} lines of section {section:?} match that entry; it is ambiguous, so nothing was deleted. Edit the file by hand to tell them apart"
    )]
    Ambiguous { section: String, count: usize },
    #[error("section {0:?} does not exist in this file")]
    NoSuchSection(String),
}

/// The result of an edit that may have nothing to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edited {
    Changed(String),
    /// The edit was already made (an identical entry exists): the text stays as it is.
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum LineKind {
    Other,
    /// A `## ` heading, with its name.
    Section(String),
    Entry {
        date: String,
        text: String,
    },
}

#[derive(Debug, Clone)]
struct Line {
    /// Byte range in the text, line ending included.
    span: Range<usize>,
    kind: LineKind,
}

/// Reads a memory file. Never fails: lines that are not headings or entries are kept as text.
pub fn parse(text: &str) -> MemoryFile {
    let lines = lines(text);
    let split = frontmatter::split(text);
    let policy = split
        .yaml
        .and_then(|yaml| {
            yaml.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == "entry-policy").then(|| value.trim().trim_matches(['"', '\'']))
            })
        })
        .filter(|value| value.eq_ignore_ascii_case("living"))
        .map_or(EntryPolicy::Timeline, |_| EntryPolicy::Living);
    let body_start = text.len() - split.body.len();
    let mut sections: Vec<Section> = Vec::new();
    for (number, line) in lines.iter().enumerate() {
        match &line.kind {
            LineKind::Section(name) => sections.push(Section {
                name: name.clone(),
                entries: Vec::new(),
            }),
            LineKind::Entry { date, text } => {
                if let Some(section) = sections.last_mut() {
                    section.entries.push(Entry {
                        date: date.clone(),
                        text: text.clone(),
                        line: number + 1,
                    });
                }
            }
            LineKind::Other => {}
        }
    }
    MemoryFile {
        scope: scope(&text[body_start..]),
        policy,
        sections,
    }
}

/// The one line Quire writes for an entry.
pub fn render_entry(date: &str, text: &str) -> String {
    format!("- {date} — {text}")
}

/// Checks one field of an entry: non-empty, one line.
pub fn check_field(field: &'static str, value: &str) -> Result<(), MemoryEditError> {
    if value.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return Err(MemoryEditError::LineBreak { field });
    }
    if value.trim().is_empty() {
        return Err(MemoryEditError::Empty { field });
    }
    Ok(())
}

/// Checks a `YYYY-MM-DD` date (the calendar check belongs to the caller, who has a date library).
pub fn check_date(date: &str) -> Result<(), MemoryEditError> {
    check_field("date", date)?;
    if !is_date(date) {
        return Err(MemoryEditError::BadDate(date.to_owned()));
    }
    Ok(())
}

/// Adds an entry as the first (newest) of `section`, creating the section at the end of the
/// file when it does not exist. An identical entry (same date and text) already in the section
/// makes this a no-op, so a retried call never writes the entry twice.
pub fn add_entry(
    text: &str,
    section: &str,
    date: &str,
    entry: &str,
) -> Result<Edited, MemoryEditError> {
    check_field("section", section)?;
    check_field("entry", entry)?;
    check_date(date)?;
    let (section, entry) = (section.trim(), entry.trim());
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let rendered = render_entry(date, entry);
    let (lines, open_fence) = lines_and_open_fence(text);
    let Some(heading) = find_section(&lines, section) else {
        let mut out = text.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(newline);
        }
        // A code block left open runs to the end of the file and would swallow the new
        // section: close it first.
        if let Some((marker, count)) = open_fence {
            out.push_str(&marker.to_string().repeat(count));
            out.push_str(newline);
        }
        if !out.trim().is_empty() {
            out.push_str(newline);
        }
        out.push_str(&format!("## {section}{newline}{rendered}{newline}"));
        return Ok(Edited::Changed(out));
    };
    let body = section_body(&lines, heading);
    let exists = lines[body.clone()].iter().any(|line| {
        matches!(&line.kind, LineKind::Entry { date: d, text: t } if d == date && t == entry)
    });
    if exists {
        return Ok(Edited::Unchanged);
    }
    // Before the first entry, or else after the heading and the lines that describe the
    // section, so a section's own preface stays on top.
    let at = lines[body.clone()]
        .iter()
        .find(|line| matches!(line.kind, LineKind::Entry { .. }))
        .map(|line| line.span.start)
        .unwrap_or_else(|| {
            lines[heading + 1..body.end]
                .iter()
                .rev()
                .find(|line| !text[line.span.clone()].trim().is_empty())
                .map_or(lines[heading].span.end, |line| line.span.end)
        });
    let mut out = String::with_capacity(text.len() + rendered.len() + 2);
    out.push_str(&text[..at]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(newline);
    }
    out.push_str(&rendered);
    out.push_str(newline);
    out.push_str(&text[at..]);
    Ok(Edited::Changed(out))
}

/// Removes the one entry of `section` with this date and text. Refuses when none or more than
/// one line matches, so a delete never removes the wrong fact.
pub fn delete_entry(
    text: &str,
    section: &str,
    date: &str,
    entry: &str,
) -> Result<String, MemoryEditError> {
    check_field("section", section)?;
    check_field("entry", entry)?;
    check_date(date)?;
    let (section, entry) = (section.trim(), entry.trim());
    let lines = lines(text);
    let heading =
        find_section(&lines, section).ok_or(MemoryEditError::NoSuchSection(section.to_owned()))?;
    let matching: Vec<&Line> = lines[section_body(&lines, heading)]
        .iter()
        .filter(|line| {
            matches!(&line.kind, LineKind::Entry { date: d, text: t } if d == date && t == entry)
        })
        .collect();
    match matching.as_slice() {
        [] => Err(MemoryEditError::NoSuchEntry(
            section.to_owned(),
            date.to_owned(),
        )),
        [line] => Ok(format!(
            "{}{}",
            &text[..line.span.start],
            &text[line.span.end..]
        )),
        more => Err(MemoryEditError::Ambiguous {
            section: section.to_owned(),
            count: more.len(),
        }),
    }
}

/// The scope callout's text, when the body opens with one (blank lines before it allowed).
fn scope(body: &str) -> Option<String> {
    let mut lines = body.lines().skip_while(|line| line.trim().is_empty());
    let first = lines.next()?.trim();
    let rest = first.strip_prefix('>')?.trim();
    let title = rest.strip_prefix("[!info]")?.trim();
    let title = title
        .strip_prefix('-')
        .or_else(|| title.strip_prefix('+'))
        .unwrap_or(title)
        .trim();
    let mut parts = Vec::new();
    if !title.eq_ignore_ascii_case("Scope of this file") && !title.is_empty() {
        parts.push(title.to_owned());
    }
    for line in lines {
        let Some(quoted) = line.trim_start().strip_prefix('>') else {
            break;
        };
        let quoted = quoted.trim();
        if !quoted.is_empty() {
            parts.push(quoted.to_owned());
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn find_section(lines: &[Line], name: &str) -> Option<usize> {
    lines
        .iter()
        .position(|line| matches!(&line.kind, LineKind::Section(found) if found == name))
}

/// The lines after heading `heading` up to the next `##` (or higher) heading.
fn section_body(lines: &[Line], heading: usize) -> Range<usize> {
    let end = lines[heading + 1..]
        .iter()
        .position(|line| matches!(line.kind, LineKind::Section(_)))
        .map_or(lines.len(), |offset| heading + 1 + offset);
    heading + 1..end
}

/// Every line with its kind; headings and entries inside code fences are plain text.
fn lines(text: &str) -> Vec<Line> {
    lines_and_open_fence(text).0
}

/// `lines`, and the fence still open at the end of the text (which runs to the end of the file,
/// as in Obsidian), with its marker and length.
fn lines_and_open_fence(text: &str) -> (Vec<Line>, Option<(char, usize)>) {
    let body_start = text.len() - frontmatter::split(text).body.len();
    let mut fence: Option<(char, usize)> = None;
    let mut out = Vec::new();
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let span = at..at + raw.len();
        at += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let kind = if span.start < body_start {
            LineKind::Other
        } else if let Some(marker) = fence_marker(line) {
            match fence {
                Some((open, count)) if open == marker.0 && marker.1 >= count => fence = None,
                Some(_) => {}
                None => fence = Some(marker),
            }
            LineKind::Other
        } else if fence.is_some() {
            LineKind::Other
        } else if let Some(name) = line.strip_prefix("## ") {
            LineKind::Section(name.trim().trim_end_matches('#').trim_end().to_owned())
        } else {
            entry(line).map_or(LineKind::Other, |(date, text)| LineKind::Entry {
                date: date.to_owned(),
                text: text.to_owned(),
            })
        };
        out.push(Line { span, kind });
    }
    (out, fence)
}

fn fence_marker(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start();
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = trimmed.chars().take_while(|c| *c == marker).count();
    (count >= 3).then_some((marker, count))
}

/// A top-level bullet that starts with a date: its date and the text after the separator.
fn entry(line: &str) -> Option<(&str, &str)> {
    let rest = ["- ", "* ", "+ "]
        .iter()
        .find_map(|bullet| line.strip_prefix(bullet))?;
    let rest = rest.trim_start();
    let (bold, rest) = match rest.strip_prefix("**") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let date = rest.get(..10).filter(|date| is_date(date))?;
    let mut rest = &rest[10..];
    if bold {
        rest = rest.strip_prefix("**")?;
    }
    let rest = rest.trim_start();
    let rest = ["—", "–", "-", ":"]
        .iter()
        .find_map(|separator| rest.strip_prefix(separator))
        .unwrap_or(rest);
    let text = rest.trim();
    (!text.is_empty()).then_some((date, text))
}

fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "---\nentry-policy: living\n---\n> [!info] Scope of this file\n> Routines the user\n> follows now.\n\n## Mornings\nWhat the user does before work.\n\n- 2026-11-30 — Runs before breakfast.\n- **2026-10-02**: Reads the news.\n\n## Evenings\n- 2026-09-01 - Cooks.\n```\n## not a section\n- 2026-01-01 — not an entry\n```\n";

    #[test]
    fn reads_scope_policy_sections_and_entries() {
        let file = parse(FILE);
        assert_eq!(
            file.scope.as_deref(),
            Some("Routines the user follows now.")
        );
        assert_eq!(file.policy, EntryPolicy::Living);
        let names: Vec<_> = file.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Mornings", "Evenings"]);
        assert_eq!(
            file.sections[0].entries,
            [
                Entry {
                    date: "2026-11-30".into(),
                    text: "Runs before breakfast.".into(),
                    line: 11
                },
                Entry {
                    date: "2026-10-02".into(),
                    text: "Reads the news.".into(),
                    line: 12
                },
            ]
        );
        assert_eq!(file.sections[1].entries.len(), 1);
        assert_eq!(
            parse("## A\n- 2026-01-01 x\n").policy,
            EntryPolicy::Timeline
        );
    }

    #[test]
    fn a_new_entry_goes_on_top_of_its_section_and_nothing_else_moves() {
        let Ok(Edited::Changed(out)) = add_entry(FILE, "Mornings", "2026-12-01", "Stretches.")
        else {
            panic!("expected a change");
        };
        assert_eq!(
            out,
            FILE.replace(
                "- 2026-11-30 — Runs",
                "- 2026-12-01 — Stretches.\n- 2026-11-30 — Runs"
            )
        );
        // The same call again (a client retry) changes nothing.
        assert_eq!(
            add_entry(&out, "Mornings", "2026-12-01", "Stretches."),
            Ok(Edited::Unchanged)
        );
    }

    #[test]
    fn sections_are_created_and_prefaces_kept() {
        let Ok(Edited::Changed(out)) =
            add_entry("## Empty\nA preface.\n\n", "Empty", "2026-12-01", "x")
        else {
            panic!("expected a change");
        };
        assert_eq!(out, "## Empty\nA preface.\n- 2026-12-01 — x\n\n");
        let Ok(Edited::Changed(out)) = add_entry("intro", "New", "2026-12-01", "y") else {
            panic!("expected a change");
        };
        assert_eq!(out, "intro\n\n## New\n- 2026-12-01 — y\n");
        let Ok(Edited::Changed(out)) = add_entry("a\r\nb\r\n", "New", "2026-12-01", "y") else {
            panic!("expected a change");
        };
        assert_eq!(out, "a\r\nb\r\n\r\n## New\r\n- 2026-12-01 — y\r\n");
    }

    #[test]
    fn deletes_remove_exactly_one_line_or_nothing() {
        let out = delete_entry(FILE, "Mornings", "2026-10-02", "Reads the news.");
        assert_eq!(
            out,
            Ok(FILE.replace("- **2026-10-02**: Reads the news.\n", ""))
        );
        assert!(matches!(
            delete_entry(FILE, "Evenings", "2026-10-02", "Reads the news."),
            Err(MemoryEditError::NoSuchEntry(..))
        ));
        let twice = "## A\n- 2026-01-01 — x\n- 2026-01-01: x\n";
        assert_eq!(
            delete_entry(twice, "A", "2026-01-01", "x"),
            Err(MemoryEditError::Ambiguous {
                section: "A".into(),
                count: 2
            })
        );
    }

    #[test]
    fn fields_with_line_breaks_or_bad_dates_are_refused() {
        for (section, date, entry) in [
            ("A\nB", "2026-01-01", "x"),
            ("A", "2026-01-01", "x\ny"),
            ("A", "2026-01-01", "x\r"),
            ("A", "01/02/2026", "x"),
            ("A", "2026-01-01", " "),
        ] {
            assert!(
                add_entry("", section, date, entry).is_err(),
                "{section:?} {date:?} {entry:?}"
            );
        }
    }

    fn memoryish() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            Just("## ".to_owned()),
            Just("- ".to_owned()),
            Just("**".to_owned()),
            Just("2026-11-30".to_owned()),
            Just(" — ".to_owned()),
            Just("> [!info] Scope of this file\n".to_owned()),
            Just("---\n".to_owned()),
            Just("```\n".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            any::<char>().prop_map(String::from),
            "[a-z :]{0,5}",
        ];
        prop::collection::vec(fragment, 0..40).prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn an_added_entry_reads_back_and_deleting_it_restores_the_text(text in memoryish()) {
            let _ = parse(&text);
            if let Ok(Edited::Changed(out)) = add_entry(&text, "Fresh section", "2026-12-01", "a new fact") {
                let file = parse(&out);
                let section = file.sections.iter().find(|s| s.name == "Fresh section");
                prop_assert!(section.is_some_and(|s| s.entries.iter().any(|e| e.text == "a new fact")));
                if text.contains("Fresh section") {
                    return Ok(());
                }
                let removed = delete_entry(&out, "Fresh section", "2026-12-01", "a new fact");
                prop_assert!(removed.is_ok());
            }
        }

        #[test]
        fn adding_then_deleting_in_an_existing_section_gives_back_the_same_bytes(text in memoryish()) {
            let text = format!("{text}\n## Kept\n");
            if !parse(&text).sections.iter().any(|s| s.name == "Kept") {
                // Inside an unclosed code block: not a section (covered by the other property).
                return Ok(());
            }
            match add_entry(&text, "Kept", "2026-12-01", "a new fact") {
                Ok(Edited::Changed(out)) => {
                    let back = delete_entry(&out, "Kept", "2026-12-01", "a new fact");
                    prop_assert_eq!(back, Ok(text));
                }
                // The text already had that entry under a `## Kept` heading.
                Ok(Edited::Unchanged) => {}
                Err(error) => prop_assert!(false, "{}", error),
            }
        }
    }
}
