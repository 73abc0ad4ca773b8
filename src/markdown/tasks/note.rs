//! The tasks and list items of a whole note, with their place in it: 1-based line, the heading
//! above, nesting depth and parent list item (as Obsidian's metadata cache nests `listItems`), and
//! for Kanban boards (`kanban-plugin` in the properties) the lane, which is the heading above, and
//! whether that lane is the board's `**Complete**` lane. Lines in code, math, comments, HTML and the
//! properties block are never tasks. Pure and total.

use super::line::{Task, TaskSettings, parse_task_line};
use crate::markdown::blocks::{self, Line, LineKind};
use crate::markdown::note::NoteText;
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// One list item (task or not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListItem {
    /// 1-based line.
    pub line: usize,
    /// 1-based line of the enclosing list item; `None` at the top of a list.
    pub parent: Option<usize>,
    /// 1-based line of the first item of the list this item belongs to.
    pub list_start: usize,
    /// The checkbox symbol when the item has one.
    pub checkbox: Option<String>,
    /// 0 for a top-level item, 1 for its children, ...
    pub depth: usize,
}

/// One task of a note with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteTask {
    pub line: usize,
    pub task: Task,
    /// Text of the nearest heading above, if any.
    pub heading: Option<String>,
    /// Line of that heading.
    pub heading_line: Option<usize>,
    pub depth: usize,
    /// Line of the enclosing list item, if any.
    pub parent_line: Option<usize>,
    /// For a Kanban board: the lane (the heading above).
    pub lane: Option<String>,
    /// For a Kanban board: whether the lane is marked `**Complete**`.
    pub lane_complete: bool,
}

static LIST_ITEM: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^((?:[ \t]*>)*)([ \t]*)([-*+]|[0-9]{1,9}[.)])([ \t]+|$)(\[(.)\])?").ok()
});

static CHECKBOX_LINE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t>]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]+\[.\]").ok());

/// Columns of leading white space with tab stops of 4.
fn columns(text: &str) -> usize {
    let mut column = 0;
    for character in text.chars() {
        match character {
            '\t' => column += 4 - column % 4,
            ' ' => column += 1,
            _ => break,
        }
    }
    column
}

struct Open {
    line: usize,
    content_column: usize,
    depth: usize,
}

/// Every list item of a note, in order.
pub fn note_list_items(text: &str) -> Vec<ListItem> {
    list_items(text, &blocks::scan(text).lines)
}

/// `note_list_items` from the note's block scan.
fn list_items(text: &str, scanned: &[Line]) -> Vec<ListItem> {
    let mut items = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut quote_depth = 0usize;
    let mut list_start = 0usize;
    let mut list_open = false;
    let mut previous_text = false;
    let mut previous_blank = false;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let kind = scanned
            .get(index)
            .filter(|line| line.number == number)
            .map(|line| line.kind)
            .unwrap_or(LineKind::Text);
        if kind == LineKind::Frontmatter {
            continue;
        }
        let item = if matches!(kind, LineKind::Text | LineKind::Blank) && may_be_list_item(raw) {
            LIST_ITEM.as_ref().and_then(|regex| regex.captures(raw))
        } else {
            None
        };
        if let Some(found) = item {
            let quotes = found.get(1).map_or(0, |q| q.as_str().matches('>').count());
            if quotes != quote_depth {
                stack.clear();
                list_open = false;
                quote_depth = quotes;
            }
            let indent = found.get(2).map_or(0, |i| columns(i.as_str()));
            let marker_width = found.get(3).map_or(1, |m| m.as_str().chars().count());
            let gap = found.get(4).map_or(1, |g| columns(g.as_str()).clamp(1, 4));
            while stack
                .last()
                .is_some_and(|open| indent < open.content_column)
            {
                stack.pop();
            }
            if !list_open {
                list_start = number;
                list_open = true;
            }
            let parent = stack.last().map(|open| open.line);
            let depth = stack.last().map_or(0, |open| open.depth + 1);
            items.push(ListItem {
                line: number,
                parent,
                list_start,
                checkbox: found.get(6).map(|symbol| symbol.as_str().to_owned()),
                depth,
            });
            stack.push(Open {
                line: number,
                content_column: indent + marker_width + gap,
                depth,
            });
            previous_text = true;
            previous_blank = false;
            continue;
        }
        if raw.trim().is_empty() {
            previous_blank = true;
            previous_text = false;
            continue;
        }
        // Any other line closes the items it is not indented into, unless it lazily continues the
        // paragraph right above it.
        let body = raw.trim_start_matches(['>', ' ', '\t']);
        let quotes = raw.len() - body.len();
        let quotes = raw[..quotes].matches('>').count();
        let lazy = previous_text && !previous_blank && kind == LineKind::Text;
        if kind == LineKind::Heading || quotes != quote_depth {
            stack.clear();
            list_open = false;
        } else if !lazy {
            let after_quotes = raw
                .char_indices()
                .filter(|(_, c)| *c == '>')
                .nth(quotes.saturating_sub(1))
                .map_or(
                    raw,
                    |(at, _)| if quotes == 0 { raw } else { &raw[at + 1..] },
                );
            let indent = columns(after_quotes);
            while stack
                .last()
                .is_some_and(|open| indent < open.content_column)
            {
                stack.pop();
            }
            if stack.is_empty() {
                list_open = false;
            }
        }
        previous_text = kind == LineKind::Text;
        previous_blank = false;
    }
    items
}

/// What `LIST_ITEM` needs before its marker, checked without the regex: most lines are prose.
fn may_be_list_item(raw: &str) -> bool {
    matches!(
        raw.trim_start_matches([' ', '\t', '>']).as_bytes().first(),
        Some(b'-' | b'*' | b'+' | b'0'..=b'9')
    )
}

/// A checkbox list item and its place, whatever the plugin settings: what the index stores, so a
/// change to the global filter or the statuses needs no re-index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSite {
    pub line: usize,
    /// The whole line as written (without its line ending).
    pub text: String,
    pub heading: Option<String>,
    pub heading_line: Option<usize>,
    pub depth: usize,
    pub parent_line: Option<usize>,
    pub lane: Option<String>,
    pub lane_complete: bool,
}

/// Every checkbox list item of a note, in order, with its place.
pub fn note_task_sites(text: &str) -> Vec<TaskSite> {
    // Most notes have no checkbox at all: one cheap look spares them the block scan.
    if !has_checkbox_line(text) {
        return Vec::new();
    }
    sites(&NoteText::read(text))
}

fn has_checkbox_line(text: &str) -> bool {
    CHECKBOX_LINE
        .as_ref()
        .is_some_and(|regex| regex.is_match(text))
}

/// `note_task_sites` of a note already read.
pub fn task_sites_of(note: &NoteText) -> Vec<TaskSite> {
    if !has_checkbox_line(note.text) {
        return Vec::new();
    }
    sites(note)
}

/// The sites of a note known to have a checkbox line.
fn sites(note: &NoteText) -> Vec<TaskSite> {
    let text = note.text;
    let items = list_items(text, &note.lines);
    if items.iter().all(|item| item.checkbox.is_none()) {
        return Vec::new();
    }
    let note_headings = &note.headings;
    // Whether the properties block declares a Kanban board.
    let kanban = note.properties.contains_key("kanban-plugin");
    let lines: Vec<&str> = text.lines().collect();
    let complete_lanes: HashSet<usize> = if kanban {
        let marked = complete_before_next_hash(&lines);
        note_headings
            .iter()
            .filter(|heading| marked.get(heading.line).copied().unwrap_or(false))
            .map(|heading| heading.line)
            .collect()
    } else {
        HashSet::new()
    };
    let mut sites = Vec::new();
    // Items come in line order, so the headings above each are a longer prefix of the list than
    // those above the one before: the prefix grows as the items go, never searched from the first
    // heading again (quadratic in a note of many headings and many tasks, issue 47).
    let mut above = 0;
    for item in items.iter().filter(|item| item.checkbox.is_some()) {
        let Some(raw) = lines.get(item.line.saturating_sub(1)) else {
            continue;
        };
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        while note_headings
            .get(above)
            .is_some_and(|heading| heading.line < item.line)
        {
            above += 1;
        }
        let heading = above
            .checked_sub(1)
            .and_then(|last| note_headings.get(last));
        sites.push(TaskSite {
            line: item.line,
            text: raw.to_owned(),
            heading: heading.map(|heading| heading.text.clone()),
            heading_line: heading.map(|heading| heading.line),
            depth: item.depth,
            parent_line: item.parent,
            lane: heading
                .filter(|_| kanban)
                .map(|heading| heading.text.clone()),
            lane_complete: heading.is_some_and(|heading| complete_lanes.contains(&heading.line)),
        });
    }
    sites
}

/// For each line (0-based), whether a `**Complete**` line lies at or after it before the next line
/// starting with `#`: a Kanban lane is complete when such a line follows its heading. Found in one
/// pass from the end; reading on from each heading was quadratic in a board of setext lanes, whose
/// headings start with no `#` (issue 47).
fn complete_before_next_hash(lines: &[&str]) -> Vec<bool> {
    let mut marked = vec![false; lines.len()];
    let mut complete_ahead = false;
    for (index, line) in lines.iter().enumerate().rev() {
        complete_ahead = if line.starts_with('#') {
            false
        } else {
            complete_ahead || line.trim() == "**Complete**"
        };
        if let Some(slot) = marked.get_mut(index) {
            *slot = complete_ahead;
        }
    }
    marked
}

impl TaskSite {
    /// The task on this line under the given settings, if the plugin would see one.
    pub fn task(&self, settings: &TaskSettings) -> Option<NoteTask> {
        let task = parse_task_line(&self.text, settings)?;
        Some(NoteTask {
            line: self.line,
            task,
            heading: self.heading.clone(),
            heading_line: self.heading_line,
            depth: self.depth,
            parent_line: self.parent_line,
            lane: self.lane.clone(),
            lane_complete: self.lane_complete,
        })
    }
}

/// The tasks of a note, in order.
pub fn note_tasks(text: &str, settings: &TaskSettings) -> Vec<NoteTask> {
    note_task_sites(text)
        .iter()
        .filter_map(|site| site.task(settings))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_and_places() {
        let text = "# Plan\n\n- [ ] a\n    - [x] b\n        - c\n    - [ ] d\n- [ ] e\n\n```\n- [ ] code\n```\n%%\n- [ ] hidden\n%%\n";
        let tasks = note_tasks(text, &TaskSettings::default());
        let summary: Vec<(usize, usize, Option<usize>)> = tasks
            .iter()
            .map(|task| (task.line, task.depth, task.parent_line))
            .collect();
        assert_eq!(
            summary,
            vec![(3, 0, None), (4, 1, Some(3)), (6, 1, Some(3)), (7, 0, None)]
        );
        assert!(
            tasks
                .iter()
                .all(|task| task.heading.as_deref() == Some("Plan"))
        );
    }

    #[test]
    fn kanban_lanes() {
        let text = "---\nkanban-plugin: basic\n---\n\n## Todo\n\n- [ ] one\n\n## Done\n\n**Complete**\n- [x] two\n";
        let tasks = note_tasks(text, &TaskSettings::default());
        assert_eq!(tasks[0].lane.as_deref(), Some("Todo"));
        assert!(!tasks[0].lane_complete);
        assert_eq!(tasks[1].lane.as_deref(), Some("Done"));
        assert!(tasks[1].lane_complete);
    }

    #[test]
    fn r47_many_headings_and_many_tasks_each_find_their_heading() {
        // Each task looked for its heading from the note's first one: minutes at this size.
        const COUNT: usize = 50_000;
        let headings: String = (0..COUNT).map(|index| format!("# h{index}\n")).collect();
        let sites = note_task_sites(&format!("{headings}{}", "- [ ] t\n".repeat(COUNT)));
        assert_eq!(sites.len(), COUNT);
        let last = format!("h{}", COUNT - 1);
        assert!(sites.iter().all(|site| {
            site.heading.as_deref() == Some(last.as_str()) && site.heading_line == Some(COUNT)
        }));
        let interleaved: String = (0..COUNT)
            .map(|index| format!("# h{index}\n- [ ] t\n"))
            .collect();
        let sites = note_task_sites(&interleaved);
        assert_eq!(sites.len(), COUNT);
        for (index, site) in sites.iter().enumerate() {
            assert_eq!(site.heading.as_deref(), Some(format!("h{index}").as_str()));
            assert_eq!(site.heading_line, Some(2 * index + 1));
        }
    }

    #[test]
    fn r47_a_board_of_many_lanes_marks_the_complete_ones() {
        // Each lane was read on to the next line starting with `#`; setext lanes have none, so
        // each read to the end of the board: minutes at this size. A `**Complete**` line with no
        // `#` line before it marks every such lane above it, as it did.
        const COUNT: usize = 20_000;
        let board = |lane: &dyn Fn(usize) -> String| {
            let lanes: String = (0..COUNT)
                .map(|index| format!("{}- [ ] t\n\n", lane(index)))
                .collect();
            format!(
                "---\nkanban-plugin: basic\n---\n{lanes}{}**Complete**\n- [x] d\n",
                lane(COUNT)
            )
        };
        let setext = note_task_sites(&board(&|index| format!("lane {index}\n=\n")));
        assert_eq!(setext.len(), COUNT + 1);
        assert!(setext.iter().all(|site| site.lane_complete));
        assert_eq!(setext[7].lane.as_deref(), Some("lane 7"));
        let atx = note_task_sites(&board(&|index| format!("## lane {index}\n")));
        assert_eq!(atx.len(), COUNT + 1);
        let complete: Vec<usize> = atx
            .iter()
            .enumerate()
            .filter(|(_, site)| site.lane_complete)
            .map(|(index, _)| index)
            .collect();
        assert_eq!(complete, vec![COUNT]);
    }
}
