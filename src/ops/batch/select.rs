//! The notes a batch edit considers: the paths the caller gave, the notes matching its search
//! filters, or, with neither, the notes the edit's own filter finds (those holding the property
//! or the tag). Only notes the caller may read are ever considered.

use super::types::Target;
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::search::SearchFilters;
use crate::ops::shared::{Context, Ops};
use crate::vault::VaultPath;

/// The most notes one batch may consider: more is refused, to be narrowed with `paths` or
/// `filter`, so one call never locks and rewrites a whole large vault by accident.
pub(super) const MAX_BATCH_NOTES: usize = 10_000;

impl Ops {
    /// The candidates of a batch, in path order, without duplicates.
    pub(super) fn batch_candidates(
        &self,
        ctx: &Context,
        target: &Target,
        default: SearchFilters,
    ) -> Result<Vec<VaultPath>, OpsError> {
        let mut found: Vec<VaultPath> = match (&target.paths, &target.filter) {
            (Some(_), Some(_)) => {
                return Err(OpsError::invalid_argument(
                    "give either paths or filter, not both",
                ));
            }
            (Some(paths), None) => {
                if paths.len() > MAX_BATCH_NOTES {
                    return Err(too_many(paths.len()));
                }
                let mut parsed = Vec::with_capacity(paths.len());
                for raw in paths {
                    let path = parse_path(raw)?;
                    self.require_read(ctx, &path)?;
                    if path.extension().as_deref() != Some("md") {
                        return Err(OpsError::UnsupportedExtension {
                            path: path.to_string(),
                            allowed: "batch edits change markdown notes (.md) only",
                        });
                    }
                    parsed.push(path);
                }
                parsed
            }
            (None, filter) => {
                let filter = filter.clone().unwrap_or(default);
                let paths = self.notes_matching(ctx, &filter, MAX_BATCH_NOTES)?;
                if paths.len() > MAX_BATCH_NOTES {
                    return Err(too_many(paths.len()));
                }
                paths
                    .iter()
                    .filter_map(|raw| VaultPath::parse(raw).ok())
                    .filter(|path| path.extension().as_deref() == Some("md"))
                    .collect()
            }
        };
        found.sort();
        found.dedup();
        Ok(found)
    }
}

fn too_many(count: usize) -> OpsError {
    OpsError::invalid_argument(format!(
        "this batch would consider {count}{} notes, over the limit of {MAX_BATCH_NOTES}; narrow it with `paths` or `filter` (a folder, tags, properties) and run it in parts",
        if count > MAX_BATCH_NOTES { "+" } else { "" }
    ))
}
