//! The vault's files as files: listing every file (not only notes), answering what is at a path,
//! and reading the ones that are not notes (images, canvases, text formats, PDFs) through the
//! `files` kernels. Listings walk the file system, not the index, so a file copied in a second
//! ago is there.
//!
//! A read applies the notes' rules (path syntax, hidden folders, ACL: a denied file answers
//! exactly like a missing one), refuses kinds it does not read before touching the disk, and
//! checks the size cap from the file's metadata before reading a byte.

use std::collections::BTreeMap;

use super::access::Visibility;
use super::error::OpsError;
use super::inputs::parse_path;
use super::paging::{Cursor, check_limit};
use super::shared::{Context, Ops, rfc3339};
use crate::acl::Action;
use crate::files::image::{FitOptions, FittedImage, ImageError, fit_image, human_bytes};
use crate::files::pdf::{self, PdfError, PdfLimits, RenderOptions, pdfium};
use crate::files::text::{TextError, TextOutput, TextRequest, read_text, window_text};
use crate::files::{FileKind, readable_kinds_phrase};
use crate::markdown::canvas::render_canvas;
use crate::vault::{FoundFile, VaultError, VaultPath};

/// What to read of a file that is not a note.
#[derive(Debug, Clone, Default)]
pub struct ReadFile {
    pub path: String,
    /// A canvas's JSON as it is, or a PDF's pages as images, instead of their markdown.
    pub raw: bool,
    /// First line of a text window (1-based); for a raw PDF, the first page.
    pub start_line: Option<u64>,
    /// Lines in the window; for a raw PDF, pages to render (at most `pdf_render_pages`).
    pub limit: Option<u64>,
}

/// One piece of what a read returns, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilePart {
    Text(String),
    /// Encoded image bytes (`mime_type` says which format).
    Image {
        bytes: Vec<u8>,
        mime_type: &'static str,
    },
}

/// A file read for an agent: text, or images each preceded by a line saying what they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    pub path: String,
    pub kind: FileKind,
    /// The file's size on disk.
    pub bytes: u64,
    pub modified: String,
    /// sha256 of the file's bytes.
    pub revision: String,
    pub parts: Vec<FilePart>,
}

/// The pixel ceiling of one rendered PDF page: a page is sent at most 1568 px on its long edge,
/// so rendering more only costs memory.
const RENDER_MAX_PIXELS: u64 = 4_000_000;

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
        let Some(visibility) = self.may_list(ctx, folder.as_ref()) else {
            return Err(missing_folder(folder.as_ref()));
        };
        let wanted: Vec<String> = request
            .extensions
            .iter()
            .map(|extension| extension.trim_start_matches('.').to_lowercase())
            .collect();
        let (files, folders) =
            self.walk_for_listing(ctx, &visibility, folder.as_ref(), request.recursive)?;
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
        let page = stat_page(&matching[start..], limit);
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

    /// The files below `folder` (every depth when `recursive`), and without `recursive` also its
    /// subfolders the caller may see.
    #[allow(clippy::type_complexity)]
    fn walk_for_listing(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        folder: Option<&VaultPath>,
        recursive: bool,
    ) -> Result<(Vec<FoundFile>, Option<Vec<String>>), OpsError> {
        if recursive {
            let found = self
                .walls
                .vault(visibility)
                .find(folder)
                .map_err(|error| not_found_as_folder(error, folder))?;
            return Ok((found, None));
        }
        let listing = self
            .walls
            .vault(visibility)
            .list_folder(folder)
            .map_err(|error| not_found_as_folder(error, folder))?;
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
        Ok((files, Some(folders)))
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
        // Resolved before the check, to tell a folder from a file; the answer for a path the
        // caller may not see is the same as for a missing one.
        let visibility = self.visibility(ctx);
        let resolved = match self.walls.vault(&visibility).resolve(&path) {
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
            if !visibility.shows_folder(path.as_str())
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
        if !metadata.is_file() || !visibility.shows(path.as_str()) {
            return Ok(missing);
        }
        let revision = if metadata.len() <= self.files.max_read_bytes {
            self.walls
                .vault(&visibility)
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

    pub fn read_file(&self, ctx: &Context, request: ReadFile) -> Result<FileRead, OpsError> {
        let path = parse_path(&request.path)?;
        let kind = FileKind::of_path(path.as_str());
        match kind {
            FileKind::Markdown => {
                return Err(OpsError::UnsupportedExtension {
                    path: path.to_string(),
                    allowed: "it is a note; read it with vault_read_note",
                });
            }
            FileKind::Unknown => {
                return Err(OpsError::File {
                    path: path.to_string(),
                    code: "unsupported_extension",
                    message: format!(
                        "this kind of file cannot be read; readable kinds are {}",
                        readable_kinds_phrase()
                    ),
                });
            }
            _ => {}
        }
        let readable = self.require_read(ctx, &path).map_err(file_not_found)?;
        let limit = self.files.max_read_bytes;
        let file = self
            .walls.vault(&readable)
            .read_up_to(&path, limit)
            .map_err(|error| match error {
                VaultError::TooLarge { path, bytes, limit } => OpsError::TooLarge {
                    path,
                    bytes,
                    limit,
                    hint: "Files over the cap are not read; ask the operator to raise files.max_read_bytes.",
                },
                VaultError::IsFolder { path } => OpsError::invalid_argument(format!(
                    "'{path}' is a folder; list its files with vault_list_files"
                )),
                other => file_not_found(OpsError::from_vault(other, None)),
            })?;
        let parts = match kind {
            FileKind::Image => self.read_image(&path, &file.bytes)?,
            FileKind::Canvas if request.raw => self.text_file(&path, &file.bytes, &request)?,
            FileKind::Canvas => {
                let json = std::str::from_utf8(&file.bytes).map_err(|_| {
                    file_error(&path, "invalid_canvas", "the canvas is not UTF-8 text")
                })?;
                let rendered = render_canvas(json)
                    .map_err(|error| file_error(&path, error.code(), &error.to_string()))?;
                self.text_window(&path, &rendered.markdown, &request)?
            }
            FileKind::Text => self.text_file(&path, &file.bytes, &request)?,
            FileKind::Pdf if request.raw => self.render_pdf(&path, &file.bytes, &request)?,
            FileKind::Pdf => {
                let text = pdf::pdf_to_markdown(&file.bytes, &PdfLimits::STANDARD)
                    .map_err(|error| pdf_error(&path, error))?;
                self.text_window(&path, &text.markdown, &request)?
            }
            FileKind::Markdown | FileKind::Unknown => Vec::new(),
        };
        Ok(FileRead {
            path: path.to_string(),
            kind,
            bytes: file.bytes.len() as u64,
            modified: rfc3339(file.modified),
            revision: file.revision.to_string(),
            parts,
        })
    }

    fn text_request(&self, request: &ReadFile) -> TextRequest {
        let count = |value: Option<u64>| value.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        TextRequest {
            start_line: count(request.start_line),
            limit: count(request.limit),
            cap_bytes: self.files.max_text_bytes,
        }
    }

    fn text_file(
        &self,
        path: &VaultPath,
        bytes: &[u8],
        request: &ReadFile,
    ) -> Result<Vec<FilePart>, OpsError> {
        read_text(bytes, self.text_request(request))
            .map(text_parts)
            .map_err(|error| text_error(path, error))
    }

    fn text_window(
        &self,
        path: &VaultPath,
        text: &str,
        request: &ReadFile,
    ) -> Result<Vec<FilePart>, OpsError> {
        window_text(text, self.text_request(request))
            .map(text_parts)
            .map_err(|error| text_error(path, error))
    }

    fn fit(&self, path: &VaultPath, bytes: &[u8], budget: usize) -> Result<FittedImage, OpsError> {
        let options = FitOptions {
            budget_bytes: budget,
            ..FitOptions::DEFAULT
        };
        fit_image(bytes, options).map_err(|error| image_error(path, error))
    }

    fn read_image(&self, path: &VaultPath, bytes: &[u8]) -> Result<Vec<FilePart>, OpsError> {
        let fitted = self.fit(path, bytes, self.files.image_budget_bytes)?;
        Ok(vec![
            FilePart::Text(fitted.metadata),
            FilePart::Image {
                bytes: fitted.bytes,
                mime_type: fitted.mime_type,
            },
        ])
    }

    /// Pages `start_line ..` (`limit` of them, at most `pdf_render_pages`) as images sharing the
    /// image budget, one page rendered at a time so memory holds one page's pixels.
    fn render_pdf(
        &self,
        path: &VaultPath,
        bytes: &[u8],
        request: &ReadFile,
    ) -> Result<Vec<FilePart>, OpsError> {
        let library = pdfium::locate(&self.files.pdfium)
            .map_err(|why| pdf_error(path, pdf::render::library_missing(&why)))?
            .value;
        let (first, wanted) = self.pages_asked(request)?;
        // The page count from the text reader's parse, which reads no page content with
        // max_pages 0; pdfium checks the range itself when that parser cannot open the file.
        let counted = PdfLimits {
            max_pages: 0,
            ..PdfLimits::STANDARD
        };
        let total = pdf::pdf_to_markdown(bytes, &counted)
            .ok()
            .map(|text| text.pages);
        if let Some(total) = total
            && first > total
        {
            return Err(pdf_error(
                path,
                PdfError::PageOutOfRange {
                    page: first,
                    pages: total,
                },
            ));
        }
        let last = first
            .saturating_add(wanted - 1)
            .min(total.unwrap_or(usize::MAX));
        let pages: Vec<usize> = (first..=last).collect();
        let budget = self.files.image_budget_bytes / pages.len().max(1);
        let options = RenderOptions {
            max_pixels: RENDER_MAX_PIXELS,
            ..RenderOptions::STANDARD
        };
        let mut images = Vec::with_capacity(pages.len());
        for &page in &pages {
            let rendered = match pdf::render_pages(bytes, &[page], &library, &options) {
                Ok(mut rendered) => rendered.pop(),
                // Past the end of a file only pdfium could count: stop at its last page.
                Err(PdfError::PageOutOfRange { .. }) if page > first => break,
                Err(error) => return Err(pdf_error(path, error)),
            };
            let Some(rendered) = rendered else { break };
            let png = encode_page(&rendered).map_err(|error| OpsError::Internal(error.into()))?;
            let fitted = self.fit(path, &png, budget)?;
            images.push((page, fitted));
        }
        let rendered_last = images.last().map_or(first, |(page, _)| *page);
        let total_text = total.map_or_else(String::new, |total| format!(" of {total}"));
        let next = match total {
            Some(total) if rendered_last < total => {
                format!(" Next: start_line {}.", rendered_last + 1)
            }
            _ => String::new(),
        };
        let summary = format!(
            "PDF {}: pages {first}-{rendered_last}{total_text} rendered as images within {} ({} per page).{next}",
            human_bytes(bytes.len()),
            human_bytes(self.files.image_budget_bytes),
            human_bytes(budget),
        );
        Ok(page_parts(summary, images))
    }

    /// The first page and how many pages a render asks for, within `[files] pdf_render_pages`.
    fn pages_asked(&self, request: &ReadFile) -> Result<(usize, usize), OpsError> {
        let first = match request.start_line {
            Some(0) => {
                return Err(OpsError::invalid_argument(
                    "start_line is the first page to render and counts from 1; got 0",
                ));
            }
            Some(page) => usize::try_from(page).unwrap_or(usize::MAX),
            None => 1,
        };
        let most = self.files.pdf_render_pages.max(1);
        let wanted = match request.limit {
            Some(0) => {
                return Err(OpsError::invalid_argument(
                    "limit is the number of pages to render and counts from 1; got 0",
                ));
            }
            Some(count) => usize::try_from(count).unwrap_or(usize::MAX).min(most),
            None => most,
        };
        Ok((first, wanted))
    }
}

fn text_parts(output: TextOutput) -> Vec<FilePart> {
    vec![FilePart::Text(output.rendered())]
}

fn file_error(path: &VaultPath, code: &'static str, message: &str) -> OpsError {
    OpsError::File {
        path: path.to_string(),
        code,
        message: message.to_owned(),
    }
}

fn text_error(path: &VaultPath, error: TextError) -> OpsError {
    file_error(path, error.code(), &error.to_string())
}

fn image_error(path: &VaultPath, error: ImageError) -> OpsError {
    match error {
        // An encoder refusing a decoded image is a bug, not a property of the file.
        error @ ImageError::Encode { .. } => OpsError::Internal(Box::new(error)),
        error => file_error(path, error.code(), &error.to_string()),
    }
}

fn pdf_error(path: &VaultPath, error: PdfError) -> OpsError {
    file_error(path, error.code(), &error.to_string())
}

/// A missing file's answer, pointing at the listing of files rather than of notes; a denied file
/// goes through here too, so the two answers stay identical.
fn file_not_found(error: OpsError) -> OpsError {
    match error {
        OpsError::NotFound { what, .. } => OpsError::NotFound {
            what,
            hint: "Check the spelling, or call vault_list_files to see what exists.",
        },
        other => other,
    }
}

/// A rendered page as a PNG (fast, lossless) for the image fitter, which re-encodes it anyway.
fn encode_page(page: &pdf::RenderedPage) -> Result<Vec<u8>, image::ImageError> {
    use image::ImageEncoder;
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let mut png = Vec::new();
    PngEncoder::new_with_quality(&mut png, CompressionType::Fast, FilterType::Sub).write_image(
        &page.rgba,
        page.width,
        page.height,
        image::ExtendedColorType::Rgba8,
    )?;
    Ok(png)
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

/// Only the page is stat'ed: a listing of 100,000 files costs one walk, not 100,000 stats. A file
/// gone since the walk is listed with size 0 and the epoch rather than dropped, so the page and
/// its cursor stay what the walk saw.
fn stat_page(files: &[FoundFile], limit: usize) -> Vec<FileEntry> {
    files
        .iter()
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
        .collect()
}

/// A rendered PDF's answer: the summary, then each page's size line and image.
fn page_parts(summary: String, images: Vec<(usize, FittedImage)>) -> Vec<FilePart> {
    let mut parts = vec![FilePart::Text(summary)];
    for (page, fitted) in images {
        parts.push(FilePart::Text(format!(
            "Page {page}: {}x{} px, {} {}.",
            fitted.width,
            fitted.height,
            if fitted.mime_type == "image/png" {
                "PNG"
            } else {
                "JPEG"
            },
            human_bytes(fitted.bytes.len())
        )));
        parts.push(FilePart::Image {
            bytes: fitted.bytes,
            mime_type: fitted.mime_type,
        });
    }
    parts
}
