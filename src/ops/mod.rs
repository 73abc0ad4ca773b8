//! The one entry point for everything a client may do to a vault.
//!
//! Every function takes a `Context` carrying the caller's `Principal`, turns raw inputs into domain
//! types (`VaultPath`, `Revision`), does the work through `vault` and `markdown`, and returns plain
//! data. Transports (stdio, HTTP) only adapt; none reaches the vault except through here, so access
//! control added here covers every transport. Functions block on file I/O: call them off the async
//! executor.

mod error;
mod notes;

use std::time::SystemTime;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub use error::OpsError;
pub use notes::{
    DeleteNote, DeletedNote, ListNotes, NoteList, NoteRead, NoteSummary, OutlineEntry, ReadMode,
    ReadNote, WriteNote, WrittenNote,
};

use crate::acl::Principal;
use crate::vault::Vault;

/// Who is asking.
#[derive(Debug, Clone)]
pub struct Context {
    pub principal: Principal,
}

impl Context {
    pub fn owner() -> Context {
        Context {
            principal: Principal::Owner,
        }
    }
}

/// The operations on one vault.
#[derive(Debug)]
pub struct Ops {
    vault: Vault,
}

/// A short description of the vault for server instructions and orientation.
#[derive(Debug, Clone)]
pub struct VaultOverview {
    pub name: String,
    pub note_count: usize,
    pub top_folders: Vec<String>,
}

impl Ops {
    pub fn new(vault: Vault) -> Ops {
        Ops { vault }
    }

    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    pub fn overview(&self, _ctx: &Context) -> Result<VaultOverview, OpsError> {
        let files = self
            .vault
            .scan(None)
            .map_err(|e| OpsError::from_vault(e, None))?;
        let mut top_folders: Vec<String> = files
            .iter()
            .filter_map(|file| {
                let mut segments = file.path.segments();
                let first = segments.next()?;
                segments.next().map(|_| first.to_string())
            })
            .collect();
        top_folders.dedup();
        Ok(VaultOverview {
            name: self
                .vault
                .root()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "vault".into()),
            note_count: files.iter().filter(|f| notes::is_note(&f.path)).count(),
            top_folders,
        })
    }
}

/// RFC 3339 in UTC, which every client can parse.
pub fn rfc3339(time: SystemTime) -> String {
    OffsetDateTime::from(time)
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}
