//! The vault on disk: path resolution, revisions, atomic writes, per-file locks, trash and scans.
//!
//! Every byte Quire reads from or writes to a vault passes through here, and every path arrives as
//! a `VaultPath`. This module knows nothing of markdown, SQL or MCP; it never follows a symlink out
//! of the vault, never writes through a symlink, and never replaces a file whose bytes changed since
//! the caller last saw them.

mod lock;
mod path;
mod regular;
mod resolve;
mod revision;
mod scan;
mod settings;
mod sync;
mod trash;
mod write;

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub use lock::{FileLock, LockTable};
pub use path::{PathError, VaultPath, unusual_name};
pub use regular::{open_regular, read_opened, read_regular, read_regular_to_string, read_sized};
pub use resolve::{RealFolder, Resolved};
pub use revision::Revision;
pub use scan::{FolderListing, FoundFile, ScannedFile};
pub use settings::{
    DAILY_NOTES_SETTINGS, DailyNotesOverrides, ExcludedFiles, PERIODIC_NOTES_SETTINGS, Period,
    PeriodicSettings, SettingsRead, WeekStart,
};
pub use settings::{LinkSettings, NewLinkFormat};
pub use sync::{SyncLock, is_conflict_copy};
pub use write::process_alive;

/// Removes the hidden temp files that writers killed mid-write left in the vault at `root` (see
/// `write::remove_orphaned_temps`); returns how many.
pub fn remove_orphaned_temp_files(root: &Path) -> usize {
    write::remove_orphaned_temps(root)
}

/// What can go wrong between a valid `VaultPath` and the disk.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("'{path}' leads outside the vault through a symbolic link")]
    Escapes { path: String },
    #[error("'{path}' is a symbolic link that points to a hidden path inside the vault")]
    HiddenTarget { path: String },
    #[error("'{path}' is a symbolic link, and Quire does not write through links")]
    SymlinkTarget { path: String },
    #[error("'{path}' does not exist")]
    NotFound { path: String },
    #[error("'{path}' is a folder, not a file")]
    IsFolder { path: String },
    #[error("'{path}' is not a folder")]
    NotAFolder { path: String },
    #[error("'{path}' is not a regular file")]
    NotRegularFile { path: String },
    #[error("'{path}' already exists")]
    AlreadyExists { path: String },
    #[error("'{path}' changed on disk while Quire was writing it")]
    ChangedDuringWrite {
        path: String,
        current: Option<Revision>,
    },
    #[error("'{path}' is {bytes} bytes, over the limit of {limit} bytes")]
    TooLarge {
        path: String,
        bytes: u64,
        limit: u64,
    },
    #[error("'{path}' cannot be created: {reason}")]
    RefusedName { path: String, reason: PathError },
    #[error("'{path}' cannot be created: '{file}' is a file, not a folder")]
    ParentIsFile { path: String, file: String },
    #[error("'{path}' could not be accessed: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl VaultError {
    fn io(path: &VaultPath, source: io::Error) -> VaultError {
        VaultError::Io {
            path: path.to_string(),
            source,
        }
    }
}

/// A file's bytes together with the facts every read reports.
#[derive(Debug, Clone)]
pub struct FileContents {
    pub bytes: Vec<u8>,
    pub revision: Revision,
    pub modified: SystemTime,
}

/// Where a write leaves the file.
#[derive(Debug, Clone)]
pub struct WriteOutcome {
    pub revision: Revision,
    pub bytes: u64,
    pub modified: SystemTime,
    /// Vault-relative name of another writer's version that reached the file while ours replaced
    /// it; that version is kept there (`Note (conflict quire …).md`) for the owner to settle.
    pub conflict_copy: Option<String>,
}

/// What a replace must find on disk before it may rename over the file.
#[derive(Debug, Clone, Copy)]
pub enum WriteMode<'a> {
    /// The file must not exist; creation is exclusive.
    CreateNew,
    /// The file must still have exactly this revision at the moment of the rename.
    Replace { expected: &'a Revision },
}

/// Where the memory layer keeps its files unless `[memory] folder` says otherwise.
pub const DEFAULT_MEMORY_FOLDER: &str = "About Me";

/// An open vault: its canonical root, the size cap, and the per-file lock table.
#[derive(Debug)]
pub struct Vault {
    root: PathBuf,
    max_file_bytes: u64,
    locks: LockTable,
    /// The folder of memory files (`[memory] folder`), or `None` when the layer is off.
    memory_folder: Option<VaultPath>,
    /// `.obsidian/types.json`, parsed once per version of the file.
    property_types: settings::PropertyTypesCache,
}

/// A file modified less than this long ago may be in the middle of an in-place save.
const SETTLE_WINDOW: Duration = Duration::from_millis(50);
/// The pause before such a file is read again, and how many times at most (an empty file waits
/// until it leaves the window, or this many pauses).
const SETTLE_PAUSE: Duration = Duration::from_millis(3);
const SETTLE_READS: usize = 20;

impl Vault {
    /// Opens the vault at `root`, which must be an existing folder.
    pub fn open(root: &Path, max_file_bytes: u64) -> io::Result<Vault> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a folder", root.display()),
            ));
        }
        Ok(Vault {
            root,
            max_file_bytes,
            locks: LockTable::default(),
            memory_folder: VaultPath::parse(DEFAULT_MEMORY_FOLDER).ok(),
            property_types: settings::PropertyTypesCache::default(),
        })
    }

    /// Keeps the memory layer's files in `folder`, or (`None`) turns the layer off.
    pub fn with_memory_folder(mut self, folder: Option<VaultPath>) -> Vault {
        self.memory_folder = folder;
        self
    }

    pub fn memory_folder(&self) -> Option<&VaultPath> {
        self.memory_folder.as_ref()
    }

    /// Whether `path` is a memory file: a note directly inside the memory folder.
    pub fn is_memory_file(&self, path: &VaultPath) -> bool {
        self.memory_folder.as_ref().is_some_and(|folder| {
            path.parent().as_ref() == Some(folder) && path.extension().as_deref() == Some("md")
        })
    }

    /// Shares every write with the vault's sync service through `lock_file` (see `sync.rs`).
    pub fn with_sync_lock(mut self, lock_file: Option<PathBuf>) -> Vault {
        self.locks = LockTable::with_sync(lock_file.map(SyncLock::new));
        self
    }

    pub fn sync_lock(&self) -> Option<&SyncLock> {
        self.locks.sync()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// Takes the in-process lock for `path`; read-modify-write sequences hold it throughout.
    pub fn lock(&self, path: &VaultPath) -> FileLock<'_> {
        self.locks.lock(path.as_str())
    }

    /// Finds `path` on disk (NFC-insensitively, through in-vault symlinks only).
    pub fn resolve(&self, path: &VaultPath) -> Result<Resolved, VaultError> {
        resolve::resolve(&self.root, path)
    }

    /// The vault-relative place (NFC) that opening `path` reaches, every link followed; `None`
    /// when it cannot be resolved inside the vault. Access checks judge this.
    pub fn real_location(&self, path: &VaultPath) -> Option<String> {
        resolve::real_location(&self.root, path)
    }

    /// The real place of the existing folder `path` (`None`: the root), for `real_child`.
    pub fn real_folder(&self, path: Option<&VaultPath>) -> Option<RealFolder> {
        resolve::real_folder(&self.root, path)
    }

    /// `real_location` of `folder`'s entry `name`, with the folder's place found once before.
    pub fn real_child(&self, folder: &RealFolder, name: &str) -> Option<String> {
        resolve::real_child(&self.root, folder, name)
    }

    /// Reads a whole file, refusing folders and files over the size cap.
    pub fn read(&self, path: &VaultPath) -> Result<FileContents, VaultError> {
        let resolved = self.resolve(path)?;
        self.read_resolved(&resolved)
    }

    pub fn read_resolved(&self, resolved: &Resolved) -> Result<FileContents, VaultError> {
        self.read_resolved_up_to(resolved, self.max_file_bytes)
    }

    /// Reads a whole file like `read`, with a size cap of `limit` bytes instead of the notes' cap
    /// (attachments such as PDFs and photos are larger than any note).
    pub fn read_up_to(&self, path: &VaultPath, limit: u64) -> Result<FileContents, VaultError> {
        let resolved = self.resolve(path)?;
        self.read_resolved_up_to(&resolved, limit)
    }

    fn read_resolved_up_to(
        &self,
        resolved: &Resolved,
        limit: u64,
    ) -> Result<FileContents, VaultError> {
        let path = &resolved.rel;
        if !resolved.exists {
            return Err(VaultError::NotFound {
                path: path.to_string(),
            });
        }
        let metadata = match &resolved.metadata {
            Some(metadata) => metadata.clone(),
            None => std::fs::metadata(&resolved.fs_path).map_err(|e| VaultError::io(path, e))?,
        };
        if metadata.is_dir() {
            return Err(VaultError::IsFolder {
                path: path.to_string(),
            });
        }
        // A FIFO or device named like a note would block the read forever.
        if !metadata.is_file() {
            return Err(VaultError::NotRegularFile {
                path: path.to_string(),
            });
        }
        if metadata.len() > limit {
            return Err(VaultError::TooLarge {
                path: path.to_string(),
                bytes: metadata.len(),
                limit,
            });
        }
        let not_regular = || VaultError::NotRegularFile {
            path: path.to_string(),
        };
        let read = || {
            read_regular(&resolved.fs_path)
                .map_err(|e| VaultError::io(path, e))?
                .ok_or_else(not_regular)
        };
        // The metadata above found a regular file, so the open needs no `stat` of its own.
        let (mut bytes, opened) = regular::open_checked(&resolved.fs_path)
            .and_then(|opened| opened.map(regular::read_opened).transpose())
            .map_err(|e| VaultError::io(path, e))?
            .ok_or_else(not_regular)?;
        let mut modified = opened.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        // Obsidian and many editors save in place: truncate, then write. A read between the two
        // sees an empty or partial note, and an edit based on it would replace the whole note
        // (races.py found agent appends that wiped a note this way). A file changed in the last
        // moments is read again after a short pause until two reads agree.
        for _ in 0..SETTLE_READS {
            let recent = SystemTime::now()
                .duration_since(modified)
                .is_ok_and(|age| age < SETTLE_WINDOW);
            if !recent {
                break;
            }
            std::thread::sleep(SETTLE_PAUSE);
            let again = read()?;
            modified = std::fs::metadata(&resolved.fs_path)
                .and_then(|metadata| metadata.modified())
                .unwrap_or(modified);
            // Two empty reads may both fall between the truncation and the write.
            if again == bytes && !again.is_empty() {
                break;
            }
            bytes = again;
        }
        if bytes.len() as u64 > limit {
            return Err(VaultError::TooLarge {
                path: path.to_string(),
                bytes: bytes.len() as u64,
                limit,
            });
        }
        Ok(FileContents {
            revision: Revision::of(&bytes),
            bytes,
            modified,
        })
    }

    /// Why the folders of a new file could not be made: a file where a folder should be (EEXIST
    /// or ENOTDIR) is named, anything else is an I/O error.
    fn folder_error(&self, path: &VaultPath, parent: &Path, error: io::Error) -> VaultError {
        let blocked = matches!(
            error.kind(),
            io::ErrorKind::AlreadyExists | io::ErrorKind::NotADirectory
        );
        let file = parent
            .ancestors()
            .take_while(|folder| folder.starts_with(&self.root) && *folder != self.root)
            .find(|folder| std::fs::metadata(folder).is_ok_and(|meta| !meta.is_dir()))
            .and_then(|file| file.strip_prefix(&self.root).ok())
            .and_then(Path::to_str);
        match file {
            Some(file) if blocked => VaultError::ParentIsFile {
                path: path.to_string(),
                file: file.to_owned(),
            },
            _ => VaultError::io(path, error),
        }
    }

    /// Writes `bytes` to `path` atomically. The caller holds the file's lock.
    pub fn write(
        &self,
        resolved: &Resolved,
        bytes: &[u8],
        mode: WriteMode<'_>,
    ) -> Result<WriteOutcome, VaultError> {
        let path = &resolved.rel;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(VaultError::TooLarge {
                path: path.to_string(),
                bytes: bytes.len() as u64,
                limit: self.max_file_bytes,
            });
        }
        if resolved.is_symlink {
            return Err(VaultError::SymlinkTarget {
                path: path.to_string(),
            });
        }
        let parent = resolved
            .fs_path
            .parent()
            .ok_or_else(|| VaultError::NotFound {
                path: path.to_string(),
            })?;
        if !resolved.exists {
            path.check_new_names()
                .map_err(|reason| VaultError::RefusedName {
                    path: path.to_string(),
                    reason,
                })?;
            std::fs::create_dir_all(parent).map_err(|e| self.folder_error(path, parent, e))?;
            // The folders just created must still lie inside the vault: a racing symlink swap
            // on the way would otherwise let the write land outside.
            let canonical_parent = parent.canonicalize().map_err(|e| VaultError::io(path, e))?;
            if !canonical_parent.starts_with(&self.root) {
                return Err(VaultError::Escapes {
                    path: path.to_string(),
                });
            }
        }
        let landed = write::write_atomic(path, &resolved.fs_path, bytes, mode)?;
        let conflict_copy = landed.conflict_copy.map(|copy| {
            copy.strip_prefix(&self.root)
                .unwrap_or(&copy)
                .to_string_lossy()
                .into_owned()
        });
        if let Some(copy) = &conflict_copy {
            tracing::warn!(path = %path, copy = %copy, "another writer changed the note during a write; its version is kept as a conflict copy");
        }
        Ok(WriteOutcome {
            revision: Revision::of(bytes),
            bytes: bytes.len() as u64,
            modified: landed.modified,
            conflict_copy,
        })
    }

    /// Moves a file into the vault's `.trash/` folder, as Obsidian's "move to Obsidian trash"
    /// does, after checking it still has `expected`. Returns the vault-relative trash path.
    pub fn trash(&self, resolved: &Resolved, expected: &Revision) -> Result<String, VaultError> {
        trash::move_to_trash(&self.root, resolved, expected)
    }

    /// Removes the now-empty folders that held `resolved`, innermost first, stopping at the
    /// vault root or at the first folder `may_remove` (given its vault-relative path) refuses.
    /// Returns their vault-relative paths.
    pub fn prune_empty_folders(
        &self,
        resolved: &Resolved,
        may_remove: &dyn Fn(&str) -> bool,
    ) -> Vec<String> {
        match resolved.fs_path.parent() {
            Some(parent) => trash::prune_empty_folders(&self.root, parent, may_remove),
            None => Vec::new(),
        }
    }

    /// How Obsidian writes new links in this vault, read now.
    pub fn link_settings(&self) -> LinkSettings {
        LinkSettings::read(&self.root)
    }

    /// The property types declared in `.obsidian/types.json` as the file is now, parsed again
    /// only when it changed (see `settings::PropertyTypesCache`).
    pub fn property_types(&self) -> settings::PropertyTypes {
        self.property_types.current(&self.root)
    }

    /// The daily-notes and templates folders, read now.
    pub fn generated_note_folders(&self) -> Vec<String> {
        settings::generated_note_folders(&self.root)
    }

    /// The daily-notes folder from Obsidian's settings, read now (see
    /// `settings::daily_notes_folder`).
    pub fn daily_notes_folder(&self) -> Result<String, String> {
        settings::daily_notes_folder(&self.root)
    }

    /// Obsidian's excluded files, read now from `.obsidian/app.json`.
    pub fn excluded_files(&self) -> ExcludedFiles {
        ExcludedFiles::read(&self.root)
    }

    /// The Tasks plugin's settings (`.obsidian/plugins/obsidian-tasks-plugin/data.json`), read now;
    /// `Null` when the file is missing or not valid JSON (the plugin's defaults then apply).
    pub fn tasks_plugin_settings(&self) -> serde_json::Value {
        let path = self
            .root
            .join(".obsidian/plugins/obsidian-tasks-plugin/data.json");
        let Ok(text) = read_regular_to_string(&path) else {
            return serde_json::Value::Null;
        };
        serde_json::from_str(&text).unwrap_or_else(|_| {
            tracing::warn!("the Tasks plugin's data.json is not valid JSON; using its defaults");
            serde_json::Value::Null
        })
    }

    /// Every visible file under `folder` (or the whole vault), sorted by path.
    pub fn scan(&self, folder: Option<&VaultPath>) -> Result<Vec<ScannedFile>, VaultError> {
        scan::scan(&self.root, folder)
    }

    /// Every visible file below `folder` (`None`: the whole vault), by name only, in path order.
    pub fn find(&self, folder: Option<&VaultPath>) -> Result<Vec<FoundFile>, VaultError> {
        scan::find(&self.root, folder)
    }

    /// The visible files and subfolders directly inside `folder` (`None`: the vault root).
    pub fn list_folder(&self, folder: Option<&VaultPath>) -> Result<FolderListing, VaultError> {
        scan::list_folder(&self.root, folder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault() -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = Vault::open(dir.path(), 1024).expect("open");
        (dir, vault)
    }

    fn vp(raw: &str) -> VaultPath {
        VaultPath::parse(raw).expect("valid path")
    }

    /// An editor that saves in place (truncate, then write, as Obsidian does) leaves the note
    /// empty for a moment; a read then must not return that empty note, or an append based on it
    /// replaces the whole note.
    #[test]
    fn a_note_saved_in_place_never_reads_empty() {
        use std::time::Instant;
        let (_dir, vault) = vault();
        let path = vp("Saved.md");
        let fs_path = vault.root().join("Saved.md");
        std::fs::write(&fs_path, "the whole note\n").expect("write");
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Saves whose empty moment neared the settle window because the saving thread was held off
        // the CPU (a loaded machine), and reads held off it past the window themselves: no read
        // can tell those from an empty note, so they are excused, and counted in the message.
        let slow_saves: std::sync::Mutex<Vec<(Instant, Instant)>> = Default::default();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let truncated = Instant::now();
                    let mut file = std::fs::File::create(&fs_path).expect("truncate");
                    std::thread::sleep(Duration::from_millis(1));
                    std::io::Write::write_all(&mut file, b"the whole note\n").expect("write");
                    drop(file);
                    let written = Instant::now();
                    if written - truncated >= SETTLE_WINDOW / 2 {
                        slow_saves
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((truncated, written));
                    }
                    std::thread::sleep(Duration::from_millis(30));
                }
            });
            let mut empty_reads = Vec::new();
            for _ in 0..300 {
                let started = Instant::now();
                let read = vault.read(&path).expect("read");
                if read.bytes.is_empty() {
                    empty_reads.push((started, Instant::now()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let slow = slow_saves.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let unexcused = empty_reads
                .iter()
                .filter(|(started, done)| {
                    *done - *started < SETTLE_WINDOW
                        && !slow
                            .iter()
                            .any(|(truncated, written)| started <= written && done >= truncated)
                })
                .count();
            // Without the settling read about one read in thirty lands in the gap (about ten
            // here); one is tolerated for a save the window only just missed.
            assert!(
                unexcused <= 1,
                "{unexcused} reads saw the note empty mid-save ({} more were excused: slowed past the window)",
                empty_reads.len() - unexcused
            );
        });
    }

    #[test]
    fn create_then_replace_with_revision() {
        let (_dir, vault) = vault();
        let path = vp("A/B/note.md");
        let resolved = vault.resolve(&path).expect("resolve");
        let first = vault
            .write(&resolved, b"one\n", WriteMode::CreateNew)
            .expect("create");
        let resolved = vault.resolve(&path).expect("resolve");
        let again = vault.write(&resolved, b"x", WriteMode::CreateNew);
        assert!(matches!(again, Err(VaultError::AlreadyExists { .. })));
        let second = vault
            .write(
                &resolved,
                b"two\n",
                WriteMode::Replace {
                    expected: &first.revision,
                },
            )
            .expect("replace");
        let stale = vault.write(
            &resolved,
            b"three\n",
            WriteMode::Replace {
                expected: &first.revision,
            },
        );
        assert!(matches!(stale, Err(VaultError::ChangedDuringWrite { .. })));
        let read = vault.read(&path).expect("read");
        assert_eq!(read.bytes, b"two\n");
        assert_eq!(read.revision, second.revision);
    }

    #[test]
    fn size_cap_applies_to_writes_and_reads() {
        let (dir, vault) = vault();
        let resolved = vault.resolve(&vp("big.md")).expect("resolve");
        let too_big = vec![b'x'; 1025];
        assert!(matches!(
            vault.write(&resolved, &too_big, WriteMode::CreateNew),
            Err(VaultError::TooLarge { .. })
        ));
        std::fs::write(dir.path().join("big.md"), &too_big).expect("write");
        assert!(matches!(
            vault.read(&vp("big.md")),
            Err(VaultError::TooLarge { .. })
        ));
    }
}
