//! Readers for the Obsidian settings in the vault's `.obsidian/` folder that Quire honours.
//!
//! Settings are read on use, so a change made in Obsidian applies without a restart. A missing or
//! malformed settings file means Obsidian's defaults; reading settings never fails a request.

use std::path::Path;

use regex::Regex;

/// Obsidian's "Excluded files" (`userIgnoreFilters` in `.obsidian/app.json`): paths kept out of
/// search results. A filter written `/…/` is a regular expression tested against the path; any
/// other filter excludes the paths that start with it (`Archive/` excludes that folder).
#[derive(Debug, Clone, Default)]
pub struct ExcludedFiles {
    prefixes: Vec<String>,
    patterns: Vec<Regex>,
}

impl ExcludedFiles {
    pub fn read(root: &Path) -> ExcludedFiles {
        let Ok(text) = std::fs::read_to_string(root.join(".obsidian").join("app.json")) else {
            return ExcludedFiles::default();
        };
        let Ok(settings) = serde_json::from_str::<serde_json::Value>(&text) else {
            tracing::warn!(".obsidian/app.json is not valid JSON; ignoring its excluded files");
            return ExcludedFiles::default();
        };
        let filters = settings
            .get("userIgnoreFilters")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut excluded = ExcludedFiles::default();
        for filter in filters.iter().filter_map(serde_json::Value::as_str) {
            match filter
                .strip_prefix('/')
                .and_then(|rest| rest.strip_suffix('/'))
            {
                Some(pattern) if !pattern.is_empty() => match Regex::new(pattern) {
                    Ok(regex) => excluded.patterns.push(regex),
                    Err(error) => {
                        tracing::warn!(filter, %error, "ignoring an excluded-files pattern that is not a valid regular expression");
                    }
                },
                _ if !filter.is_empty() => excluded.prefixes.push(filter.to_string()),
                _ => {}
            }
        }
        excluded
    }

    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty() && self.patterns.is_empty()
    }

    /// Whether the vault-relative `path` is excluded from search results.
    pub fn excludes(&self, path: &str) -> bool {
        self.prefixes
            .iter()
            .any(|prefix| path.starts_with(prefix.as_str()))
            || self.patterns.iter().any(|pattern| pattern.is_match(path))
    }
}

/// Reads one of Obsidian's JSON settings files; missing or malformed means Obsidian's defaults.
fn read_settings(root: &Path, file: &str) -> serde_json::Value {
    let Ok(text) = std::fs::read_to_string(root.join(".obsidian").join(file)) else {
        return serde_json::Value::Null;
    };
    serde_json::from_str(&text).unwrap_or_else(|_| {
        tracing::warn!(
            file,
            "an Obsidian settings file is not valid JSON; using Obsidian's defaults"
        );
        serde_json::Value::Null
    })
}

/// Obsidian's "New link format" (`newLinkFormat` in `.obsidian/app.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewLinkFormat {
    /// The bare name when it is unique in the vault, else the vault path (Obsidian's default).
    #[default]
    Shortest,
    /// The path relative to the linking note.
    Relative,
    /// The vault path.
    Absolute,
}

/// How Obsidian writes new links: the form a move uses where it must write a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkSettings {
    pub new_link_format: NewLinkFormat,
    /// `useMarkdownLinks`: `[text](path.md)` instead of `[[path]]` (Obsidian's default is wikilinks).
    pub use_markdown_links: bool,
}

impl LinkSettings {
    pub fn read(root: &Path) -> LinkSettings {
        let settings = read_settings(root, "app.json");
        LinkSettings {
            new_link_format: match settings
                .get("newLinkFormat")
                .and_then(serde_json::Value::as_str)
            {
                Some("relative") => NewLinkFormat::Relative,
                Some("absolute") => NewLinkFormat::Absolute,
                _ => NewLinkFormat::Shortest,
            },
            use_markdown_links: settings
                .get("useMarkdownLinks")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }
}

/// The folders Obsidian fills with notes nobody links to by design: the daily notes folder
/// (`.obsidian/daily-notes.json` `folder`) and the templates folder (`.obsidian/templates.json`
/// `folder`), without leading or trailing `/`. Unset folders are left out.
pub fn generated_note_folders(root: &Path) -> Vec<String> {
    ["daily-notes.json", "templates.json"]
        .into_iter()
        .filter_map(|file| {
            read_settings(root, file)
                .get("folder")
                .and_then(serde_json::Value::as_str)
                .map(|folder| folder.trim_matches('/').to_owned())
        })
        .filter(|folder| !folder.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_settings_and_generated_folders() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(LinkSettings::read(dir.path()), LinkSettings::default());
        std::fs::create_dir(dir.path().join(".obsidian")).expect("mkdir");
        std::fs::write(
            dir.path().join(".obsidian/app.json"),
            r#"{"newLinkFormat": "relative", "useMarkdownLinks": true}"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join(".obsidian/daily-notes.json"),
            r#"{"folder": "/Daily/"}"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join(".obsidian/templates.json"),
            r#"{"folder": ""}"#,
        )
        .expect("write");
        let settings = LinkSettings::read(dir.path());
        assert_eq!(settings.new_link_format, NewLinkFormat::Relative);
        assert!(settings.use_markdown_links);
        assert_eq!(generated_note_folders(dir.path()), vec!["Daily".to_owned()]);
    }

    #[test]
    fn prefixes_and_patterns() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".obsidian")).expect("mkdir");
        std::fs::write(
            dir.path().join(".obsidian/app.json"),
            r#"{"userIgnoreFilters": ["Archive/", "/\\.draft\\.md$/", "/[/", ""]}"#,
        )
        .expect("write");
        let excluded = ExcludedFiles::read(dir.path());
        assert!(excluded.excludes("Archive/2025.md"));
        assert!(excluded.excludes("Inbox/idea.draft.md"));
        assert!(!excluded.excludes("Archived.md"));
        assert!(!excluded.excludes("Inbox/idea.md"));
        assert!(ExcludedFiles::read(&dir.path().join("missing")).is_empty());
    }
}
