//! The vault's files as files: listing every file (not only notes) and answering what is at a
//! path. Listings walk the file system, not the index, so a file copied in a second ago is there.

use std::collections::BTreeMap;

use super::notes::parse_path;
use super::paging::{Cursor, check_limit};
use super::{Context, Ops, OpsError, rfc3339};
use crate::acl::Action;
use crate::vault::{FoundFile, VaultError, VaultPath};

#[derive(Debug, Clone, Default)]
pub struct ListFiles {
    /// The folder to list; `None` is the vault root.
    pub folder: Option<String>,
    /// Only files with one of these extensions (without the dot, any case); empty means all.
    pub extensions: Vec<String>,
    /// Walk the whole subtree, or (false) only the folder itself, with its subfolders named.
    pub recursive: bool,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// Whether a path holds a note (markdown), another file, or a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    Note,
    File,
    Folder,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    pub path: String,
    pub kind: PathKind,
    pub bytes: u64,
    pub modified: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileList {
    pub files: Vec<FileEntry>,
    /// The immediate subfolders of a non-recursive listing (all of them, on the first page).
    pub folders: Option<Vec<String>>,
    /// Files per lower-case extension (`""` for none) over the whole filtered listing.
    pub extensions: BTreeMap<String, usize>,
    /// Files in the whole filtered listing.
    pub total: usize,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone)]
pub struct StatPath {
    pub path: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PathStat {
    pub path: String,
    pub exists: bool,
    pub kind: Option<PathKind>,
    pub bytes: Option<u64>,
    pub modified: Option<String>,
    /// The revision (sha256 of the bytes) of a file no larger than the read cap.
    pub revision: Option<String>,
}

impl Ops {
    pub fn list_files(&self, ctx: &Context, request: ListFiles) -> Result<FileList, OpsError> {
        let limit = check_limit(request.limit)?;
        let after = Cursor::after(request.cursor.as_deref())?;
        let folder = match request
            .folder
            .as_deref()
            .map(|raw| raw.trim_end_matches('/'))
        {
            None | Some("") => None,
            Some(raw) => Some(parse_path(raw)?),
        };
        if !self.may_list(ctx, folder.as_ref()) {
            return Err(missing_folder(folder.as_ref()));
        }
        let wanted: Vec<String> = request
            .extensions
            .iter()
            .map(|extension| extension.trim_start_matches('.').to_lowercase())
            .collect();
        let (files, folders): (Vec<FoundFile>, _) = if request.recursive {
            let found = self
                .vault
                .find(folder.as_ref())
                .map_err(|error| not_found_as_folder(error, folder.as_ref()))?;
            (found, None)
        } else {
            let listing = self
                .vault
                .list_folder(folder.as_ref())
                .map_err(|error| not_found_as_folder(error, folder.as_ref()))?;
            let visibility = self.visibility(ctx);
            let policy = self.policy();
            let folders = listing
                .folders
                .into_iter()
                .filter(|path| {
                    policy.allows(&ctx.principal, Action::List, path.as_str())
                        && visibility.shows_folder(path.as_str())
                })
                .map(|path| path.to_string())
                .collect();
            let files = listing
                .files
                .into_iter()
                .map(|file| FoundFile {
                    path: file.path,
                    fs_path: file.fs_path,
                })
                .collect();
            (files, Some(folders))
        };
        let visibility = self.visibility(ctx);
        let unrestricted = visibility.unrestricted();
        let mut extensions = BTreeMap::new();
        let matching: Vec<FoundFile> = files
            .into_iter()
            .filter(|file| {
                let extension = file.path.extension().unwrap_or_default();
                let keep = (wanted.is_empty() || wanted.contains(&extension))
                    && (unrestricted || visibility.shows(file.path.as_str()));
                if keep {
                    *extensions.entry(extension).or_insert(0) += 1;
                }
                keep
            })
            .collect();
        let total = matching.len();
        let start = match &after {
            Some(after) => matching.partition_point(|file| file.path.as_str() <= after.as_str()),
            None => 0,
        };
        // Only the page is stat'ed: a listing of 100,000 files costs one walk, not 100,000 stats.
        // A file gone since the walk is listed with size 0 and the epoch rather than dropped, so
        // the page and its cursor stay what the walk saw.
        let page: Vec<FileEntry> = matching
            .iter()
            .skip(start)
            .take(limit)
            .map(|file| {
                let metadata = std::fs::metadata(&file.fs_path).ok();
                FileEntry {
                    path: file.path.to_string(),
                    kind: kind_of(&file.path),
                    bytes: metadata.as_ref().map_or(0, std::fs::Metadata::len),
                    modified: rfc3339(
                        metadata
                            .and_then(|metadata| metadata.modified().ok())
                            .unwrap_or(std::time::SystemTime::UNIX_EPOCH),
                    ),
                }
            })
            .collect();
        let next_cursor = (start + page.len() < total)
            .then(|| {
                page.last()
                    .map(|entry| Cursor::After(entry.path.clone()).encode())
            })
            .flatten();
        Ok(FileList {
            files: page,
            // Subfolders are named once, with the first page.
            folders: folders.filter(|_| after.is_none()),
            extensions,
            total,
            next_cursor,
        })
    }

    pub fn stat_path(&self, ctx: &Context, request: StatPath) -> Result<PathStat, OpsError> {
        let raw = request.path.trim_end_matches('/');
        let missing = PathStat {
            path: request.path.clone(),
            exists: false,
            kind: None,
            bytes: None,
            modified: None,
            revision: None,
        };
        if raw.is_empty() {
            return Err(OpsError::invalid_argument(
                "path is empty; give a vault-relative path such as 'Folder/note.md'",
            ));
        }
        let path = parse_path(raw)?;
        let resolved = match self.vault.resolve(&path) {
            Ok(resolved) => resolved,
            Err(VaultError::NotFound { .. }) => return Ok(missing),
            Err(error) => return Err(OpsError::from_vault(error, None)),
        };
        if !resolved.exists {
            return Ok(missing);
        }
        let Ok(metadata) = std::fs::metadata(&resolved.fs_path) else {
            return Ok(missing);
        };
        if metadata.is_dir() {
            // A folder the caller may not list answers like one that does not exist.
            if !self.visibility(ctx).shows_folder(path.as_str())
                || !self
                    .policy()
                    .allows(&ctx.principal, Action::List, path.as_str())
            {
                return Ok(missing);
            }
            return Ok(PathStat {
                path: path.to_string(),
                exists: true,
                kind: Some(PathKind::Folder),
                bytes: None,
                modified: metadata.modified().ok().map(rfc3339),
                revision: None,
            });
        }
        if !metadata.is_file() || !self.visibility(ctx).shows(path.as_str()) {
            return Ok(missing);
        }
        let revision = if metadata.len() <= self.files.max_read_bytes {
            self.vault
                .read_up_to(&path, self.files.max_read_bytes)
                .ok()
                .map(|file| file.revision.to_string())
        } else {
            None
        };
        Ok(PathStat {
            path: path.to_string(),
            exists: true,
            kind: Some(kind_of(&path)),
            bytes: Some(metadata.len()),
            modified: metadata.modified().ok().map(rfc3339),
            revision,
        })
    }
}

fn kind_of(path: &VaultPath) -> PathKind {
    if path.extension().as_deref() == Some("md") {
        PathKind::Note
    } else {
        PathKind::File
    }
}

fn missing_folder(folder: Option<&VaultPath>) -> OpsError {
    OpsError::from_vault(
        VaultError::NotFound {
            path: folder.map_or_else(String::new, VaultPath::to_string),
        },
        None,
    )
}

fn not_found_as_folder(error: VaultError, folder: Option<&VaultPath>) -> OpsError {
    match error {
        VaultError::NotFound { .. } => missing_folder(folder),
        other => OpsError::from_vault(other, None),
    }
}
