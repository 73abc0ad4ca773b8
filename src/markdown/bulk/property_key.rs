//! Renaming one top-level property key in a note's properties block, rewriting only the key's token
//! so the value keeps its exact bytes (and so its YAML type, quoting, comments and layout).
//! It refuses whenever the block is not a valid mapping, the new name is taken, or the renamed block
//! would not read back as the same properties under the new name.

use serde_json::Map;

use super::BulkEditError;
use super::keys::{key_token, offset_in, render_key};
use crate::markdown::frontmatter;
use crate::markdown::properties_edit::top_level_entries;

/// Renames the top-level property key `old` to `new` in the note's properties block, keeping the
/// value's bytes exactly (and so its YAML type: list, number, quoted string, block scalar...).
///
/// `Ok(None)` when the note has no properties block, no key `old`, or `old == new`.
/// `old` is matched exactly, case included: YAML keys are case-sensitive, a block may hold both
/// `Status` and `status`, and Obsidian keeps both as written. But Obsidian gives a property name one
/// type whatever its case (its type registry folds case), so a name that differs from an existing
/// key of the note only in case counts as taken: `Err(KeyExists)` with that key, unless that key is
/// `old` itself (changing only the case of a key is a rename).
/// A quoted key (`"my key": x`) is matched by its unquoted value; the new key is written plain when
/// it is ordinary words, else double-quoted.
pub fn rename_property_key(
    text: &str,
    old: &str,
    new: &str,
) -> Result<Option<String>, BulkEditError> {
    let split = frontmatter::split(text);
    let Some(yaml) = split.yaml else {
        return Ok(None);
    };
    let properties = frontmatter::parse_properties(yaml)
        .map_err(|error| BulkEditError::InvalidProperties(error.to_string()))?;
    let Some(value) = properties.get(old) else {
        return Ok(None);
    };
    if old == new {
        return Ok(None);
    }
    if new.is_empty() {
        return Err(BulkEditError::NotEditable(
            "the new property name is empty".to_owned(),
        ));
    }
    let folded_new = new.to_lowercase();
    if let Some(taken) = properties
        .keys()
        .find(|key| key.as_str() != old && key.to_lowercase() == folded_new)
    {
        return Err(BulkEditError::KeyExists(taken.clone()));
    }
    let new_yaml = renamed_yaml(yaml, old, new)?;
    let yaml_start = offset_in(text, yaml);
    let new_text = format!(
        "{}{new_yaml}{}",
        text.get(..yaml_start).unwrap_or(""),
        text.get(yaml_start + yaml.len()..).unwrap_or("")
    );
    let mut expected: Map<String, serde_json::Value> = properties.clone();
    expected.remove(old);
    expected.insert(new.to_owned(), value.clone());
    let reread = frontmatter::split(&new_text)
        .yaml
        .filter(|reread_yaml| *reread_yaml == new_yaml)
        .and_then(|reread_yaml| frontmatter::parse_properties(reread_yaml).ok());
    if reread.as_ref() != Some(&expected) {
        return Err(BulkEditError::NotEditable(format!(
            "renaming {old:?} would not read back as the same properties under {new:?}"
        )));
    }
    Ok(Some(new_text))
}

/// `yaml` with the key token of the entry `old` replaced by `new`.
fn renamed_yaml(yaml: &str, old: &str, new: &str) -> Result<String, BulkEditError> {
    let (_, entries) = top_level_entries(yaml);
    let entry = entries
        .iter()
        .find(|entry| entry.key.as_deref() == Some(old))
        .ok_or_else(|| {
            BulkEditError::NotEditable(format!(
                "the property {old:?} is written in a form Quire cannot change line by line (an alias, a merge key, a complex key or an unindented multi-line value)"
            ))
        })?;
    let token = yaml
        .get(entry.start..entry.end)
        .and_then(key_token)
        .ok_or_else(|| {
            BulkEditError::NotEditable(format!(
                "the key {old:?} is written with an anchor, a tag or an explicit `?`"
            ))
        })?;
    Ok(format!(
        "{}{}{}",
        yaml.get(..entry.start + token.start).unwrap_or(""),
        render_key(new),
        yaml.get(entry.start + token.end..).unwrap_or("")
    ))
}
