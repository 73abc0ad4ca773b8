//! Writing what the history says a file should hold: the steps of an undo or a restore, each
//! checked against the revision the file must have, under locks the caller holds. A failure puts
//! back the steps already taken, so an undo is all or nothing as far as the files allow.

use crate::history::{History, Kind, Version};
use crate::ops::access::{Granted, Maintenance, WriteChecked};
use crate::ops::error::OpsError;
use crate::ops::shared::Ops;
use crate::vault::{Revision, VaultError, VaultPath, WriteMode};

/// What one file must become: `bytes` in place of `expected` (`None`: the file must not exist),
/// or, without `bytes`, gone (to `.trash/` when `trash`, else removed: a move back keeps the
/// content at the other path).
#[derive(Debug, Clone)]
pub(in crate::ops) struct Step {
    pub(in crate::ops) path: VaultPath,
    pub(in crate::ops) expected: Option<Revision>,
    pub(in crate::ops) bytes: Option<Vec<u8>>,
    pub(in crate::ops) trash: bool,
}

/// From how many steps the writes after the first run on threads.
const PARALLEL_FROM: usize = 8;

/// How many threads write a large batch or undo.
const WRITE_THREADS: usize = 8;

/// What a taken step left, to put it back.
struct Taken {
    path: VaultPath,
    /// The revision the step left (`None`: the file is gone).
    left: Option<Revision>,
    /// The bytes it replaced (`None`: there was no file).
    replaced: Option<Vec<u8>>,
}

impl Ops {
    /// Takes every step; on a failure puts back those taken and answers the failure. Steps on
    /// different files that only write (a batch, most undos) run on a few threads after the
    /// first: each write waits for its own fsyncs, and the file system commits concurrent fsyncs
    /// together. A move back keeps its order (its file is written before the other is removed).
    pub(in crate::ops) fn apply_steps(
        &self,
        checked: &(impl WriteChecked + Sync),
        steps: &[Step],
    ) -> Result<(), OpsError> {
        let independent = steps.iter().all(|step| step.bytes.is_some() || step.trash);
        if !independent || steps.len() < PARALLEL_FROM {
            return self.apply_in_order(checked, steps);
        }
        let Some((first, rest)) = steps.split_first() else {
            return Ok(());
        };
        let first = self.take(checked, first)?;
        #[cfg(feature = "test-faults")]
        abort_if_asked(1);
        let chunk = rest.len().div_ceil(WRITE_THREADS);
        let outcomes: Vec<Result<Taken, OpsError>> = std::thread::scope(|scope| {
            let workers: Vec<_> = rest
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|step| self.take(checked, step))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| {
                    worker.join().unwrap_or_else(|_| {
                        vec![Err(OpsError::Internal("a write thread panicked".into()))]
                    })
                })
                .collect()
        });
        let mut taken = vec![first];
        let mut failure = None;
        for outcome in outcomes {
            match outcome {
                Ok(done) => taken.push(done),
                Err(error) => {
                    failure.get_or_insert(error);
                }
            }
        }
        match failure {
            Some(error) => {
                self.put_back(checked, &taken);
                Err(error)
            }
            None => Ok(()),
        }
    }

    fn apply_in_order(&self, checked: &impl WriteChecked, steps: &[Step]) -> Result<(), OpsError> {
        let mut taken: Vec<Taken> = Vec::new();
        for step in steps {
            #[cfg(feature = "test-faults")]
            abort_if_asked(taken.len());
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

impl Ops {
    /// Carries forward the all-or-nothing changes (batches, undos) a kill cut short, before the
    /// history settles them: each file still holding its content from before the change gets
    /// its content after, so the change is whole; a file someone changed since is left alone.
    pub(in crate::ops) fn complete_cut_changes(&self, history: &History, upkeep: &Maintenance) {
        let pending = match history.pending() {
            Ok(pending) => pending,
            Err(error) => {
                tracing::error!(%error, "the history's pending changes cannot be read");
                return;
            }
        };
        for versions in pending {
            if !matches!(versions[0].change.kind, Kind::Batch | Kind::Undo) {
                continue;
            }
            let mut completed = 0;
            for version in &versions {
                for step in self.cut_steps(history, upkeep, version) {
                    match self.take(upkeep, &step) {
                        Ok(_) => completed += 1,
                        Err(error) => {
                            tracing::warn!(%error, path = %step.path, "a cut change could not be completed for this file");
                        }
                    }
                }
            }
            tracing::info!(change = %versions[0].change.id, completed, "completed a change a stop cut short");
        }
    }

    /// What is left to do for one version of a cut change: nothing when its file holds what the
    /// change wrote or something else entirely; else the steps that finish it.
    fn cut_steps(&self, history: &History, upkeep: &Maintenance, version: &Version) -> Vec<Step> {
        let now = |raw: &str| -> Option<Option<Revision>> {
            let path = VaultPath::parse(raw).ok()?;
            Some(
                self.walls
                    .vault(upkeep)
                    .read(&path)
                    .ok()
                    .map(|file| file.revision),
            )
        };
        let stored = |revision: &Option<String>| -> Option<Option<Vec<u8>>> {
            match revision {
                None => Some(None),
                Some(revision) => history.content(revision).ok().flatten().map(Some),
            }
        };
        let before = version.revision_before.as_deref().and_then(Revision::parse);
        let (Some(path), Some(after)) = (
            VaultPath::parse(&version.path).ok(),
            stored(&version.revision_after),
        ) else {
            return Vec::new();
        };
        match &version.previous_path {
            // A move: the content still at the old path goes to the new one.
            Some(previous) if previous != &version.path => {
                let (Some(Some(at_old)), Some(None)) = (now(previous), now(&version.path)) else {
                    return Vec::new();
                };
                let Ok(old) = VaultPath::parse(previous) else {
                    return Vec::new();
                };
                if Some(&at_old) != before.as_ref() {
                    return Vec::new();
                }
                vec![
                    Step {
                        path,
                        expected: None,
                        bytes: after,
                        trash: false,
                    },
                    Step {
                        path: old,
                        expected: Some(at_old),
                        bytes: None,
                        trash: false,
                    },
                ]
            }
            _ => {
                let Some(current) = now(&version.path) else {
                    return Vec::new();
                };
                if current != before {
                    return Vec::new();
                }
                let trash = after.is_none();
                vec![Step {
                    path,
                    expected: current,
                    bytes: after,
                    trash,
                }]
            }
        }
    }
}

/// With the `test-faults` feature, `QUIRE_TEST_FAULT=abort-mid-change` kills the process after
/// the first file of a multi-file change (a batch, an undo) is written, as a power cut would, so
/// a test can check the next start completes the change.
#[cfg(feature = "test-faults")]
fn abort_if_asked(taken: usize) {
    if taken == 1 && std::env::var("QUIRE_TEST_FAULT").ok().as_deref() == Some("abort-mid-change") {
        tracing::warn!("test fault: aborting in the middle of a change");
        std::process::abort();
    }
}
