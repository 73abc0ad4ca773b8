//! Atomic file replacement that never loses another writer's edit.
//!
//! The new bytes go to a hidden temp file in the same folder (same file system, so the final step
//! is a rename), are fsynced, take the old file's permission bits, and only then replace the target.
//! Just before the rename the target is read again: if its bytes no longer match the revision the
//! caller based its edit on (a sync client or the user in Obsidian wrote meanwhile), the temp file
//! is dropped and the caller gets a conflict instead of silently overwriting. Where the file system
//! supports it the replacement is an atomic swap, after which the old file is checked once more: a
//! write that reached it in between is kept as a conflict copy beside the note. The swap is never
//! undone, because once our bytes are visible another writer may have read and built on them.
//! Creation uses `link()`, which fails rather than replace a file that appeared in the meantime.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Revision, VaultError, VaultPath, WriteMode};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How long a swapped-out file is watched for a late write before it is removed.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(3);

/// What a write that landed reports.
#[derive(Debug)]
pub(super) struct Landed {
    /// The written file's modification time, read from the temp file before it took the target's
    /// name: by the time a caller could `stat` the target, another writer may have replaced or
    /// deleted it, and a write that happened must not be reported as failed (a client would retry).
    pub modified: std::time::SystemTime,
    /// Another writer's version that reached the old file during the swap, kept under this name
    /// beside the note.
    pub conflict_copy: Option<PathBuf>,
}

pub(super) fn write_atomic(
    path: &VaultPath,
    target: &Path,
    bytes: &[u8],
    mode: WriteMode<'_>,
) -> Result<Landed, VaultError> {
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
    // A note deleted since the check (a sync client deleting and re-creating it) changed under
    // the caller like any other write: a conflict, not an internal error.
    let vanished = || VaultError::ChangedDuringWrite {
        path: path.to_string(),
        current: None,
    };
    let permissions = match mode {
        WriteMode::Replace { .. } => match fs::metadata(target) {
            Ok(metadata) => Some(metadata.permissions()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(vanished()),
            Err(e) => return Err(io_err(e)),
        },
        WriteMode::CreateNew => None,
    };
    let temp = TempFile::create(parent, bytes, permissions).map_err(io_err)?;
    let mut conflict_copy = None;
    match mode {
        WriteMode::Replace { expected } => {
            // The last look before the rename: a write that landed since the first check is kept.
            check_current(path, target, expected)?;
            conflict_copy =
                replace_checked(&temp, target, expected).map_err(|error| match error {
                    Replaced::Vanished => vanished(),
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
    Ok(Landed {
        modified: temp.modified,
        conflict_copy,
    })
}

enum Replaced {
    /// The target was deleted between the last check and the swap; nothing was replaced.
    Vanished,
    Io(io::Error),
}

/// Puts `temp` in place of `target`. Where the file system can swap two names atomically
/// (`renameat2` with `RENAME_EXCHANGE`), the old file stays reachable under the temp name after
/// the swap and is read once more. A write that reached it after `check_current` (an editor
/// writing in place, a sync client appending) is kept as a conflict copy beside the note, whose
/// name is returned. The swap is not undone: our bytes were visible, and a writer that read them
/// meanwhile would lose its own write if they were taken back. Elsewhere a plain rename is used,
/// with the check just before it.
fn replace_checked(
    temp: &TempFile,
    target: &Path,
    expected: &Revision,
) -> Result<Option<PathBuf>, Replaced> {
    let cwd = rustix::fs::CWD;
    let exchange = |from: &Path, to: &Path| {
        rustix::fs::renameat_with(cwd, from, cwd, to, rustix::fs::RenameFlags::EXCHANGE)
    };
    match exchange(&temp.path, target) {
        Ok(()) => {
            // `temp.path` now names the old file; the dropped `TempFile` removes it.
            // A writer that opened the old file just before the swap may still be writing to
            // it: look twice, the second time after it has had a moment to finish. The copy is a
            // hard link, so a write still under way ends up in it too.
            for settle in [None, Some(SETTLE)] {
                if let Some(pause) = settle {
                    std::thread::sleep(pause);
                }
                let old = fs::read(&temp.path).map_err(Replaced::Io)?;
                if Revision::of(&old) != *expected {
                    let copy = keep_as_conflict_copy(&temp.path, target).map_err(Replaced::Io)?;
                    temp.disarm();
                    return Ok(Some(copy));
                }
            }
            Ok(None)
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
            Ok(None)
        }
        Err(rustix::io::Errno::NOENT) => Err(Replaced::Vanished),
        Err(error) => Err(Replaced::Io(error.into())),
    }
}

/// Gives `file` a visible name beside `target` in the form Quire's sync uses for conflict
/// copies (`Note (conflict quire 2026-12-01 0616).md`, then ` 2`, ` 3` …), which listings skip
/// (`sync::is_conflict_copy`) and the owner settles in Obsidian.
fn keep_as_conflict_copy(file: &Path, target: &Path) -> io::Result<PathBuf> {
    let folder = target.parent().unwrap_or(Path::new("."));
    let stem = target
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("note");
    let extension = target
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let stamp = jiff::Timestamp::now().strftime("%Y-%m-%d %H%M").to_string();
    for n in 1..1000 {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!(" {n}")
        };
        let copy = folder.join(format!(
            "{stem} (conflict quire {stamp}{suffix}){extension}"
        ));
        match fs::hard_link(file, &copy) {
            Ok(()) => {
                fs::remove_file(file)?;
                return Ok(copy);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free conflict copy name"))
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
pub fn process_alive(pid: u32) -> bool {
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
        let created = write_atomic(&path, &target, b"one", WriteMode::CreateNew)
            .expect("create")
            .modified;
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
        .expect("replace")
        .modified;
        assert_eq!(replaced, on_disk());
        // Reported from the written file itself, so a writer deleting the note right after
        // cannot turn a write that happened into an error.
        fs::remove_file(&target).expect("remove");
        let again = write_atomic(&path, &target, b"three", WriteMode::CreateNew)
            .expect("create")
            .modified;
        assert_eq!(again, on_disk());
    }

    fn conflict_copies(folder: &Path) -> Vec<(String, Vec<u8>)> {
        let mut copies: Vec<_> = fs::read_dir(folder)
            .expect("read_dir")
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|name| super::super::is_conflict_copy(name))
            .map(|name| {
                let bytes = fs::read(folder.join(&name)).expect("read");
                (name, bytes)
            })
            .collect();
        copies.sort();
        copies
    }

    #[test]
    fn a_write_that_reached_the_old_file_is_kept_as_a_conflict_copy_and_ours_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("a.md");
        // Our edit was based on "base"; another writer's in-place write reached the old file
        // after the last check. Ours stays in place (someone may already have read it) and theirs
        // is kept beside it.
        fs::write(&target, b"base + theirs").expect("write");
        let temp = TempFile::create(dir.path(), b"ours", None).expect("temp");
        let copy = replace_checked(&temp, &target, &Revision::of(b"base"))
            .ok()
            .flatten()
            .expect("a conflict copy");
        drop(temp);
        assert_eq!(fs::read(&target).expect("read"), b"ours");
        let copies = conflict_copies(dir.path());
        assert_eq!(copies.len(), 1, "{copies:?}");
        assert_eq!(copies[0].1, b"base + theirs");
        assert!(copies[0].0.starts_with("a (conflict quire "), "{copies:?}");
        assert_eq!(copy, dir.path().join(&copies[0].0));

        // A second one on the same minute gets the next free name.
        fs::write(&target, b"ours + theirs again").expect("write");
        let temp = TempFile::create(dir.path(), b"ours again", None).expect("temp");
        assert!(matches!(
            replace_checked(&temp, &target, &Revision::of(b"ours")),
            Ok(Some(_))
        ));
        drop(temp);
        assert_eq!(conflict_copies(dir.path()).len(), 2);

        // Nobody wrote: the old file goes and no copy is made.
        let temp = TempFile::create(dir.path(), b"third", None).expect("temp");
        assert!(matches!(
            replace_checked(&temp, &target, &Revision::of(b"ours again")),
            Ok(None)
        ));
        drop(temp);
        assert_eq!(fs::read(&target).expect("read"), b"third");
        assert_eq!(conflict_copies(dir.path()).len(), 2);
        assert_eq!(fs::read_dir(dir.path()).expect("read_dir").count(), 3);
    }

    #[test]
    fn temp_owner_reads_only_temp_names() {
        assert_eq!(temp_owner(".quire-42-0.tmp"), Some(42));
        assert_eq!(temp_owner(".quire-42-0.md"), None);
        assert_eq!(temp_owner(".quire-42.tmp"), None);
        assert_eq!(temp_owner("quire-42-0.tmp"), None);
    }
}
