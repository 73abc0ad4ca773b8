//! How a link path resolves to a file of the vault, by Obsidian's rules: exact path, then the
//! shortest path with that name (case and Unicode form folded), relative to the linking note.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

/// Obsidian's link resolution over the files of a vault (notes and attachments, vault-relative
/// `/`-separated paths in NFC).
///
/// A link path resolves, in this order:
/// 1. empty (`[[#Heading]]`): to the linking file itself;
/// 2. starting with `./` or `../`: relative to the linking file's folder, and nothing else;
/// 3. relative to the linking file's folder, with or without `.md` (so `[[Note]]` prefers the
///    `Note` next to the linking file), unless it starts with `/`;
/// 4. as a vault path (a leading `/` is dropped), with or without `.md`;
/// 5. by name: files named like its last segment (notes by name without `.md`, other files by full
///    name) whose path ends with the whole link path; among several, the one in the linking file's
///    folder, else the one with the fewest folders, then the alphabetically first.
///
/// Every comparison ignores case and Unicode normalisation form, as Obsidian's does.
#[derive(Debug, Default, Clone)]
pub struct Resolver {
    /// Folded path -> path (the first spelling wins).
    by_path: HashMap<String, String>,
    /// Folded name (notes without `.md`, other files with their extension) -> paths.
    by_name: HashMap<String, Vec<String>>,
}

/// Case- and normalisation-folded form used for every comparison.
pub fn fold(text: &str) -> String {
    text.nfc().collect::<String>().to_lowercase()
}

/// The name a file is found by: a note's name without `.md`, any other file's full name.
pub fn lookup_name(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let folded = fold(name);
    match folded.strip_suffix(".md") {
        Some(stem) => stem.to_owned(),
        None => folded,
    }
}

/// The folded name key a link path is looked up by (the counterpart of `lookup_name`).
pub fn link_lookup_name(path: &str) -> String {
    lookup_name(path.trim_end_matches('/'))
}

impl Resolver {
    pub fn new<I, S>(paths: I) -> Resolver
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut resolver = Resolver::default();
        for path in paths {
            resolver.insert(path.into());
        }
        for paths in resolver.by_name.values_mut() {
            paths.sort_by(|a, b| {
                a.matches('/')
                    .count()
                    .cmp(&b.matches('/').count())
                    .then_with(|| a.cmp(b))
            });
        }
        resolver
    }

    pub(super) fn insert(&mut self, path: String) {
        self.by_path
            .entry(fold(&path))
            .or_insert_with(|| path.clone());
        self.by_name
            .entry(lookup_name(&path))
            .or_default()
            .push(path);
    }

    /// Whether the vault holds this exact path (folded).
    pub fn contains(&self, path: &str) -> bool {
        self.by_path.contains_key(&fold(path))
    }

    /// Every path whose name is `name` (folded as `lookup_name` does).
    pub fn named(&self, name: &str) -> &[String] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The file a link path (without its `#` part) from `source` resolves to.
    pub fn resolve(&self, path: &str, source: &str) -> Option<&str> {
        if path.is_empty() {
            return self.by_path.get(&fold(source)).map(String::as_str);
        }
        let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
        if path.starts_with("./") || path.starts_with("../") {
            let joined = join(folder, path)?;
            return self.exact(&joined);
        }
        let absolute = path.strip_prefix('/').unwrap_or(path);
        if !folder.is_empty()
            && !path.starts_with('/')
            && let Some(joined) = join(folder, absolute)
            && let Some(found) = self.exact(&joined)
        {
            return Some(found);
        }
        if let Some(found) = self.exact(absolute) {
            return Some(found);
        }
        let name = link_lookup_name(absolute);
        let candidates = self.by_name.get(&name)?;
        let wanted = fold(absolute.trim_end_matches('/'));
        let wanted_stem = wanted.strip_suffix(".md").unwrap_or(&wanted);
        let matching = candidates.iter().filter(|candidate| {
            if !absolute.contains('/') {
                return true;
            }
            let folded = fold(candidate);
            let stem = folded.strip_suffix(".md").unwrap_or(&folded);
            // `[[b/c]]` matches `a/b/c.md` but not `a/xb/c.md`; a link spelt with `.md`
            // matches only notes, one spelt without only the note.
            [stem, folded.as_str()].iter().any(|form| {
                form.ends_with(wanted_stem)
                    && (form.len() == wanted_stem.len()
                        || form.as_bytes()[form.len() - wanted_stem.len() - 1] == b'/')
            })
        });
        let mut first = None;
        for candidate in matching {
            let candidate_folder = candidate.rsplit_once('/').map_or("", |(folder, _)| folder);
            if fold(candidate_folder) == fold(folder) {
                return Some(candidate);
            }
            first.get_or_insert(candidate.as_str());
        }
        first
    }

    pub(super) fn exact(&self, path: &str) -> Option<&str> {
        let folded = fold(path);
        if let Some(found) = self.by_path.get(&folded) {
            return Some(found);
        }
        self.by_path
            .get(&format!("{folded}.md"))
            .map(String::as_str)
    }
}

/// `folder` joined with a relative path, `.` and `..` applied; `None` when it leaves the vault.
pub(super) fn join(folder: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}
