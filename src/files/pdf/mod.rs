//! PDF files as an agent reads them: markdown rebuilt from the text layer, in pure Rust with
//! nothing to install; and, for `raw: true`, pages rendered to pixels (`render`) by pdfium, a
//! native library loaded at run time from where `pdfium::locate` finds it.
//!
//! The text reader walks each page's content stream itself (on `lopdf`'s parser), so it knows
//! every glyph's position, size and font: sizes above the body size become headings, monospace
//! fonts become code. Reading order is the content stream's, which is the order the author's tool
//! wrote the text in; that keeps the columns of a two-column paper apart.
//!
//! Untrusted input: every step is bounded (pages, decompressed bytes, operators, output), nothing
//! here panics on input, and the third-party parser runs under `catch_unwind` so a bug in it
//! becomes a `damaged` error instead of taking the server down.

mod content;
mod fonts;
mod layout;
pub mod pdfium;
pub mod render;
mod standard_widths;

use lopdf::{Document, Object, ObjectId};

use content::{PageReader, Reader};
pub use layout::PdfLink;
use layout::{Header, Line};
pub use render::{RenderOptions, RenderedPage, render_pages};

/// Bounds on the work one PDF may cause.
#[derive(Debug, Clone)]
pub struct PdfLimits {
    /// Pages read for text; later pages are counted but not read, and the result says so.
    pub max_pages: usize,
    /// The most bytes one content stream (or form) may decompress to.
    pub max_stream_bytes: usize,
    /// Content-stream operators interpreted over the whole document.
    pub max_operations: usize,
    /// Markdown beyond this size stops the reading at the end of the page that crossed it.
    pub max_output_bytes: usize,
}

impl PdfLimits {
    /// Limits that read a 1,000-page book in a few seconds and keep a crafted file from doing
    /// more.
    pub const STANDARD: PdfLimits = PdfLimits {
        max_pages: 2_000,
        max_stream_bytes: 64 * 1024 * 1024,
        max_operations: 20_000_000,
        max_output_bytes: 16 * 1024 * 1024,
    };
}

/// A PDF's text layer as markdown, with what the header says about it.
#[derive(Debug, Clone)]
pub struct PdfText {
    /// The whole rendering: header, pages, links footer.
    pub markdown: String,
    /// The document's title: its metadata title, else its first top-level heading.
    pub title: Option<String>,
    /// Pages in the document.
    pub pages: usize,
    /// Pages whose text was read (fewer than `pages` only when a limit stopped the reading).
    pub pages_read: usize,
    /// De-duplicated URI links, in order of first appearance.
    pub links: Vec<PdfLink>,
    /// False when no page drew any text (a scan or an image-only PDF).
    pub has_text: bool,
    /// Why reading stopped early, when it did.
    pub truncated: Option<String>,
}

/// Why a PDF could not be read. Each variant has a stable code (`code()`), and its message says
/// what to do next.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error(
        "this PDF is password-protected (encrypted), so its content cannot be read; ask for an unprotected copy"
    )]
    Encrypted,
    #[error(
        "this file is not a readable PDF ({reason}); it may be damaged or truncated, so re-export or re-download it"
    )]
    Damaged { reason: String },
    #[error("{reason}")]
    Unsupported { reason: String },
    #[error("page {page} does not exist: this PDF has {pages} page(s)")]
    PageOutOfRange { page: usize, pages: usize },
    #[error("rendering page {page} failed: {reason}")]
    RenderFailed { page: usize, reason: String },
}

impl PdfError {
    /// The stable code a client can branch on.
    pub fn code(&self) -> &'static str {
        match self {
            PdfError::Encrypted => "pdf_encrypted",
            PdfError::Damaged { .. } => "pdf_damaged",
            PdfError::Unsupported { .. } => "unsupported",
            PdfError::PageOutOfRange { .. } => "pdf_page_out_of_range",
            PdfError::RenderFailed { .. } => "pdf_render_failed",
        }
    }
}

/// Reads a PDF's text layer as markdown.
///
/// Encrypted files that open with the empty user password (only an owner password set, which is
/// common) are read; files that need a password answer `Encrypted`.
pub fn pdf_to_markdown(bytes: &[u8], limits: &PdfLimits) -> Result<PdfText, PdfError> {
    // lopdf is a large third-party parser fed untrusted bytes; a panic in it must not reach the
    // server. Nothing shared is left half-updated by an unwind: all state is local to this call.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(bytes, limits))) {
        Ok(result) => result,
        Err(_) => Err(PdfError::Damaged {
            reason: "the PDF parser failed on its structure".into(),
        }),
    }
}

fn load(bytes: &[u8], limits: &PdfLimits) -> Result<Document, PdfError> {
    if !bytes.windows(5).take(1024).any(|window| window == b"%PDF-") {
        return Err(PdfError::Damaged {
            reason: "no %PDF- header".into(),
        });
    }
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(limits.max_stream_bytes),
        ..lopdf::LoadOptions::default()
    };
    let document = match Document::load_mem_with_options(bytes, options) {
        Ok(document) => document,
        Err(lopdf::Error::InvalidPassword) => return Err(PdfError::Encrypted),
        Err(lopdf::Error::Decryption(_)) => return Err(PdfError::Encrypted),
        Err(error) => {
            return Err(PdfError::Damaged {
                reason: error.to_string(),
            });
        }
    };
    if document.is_encrypted() {
        return Err(PdfError::Encrypted);
    }
    Ok(document)
}

fn read(bytes: &[u8], limits: &PdfLimits) -> Result<PdfText, PdfError> {
    let document = load(bytes, limits)?;
    let page_ids: Vec<ObjectId> = document.get_pages().into_values().collect();
    if page_ids.is_empty() {
        return Err(PdfError::Damaged {
            reason: "it has no pages".into(),
        });
    }
    let read = read_pages(&document, &page_ids, limits);
    Ok(write_markdown(&document, page_ids.len(), read))
}

/// The pages read (each as its lines), the links found on them, and why reading stopped early.
struct PagesRead {
    pages: Vec<Vec<Line>>,
    links: Vec<PdfLink>,
    truncated: Option<String>,
}

/// Reads pages in order until the page, operation or output bound is reached.
fn read_pages(document: &Document, page_ids: &[ObjectId], limits: &PdfLimits) -> PagesRead {
    let mut reader = Reader::new(document, limits);
    let mut pages: Vec<Vec<Line>> = Vec::new();
    let mut links: Vec<PdfLink> = Vec::new();
    let mut truncated = None;
    let mut output_estimate = 0usize;
    for (index, page_id) in page_ids.iter().enumerate() {
        if index >= limits.max_pages {
            truncated = Some(format!(
                "only the first {} pages are read",
                limits.max_pages
            ));
            break;
        }
        let mut page = PageReader::new(page_links(document, *page_id));
        reader.read_page(*page_id, &mut page);
        let PageReader {
            lines,
            links: page_links,
            ..
        } = page.finish();
        output_estimate += lines
            .iter()
            .flat_map(|line| &line.runs)
            .map(|run| run.text.len() + 1)
            .sum::<usize>();
        pages.push(lines);
        add_links(&mut links, page_links, index + 1);
        if reader.budget_exhausted() {
            truncated = Some(format!(
                "the page content is too complex (more than {} drawing operations)",
                limits.max_operations
            ));
            break;
        }
        if output_estimate > limits.max_output_bytes {
            truncated = Some(format!(
                "the text is longer than {} bytes",
                limits.max_output_bytes
            ));
            break;
        }
    }
    PagesRead {
        pages,
        links,
        truncated,
    }
}

/// Adds a page's links (URI and the text under it) that no earlier page had.
fn add_links(links: &mut Vec<PdfLink>, page_links: Vec<(String, String)>, page: usize) {
    for (uri, text) in page_links {
        if !links.iter().any(|link| link.uri == uri) {
            links.push(PdfLink {
                uri,
                text: (!text.trim().is_empty()).then(|| text.trim().to_string()),
                page,
            });
        }
    }
}

/// The markdown of the pages read, under a header naming the title (the metadata's, else the
/// first heading found in the text), the pages and the links.
fn write_markdown(document: &Document, page_count: usize, read: PagesRead) -> PdfText {
    let PagesRead {
        pages,
        links,
        truncated,
    } = read;
    let pages_read = pages.len();
    let has_text = pages
        .iter()
        .flatten()
        .any(|line| line.runs.iter().any(|run| !run.text.trim().is_empty()));
    let metadata_title = info_title(document);
    let mut markdown = layout::render(
        &Header {
            title: metadata_title.as_deref(),
            pages: page_count,
            pages_read,
            links: &links,
            truncated: truncated.as_deref(),
        },
        &pages,
    );
    let title = metadata_title.or_else(|| first_heading(&markdown));
    if title.is_some() && info_title(document).is_none() {
        // The header names the title found in the text, so a reader sees it in one place.
        markdown = layout::render(
            &Header {
                title: title.as_deref(),
                pages: page_count,
                pages_read,
                links: &links,
                truncated: truncated.as_deref(),
            },
            &pages,
        );
    }
    PdfText {
        markdown,
        title,
        pages: page_count,
        pages_read,
        links,
        has_text,
        truncated,
    }
}

fn first_heading(markdown: &str) -> Option<String> {
    markdown
        .lines()
        .find_map(|line| line.strip_prefix("# "))
        .map(|title| title.trim().to_string())
        .filter(|title| !title.is_empty())
}

fn info_title(document: &Document) -> Option<String> {
    let info = document.trailer.get(b"Info").ok()?;
    let (_, info) = document.dereference(info).ok()?;
    let title = info.as_dict().ok()?.get(b"Title").ok()?;
    let (_, title) = document.dereference(title).ok()?;
    let title = lopdf::decode_text_string(title).ok()?;
    let title = title.trim().trim_matches('\0').trim();
    (!title.is_empty()).then(|| title.to_string())
}

/// The URI links of a page with their rectangles.
fn page_links(document: &Document, page_id: ObjectId) -> Vec<(String, [f64; 4])> {
    let Ok(annotations) = document.get_page_annotations(page_id) else {
        return Vec::new();
    };
    annotations
        .into_iter()
        .filter(|annotation| {
            annotation.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Link".as_slice())
        })
        .filter_map(|annotation| {
            let action = annotation.get(b"A").ok()?;
            let (_, action) = document.dereference(action).ok()?;
            let action = action.as_dict().ok()?;
            if action.get(b"S").and_then(Object::as_name).ok() != Some(b"URI".as_slice()) {
                return None;
            }
            let uri = action.get(b"URI").ok()?;
            let (_, uri) = document.dereference(uri).ok()?;
            let uri = match uri {
                Object::String(bytes, _) => String::from_utf8_lossy(bytes).trim().to_string(),
                _ => return None,
            };
            if uri.is_empty() {
                return None;
            }
            let rect = annotation
                .get(b"Rect")
                .ok()
                .and_then(|rect| document.dereference(rect).ok())
                .and_then(|(_, rect)| rect.as_array().ok())
                .map(|values| {
                    let mut rect = [0.0; 4];
                    for (slot, value) in rect.iter_mut().zip(values) {
                        *slot = number(value).unwrap_or(0.0);
                    }
                    [
                        rect[0].min(rect[2]),
                        rect[1].min(rect[3]),
                        rect[0].max(rect[2]),
                        rect[1].max(rect[3]),
                    ]
                })
                .unwrap_or([0.0; 4]);
            Some((uri, rect))
        })
        .collect()
}

fn number(object: &Object) -> Option<f64> {
    match object {
        Object::Integer(value) => Some(*value as f64),
        Object::Real(value) => Some(f64::from(*value)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_a_pdf_are_damaged_not_a_panic() {
        for bytes in [
            b"".as_slice(),
            b"hello".as_slice(),
            b"%PDF-1.7\n".as_slice(),
            b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"
                .as_slice(),
        ] {
            let error = pdf_to_markdown(bytes, &PdfLimits::STANDARD).expect_err("not a PDF");
            assert_eq!(error.code(), "pdf_damaged", "{error}");
        }
    }
}
