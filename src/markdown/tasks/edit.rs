//! Text edits for tasks, as pure functions of the note's text: where a new task line goes (end of
//! the note, under a heading or Kanban lane at the top, bottom or an index, or as the last child of
//! a parent task), replacing one task line by the lines a status change leaves, and moving a task
//! with its sub-items. Line numbers are 1-based; the note's line-ending style is kept; the
//! properties block is never touched. Never panics.

use std::collections::HashSet;

use super::note::note_list_items;
use crate::markdown::{frontmatter, headings};

/// Where a new line goes inside a heading's own section (before any subsection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LanePosition {
    Top,
    Bottom,
    /// Before the item with this 0-based index among the section's top-level list items (after the
    /// last one when the index is past the end).
    Index(usize),
}

/// Where a new task goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// After the last line of the note.
    End,
    /// In the own section of the heading on this line.
    Heading { line: usize, position: LanePosition },
    /// As the last child of the list item on this line.
    Parent { line: usize },
}

/// Why an edit cannot be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskEditError {
    /// The line is outside the note or not a list item.
    NotAListItem(usize),
    /// The target is inside the moved block.
    IntoItself,
}

/// A note split into lines, remembering its line ending and final newline.
struct Lines {
    lines: Vec<String>,
    ending: &'static str,
    final_newline: bool,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let ending = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let final_newline = text.ends_with('\n');
        let lines = text
            .lines()
            .map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned())
            .collect();
        Lines {
            lines,
            ending,
            final_newline,
        }
    }

    fn text(&self) -> String {
        let mut text = self.lines.join(self.ending);
        if !self.lines.is_empty() && self.final_newline {
            text.push_str(self.ending);
        }
        text
    }
}

/// The leading white space and block-quote markers of a line.
fn prefix(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t', '>']);
    &line[..line.len() - rest.len()]
}

/// The 1-based line of the last descendant list item of the item on `line` (itself when none).
fn block_end(text: &str, line: usize) -> usize {
    let items = note_list_items(text);
    // A set: as a list, each item searched all the descendants before it, quadratic in a task
    // with many sub-items (issue 47).
    let mut ancestors = HashSet::from([line]);
    let mut end = line;
    for item in items.iter().filter(|item| item.line > line) {
        match item.parent {
            Some(parent) if ancestors.contains(&parent) => {
                ancestors.insert(item.line);
                end = item.line;
            }
            _ => break,
        }
    }
    end
}

/// The first line after the properties block (1-based).
fn body_start(text: &str) -> usize {
    frontmatter::split(text).body_start_line.max(1)
}

/// Inserts `new_lines` (already indented for the top level) at `placement`; returns the text and
/// the 1-based line the first new line landed on.
pub fn insert_lines(
    text: &str,
    new_lines: &[String],
    placement: Placement,
) -> Result<(String, usize), TaskEditError> {
    let mut lines = Lines::new(text);
    let items = note_list_items(text);
    let (at, indent) = match placement {
        Placement::End => {
            // Drop trailing blank lines' effect: append right after the last line.
            (lines.lines.len(), String::new())
        }
        Placement::Parent { line } => {
            let item = items
                .iter()
                .find(|item| item.line == line)
                .ok_or(TaskEditError::NotAListItem(line))?;
            let parent_text = lines
                .lines
                .get(item.line - 1)
                .ok_or(TaskEditError::NotAListItem(line))?;
            let parent_prefix = prefix(parent_text);
            let unit = if parent_prefix.ends_with('\t') {
                "\t"
            } else {
                "    "
            };
            (block_end(text, line), format!("{parent_prefix}{unit}"))
        }
        Placement::Heading { line, position } => {
            let note_headings = headings::headings(text);
            let section_end = note_headings
                .iter()
                .find(|heading| heading.line > line)
                .map_or(lines.lines.len() + 1, |heading| heading.line);
            // Top-level items of the heading's own section.
            let own: Vec<usize> = items
                .iter()
                .filter(|item| item.line > line && item.line < section_end && item.parent.is_none())
                .map(|item| item.line)
                .collect();
            let mut first_content = line + 1;
            // A Kanban lane's `**Complete**` marker stays right under its heading.
            while first_content < section_end
                && lines
                    .lines
                    .get(first_content - 1)
                    .is_some_and(|text| text.trim().is_empty() || text.trim() == "**Complete**")
            {
                first_content += 1;
            }
            let at = match position {
                LanePosition::Top => own.first().map_or(first_content - 1, |first| first - 1),
                LanePosition::Index(index) if index < own.len() => own[index] - 1,
                LanePosition::Bottom | LanePosition::Index(_) => match own.last() {
                    Some(last) => block_end(text, *last),
                    None => {
                        // No list yet: after the last non-blank line of the section.
                        let mut last = line;
                        for candidate in line + 1..section_end {
                            if lines
                                .lines
                                .get(candidate - 1)
                                .is_some_and(|text| !text.trim().is_empty())
                            {
                                last = candidate;
                            }
                        }
                        last
                    }
                },
            };
            (at, String::new())
        }
    };
    let at = at.clamp(body_start(text) - 1, lines.lines.len());
    let indented: Vec<String> = new_lines
        .iter()
        .map(|line| format!("{indent}{line}"))
        .collect();
    let count = indented.len();
    lines.lines.splice(at..at, indented);
    if count > 0 && at + count == lines.lines.len() {
        lines.final_newline = true;
    }
    Ok((lines.text(), at + 1))
}

/// Replaces the line `line` with `new_lines` (none deletes it).
pub fn replace_line(text: &str, line: usize, new_lines: &[String]) -> Option<String> {
    let mut lines = Lines::new(text);
    if line == 0 || line > lines.lines.len() {
        return None;
    }
    lines
        .lines
        .splice(line - 1..line, new_lines.iter().cloned());
    Some(lines.text())
}

/// The task on `line` with its sub-items, as lines relative to the task's own indentation, and the
/// text without them.
pub fn cut_block(text: &str, line: usize) -> Result<(Vec<String>, String, usize), TaskEditError> {
    let mut lines = Lines::new(text);
    if line == 0 || line > lines.lines.len() {
        return Err(TaskEditError::NotAListItem(line));
    }
    let end = block_end(text, line);
    let own_prefix = prefix(&lines.lines[line - 1]).to_owned();
    let block: Vec<String> = lines
        .lines
        .drain(line - 1..end)
        .map(|text| {
            text.strip_prefix(&own_prefix)
                .map(str::to_owned)
                .unwrap_or(text)
        })
        .collect();
    Ok((block, lines.text(), end + 1 - line))
}

/// The 1-based line of the last line of the block starting at `line` (the task and its sub-items).
pub fn block_last_line(text: &str, line: usize) -> usize {
    block_end(text, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|line| (*line).to_owned()).collect()
    }

    #[test]
    fn placements() {
        let text = "# A\n\n- [ ] one\n    - [ ] child\n- [ ] two\n\n## B\ntext\n";
        let (edited, line) = insert_lines(
            text,
            &owned(&["- [ ] new"]),
            Placement::Heading {
                line: 1,
                position: LanePosition::Bottom,
            },
        )
        .expect("insert");
        assert_eq!(line, 6);
        assert_eq!(
            edited,
            "# A\n\n- [ ] one\n    - [ ] child\n- [ ] two\n- [ ] new\n\n## B\ntext\n"
        );
        let (edited, line) =
            insert_lines(text, &owned(&["- [ ] sub"]), Placement::Parent { line: 3 })
                .expect("insert");
        assert_eq!(line, 5);
        assert!(edited.contains("    - [ ] child\n    - [ ] sub\n- [ ] two"));
        let (edited, _) = insert_lines(
            text,
            &owned(&["- [ ] first"]),
            Placement::Heading {
                line: 1,
                position: LanePosition::Index(1),
            },
        )
        .expect("insert");
        assert!(edited.contains("    - [ ] child\n- [ ] first\n- [ ] two"));
        let (edited, line) =
            insert_lines("no newline", &owned(&["- [ ] x"]), Placement::End).expect("insert");
        assert_eq!((edited.as_str(), line), ("no newline\n- [ ] x\n", 2));
        let crlf = "- [ ] a\r\n";
        let (edited, _) = insert_lines(crlf, &owned(&["- [ ] b"]), Placement::End).expect("insert");
        assert_eq!(edited, "- [ ] a\r\n- [ ] b\r\n");
    }

    #[test]
    fn cut_and_replace() {
        let text = "- [ ] one\n    - [ ] child\n- [ ] two\n";
        let (block, rest, count) = cut_block(text, 1).expect("cut");
        assert_eq!(block, owned(&["- [ ] one", "    - [ ] child"]));
        assert_eq!((rest.as_str(), count), ("- [ ] two\n", 2));
        assert_eq!(
            replace_line(text, 3, &[]).as_deref(),
            Some("- [ ] one\n    - [ ] child\n")
        );
    }

    #[test]
    fn r47_a_task_with_many_sub_items_is_cut_whole() {
        // Each grandchild's parent was searched for among all the descendants before it.
        const PAIRS: usize = 50_000;
        let pair = "    - [ ] child\n        - [ ] grandchild\n";
        let text = format!("- [ ] parent\n{}- [ ] next\n", pair.repeat(PAIRS));
        assert_eq!(block_last_line(&text, 1), 2 * PAIRS + 1);
        let (block, rest, count) = cut_block(&text, 1).expect("cut");
        assert_eq!(
            (block.len(), count, rest.as_str()),
            (2 * PAIRS + 1, 2 * PAIRS + 1, "- [ ] next\n")
        );
    }
}
