//! Every change a call makes is staged in the history before its files are written (issue 49),
//! so it can be seen and taken back. A change that could not be staged is not made: the call
//! answers `history_unavailable` and the vault is untouched. Once the files are written the
//! change is settled: finished, or dropped when the write was refused (a conflict).

use super::access::{Maintenance, WriteChecked};
use super::error::OpsError;
use super::shared::{Context, Ops};
use crate::history::{Draft, Kind, Meta, RealPlaces};
use crate::vault::VaultPath;

/// A change staged for this call, until it is settled.
#[must_use = "a staged change must be settled once its files are written or refused"]
pub(super) struct Staged {
    id: Option<String>,
}

impl Ops {
    /// Stages what the caller is about to write (`None` inside when history is off). The access
    /// value is the proof the caller may write, checked before anything is recorded.
    pub(super) fn stage_change(
        &self,
        ctx: &Context,
        checked: &impl WriteChecked,
        kind: Kind,
        drafts: &[Draft<'_>],
    ) -> Result<Staged, OpsError> {
        self.stage_undo(ctx, checked, kind, None, drafts)
    }

    /// `stage_change` for a change that takes back `undoes` (an undo).
    pub(super) fn stage_undo(
        &self,
        ctx: &Context,
        checked: &impl WriteChecked,
        kind: Kind,
        undoes: Option<&str>,
        drafts: &[Draft<'_>],
    ) -> Result<Staged, OpsError> {
        let Some(history) = &self.history else {
            return Ok(Staged { id: None });
        };
        // Found before the write, while every link on the way still leads where the content goes:
        // the history judges the version by that place too once a link is removed (issue 63, F6).
        let elsewhere = |path: &str| {
            let parsed = VaultPath::parse(path).ok()?;
            let real = self.walls.vault(checked).real_location(&parsed)?;
            (real != path).then_some(real)
        };
        let real: Vec<RealPlaces> = drafts
            .iter()
            .map(|draft| RealPlaces {
                path: elsewhere(draft.path),
                previous_path: draft.previous_path.and_then(elsewhere),
            })
            .collect();
        let id = history
            .stage_at(
                &Meta {
                    identity: ctx.principal.name(),
                    tool: &ctx.tool,
                    kind,
                    undoes,
                },
                drafts,
                &real,
            )
            .map_err(OpsError::HistoryUnavailable)?;
        Ok(Staged { id: Some(id) })
    }

    /// Settles a staged change: kept when its files were written, dropped when not. A failure
    /// here leaves the change pending, which the next start settles by looking at the files.
    pub(super) fn settle_change(&self, ctx: &Context, staged: Staged, written: bool) {
        let (Some(history), Some(id)) = (&self.history, staged.id) else {
            return;
        };
        let settled = if written {
            history.finish(&id)
        } else {
            history.abandon(&id)
        };
        if let Err(error) = settled {
            tracing::error!(%error, change = %id, "a change could not be settled in the history; the next start settles it");
        }
        if written {
            ctx.made_change(id);
        }
    }
}

impl Ops {
    /// Settles the changes a killed process left pending in the history: a change is kept for
    /// the files that hold what it wrote, and dropped where none does. Runs at start, after cut
    /// moves are finished.
    pub fn settle_history(&self) -> Result<(), OpsError> {
        let Some(history) = &self.history else {
            return Ok(());
        };
        let upkeep = Maintenance::new();
        self.complete_cut_changes(history, &upkeep);
        let current = |raw: &str| {
            let path = crate::vault::VaultPath::parse(raw).ok()?;
            let file = self.walls.vault(&upkeep).read(&path).ok()?;
            Some(file.revision.to_string())
        };
        let (kept, dropped) = history
            .recover(&current)
            .map_err(OpsError::HistoryUnavailable)?;
        if kept + dropped > 0 {
            tracing::info!(
                kept,
                dropped,
                "changes cut short by a stop settled in the history"
            );
        }
        Ok(())
    }
}
