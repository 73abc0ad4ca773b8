//! Walking the vault for listings.
//!
//! A scan sees what Obsidian sees: no hidden (dot-prefixed) file or folder, and no name that
//! `VaultPath` would refuse; and no sync backend's conflict copy (`sync.rs`). Symlinked files are listed only when their target is a visible file
//! inside the vault; symlinked folders are not descended, so a scan can neither leave the vault nor
//! loop.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use walkdir::WalkDir;

use super::{VaultError, VaultPath, is_conflict_copy, resolve};

/// One visible file found by a scan.
#[derive(Debug, Clone)]
pub struct ScannedFile {
    pub path: VaultPath,
    pub fs_path: PathBuf,
    pub bytes: u64,
    pub modified: SystemTime,
    /// The file is a symbolic link (to a visible file inside the vault).
    pub linked: bool,
}

pub(super) fn scan(
    root: &Path,
    folder: Option<&VaultPath>,
) -> Result<Vec<ScannedFile>, VaultError> {
    Ok(walk(root, folder, None, true)?.files)
}

/// A visible file found by a walk that did not `stat` it: listings stat only the page they return.
#[derive(Debug, Clone)]
pub struct FoundFile {
    pub path: VaultPath,
    pub fs_path: PathBuf,
}

pub(super) fn find(root: &Path, folder: Option<&VaultPath>) -> Result<Vec<FoundFile>, VaultError> {
    Ok(walk(root, folder, None, false)?
        .files
        .into_iter()
        .map(|file| FoundFile {
            path: file.path,
            fs_path: file.fs_path,
        })
        .collect())
}

/// What one folder holds directly: its visible files and its visible subfolders (symlinked
/// folders included, as Obsidian shows them, though scans never descend them).
#[derive(Debug, Clone, Default)]
pub struct FolderListing {
    pub files: Vec<ScannedFile>,
    pub folders: Vec<VaultPath>,
}

pub(super) fn list_folder(
    root: &Path,
    folder: Option<&VaultPath>,
) -> Result<FolderListing, VaultError> {
    walk(root, folder, Some(1), true)
}

/// `stat: false` leaves `bytes` and `modified` at 0 and the epoch (see `find`): a walk that only
/// needs names then costs no system call per file beyond reading each folder.
fn walk(
    root: &Path,
    folder: Option<&VaultPath>,
    max_depth: Option<usize>,
    stat: bool,
) -> Result<FolderListing, VaultError> {
    let (start, prefix) = match folder {
        None => (root.to_path_buf(), Vec::new()),
        Some(folder) => {
            let resolved = resolve::resolve(root, folder)?;
            if !resolved.exists {
                return Err(VaultError::NotFound {
                    path: folder.to_string(),
                });
            }
            if !resolved.fs_path.is_dir() {
                return Err(VaultError::NotAFolder {
                    path: folder.to_string(),
                });
            }
            let target = resolved
                .fs_path
                .canonicalize()
                .map_err(|source| VaultError::Io {
                    path: folder.to_string(),
                    source,
                })?;
            (target, folder.segments().map(str::to_string).collect())
        }
    };
    let mut walker = WalkDir::new(&start).follow_links(false);
    if let Some(depth) = max_depth {
        walker = walker.max_depth(depth);
    }
    let walker = walker
        .into_iter()
        .filter_entry(|entry| entry.depth() == 0 || !is_hidden(entry.file_name()))
        // A sync backend's copy of a conflicting note is not a note: the owner settles it.
        .filter(|entry| {
            entry.as_ref().map_or(true, |entry| {
                entry.file_type().is_dir()
                    || !entry.file_name().to_str().is_some_and(is_conflict_copy)
            })
        });
    let mut files = Vec::new();
    // Per file: whether it is a regular file still to `stat` (after the walk, on every core).
    let mut to_stat = Vec::new();
    let mut folders = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                tracing::warn!(%error, "skipping an unreadable entry while scanning the vault");
                continue;
            }
        };
        let file_type = entry.file_type();
        let is_folder = entry.depth() > 0
            && (file_type.is_dir()
                || (file_type.is_symlink() && visible_folder(root, entry.path())));
        if is_folder && max_depth.is_some() {
            if let Some(path) = vault_path(&start, &prefix, entry.path()) {
                folders.push(path);
            }
            continue;
        }
        let metadata = if file_type.is_symlink() {
            match visible_target(root, entry.path()) {
                Some(metadata) => Some(metadata),
                None => continue,
            }
        } else if !file_type.is_file() {
            continue;
        } else {
            None
        };
        let Some(path) = vault_path(&start, &prefix, entry.path()) else {
            continue;
        };
        files.push(ScannedFile {
            path,
            fs_path: entry.path().to_path_buf(),
            bytes: metadata.as_ref().map_or(0, std::fs::Metadata::len),
            modified: metadata
                .and_then(|metadata| metadata.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH),
            linked: file_type.is_symlink(),
        });
        to_stat.push(stat && !file_type.is_symlink());
    }
    if stat {
        stat_files(&mut files, &to_stat);
    }
    // Paths are unique, so an unstable sort orders them the same, without a buffer.
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    folders.sort();
    Ok(FolderListing { files, folders })
}

/// Fills in the size and time of each file marked in `to_stat`, dropping those that vanished
/// since the walk. A million-note vault's restart is mostly these calls, so they are shared
/// among the cores.
fn stat_files(files: &mut Vec<ScannedFile>, to_stat: &[bool]) {
    let mut present = vec![true; files.len()];
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let share = files.len().div_ceil(workers).max(STAT_SHARE_MIN);
    std::thread::scope(|scope| {
        for ((files, to_stat), present) in files
            .chunks_mut(share)
            .zip(to_stat.chunks(share))
            .zip(present.chunks_mut(share))
        {
            scope.spawn(move || {
                for ((file, _), present) in files
                    .iter_mut()
                    .zip(to_stat)
                    .zip(present.iter_mut())
                    .filter(|((_, to_stat), _)| **to_stat)
                {
                    match std::fs::symlink_metadata(&file.fs_path) {
                        Ok(metadata) => {
                            file.bytes = metadata.len();
                            file.modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                        }
                        Err(_) => *present = false,
                    }
                }
            });
        }
    });
    let mut kept = present.into_iter();
    files.retain(|_| kept.next().unwrap_or(false));
}

/// Below this many files a second thread costs more than it saves.
const STAT_SHARE_MIN: usize = 2048;

/// The vault path of `entry` found below `start` (the folder whose vault segments are `prefix`).
fn vault_path(start: &Path, prefix: &[String], entry: &Path) -> Option<VaultPath> {
    let relative = entry.strip_prefix(start).ok()?;
    let mut segments: Vec<String> = prefix.to_vec();
    for component in relative.components() {
        match component.as_os_str().to_str() {
            Some(name) => segments.push(super::path::nfc(name)),
            None => {
                tracing::warn!(path = %entry.display(), "skipping a file whose name Quire cannot address");
                return None;
            }
        }
    }
    let path = VaultPath::from_segments(segments.iter().map(String::as_str));
    if path.is_none() {
        tracing::warn!(path = %entry.display(), "skipping a file whose name Quire cannot address");
    }
    path
}

/// Whether a symlink leads to a visible folder inside the vault.
fn visible_folder(root: &Path, link: &Path) -> bool {
    let Ok(target) = link.canonicalize() else {
        return false;
    };
    target
        .strip_prefix(root)
        .is_ok_and(|inside| !resolve::has_hidden_segment(inside))
        && target.is_dir()
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().first() == Some(&b'.')
}

/// The metadata of a symlink's target when it is a visible file inside the vault.
fn visible_target(root: &Path, link: &Path) -> Option<std::fs::Metadata> {
    let target = link.canonicalize().ok()?;
    let inside = target.strip_prefix(root).ok()?;
    if resolve::has_hidden_segment(inside) {
        return None;
    }
    let metadata = std::fs::metadata(&target).ok()?;
    metadata.is_file().then_some(metadata)
}
