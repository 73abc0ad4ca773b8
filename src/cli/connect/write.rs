//! Reading a client's configuration file and replacing it without ever leaving it half written.
//!
//! The new text goes to a hidden temp file in the same folder with the old file's permission bits
//! (0600 for a new file: these files may come to hold API keys), is fsynced, and only then takes
//! the file's name by rename. The old bytes are first copied, with the same bits, to
//! `<file>.quire-backup-<UTC time>`, never over an earlier backup. Just before the rename the file
//! is read again: a client that wrote it meanwhile (Claude Code rewrites `~/.claude.json` often)
//! makes the run stop with nothing changed and no backup left behind. A new file is put in place
//! with `link()`, which fails rather than replace one that appeared. A symbolic link (dotfiles
//! managers) is followed, so the file it points to is changed and the link stays.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use super::ConnectError;

/// Permission bits of a configuration file Quire creates.
const NEW_FILE_MODE: u32 = 0o600;

/// A configuration file as it was read: where it really is, and its bytes and mode if it exists.
#[derive(Debug)]
pub(super) struct Current {
    pub path: PathBuf,
    pub existing: Option<Existing>,
}

#[derive(Debug)]
pub(super) struct Existing {
    pub bytes: Vec<u8>,
    mode: u32,
}

/// Reads `path` (following a symbolic link to its target); a missing file is `existing: None`.
pub(super) fn read_current(path: &Path) -> Result<Current, ConnectError> {
    let io_error = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ConnectError::Io {
            action,
            path,
            source,
        }
    };
    let is_link = fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_symlink());
    let path = if is_link {
        fs::canonicalize(path).map_err(io_error("follow the symbolic link", path))?
    } else {
        path.to_path_buf()
    };
    let metadata = match fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Ok(Current {
                path,
                existing: None,
            });
        }
        Err(error) => return Err(io_error("inspect", &path)(error)),
    };
    if !metadata.is_file() {
        return Err(ConnectError::NotAFile { path });
    }
    let bytes = fs::read(&path).map_err(io_error("read", &path))?;
    let mode = metadata.permissions().mode() & 0o7777;
    Ok(Current {
        path,
        existing: Some(Existing { bytes, mode }),
    })
}

/// Puts `bytes` in place of `current`, keeping a backup of what was there; returns the backup.
pub(super) fn replace(current: &Current, bytes: &[u8]) -> Result<Option<PathBuf>, ConnectError> {
    let target = &current.path;
    let io_error = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ConnectError::Io {
            action,
            path,
            source,
        }
    };
    let folder = target
        .parent()
        .ok_or_else(|| ConnectError::NotAFile {
            path: target.clone(),
        })?
        .to_path_buf();
    fs::create_dir_all(&folder).map_err(io_error("create the folder", &folder))?;
    let mode = current
        .existing
        .as_ref()
        .map_or(NEW_FILE_MODE, |existing| existing.mode);
    let temp = TempFile::create(target, bytes, mode)
        .map_err(io_error("write a temporary file in", &folder))?;
    let backup = match &current.existing {
        None => {
            match fs::hard_link(&temp.path, target) {
                Ok(()) => {}
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(ConnectError::ChangedMeanwhile {
                        path: target.clone(),
                    });
                }
                Err(error) => return Err(io_error("create", target)(error)),
            }
            None
        }
        Some(existing) => {
            let backup = write_backup(target, existing).map_err(io_error("back up", target))?;
            // The last look before the rename: a client's write since the first read is kept.
            if fs::read(target).ok().as_deref() != Some(existing.bytes.as_slice()) {
                // Nothing changed, so the backup of an outdated version is no use to anyone.
                let _ = fs::remove_file(&backup);
                return Err(ConnectError::ChangedMeanwhile {
                    path: target.clone(),
                });
            }
            fs::rename(&temp.path, target).map_err(io_error("replace", target))?;
            Some(backup)
        }
    };
    // The new name is durable only once the folder is; a failure here changes nothing written.
    if let Ok(folder) = File::open(&folder) {
        let _ = folder.sync_all();
    }
    Ok(backup)
}

/// Copies the old bytes to `<file>.quire-backup-<time>` (with `-2`, `-3`... should that exist).
fn write_backup(target: &Path, existing: &Existing) -> io::Result<PathBuf> {
    let time = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let base = format!("{}.quire-backup-{time}", target.display());
    for attempt in 1..100 {
        let path = PathBuf::from(match attempt {
            1 => base.clone(),
            n => format!("{base}-{n}"),
        });
        match create_with(&path, &existing.bytes, existing.mode) {
            Ok(()) => return Ok(path),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "a hundred backups from the same second already exist",
    ))
}

/// A new file (never an existing one) holding `bytes` with exactly `mode`, fsynced.
fn create_with(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    let written = file
        .write_all(bytes)
        // The umask may have taken bits the old file had.
        .and_then(|()| file.set_permissions(fs::Permissions::from_mode(mode)))
        .and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = fs::remove_file(path);
    }
    written
}

/// A hidden file beside the target, removed when dropped unless renamed over it.
struct TempFile {
    path: PathBuf,
}

impl TempFile {
    fn create(target: &Path, bytes: &[u8], mode: u32) -> io::Result<TempFile> {
        let name = target
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = target.with_file_name(format!(".{name}.quire-{}.tmp", std::process::id()));
        // A temp file a killed run left is this process id's only by chance: it is replaced.
        let _ = fs::remove_file(&path);
        create_with(&path, bytes, mode)?;
        Ok(TempFile { path })
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        // After a rename there is nothing here; after a hard link this removes the extra name.
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(folder)
            .expect("list")
            .map(|entry| {
                entry
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_another_program_wrote_since_the_read_is_left_alone() {
        let folder = tempfile::tempdir().expect("tempdir");
        let file = folder.path().join("mcp.json");
        fs::write(&file, "{}").expect("write");
        let current = read_current(&file).expect("read");
        fs::write(&file, "{\"theirs\": 1}").expect("write");
        let outcome = replace(&current, b"{\"ours\": 1}");
        assert!(
            matches!(outcome, Err(ConnectError::ChangedMeanwhile { .. })),
            "{outcome:?}"
        );
        assert_eq!(fs::read_to_string(&file).expect("read"), "{\"theirs\": 1}");
        assert_eq!(names(folder.path()), ["mcp.json"]);
    }

    #[test]
    fn a_file_that_appeared_since_the_read_is_left_alone() {
        let folder = tempfile::tempdir().expect("tempdir");
        let file = folder.path().join("mcp.json");
        let current = read_current(&file).expect("read");
        assert!(current.existing.is_none());
        fs::write(&file, "{\"theirs\": 1}").expect("write");
        let outcome = replace(&current, b"{\"ours\": 1}");
        assert!(
            matches!(outcome, Err(ConnectError::ChangedMeanwhile { .. })),
            "{outcome:?}"
        );
        assert_eq!(fs::read_to_string(&file).expect("read"), "{\"theirs\": 1}");
        assert_eq!(names(folder.path()), ["mcp.json"]);
    }

    #[test]
    fn backups_never_replace_each_other() {
        let folder = tempfile::tempdir().expect("tempdir");
        let file = folder.path().join("mcp.json");
        for version in ["1", "2", "3"] {
            fs::write(&file, version).expect("write");
            let current = read_current(&file).expect("read");
            replace(&current, b"new").expect("replaced");
        }
        let backups: Vec<String> = names(folder.path())
            .into_iter()
            .filter(|name| name != "mcp.json")
            .collect();
        let contents: Vec<String> = backups
            .iter()
            .map(|name| fs::read_to_string(folder.path().join(name)).expect("read"))
            .collect();
        assert_eq!(backups.len(), 3, "{backups:?}");
        let mut sorted = contents.clone();
        sorted.sort();
        assert_eq!(sorted, ["1", "2", "3"]);
    }
}
