//! Completions of prompt arguments and of the `note://` template: note paths by prefix, memory
//! file names, and dates of recent daily notes, each limited to what the caller may read.
//!
//! Matching ignores case. Paths come from the index (never a walk of the disk), so a completion
//! costs one indexed read and a filter however large the vault.

use std::collections::HashSet;

use super::error::OpsError;
use super::shared::{Context, Ops};
use crate::index::NoteFilter;

/// The most values one completion returns (the MCP limit).
pub const MAX_COMPLETIONS: usize = 100;
/// How many days back the date completion looks for daily notes.
const DAILY_DAYS_BACK: i32 = 60;

/// Values for a completion, best first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completions {
    pub values: Vec<String>,
    /// True when more values match than are returned.
    pub has_more: bool,
}

impl Completions {
    /// Collects up to `MAX_COMPLETIONS` values, noting whether more were offered.
    fn from(values: impl Iterator<Item = String>) -> Completions {
        let mut out = Completions::default();
        for value in values {
            if out.values.len() == MAX_COMPLETIONS {
                out.has_more = true;
                break;
            }
            out.values.push(value);
        }
        out
    }
}

/// Whether `text` starts with `prefix`, ignoring case; allocation-free, since it runs on every
/// path of the vault.
fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    if prefix.is_ascii() {
        return text
            .as_bytes()
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()));
    }
    let mut text = text.chars().flat_map(char::to_lowercase);
    prefix
        .chars()
        .flat_map(char::to_lowercase)
        .all(|wanted| text.next() == Some(wanted))
}

impl Ops {
    /// Note paths the caller may read: those starting with `prefix` in path order, then those
    /// whose file name starts with it.
    pub fn complete_note_path(&self, ctx: &Context, prefix: &str) -> Result<Completions, OpsError> {
        let visibility = self.visibility(ctx);
        let paths = self
            .walls
            .index(&visibility)
            .note_paths(&NoteFilter::default())?;
        let by_path = paths
            .iter()
            .filter(|path| starts_with_ignoring_case(path, prefix));
        let by_name = paths.iter().filter(|path| {
            let name = path
                .rsplit_once('/')
                .map_or(path.as_str(), |(_, name)| name);
            name.len() != path.len()
                && !prefix.is_empty()
                && starts_with_ignoring_case(name, prefix)
                && !starts_with_ignoring_case(path, prefix)
        });
        Ok(Completions::from(
            by_path
                .chain(by_name)
                .filter(|path| visibility.shows(path))
                .cloned(),
        ))
    }

    /// Names of the memory files the caller may read (as `file` arguments take them).
    pub fn complete_memory_file(
        &self,
        ctx: &Context,
        prefix: &str,
    ) -> Result<Completions, OpsError> {
        let visibility = self.visibility(ctx);
        let Some(folder) = self.walls.vault(&visibility).memory_folder() else {
            return Ok(Completions::default());
        };
        let filter = NoteFilter {
            folder: Some(folder.to_string()),
            direct_only: true,
            ..NoteFilter::default()
        };
        let visibility = self.visibility(ctx);
        let names: Vec<String> = self
            .walls
            .index(&visibility)
            .note_paths(&filter)?
            .into_iter()
            .filter(|path| path.ends_with(".md") && visibility.shows(path))
            .filter_map(|path| {
                let name = path.rsplit_once('/').map_or(path.as_str(), |(_, n)| n);
                name.strip_suffix(".md").map(str::to_owned)
            })
            .filter(|name| starts_with_ignoring_case(name, prefix))
            .collect();
        Ok(Completions::from(names.into_iter()))
    }

    /// The section names of the memory files the caller may read (of `file` only, when given)
    /// that start with `prefix`, ignoring case; each name once, in file order.
    pub fn complete_memory_section(
        &self,
        ctx: &Context,
        file: Option<&str>,
        prefix: &str,
    ) -> Result<Completions, OpsError> {
        if self.walls.memory_folder().is_none() {
            return Ok(Completions::default());
        }
        let file = file.map(str::trim).filter(|name| !name.is_empty());
        let file = file.map(super::memory::stem);
        let mut names: Vec<String> = Vec::new();
        for summary in self.list_memory_files(ctx)? {
            if file
                .as_deref()
                .is_some_and(|wanted| !summary.file.eq_ignore_ascii_case(wanted))
            {
                continue;
            }
            for section in summary.sections {
                if starts_with_ignoring_case(&section.name, prefix)
                    && !names.contains(&section.name)
                {
                    names.push(section.name);
                }
            }
        }
        Ok(Completions::from(names.into_iter()))
    }

    /// `today`, `yesterday`, then the dates of the daily notes of the last 60 days the caller may
    /// read, newest first.
    pub fn complete_daily_date(
        &self,
        ctx: &Context,
        prefix: &str,
    ) -> Result<Completions, OpsError> {
        let visibility = self.visibility(ctx);
        let mut day = self.today();
        let mut wanted = vec![day];
        for _ in 0..DAILY_DAYS_BACK {
            match day.yesterday() {
                Ok(before) => day = before,
                Err(_) => break,
            }
            wanted.push(day);
        }
        // A daily-notes setup that names no valid path offers no dates, only the words.
        let paths = self.daily_note_paths(&wanted).unwrap_or_default();
        let days: Vec<_> = wanted.into_iter().zip(paths).collect();
        let folder = days
            .first()
            .and_then(|(_, path)| path.as_str().rsplit_once('/').map(|(f, _)| f.to_owned()));
        let existing: HashSet<String> = self
            .walls
            .index(&visibility)
            .note_paths(&NoteFilter {
                folder,
                ..NoteFilter::default()
            })?
            .into_iter()
            .collect();
        let visibility = self.visibility(ctx);
        let dates = days
            .into_iter()
            .filter(|(_, path)| existing.contains(path.as_str()) && visibility.shows(path.as_str()))
            .map(|(day, _)| day.to_string());
        let words = ["today", "yesterday"].map(str::to_owned);
        Ok(Completions::from(
            words
                .into_iter()
                .chain(dates)
                .filter(|value| starts_with_ignoring_case(value, prefix)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_ignoring_case() {
        assert!(starts_with_ignoring_case("Projects/Plan.md", "proj"));
        assert!(starts_with_ignoring_case("Privé/x.md", "PRIVÉ"));
        assert!(starts_with_ignoring_case("anything", ""));
        assert!(!starts_with_ignoring_case("é", "e"));
        assert!(!starts_with_ignoring_case("ab", "abc"));
    }

    #[test]
    fn at_most_a_hundred_values() {
        let many = Completions::from((0..150).map(|n| n.to_string()));
        assert_eq!(many.values.len(), MAX_COMPLETIONS);
        assert!(many.has_more);
        let few = Completions::from((0..100).map(|n| n.to_string()));
        assert!(!few.has_more);
    }
}
