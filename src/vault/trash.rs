//! Deleting into the vault's `.trash/` folder, the way Obsidian's "move to Obsidian trash" does.
//!
//! The trash is flat (`.trash/<file name>`); a name already taken gets ` 1`, ` 2`, … before the
//! extension, and the move uses `link()` so an existing trash entry is never overwritten. The file's
//! revision is checked under the caller's lock right before the move.

use std::fs;
use std::io;
use std::path::Path;

use super::{Resolved, Revision, VaultError};

const TRASH: &str = ".trash";
const MAX_SUFFIX: u32 = 10_000;

pub(super) fn move_to_trash(
    root: &Path,
    resolved: &Resolved,
    expected: &Revision,
) -> Result<String, VaultError> {
    let path = &resolved.rel;
    let io_err = |source: io::Error| VaultError::Io {
        path: path.to_string(),
        source,
    };
    let current = match super::read_regular(&resolved.fs_path) {
        Ok(Some(bytes)) => Revision::of(&bytes),
        Ok(None) => {
            return Err(VaultError::NotRegularFile {
                path: path.to_string(),
            });
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(VaultError::NotFound {
                path: path.to_string(),
            });
        }
        Err(e) => return Err(io_err(e)),
    };
    if &current != expected {
        return Err(VaultError::ChangedDuringWrite {
            path: path.to_string(),
            current: Some(current),
        });
    }
    let trash = root.join(TRASH);
    fs::create_dir_all(&trash).map_err(io_err)?;
    let stem = path.stem();
    let extension = path
        .file_name()
        .strip_prefix(stem)
        .unwrap_or_default()
        .to_string();
    for suffix in 0..MAX_SUFFIX {
        let name = if suffix == 0 {
            format!("{stem}{extension}")
        } else {
            format!("{stem} {suffix}{extension}")
        };
        match fs::hard_link(&resolved.fs_path, trash.join(&name)) {
            Ok(()) => {
                fs::remove_file(&resolved.fs_path).map_err(io_err)?;
                return Ok(format!("{TRASH}/{name}"));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(e)),
        }
    }
    Err(io_err(io::Error::other(
        "the trash already holds 10000 files of this name; empty .trash and retry",
    )))
}

pub(super) fn prune_empty_folders(
    root: &Path,
    start: &Path,
    may_remove: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut pruned = Vec::new();
    let mut folder = start;
    while folder != root && folder.starts_with(root) {
        let allowed = folder
            .strip_prefix(root)
            .is_ok_and(|rel| may_remove(&rel.to_string_lossy()));
        if !allowed {
            break;
        }
        // remove_dir refuses a folder that is not empty, which is exactly the stop condition.
        if fs::remove_dir(folder).is_err() {
            break;
        }
        if let Ok(rel) = folder.strip_prefix(root) {
            pruned.push(rel.to_string_lossy().into_owned());
        }
        match folder.parent() {
            Some(parent) => folder = parent,
            None => break,
        }
    }
    pruned
}
