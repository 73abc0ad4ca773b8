//! `list_bases`: the `.base` files and the notes holding ```` ```base ```` blocks that the caller
//! may read, each with its views. Finding blocks reads the notes, so the listing takes a turn
//! among whole-vault scans as a grep does; a note that cannot be read is skipped, a base that
//! does not parse is listed with its error so it can be fixed. Like a grep it stops when its time
//! budget runs out, answering what it found with `timed_out`.

use std::time::Instant;

use crate::bases::Base;
use crate::ops::error::OpsError;
use crate::ops::search::DEFAULT_GREP_BUDGET;
use crate::ops::shared::{Context, Ops};
use crate::vault::VaultPath;

use super::source::base_blocks;
use super::types::{BaseList, BaseListed, ListBases, ViewListed};

impl Ops {
    /// The bases under `request.folder` (the whole vault when absent), in path order.
    pub fn list_bases(&self, ctx: &Context, request: ListBases) -> Result<BaseList, OpsError> {
        let folder = self.check_folder(ctx, request.folder.as_deref())?;
        let visibility = self.visibility(ctx);
        let inside = |path: &str| {
            folder.as_deref().is_none_or(|folder| {
                path.strip_prefix(folder)
                    .is_some_and(|rest| rest.starts_with('/'))
            })
        };
        let records = self.walls.index(&visibility).file_records()?;
        let mut candidates: Vec<(String, bool)> = records
            .into_iter()
            .filter(|record| record.note || record.path.ends_with(".base"))
            .filter(|record| inside(&record.path) && visibility.shows(&record.path))
            .map(|record| (record.path, record.note))
            .collect();
        candidates.sort();
        let _turn = self.scans.wait().map_err(|busy| OpsError::Busy {
            what: "this listing of bases",
            waited_ms: busy.waited.as_millis() as u64,
            running: busy.running,
            waiting: busy.waiting,
        })?;
        // The budget is the listing's own: it starts once its turn comes.
        let started = Instant::now();
        let mut timed_out = false;
        let mut bases = Vec::new();
        for (raw, note) in candidates {
            if started.elapsed() >= DEFAULT_GREP_BUDGET {
                timed_out = true;
                break;
            }
            let Ok(path) = VaultPath::parse(&raw) else {
                continue;
            };
            let Ok(text) = self.read_note_text(&visibility, &path) else {
                continue;
            };
            if note {
                if !(text.contains("```base") || text.contains("~~~base")) {
                    continue;
                }
                for (at, yaml) in base_blocks(&text).iter().enumerate() {
                    bases.push(listed(&raw, Some(at), yaml));
                }
            } else {
                bases.push(listed(&raw, None, &text));
            }
        }
        Ok(BaseList { bases, timed_out })
    }
}

fn listed(path: &str, block: Option<usize>, yaml: &str) -> BaseListed {
    let (views, error) = match Base::parse(yaml) {
        Ok(base) => (
            base.views
                .iter()
                .map(|view| ViewListed {
                    name: view.name.clone(),
                    kind: if view.kind.is_empty() {
                        "table".to_owned()
                    } else {
                        view.kind.clone()
                    },
                })
                .collect(),
            None,
        ),
        Err(error) => (Vec::new(), Some(error.to_string())),
    };
    BaseListed {
        path: path.to_owned(),
        block,
        views,
        error,
    }
}
