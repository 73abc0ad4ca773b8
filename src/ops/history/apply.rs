//! Writing what the history says a file should hold: the steps of an undo or a restore, each
//! checked against the revision the file must have, under locks the caller holds. A failure puts
//! back the steps already taken, so an undo is all or nothing as far as the files allow.

use crate::ops::access::{Granted, WriteChecked};
use crate::ops::error::OpsError;
use crate::ops::shared::Ops;
use crate::vault::{Revision, VaultError, VaultPath, WriteMode};

/// What one file must become: `bytes` in place of `expected` (`None`: the file must not exist),
/// or, without `bytes`, gone (to `.trash/` when `trash`, else removed: a move back keeps the
/// content at the other path).
#[derive(Debug, Clone)]
pub(super) struct Step {
    pub(super) path: VaultPath,
    pub(super) expected: Option<Revision>,
    pub(super) bytes: Option<Vec<u8>>,
    pub(super) trash: bool,
}

/// What a taken step left, to put it back.
struct Taken {
    path: VaultPath,
    /// The revision the step left (`None`: the file is gone).
    left: Option<Revision>,
    /// The bytes it replaced (`None`: there was no file).
    replaced: Option<Vec<u8>>,
}

impl Ops {
    /// Takes every step in order; on a failure puts back those taken and answers the failure.
    pub(super) fn apply_steps(
        &self,
        checked: &impl WriteChecked,
        steps: &[Step],
    ) -> Result<(), OpsError> {
        let mut taken: Vec<Taken> = Vec::new();
        for step in steps {
            match self.take(checked, step) {
                Ok(done) => taken.push(done),
                Err(error) => {
                    self.put_back(checked, &taken);
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    fn take(&self, checked: &impl Granted, step: &Step) -> Result<Taken, OpsError> {
        let vault = self.walls.vault(checked);
        let resolved = vault
            .resolve(&step.path)
            .map_err(|e| OpsError::from_vault(e, step.expected.as_ref()))?;
        let replaced = match &step.expected {
            Some(expected) => {
                let current = vault
                    .read_resolved(&resolved)
                    .map_err(|e| OpsError::from_vault(e, Some(expected)))?;
                if &current.revision != expected {
                    return Err(OpsError::Conflict {
                        path: step.path.to_string(),
                        expected: expected.to_string(),
                        current: current.revision.to_string(),
                    });
                }
                Some(current.bytes)
            }
            None => None,
        };
        let left = match (&step.bytes, &step.expected) {
            (Some(bytes), expected) => {
                let mode = match expected {
                    Some(expected) => WriteMode::Replace { expected },
                    None => WriteMode::CreateNew,
                };
                let written = vault
                    .write(&resolved, bytes, mode)
                    .map_err(|e| OpsError::from_vault(e, step.expected.as_ref()))?;
                Some(written.revision)
            }
            (None, Some(expected)) if step.trash => {
                vault
                    .trash(&resolved, expected)
                    .map_err(|e| OpsError::from_vault(e, Some(expected)))?;
                None
            }
            (None, Some(_)) => {
                std::fs::remove_file(&resolved.fs_path).map_err(|source| {
                    OpsError::from_vault(
                        VaultError::Io {
                            path: step.path.to_string(),
                            source,
                        },
                        None,
                    )
                })?;
                None
            }
            (None, None) => None,
        };
        Ok(Taken {
            path: step.path.clone(),
            left,
            replaced,
        })
    }

    /// Best effort: each taken step reversed where its file still holds what the step left.
    fn put_back(&self, checked: &impl Granted, taken: &[Taken]) {
        for done in taken.iter().rev() {
            let back = Step {
                path: done.path.clone(),
                expected: done.left.clone(),
                bytes: done.replaced.clone(),
                trash: false,
            };
            if let Err(error) = self.take(checked, &back) {
                tracing::warn!(%error, path = %done.path, "a failed undo could not put a file back");
            }
        }
    }
}
