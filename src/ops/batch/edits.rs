//! The four batch edits, each one `run_batch` with its own per-note edit and its own default
//! candidates: rename a property key, set (or remove) a property, rename a tag, replace text.

use serde_json::Map;

use super::types::{BatchResult, SetProperty};
use crate::markdown::properties_edit::{PropertiesEditError, update_properties};
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
            &|_, text| match update_properties(text, &updates, false) {
                Ok(update) if update.changed_keys.is_empty() => Ok(None),
                Ok(update) => Ok(Some((update.text, 1))),
                Err(PropertiesEditError::Invalid(error)) => Err(format!(
                    "its properties block is not valid YAML ({})",
                    error.message
                )),
                Err(PropertiesEditError::NotEditable(why)) => Err(why),
            },
        )
    }
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
