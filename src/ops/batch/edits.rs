//! The four batch edits, each one `run_batch` with its own per-note edit and its own default
//! candidates: rename a property key, set (or remove) a property, rename a tag, replace text.

use serde_json::Map;

use super::run::Refusal;
use super::types::{BatchResult, RenameProperty, RenameTag, ReplaceAcross, SetProperty, Target};
use crate::markdown::bulk::{
    BulkEditError, Pattern, Scope, rename_property_key, rename_tag, replace_across,
};
use crate::markdown::properties_edit::{PropertiesEditError, update_properties};
use crate::markdown::tags::is_valid_tag_name;
use crate::ops::error::OpsError;
use crate::ops::search::SearchFilters;
use crate::ops::shared::{Context, Ops};

impl Ops {
    /// `vault_set_property`: one property set (or, with `null`, removed) on a list of notes or
    /// on the notes matching the filters.
    pub fn set_property(
        &self,
        ctx: &Context,
        request: SetProperty,
    ) -> Result<BatchResult, OpsError> {
        let name = property_name(&request.name, "name")?;
        if request.target.paths.is_none() && request.target.filter.is_none() {
            return Err(OpsError::invalid_argument(
                "vault_set_property needs `paths` (a list of notes) or `filter` (search filters) to say which notes to change",
            ));
        }
        let candidates = self.batch_candidates(ctx, &request.target, SearchFilters::default())?;
        let mut updates = Map::new();
        updates.insert(name, request.value);
        self.run_batch(
            ctx,
            &candidates,
            request.dry_run,
            &|_, text, _| match update_properties(text, &updates, false) {
                Ok(update) if update.changed_keys.is_empty() => Ok(None),
                Ok(update) => Ok(Some((update.text, 1))),
                Err(PropertiesEditError::Invalid(error)) => Err(Refusal::Cannot(format!(
                    "its properties block is not valid YAML ({})",
                    error.message
                ))),
                Err(PropertiesEditError::NotEditable(why)) => Err(Refusal::Cannot(why)),
            },
        )
    }
}

impl Ops {
    /// `vault_rename_property`: a key renamed across notes (by default every note holding it),
    /// its value's bytes and so its type kept.
    pub fn rename_property(
        &self,
        ctx: &Context,
        request: RenameProperty,
    ) -> Result<BatchResult, OpsError> {
        let old = property_name(&request.old_name, "old_name")?;
        let new = property_name(&request.new_name, "new_name")?;
        if old == new {
            return Err(OpsError::invalid_argument(
                "old_name and new_name are the same; nothing to rename",
            ));
        }
        let mut holding = SearchFilters::default();
        holding
            .properties
            .insert(old.clone(), serde_json::Value::Null);
        let candidates = self.batch_candidates(ctx, &request.target, holding)?;
        self.run_batch(ctx, &candidates, request.dry_run, &|_, text, _| {
            rename_property_key(text, &old, &new)
                .map(|renamed| renamed.map(|text| (text, 1)))
                .map_err(refusal)
        })
    }

    /// `vault_rename_tag`: a tag renamed where Obsidian reads it (inline and in `tags`), nested
    /// tags with it, across every note holding it.
    pub fn rename_tag(&self, ctx: &Context, request: RenameTag) -> Result<BatchResult, OpsError> {
        let old = tag_name(&request.old_tag, "old_tag")?;
        let new = tag_name(&request.new_tag, "new_tag")?;
        if old == new {
            return Err(OpsError::invalid_argument(
                "old_tag and new_tag are the same; nothing to rename",
            ));
        }
        let holding = SearchFilters {
            tags: vec![old.clone()],
            ..SearchFilters::default()
        };
        let candidates = self.batch_candidates(ctx, &Target::default(), holding)?;
        self.run_batch(ctx, &candidates, request.dry_run, &|_, text, _| {
            rename_tag(text, &old, &new)
                .map(|renamed| renamed.map(|renamed| (renamed.text, renamed.count)))
                .map_err(refusal)
        })
    }

    /// `vault_replace_across`: text (or a regex) replaced across notes, outside code and the
    /// properties unless asked.
    pub fn replace_across(
        &self,
        ctx: &Context,
        request: ReplaceAcross,
    ) -> Result<BatchResult, OpsError> {
        if request.old_text.is_empty() {
            return Err(OpsError::invalid_argument(
                "old_text is empty; give the text (or, with regex: true, the pattern) to replace",
            ));
        }
        let pattern = if request.regex {
            let regex = regex::RegexBuilder::new(&request.old_text)
                .size_limit(1 << 20)
                .dfa_size_limit(1 << 20)
                .build()
                .map_err(|error| {
                    OpsError::invalid_argument(format!(
                        "old_text is not a valid regular expression (Rust regex syntax): {error}"
                    ))
                })?;
            Pattern::Regex(regex)
        } else {
            Pattern::Literal(request.old_text.clone())
        };
        let scope = Scope {
            code: request.in_code,
            properties: request.in_properties,
        };
        let candidates = self.batch_candidates(ctx, &request.target, SearchFilters::default())?;
        self.run_batch(ctx, &candidates, request.dry_run, &|_, text, max_bytes| {
            replace_across(text, &pattern, &request.new_text, &scope, max_bytes)
                .map(|replaced| replaced.map(|replaced| (replaced.text, replaced.count)))
                .map_err(refusal)
        })
    }
}

/// A note's own reason to refuse the edit, or the size limit it hit (the batch then stops).
fn refusal(error: BulkEditError) -> Refusal {
    match error {
        BulkEditError::TooLarge { .. } => Refusal::TooLarge,
        other => Refusal::Cannot(other.to_string()),
    }
}

/// A tag as a batch takes it: one leading `#` dropped, and a name Obsidian reads as a tag.
fn tag_name(raw: &str, field: &str) -> Result<String, OpsError> {
    let trimmed = raw.trim();
    let name = trimmed.strip_prefix('#').unwrap_or(trimmed);
    if !is_valid_tag_name(name) {
        return Err(OpsError::invalid_argument(format!(
            "{field} {raw:?} is not a tag Obsidian reads: letters, digits, _, - and / only, not digits alone, no spaces"
        )));
    }
    Ok(name.to_owned())
}

/// A property name as a batch takes it: trimmed, not empty, one line.
pub(super) fn property_name(raw: &str, field: &str) -> Result<String, OpsError> {
    let name = raw.trim();
    if name.is_empty() || name.contains(['\n', '\r']) {
        return Err(OpsError::invalid_argument(format!(
            "{field} {raw:?} is not a property name: give the key as it appears in the properties, on one line"
        )));
    }
    Ok(name.to_owned())
}
