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

#[cfg(test)]
mod tests {
    use super::*;

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
