//! Every change a call makes is staged in the history before its files are written (issue 49),
//! so it can be seen and taken back. A change that could not be staged is not made: the call
//! answers `history_unavailable` and the vault is untouched. Once the files are written the
//! change is settled: finished, or dropped when the write was refused (a conflict).

use super::access::Writable;
use super::error::OpsError;
use super::shared::{Context, Ops};
use crate::history::{Draft, Kind};

/// A change staged for this call, until it is settled.
#[must_use = "a staged change must be settled once its files are written or refused"]
pub(super) struct Staged {
    id: Option<String>,
}

impl Ops {
    /// Stages what the caller is about to write (`None` inside when history is off). The
    /// `Writable` is the proof the caller may write, checked before anything is recorded.
    pub(super) fn stage_change(
        &self,
        ctx: &Context,
        _written: &Writable,
        kind: Kind,
        drafts: &[Draft<'_>],
    ) -> Result<Staged, OpsError> {
        let Some(history) = &self.history else {
            return Ok(Staged { id: None });
        };
        let id = history
            .stage(ctx.principal.name(), &ctx.tool, kind, drafts)
            .map_err(OpsError::HistoryUnavailable)?;
        Ok(Staged { id: Some(id) })
    }

    /// Settles a staged change: kept when its files were written, dropped when not. A failure
    /// here leaves the change pending, which the next start settles by looking at the files.
    pub(super) fn settle_change(&self, staged: Staged, written: bool) -> Option<String> {
        let (Some(history), Some(id)) = (&self.history, staged.id) else {
            return None;
        };
        let settled = if written {
            history.finish(&id)
        } else {
            history.abandon(&id)
        };
        if let Err(error) = settled {
            tracing::error!(%error, change = %id, "a change could not be settled in the history; the next start settles it");
        }
        written.then_some(id)
    }
}
