//! Atomic file replacement that never loses another writer's edit.
//!
//! The new bytes go to a hidden temp file in the same folder (same file system, so the final step
//! is a rename), are fsynced, take the old file's permission bits, and only then replace the target.
//! Just before the rename the target is read again: if its bytes no longer match the revision the
//! caller based its edit on (a sync client or the user in Obsidian wrote meanwhile), the temp file
//! is dropped and the caller gets a conflict instead of silently overwriting. Creation uses `link()`,
//! which fails rather than replace a file that appeared in the meantime.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Revision, VaultError, VaultPath, WriteMode};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

pub(super) fn write_atomic(
    path: &VaultPath,
    target: &Path,
    bytes: &[u8],
    mode: WriteMode<'_>,
) -> Result<(), VaultError> {
    let io_err = |source: io::Error| VaultError::Io {
        path: path.to_string(),
        source,
    };
    let parent = target.parent().ok_or_else(|| VaultError::NotFound {
        path: path.to_string(),
    })?;
    if let WriteMode::Replace { expected } = mode {
        check_current(path, target, expected)?;
    }
    let permissions = match mode {
        WriteMode::Replace { .. } => Some(fs::metadata(target).map_err(io_err)?.permissions()),
        WriteMode::CreateNew => None,
    };
    let temp = TempFile::create(parent, bytes, permissions).map_err(io_err)?;
    match mode {
        WriteMode::Replace { expected } => {
            // The last look before the rename: a write that landed since the first check is kept.
            check_current(path, target, expected)?;
            fs::rename(&temp.path, target).map_err(io_err)?;
            temp.disarm();
        }
        WriteMode::CreateNew => match fs::hard_link(&temp.path, target) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(VaultError::AlreadyExists {
                    path: path.to_string(),
                });
            }
            Err(e) => return Err(io_err(e)),
        },
    }
    sync_folder(parent).map_err(io_err)?;
    Ok(())
}

/// Fails with `ChangedDuringWrite` unless `target` still holds exactly `expected`.
fn check_current(path: &VaultPath, target: &Path, expected: &Revision) -> Result<(), VaultError> {
    let current = match fs::read(target) {
        Ok(bytes) => Some(Revision::of(&bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(VaultError::Io {
                path: path.to_string(),
                source,
            });
        }
    };
    if current.as_ref() == Some(expected) {
        Ok(())
    } else {
        Err(VaultError::ChangedDuringWrite {
            path: path.to_string(),
            current,
        })
    }
}

/// A temp file that removes itself unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    armed: bool,
}

impl TempFile {
    fn create(
        folder: &Path,
        bytes: &[u8],
        permissions: Option<fs::Permissions>,
    ) -> io::Result<TempFile> {
        loop {
            let counter = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            // Dot-prefixed so Obsidian, sync clients' ignore rules and our own scans skip it.
            let name = format!(".quire-{}-{counter}.tmp", std::process::id());
            let path = folder.join(name);
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o666)
                .open(&path);
            let mut file = match file {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            let temp = TempFile { path, armed: true };
            file.write_all(bytes)?;
            if let Some(permissions) = permissions {
                file.set_permissions(fs::Permissions::from_mode(permissions.mode() & 0o7777))?;
            }
            file.sync_all()?;
            return Ok(temp);
        }
    }

    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Makes the rename itself durable.
fn sync_folder(folder: &Path) -> io::Result<()> {
    File::open(folder)?.sync_all()
}
