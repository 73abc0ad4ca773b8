//! Renaming a tag across one note as Obsidian reads tags: the inline `#tag`s of the body (found by
//! `tags`' own grammar, so a tag is renamed exactly where Obsidian sees one) and the values of the
//! `tags` property. Nested tags move with their parent.
//! It never touches text Obsidian does not read as a tag, and refuses when the properties block
//! would not read back as the same properties with the tag renamed.

use std::ops::Range;

use serde_json::{Map, Value};

use super::BulkEditError;
use super::keys::{key_token, offset_in};
use super::tag_values::{scalars, write_scalar};
use crate::markdown::properties_edit::top_level_entries;
use crate::markdown::{blocks, frontmatter, tags};

/// A note with a tag renamed, and how many tag occurrences changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagRename {
    pub text: String,
    pub count: usize,
}

/// Renames tag `old` to `new` (both given without '#'; callers strip it) as Obsidian reads tags:
/// inline `#old` in the body and values of the `tags` property (key matched ASCII-case-insensitively,
/// list items in block or flow style, or a single string; a value may carry one leading '#', which
/// is kept).
///
/// Tags match case-insensitively (Obsidian folds tag case), and the matched part takes `new`'s
/// spelling; nested tags are renamed too: `#old/child` becomes `#new/child`, but `#older` is
/// untouched. Never inside code spans, fenced or indented code, math, HTML comments, wikilinks,
/// link destinations or URLs: exactly where `tags::note_tags` reads no tag.
/// A properties block that is not valid YAML is left alone (Obsidian reads no tags from it); the
/// body's tags are still renamed. `Ok(None)` when nothing matched, or `old` is no valid tag name;
/// `Err(NotEditable)` when `new` is no valid tag name or a matching property value is written in a
/// form that cannot be rewritten exactly.
pub fn rename_tag(text: &str, old: &str, new: &str) -> Result<Option<TagRename>, BulkEditError> {
    if !tags::is_valid_tag_name(old) {
        return Ok(None);
    }
    if !tags::is_valid_tag_name(new) {
        return Err(BulkEditError::NotEditable(format!(
            "{new:?} is not a valid tag name"
        )));
    }
    let matcher = TagMatcher {
        old_folded: old.to_lowercase(),
        new,
    };
    let mut splices = property_splices(text, &matcher)?;
    let mut expected_names = Vec::new();
    let mut body_renamed = false;
    for name in body_tag_names(text) {
        match matcher.rename(&name.1) {
            Some(renamed) => {
                expected_names.push(renamed.clone());
                splices.push((name.0, renamed));
                body_renamed = true;
            }
            None => expected_names.push(name.1),
        }
    }
    if splices.is_empty() {
        return Ok(None);
    }
    let count = splices.len();
    let new_text = apply(text, splices);
    // A new name can change how the text around it reads (`&#old;` renamed to `&#x26;` becomes a
    // character reference), so the body must hold exactly the renamed tags, in place.
    if body_renamed
        && body_tag_names(&new_text)
            .map(|(_, name)| name)
            .ne(expected_names)
    {
        return Err(BulkEditError::NotEditable(format!(
            "renaming to {new:?} would change how other text of the note reads"
        )));
    }
    Ok(Some(TagRename {
        text: new_text,
        count,
    }))
}

/// The inline tags of the body, each with the byte range of its name.
fn body_tag_names(text: &str) -> impl Iterator<Item = (Range<usize>, String)> + '_ {
    let scan = blocks::scan(text);
    tags::inline_tag_ranges(text, &scan.lines)
        .into_iter()
        .filter_map(move |range| Some((range.clone(), text.get(range)?.to_owned())))
}

/// What renaming does to one tag name.
struct TagMatcher<'a> {
    old_folded: String,
    new: &'a str,
}

impl TagMatcher<'_> {
    /// `name` renamed, when it is `old` or nested under it (any case).
    fn rename(&self, name: &str) -> Option<String> {
        let ends = name
            .match_indices('/')
            .map(|(at, _)| at)
            .chain(std::iter::once(name.len()));
        for end in ends {
            if name.get(..end)?.to_lowercase() == self.old_folded {
                return Some(format!("{}{}", self.new, name.get(end..)?));
            }
        }
        None
    }

    /// A `tags` property value renamed, read the way `tags` reads one: trimmed, one leading `#`
    /// allowed; the surrounding whitespace and the `#` are kept.
    fn rename_value(&self, value: &str) -> Option<String> {
        let trimmed = value.trim();
        let lead = value.len() - value.trim_start().len();
        let (hash, name) = match trimmed.strip_prefix('#') {
            Some(name) => ("#", name),
            None => ("", trimmed),
        };
        if !tags::is_valid_tag_name(name) {
            return None;
        }
        let renamed = self.rename(name)?;
        Some(format!(
            "{}{hash}{renamed}{}",
            value.get(..lead)?,
            value.get(lead + trimmed.len()..)?
        ))
    }
}

/// The splices (byte ranges of `text`) that rename the tag in the `tags` property, checked to read
/// back as exactly the renamed properties.
fn property_splices(
    text: &str,
    matcher: &TagMatcher<'_>,
) -> Result<Vec<(Range<usize>, String)>, BulkEditError> {
    let Some(yaml) = frontmatter::split(text).yaml else {
        return Ok(Vec::new());
    };
    let Ok(properties) = frontmatter::parse_properties(yaml) else {
        return Ok(Vec::new());
    };
    let (expected, renamed) = renamed_properties(&properties, matcher);
    if renamed == 0 {
        return Ok(Vec::new());
    }
    let mut splices = Vec::new();
    let (_, entries) = top_level_entries(yaml);
    for entry in &entries {
        let is_tags = entry
            .key
            .as_deref()
            .is_some_and(|key| key.eq_ignore_ascii_case("tags"));
        let entry_text = yaml.get(entry.start..entry.end).unwrap_or("");
        let (true, Some(token)) = (is_tags, key_token(entry_text)) else {
            continue;
        };
        let value_start = entry.start + token.value_start;
        let value = yaml.get(value_start..entry.end).unwrap_or("");
        for scalar in scalars(value).unwrap_or_default() {
            let Some(renamed) = scalar.value.and_then(|value| matcher.rename_value(&value)) else {
                continue;
            };
            splices.push((
                value_start + scalar.start..value_start + scalar.end,
                write_scalar(&renamed, scalar.quoting),
            ));
        }
    }
    let new_yaml = apply(yaml, splices.clone());
    if frontmatter::parse_properties(&new_yaml).ok() != Some(expected) || splices.len() != renamed {
        return Err(BulkEditError::NotEditable(
            "the tags property is written in a form Quire cannot rewrite exactly (an anchor, a block scalar or a value over several lines)".to_owned(),
        ));
    }
    let yaml_start = offset_in(text, yaml);
    Ok(splices
        .into_iter()
        .map(|(range, renamed)| (yaml_start + range.start..yaml_start + range.end, renamed))
        .collect())
}

/// The properties with the tag renamed in every `tags` value, and how many values changed.
fn renamed_properties(
    properties: &Map<String, Value>,
    matcher: &TagMatcher<'_>,
) -> (Map<String, Value>, usize) {
    let mut expected = properties.clone();
    let mut renamed = 0;
    let mut rename = |item: &mut Value| {
        if let Some(new_value) = item.as_str().and_then(|value| matcher.rename_value(value)) {
            *item = Value::String(new_value);
            renamed += 1;
        }
    };
    for (key, value) in expected.iter_mut() {
        if !key.eq_ignore_ascii_case("tags") {
            continue;
        }
        match value {
            Value::Array(items) => items.iter_mut().for_each(&mut rename),
            single => rename(single),
        }
    }
    (expected, renamed)
}

/// `text` with each range replaced; the ranges must not overlap.
fn apply(text: &str, mut splices: Vec<(Range<usize>, String)>) -> String {
    splices.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, replacement) in splices {
        out.push_str(text.get(at..range.start).unwrap_or(""));
        out.push_str(&replacement);
        at = range.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}
