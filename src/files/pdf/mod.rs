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

mod fonts;
mod layout;
pub mod pdfium;
pub mod render;
mod standard_widths;

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::{Dictionary, Document, Object, ObjectId};

use fonts::FontInfo;
pub use layout::PdfLink;
use layout::{Header, Line, Run};
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
    let mut reader = Reader {
        document: &document,
        limits,
        fonts: HashMap::new(),
        operations: 0,
        budget_exhausted: false,
    };
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
        let mut page = PageReader::new(page_links(&document, *page_id));
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
        for (uri, text) in page_links {
            if !links.iter().any(|link| link.uri == uri) {
                links.push(PdfLink {
                    uri,
                    text: (!text.trim().is_empty()).then(|| text.trim().to_string()),
                    page: index + 1,
                });
            }
        }
        if reader.budget_exhausted {
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
    let pages_read = pages.len();
    let has_text = pages
        .iter()
        .flatten()
        .any(|line| line.runs.iter().any(|run| !run.text.trim().is_empty()));
    let metadata_title = info_title(&document);
    let mut markdown = layout::render(
        &Header {
            title: metadata_title.as_deref(),
            pages: page_ids.len(),
            pages_read,
            links: &links,
            truncated: truncated.as_deref(),
        },
        &pages,
    );
    let title = metadata_title.or_else(|| first_heading(&markdown));
    if title.is_some() && info_title(&document).is_none() {
        // The header names the title found in the text, so a reader sees it in one place.
        markdown = layout::render(
            &Header {
                title: title.as_deref(),
                pages: page_ids.len(),
                pages_read,
                links: &links,
                truncated: truncated.as_deref(),
            },
            &pages,
        );
    }
    Ok(PdfText {
        markdown,
        title,
        pages: page_ids.len(),
        pages_read,
        links,
        has_text,
        truncated,
    })
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

/// A 2D affine matrix `[a b c d e f]` as PDF writes them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Matrix([f64; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    fn from_operands(operands: &[Object]) -> Option<Matrix> {
        if operands.len() < 6 {
            return None;
        }
        let mut values = [0.0; 6];
        for (slot, operand) in values.iter_mut().zip(operands) {
            *slot = number(operand)?;
        }
        values
            .iter()
            .all(|value| value.is_finite())
            .then_some(Matrix(values))
    }

    /// `self × other`: apply `self`, then `other`.
    fn then(self, other: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [oa, ob, oc, od, oe, of] = other.0;
        Matrix([
            a * oa + b * oc,
            a * ob + b * od,
            c * oa + d * oc,
            c * ob + d * od,
            e * oa + f * oc + oe,
            e * ob + f * od + of,
        ])
    }

    fn translate(tx: f64, ty: f64) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }
}

/// The parts of the graphics state text extraction needs.
#[derive(Clone)]
struct State {
    ctm: Matrix,
    font: Option<Rc<FontInfo>>,
    font_size: f64,
    char_spacing: f64,
    word_spacing: f64,
    horizontal_scale: f64,
    leading: f64,
    rise: f64,
}

struct Reader<'a> {
    document: &'a Document,
    limits: &'a PdfLimits,
    fonts: HashMap<ObjectId, Rc<FontInfo>>,
    operations: usize,
    budget_exhausted: bool,
}

/// Forms nest; deeper nesting is treated as content to skip.
const MAX_FORM_DEPTH: usize = 12;

impl<'a> Reader<'a> {
    fn read_page(&mut self, page_id: ObjectId, page: &mut PageReader) {
        let mut resources: Vec<&'a Dictionary> = Vec::new();
        if let Ok((own, inherited)) = self.document.get_page_resources(page_id) {
            resources.extend(own);
            resources.extend(
                inherited
                    .into_iter()
                    .filter_map(|id| self.document.get_dictionary(id).ok()),
            );
        }
        let mut content = Vec::new();
        for id in self.document.get_page_contents(page_id) {
            let Some(stream) = self
                .document
                .get_object(id)
                .ok()
                .and_then(|object| object.as_stream().ok())
            else {
                continue;
            };
            match stream.get_plain_content_with_limit(self.limits.max_stream_bytes) {
                Ok(bytes) if content.len() + bytes.len() <= self.limits.max_stream_bytes => {
                    content.extend_from_slice(&bytes);
                    content.push(b'\n');
                }
                // A stream that cannot be decoded (or is too large) is skipped; the rest of the
                // page may still read.
                _ => {}
            }
        }
        let state = State {
            ctm: Matrix::IDENTITY,
            font: None,
            font_size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        };
        let mut forms = Vec::new();
        self.run(&content, &resources, state, page, &mut forms);
    }

    fn lookup(
        &self,
        resources: &[&'a Dictionary],
        category: &[u8],
        name: &[u8],
    ) -> Option<(Option<ObjectId>, &'a Object)> {
        resources.iter().find_map(|dictionary| {
            let group = dictionary.get(category).ok()?;
            let group = match group {
                Object::Reference(id) => self.document.get_object(*id).ok()?,
                other => other,
            };
            let entry = group.as_dict().ok()?.get(name).ok()?;
            match entry {
                Object::Reference(id) => Some((Some(*id), self.document.get_object(*id).ok()?)),
                other => Some((None, other)),
            }
        })
    }

    fn font(&mut self, resources: &[&'a Dictionary], name: &[u8]) -> Option<Rc<FontInfo>> {
        let (id, object) = self.lookup(resources, b"Font", name)?;
        if let Some(id) = id
            && let Some(font) = self.fonts.get(&id)
        {
            return Some(font.clone());
        }
        let font = Rc::new(FontInfo::read(self.document, object.as_dict().ok()?));
        if let Some(id) = id {
            self.fonts.insert(id, font.clone());
        }
        Some(font)
    }

    fn run(
        &mut self,
        content: &[u8],
        resources: &[&'a Dictionary],
        mut state: State,
        page: &mut PageReader,
        forms: &mut Vec<ObjectId>,
    ) {
        let mut stack: Vec<State> = Vec::new();
        let mut text_matrix = Matrix::IDENTITY;
        let mut line_matrix = Matrix::IDENTITY;
        for operation in lopdf::content::Content::decode_iter(content) {
            // A syntax error ends this stream; what was read so far stays.
            let Ok(operation) = operation else { break };
            self.operations += 1;
            if self.operations > self.limits.max_operations {
                self.budget_exhausted = true;
                return;
            }
            let operands = &operation.operands;
            let float = |index: usize| operands.get(index).and_then(number);
            match operation.operator.as_str() {
                // Unbalanced q's in a crafted stream must not grow the stack without bound.
                "q" if stack.len() < 1024 => stack.push(state.clone()),
                "Q" => {
                    if let Some(saved) = stack.pop() {
                        state = saved;
                    }
                }
                "cm" => {
                    if let Some(matrix) = Matrix::from_operands(operands) {
                        state.ctm = matrix.then(state.ctm);
                    }
                }
                "BT" => {
                    text_matrix = Matrix::IDENTITY;
                    line_matrix = Matrix::IDENTITY;
                }
                "Tf" => {
                    if let Some(Object::Name(name)) = operands.first() {
                        state.font = self.font(resources, name);
                    }
                    if let Some(size) = float(1) {
                        state.font_size = size;
                    }
                }
                "Tc" => state.char_spacing = float(0).unwrap_or(state.char_spacing),
                "Tw" => state.word_spacing = float(0).unwrap_or(state.word_spacing),
                "Tz" => {
                    state.horizontal_scale = float(0).map_or(state.horizontal_scale, |s| s / 100.0)
                }
                "TL" => state.leading = float(0).unwrap_or(state.leading),
                "Ts" => state.rise = float(0).unwrap_or(state.rise),
                "Td" | "TD" => {
                    if let (Some(tx), Some(ty)) = (float(0), float(1)) {
                        if operation.operator == "TD" {
                            state.leading = -ty;
                        }
                        line_matrix = Matrix::translate(tx, ty).then(line_matrix);
                        text_matrix = line_matrix;
                    }
                }
                "Tm" => {
                    if let Some(matrix) = Matrix::from_operands(operands) {
                        line_matrix = matrix;
                        text_matrix = matrix;
                    }
                }
                "T*" => {
                    line_matrix = Matrix::translate(0.0, -state.leading).then(line_matrix);
                    text_matrix = line_matrix;
                }
                "Tj" | "'" | "\"" => {
                    if operation.operator != "Tj" {
                        if operation.operator == "\"" {
                            state.word_spacing = float(0).unwrap_or(state.word_spacing);
                            state.char_spacing = float(1).unwrap_or(state.char_spacing);
                        }
                        line_matrix = Matrix::translate(0.0, -state.leading).then(line_matrix);
                        text_matrix = line_matrix;
                    }
                    if let Some(Object::String(bytes, _)) = operands.last() {
                        self.show(bytes, &state, &mut text_matrix, page);
                    }
                }
                "TJ" => {
                    if let Some(Object::Array(items)) = operands.first() {
                        for item in items {
                            match item {
                                Object::String(bytes, _) => {
                                    self.show(bytes, &state, &mut text_matrix, page);
                                }
                                other => {
                                    if let Some(adjustment) = number(other) {
                                        let tx = -adjustment / 1000.0
                                            * state.font_size
                                            * state.horizontal_scale;
                                        text_matrix = Matrix::translate(tx, 0.0).then(text_matrix);
                                    }
                                }
                            }
                        }
                    }
                }
                "Do" => {
                    if let Some(Object::Name(name)) = operands.first() {
                        self.form(resources, name, &state, page, forms);
                    }
                }
                _ => {}
            }
        }
    }

    fn form(
        &mut self,
        resources: &[&'a Dictionary],
        name: &[u8],
        state: &State,
        page: &mut PageReader,
        forms: &mut Vec<ObjectId>,
    ) {
        let Some((Some(id), object)) = self.lookup(resources, b"XObject", name) else {
            return;
        };
        if forms.len() >= MAX_FORM_DEPTH || forms.contains(&id) {
            return;
        }
        let Ok(stream) = object.as_stream() else {
            return;
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return;
        }
        let Ok(content) = stream.get_plain_content_with_limit(self.limits.max_stream_bytes) else {
            return;
        };
        let matrix = stream
            .dict
            .get(b"Matrix")
            .ok()
            .and_then(|matrix| matrix.as_array().ok())
            .and_then(|values| Matrix::from_operands(values))
            .unwrap_or(Matrix::IDENTITY);
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|resources| match resources {
                Object::Reference(id) => self.document.get_dictionary(*id).ok(),
                other => other.as_dict().ok(),
            });
        let mut form_resources: Vec<&'a Dictionary> = Vec::new();
        form_resources.extend(own);
        form_resources.extend(resources.iter().copied());
        let mut form_state = state.clone();
        form_state.ctm = matrix.then(state.ctm);
        forms.push(id);
        self.run(&content, &form_resources, form_state, page, forms);
        forms.pop();
    }

    fn show(
        &mut self,
        bytes: &[u8],
        state: &State,
        text_matrix: &mut Matrix,
        page: &mut PageReader,
    ) {
        let Some(font) = &state.font else { return };
        let size = state.font_size;
        let scale = state.horizontal_scale;
        for glyph in font.decode(bytes) {
            let rendering = text_matrix.then(state.ctm);
            let [a, b, c, d, e, f] = rendering.0;
            let x = state.rise * c + e;
            let y = state.rise * d + f;
            let direction_length = (a * a + b * b).sqrt();
            let effective_size = (c * c + d * d).sqrt() * size.abs();
            let mut advance = glyph.advance * size + state.char_spacing;
            if glyph.is_space_code {
                advance += state.word_spacing;
            }
            let tx = advance * scale;
            let user_advance = tx * direction_length;
            if !glyph.text.is_empty() && effective_size.is_finite() && effective_size > 0.0 {
                let (dx, dy) = if direction_length > 0.0 {
                    (a / direction_length, b / direction_length)
                } else {
                    (1.0, 0.0)
                };
                page.glyph(PlacedGlyph {
                    text: &glyph.text,
                    x,
                    y,
                    direction: (dx, dy),
                    advance: user_advance.abs(),
                    size: effective_size,
                    monospace: font.monospace,
                });
            }
            *text_matrix = Matrix::translate(tx, 0.0).then(*text_matrix);
        }
    }
}

struct PlacedGlyph<'a> {
    text: &'a str,
    x: f64,
    y: f64,
    direction: (f64, f64),
    advance: f64,
    size: f64,
    monospace: bool,
}

/// Collects one page's glyphs into lines, and the text under its links.
struct PageReader {
    lines: Vec<Line>,
    /// The current line's direction and where its last glyph ended (along the direction).
    current: Option<((f64, f64), f64)>,
    monospace_advances: (f64, usize),
    link_rects: Vec<(String, [f64; 4])>,
    /// Text gathered under each link, with the end of its last glyph.
    link_text: Vec<(String, Option<(f64, f64)>)>,
    links: Vec<(String, String)>,
}

impl PageReader {
    fn new(link_rects: Vec<(String, [f64; 4])>) -> PageReader {
        let link_text = vec![(String::new(), None); link_rects.len()];
        PageReader {
            lines: Vec::new(),
            current: None,
            monospace_advances: (0.0, 0),
            link_rects,
            link_text,
            links: Vec::new(),
        }
    }

    fn glyph(&mut self, glyph: PlacedGlyph<'_>) {
        let (dx, dy) = glyph.direction;
        // Coordinates along and across the text direction, so rotated pages read like upright
        // ones.
        let along = glyph.x * dx + glyph.y * dy;
        let across = -glyph.x * dy + glyph.y * dx;
        let same_line = match (self.current, self.lines.last()) {
            (Some((direction, end)), Some(line)) => {
                let tolerance = glyph.size.max(line.runs.last().map_or(0.0, |run| run.size));
                (direction.0 - dx).abs() < 0.01
                    && (direction.1 - dy).abs() < 0.01
                    && (across - line.baseline).abs() <= tolerance * 0.5
                    && along >= end - tolerance * 0.6
            }
            _ => false,
        };
        if !same_line {
            self.close_line();
            self.lines.push(Line {
                start: along,
                baseline: across,
                runs: Vec::new(),
                monospace_advance: 0.0,
            });
        }
        let Some(line) = self.lines.last_mut() else {
            return;
        };
        let mut text = String::new();
        if same_line && let Some((_, end)) = self.current {
            let gap = along - end;
            let previous_is_space = line
                .runs
                .last()
                .is_some_and(|run| run.text.ends_with(char::is_whitespace));
            if gap > glyph.size * 0.2
                && !previous_is_space
                && !glyph.text.starts_with(char::is_whitespace)
            {
                let previous_monospace = line.runs.last().is_some_and(|run| run.monospace);
                let spaces = if glyph.monospace && previous_monospace && glyph.advance > 0.0 {
                    ((gap / glyph.advance).round() as usize).clamp(1, 200)
                } else {
                    1
                };
                text.push_str(&" ".repeat(spaces));
            }
        }
        text.push_str(glyph.text);
        match line.runs.last_mut() {
            Some(run)
                if run.monospace == glyph.monospace && (run.size - glyph.size).abs() < 0.25 =>
            {
                run.text.push_str(&text);
            }
            _ => line.runs.push(Run {
                text,
                size: glyph.size,
                monospace: glyph.monospace,
            }),
        }
        if glyph.monospace && !glyph.text.trim().is_empty() && glyph.advance > 0.0 {
            self.monospace_advances.0 += glyph.advance;
            self.monospace_advances.1 += 1;
        }
        self.current = Some(((dx, dy), along + glyph.advance));

        if !glyph.text.trim().is_empty() {
            let centre = (
                glyph.x + dx * glyph.advance / 2.0 + (-dy) * glyph.size * 0.3,
                glyph.y + dy * glyph.advance / 2.0 + dx * glyph.size * 0.3,
            );
            for (index, (_, rect)) in self.link_rects.iter().enumerate() {
                if centre.0 >= rect[0]
                    && centre.0 <= rect[2]
                    && centre.1 >= rect[1]
                    && centre.1 <= rect[3]
                {
                    let (text, last) = &mut self.link_text[index];
                    if let Some((last_along, last_across)) = *last
                        && ((across - last_across).abs() > glyph.size * 0.5
                            || along - last_along > glyph.size * 0.2)
                        && !text.ends_with(' ')
                    {
                        text.push(' ');
                    }
                    if text.len() < 1000 {
                        text.push_str(glyph.text);
                    }
                    *last = Some((along + glyph.advance, across));
                }
            }
        }
    }

    fn close_line(&mut self) {
        if let Some(line) = self.lines.last_mut() {
            let (sum, count) = self.monospace_advances;
            line.monospace_advance = if count > 0 { sum / count as f64 } else { 0.0 };
        }
        self.monospace_advances = (0.0, 0);
        self.current = None;
    }

    fn finish(mut self) -> PageReader {
        self.close_line();
        let texts = std::mem::take(&mut self.link_text);
        self.links = self
            .link_rects
            .iter()
            .zip(texts)
            .map(|((uri, _), (text, _))| (uri.clone(), text))
            .collect();
        self
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

    #[test]
    fn matrices_compose_in_pdf_order() {
        let scale = Matrix([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let moved = Matrix::translate(10.0, 5.0).then(scale);
        assert_eq!(moved, Matrix([2.0, 0.0, 0.0, 2.0, 20.0, 10.0]));
    }
}
