//! Atomic file replacement that never loses another writer's edit.
//!
//! The new bytes go to a hidden temp file in the same folder (same file system, so the final step
//! is a rename), are fsynced, take the old file's permission bits, and only then replace the target.
//! Just before the rename the target is read again: if its bytes no longer match the revision the
//! caller based its edit on (a sync client or the user in Obsidian wrote meanwhile), the temp file
//! is dropped and the caller gets a conflict instead of silently overwriting. Where the file system
//! supports it the replacement is an atomic swap, after which the old file is checked once more and
//! the swap undone if a write reached it in between. Creation uses `link()`,
//! which fails rather than replace a file that appeared in the meantime.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Revision, VaultError, VaultPath, WriteMode};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How long a swapped-out file is watched for a late write before it is removed.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(3);

/// Returns the written file's modification time, read from the temp file before it took the
/// target's name: by the time a caller could `stat` the target, another writer may have replaced or
/// deleted it, and a write that happened must not be reported as failed (a client would retry it).
pub(super) fn write_atomic(
    path: &VaultPath,
    target: &Path,
    bytes: &[u8],
    mode: WriteMode<'_>,
) -> Result<std::time::SystemTime, VaultError> {
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
            replace_checked(&temp, target, expected).map_err(|error| match error {
                Replaced::Changed(current) => VaultError::ChangedDuringWrite {
                    path: path.to_string(),
                    current: Some(current),
                },
                Replaced::Io(source) => io_err(source),
            })?;
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
    Ok(temp.modified)
}

enum Replaced {
    /// Another writer changed the old file between the last check and the swap; it is back in place.
    Changed(Revision),
    Io(io::Error),
}

/// Puts `temp` in place of `target`. Where the file system can swap two names atomically
/// (`renameat2` with `RENAME_EXCHANGE`), the old file stays reachable under the temp name after
/// the swap and is read once more: a write that reached it after `check_current` (an editor
/// writing in place, a sync client appending) makes the swap undo itself, so that write is kept and
/// the caller gets a conflict. Elsewhere a plain rename is used, with the check just before it.
fn replace_checked(temp: &TempFile, target: &Path, expected: &Revision) -> Result<(), Replaced> {
    let cwd = rustix::fs::CWD;
    let exchange = |from: &Path, to: &Path| {
        rustix::fs::renameat_with(cwd, from, cwd, to, rustix::fs::RenameFlags::EXCHANGE)
    };
    match exchange(&temp.path, target) {
        Ok(()) => {
            // `temp.path` now names the old file; the dropped `TempFile` removes it.
            // A writer that opened the old file just before the swap may still be writing to
            // it: look twice, the second time after it has had a moment to finish.
            for settle in [None, Some(SETTLE)] {
                if let Some(pause) = settle {
                    std::thread::sleep(pause);
                }
                let old = fs::read(&temp.path).map_err(Replaced::Io)?;
                let old_revision = Revision::of(&old);
                if old_revision != *expected {
                    exchange(&temp.path, target).map_err(|e| Replaced::Io(e.into()))?;
                    return Err(Replaced::Changed(old_revision));
                }
            }
            Ok(())
        }
        Err(error)
            // The file system or a syscall filter does not offer the swap: rename as before.
            if [
                rustix::io::Errno::INVAL,
                rustix::io::Errno::NOSYS,
                rustix::io::Errno::NOTSUP,
                rustix::io::Errno::PERM,
                rustix::io::Errno::ACCESS,
                rustix::io::Errno::XDEV,
            ]
            .contains(&error) =>
        {
            fs::rename(&temp.path, target).map_err(Replaced::Io)?;
            temp.disarm();
            Ok(())
        }
        Err(error) => Err(Replaced::Io(error.into())),
    }
}

/// Fails with `ChangedDuringWrite` unless `target` still holds exactly `expected`.
fn check_current(path: &VaultPath, target: &Path, expected: &Revision) -> Result<(), VaultError> {
    let current = match super::read_regular(target) {
        Ok(Some(bytes)) => Some(Revision::of(&bytes)),
        Ok(None) => {
            return Err(VaultError::NotRegularFile {
                path: path.to_string(),
            });
        }
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

/// Removes the temp files of Quire processes that died mid-write (killed, power lost): their `Drop`
/// never ran, and a sync client that syncs hidden files would otherwise carry them to every device
/// for ever. A temp file names its writer's process id; one whose process is still alive (another
/// Quire on this vault, mid-write) is left alone. Hidden folders are not entered: writes never go
/// there. Returns how many were removed.
pub(super) fn remove_orphaned_temps(root: &Path) -> usize {
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|entry| {
            entry.depth() == 0
                || !entry.file_type().is_dir()
                || !entry.file_name().as_encoded_bytes().starts_with(b".")
        });
    let mut removed = 0;
    for entry in walker.flatten() {
        let orphaned = entry.file_type().is_file()
            && entry
                .file_name()
                .to_str()
                .and_then(temp_owner)
                .is_some_and(|pid| pid != std::process::id() && !process_alive(pid));
        if orphaned && fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process id in a temp file's name (`.quire-<pid>-<counter>.tmp`, as `TempFile` names it).
fn temp_owner(name: &str) -> Option<u32> {
    let (pid, counter) = name
        .strip_prefix(".quire-")?
        .strip_suffix(".tmp")?
        .split_once('-')?;
    counter.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Whether process `pid` exists; when unsure (no permission to ask), it is taken as alive.
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    #[allow(
        unsafe_code,
        reason = "the standard library cannot ask whether another process exists"
    )]
    // SAFETY: signal 0 sends nothing; kill only checks that the process exists and may be signalled.
    let answer = unsafe { libc::kill(pid, 0) };
    answer == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// A temp file that removes itself unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    armed: std::cell::Cell<bool>,
    /// The content's modification time; renames keep it.
    modified: std::time::SystemTime,
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
            let mut temp = TempFile {
                path,
                armed: std::cell::Cell::new(true),
                modified: std::time::SystemTime::UNIX_EPOCH,
            };
            file.write_all(bytes)?;
            if let Some(permissions) = permissions {
                file.set_permissions(fs::Permissions::from_mode(permissions.mode() & 0o7777))?;
            }
            file.sync_all()?;
            temp.modified = file.metadata()?.modified()?;
            return Ok(temp);
        }
    }

    /// The temp name was renamed away: nothing is left to remove.
    fn disarm(&self) {
        self.armed.set(false);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.armed.get() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Makes the rename itself durable.
fn sync_folder(folder: &Path) -> io::Result<()> {
    File::open(folder)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temps_of_dead_writers_are_removed_and_others_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::create_dir_all(root.join("Notes")).expect("mkdir");
        fs::create_dir_all(root.join(".hidden")).expect("mkdir");
        // A process that has exited: its id names no live process (until the system reuses it).
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let own = std::process::id();
        let dead_temp = format!(".quire-{dead}-7.tmp");
        for file in [
            format!("Notes/{dead_temp}"),
            dead_temp.clone(),
            format!(".hidden/{dead_temp}"),
            format!("Notes/.quire-{own}-3.tmp"),
            "Notes/.quire-1-2.tmp".to_string(),
            "Notes/.quire-x-2.tmp".to_string(),
            "Notes/note.md".to_string(),
        ] {
            fs::write(root.join(file), b"x").expect("write");
        }
        assert_eq!(remove_orphaned_temps(root), 2);
        assert!(!root.join("Notes").join(&dead_temp).exists());
        assert!(!root.join(&dead_temp).exists());
        // Hidden folders are not entered; live writers (this process, init) and other names stay.
        assert!(root.join(".hidden").join(&dead_temp).exists());
        assert!(root.join(format!("Notes/.quire-{own}-3.tmp")).exists());
        assert!(root.join("Notes/.quire-1-2.tmp").exists());
        assert!(root.join("Notes/.quire-x-2.tmp").exists());
        assert!(root.join("Notes/note.md").exists());
    }

    #[test]
    fn the_reported_modification_time_is_the_written_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("a.md");
        let path = VaultPath::parse("a.md").expect("path");
        let created = write_atomic(&path, &target, b"one", WriteMode::CreateNew).expect("create");
        let on_disk = || {
            fs::metadata(&target)
                .and_then(|m| m.modified())
                .expect("stat")
        };
        assert_eq!(created, on_disk());
        let expected = Revision::of(b"one");
        let replaced = write_atomic(
            &path,
            &target,
            b"two",
            WriteMode::Replace {
                expected: &expected,
            },
        )
        .expect("replace");
        assert_eq!(replaced, on_disk());
        // Reported from the written file itself, so a writer deleting the note right after
        // cannot turn a write that happened into an error.
        fs::remove_file(&target).expect("remove");
        let again = write_atomic(&path, &target, b"three", WriteMode::CreateNew).expect("create");
        assert_eq!(again, on_disk());
    }

    #[test]
    fn temp_owner_reads_only_temp_names() {
        assert_eq!(temp_owner(".quire-42-0.tmp"), Some(42));
        assert_eq!(temp_owner(".quire-42-0.md"), None);
        assert_eq!(temp_owner(".quire-42.tmp"), None);
        assert_eq!(temp_owner("quire-42-0.tmp"), None);
    }
}
