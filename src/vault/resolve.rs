//! Resolution of a `VaultPath` against the disk.
//!
//! Walks the path one segment at a time from the canonical vault root. A segment that is not on
//! disk under its own spelling is looked up by NFC comparison among its siblings (vaults synced from
//! macOS mix NFC and NFD names). A symlink on the way is followed only when its target stays inside
//! the vault and has no hidden segment; anything else is refused before any file is opened.

use std::io;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

use super::{VaultError, VaultPath};

/// A path located on disk.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The path as the client named it (NFC).
    pub rel: VaultPath,
    /// Where to open it: existing segments in their on-disk spelling, missing ones as given.
    pub fs_path: PathBuf,
    pub exists: bool,
    /// The final segment is itself a symlink (whose target is inside the vault).
    pub is_symlink: bool,
    /// What the final entry is, from the walk's own `lstat`, when it is not a symlink: a read
    /// needs no second `stat` to know it is a regular file of some size.
    pub metadata: Option<std::fs::Metadata>,
}

impl Resolved {
    /// Opens the file for reading if it is a regular file (`open_regular`), without a second
    /// `stat` when the walk's own saw one.
    pub fn open(&self) -> io::Result<Option<(std::fs::File, std::fs::Metadata)>> {
        match &self.metadata {
            Some(metadata) if metadata.is_file() => super::regular::open_checked(&self.fs_path),
            Some(_) => Ok(None),
            None => super::regular::open_regular(&self.fs_path),
        }
    }
}

pub(super) fn resolve(root: &Path, path: &VaultPath) -> Result<Resolved, VaultError> {
    let segments: Vec<&str> = path.segments().collect();
    let mut current = root.to_path_buf();
    let mut is_symlink = false;
    let mut last = None;
    for (index, segment) in segments.iter().enumerate() {
        let is_last = index + 1 == segments.len();
        let Some((name, metadata)) =
            find_entry(&current, segment).map_err(|e| io_error(path, e))?
        else {
            let mut fs_path = current;
            fs_path.extend(&segments[index..]);
            return Ok(Resolved {
                rel: path.clone(),
                fs_path,
                exists: false,
                is_symlink: false,
                metadata: None,
            });
        };
        let candidate = current.join(&name);
        if metadata.file_type().is_symlink() {
            let target = match candidate.canonicalize() {
                Ok(target) => target,
                // A dangling link cannot be proven to stay inside the vault.
                Err(_) => {
                    return Err(VaultError::Escapes {
                        path: path.to_string(),
                    });
                }
            };
            check_inside(root, &target, path)?;
            if is_last {
                is_symlink = true;
                current = candidate;
            } else {
                current = target;
            }
        } else {
            current = candidate;
            if is_last {
                last = Some(metadata);
            }
        }
    }
    Ok(Resolved {
        rel: path.clone(),
        fs_path: current,
        exists: true,
        is_symlink,
        metadata: last,
    })
}

/// Returns the on-disk name of the entry of `dir` called `segment`, comparing NFC forms when the
/// exact spelling is absent, with the entry's own metadata (a symlink is not followed). One
/// `lstat` per segment in the usual case: every read and every search snippet walks this.
fn find_entry(
    dir: &Path,
    segment: &str,
) -> io::Result<Option<(std::ffi::OsString, std::fs::Metadata)>> {
    match std::fs::symlink_metadata(dir.join(segment)) {
        Ok(metadata) => return Ok(Some((segment.into(), metadata))),
        Err(e) if is_missing(&e) => {}
        Err(e) => return Err(e),
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_missing(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some(text) = name.to_str()
            && text.nfc().eq(segment.chars())
        {
            // The entry may go between the listing and this call, like any file between two reads.
            let metadata = std::fs::symlink_metadata(dir.join(&name))?;
            return Ok(Some((name, metadata)));
        }
    }
    Ok(None)
}

/// Where `path` really is: the vault-relative location, in NFC, of what resolution opens with
/// every symbolic link followed, the last one included; for a path that does not exist (yet), the
/// real place of its deepest existing folder followed by the missing segments. `None` when the path
/// cannot be resolved inside the vault. The access check judges this location, so the check and
/// the open agree on one file whatever the names on disk are spelled in (an NFD link name once led
/// the check to judge the visible folder while the open followed the link).
pub(super) fn real_location(root: &Path, path: &VaultPath) -> Option<String> {
    let resolved = resolve(root, path).ok()?;
    let mut missing = Vec::new();
    let mut existing = resolved.fs_path.as_path();
    let real = loop {
        match existing.canonicalize() {
            Ok(real) => break real,
            Err(_) => {
                missing.push(existing.file_name()?);
                existing = existing.parent()?;
            }
        }
    };
    let mut location = vault_relative_nfc(root, &real)?;
    for segment in missing.iter().rev() {
        if !location.is_empty() {
            location.push('/');
        }
        location.extend(segment.to_str()?.nfc());
    }
    Some(location)
}

/// An existing folder's real place, found once and reused for every file in it (a listing or a
/// search judges thousands of files in a few folders).
#[derive(Debug, Clone)]
pub struct RealFolder {
    /// Where it is on disk, every link followed.
    fs_path: PathBuf,
    /// Its vault-relative place in NFC; empty for the root.
    rel: String,
}

impl RealFolder {
    /// Its vault-relative place in NFC (`""`: the root).
    pub fn rel(&self) -> &str {
        &self.rel
    }
}

/// The real place of the existing folder `path` (`None` is the root); `None` when it does not
/// exist as a folder or cannot be resolved inside the vault.
pub(super) fn real_folder(root: &Path, path: Option<&VaultPath>) -> Option<RealFolder> {
    let Some(path) = path else {
        return Some(RealFolder {
            fs_path: root.to_path_buf(),
            rel: String::new(),
        });
    };
    let resolved = resolve(root, path).ok()?;
    let fs_path = resolved.fs_path.canonicalize().ok()?;
    if !resolved.exists || !fs_path.is_dir() {
        return None;
    }
    let rel = vault_relative_nfc(root, &fs_path)?;
    Some(RealFolder { fs_path, rel })
}

/// `real_location` of the entry `name` of `folder`: what resolution opens, found with the same
/// lookup (exact spelling, then NFC) and the same refusal of links that leave the vault.
pub(super) fn real_child(root: &Path, folder: &RealFolder, name: &str) -> Option<String> {
    let join = |rel: &str, name: &str| {
        if rel.is_empty() {
            name.to_owned()
        } else {
            format!("{rel}/{name}")
        }
    };
    match find_entry(&folder.fs_path, name).ok()? {
        None => Some(join(&folder.rel, name)),
        Some((on_disk, metadata)) if metadata.file_type().is_symlink() => {
            let target = folder.fs_path.join(on_disk).canonicalize().ok()?;
            if has_hidden_segment(target.strip_prefix(root).ok()?) {
                return None;
            }
            vault_relative_nfc(root, &target)
        }
        Some(_) => Some(join(&folder.rel, name)),
    }
}

/// The NFC vault-relative text of the real (canonical) place `real`; `None` outside the vault
/// or for a name that is not UTF-8.
fn vault_relative_nfc(root: &Path, real: &Path) -> Option<String> {
    Some(real.strip_prefix(root).ok()?.to_str()?.nfc().collect())
}

fn is_missing(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn check_inside(root: &Path, target: &Path, path: &VaultPath) -> Result<(), VaultError> {
    let Ok(inside) = target.strip_prefix(root) else {
        return Err(VaultError::Escapes {
            path: path.to_string(),
        });
    };
    if has_hidden_segment(inside) {
        return Err(VaultError::HiddenTarget {
            path: path.to_string(),
        });
    }
    Ok(())
}

/// True when a vault-relative path has a dot-prefixed (or non-plain) segment: such places are
/// never reachable through Quire, whether named directly or reached through a link.
pub(super) fn has_hidden_segment(inside: &Path) -> bool {
    inside.components().any(|component| match component {
        Component::Normal(name) => name.as_encoded_bytes().first() == Some(&b'.'),
        _ => true,
    })
}

fn io_error(path: &VaultPath, source: io::Error) -> VaultError {
    VaultError::Io {
        path: path.to_string(),
        source,
    }
}
