//! Pages of a PDF as pixels, for `raw: true`: rendered by pdfium, which Quire does not link but
//! loads at run time from a `libpdfium.so` the user installs (`quire pdfium install`), the way it
//! loads ONNX Runtime. Without the library the text reader still works; rendering answers
//! `unsupported` with the command that installs it.
//!
//! pdfium is loaded once per process and kept: a library cannot be unloaded safely once pdfium
//! has initialised itself. A failed load is not remembered, so installing the library fixes a
//! running server on the next request. pdfium is not thread-safe, so every use of it, from
//! opening a document to copying the last bitmap, holds one process-wide lock.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use pdfium_render::prelude::{
    PdfBitmapFormat, PdfDocument, PdfRenderConfig, Pdfium, PdfiumError, PdfiumInternalError,
};

use super::PdfError;

/// How large rendered pages may be.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// Pixels per PDF point (1/72 inch): 2.0 renders at 144 dpi.
    pub scale: f32,
    /// A page whose rendering at `scale` would exceed this many pixels is rendered smaller, with
    /// its aspect ratio kept, so a poster-sized or malicious page costs at most
    /// `4 * max_pixels` bytes.
    pub max_pixels: u64,
}

impl RenderOptions {
    /// 144 dpi, at most 40 megapixels (160 MB of RGBA) per page.
    pub const STANDARD: RenderOptions = RenderOptions {
        scale: 2.0,
        max_pixels: 40_000_000,
    };
}

/// One rendered page: `rgba` holds `width * height` pixels, row by row, 4 bytes each, opaque
/// (pages are drawn on white).
#[derive(Clone)]
pub struct RenderedPage {
    /// The page number, 1-based.
    pub page: usize,
    pub width: u32,
    pub height: u32,
    /// Pixels per PDF point actually used: `RenderOptions::scale`, or less when the pixel cap
    /// applied.
    pub scale: f32,
    pub rgba: Vec<u8>,
}

impl std::fmt::Debug for RenderedPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderedPage")
            .field("page", &self.page)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("scale", &self.scale)
            .field("rgba_bytes", &self.rgba.len())
            .finish()
    }
}

/// The command that installs the library, for error messages.
pub const INSTALL_HINT: &str = "install it with `quire pdfium install --wheel FILE`, where FILE is the pypdfium2 wheel for this machine (`pip download pypdfium2==5.15.2 --no-deps --only-binary :all:`), or point QUIRE_PDFIUM_LIBRARY at a libpdfium.so";

/// The `unsupported` answer when no pdfium library was found; `why` says where Quire looked
/// (`pdfium::locate`'s error).
pub fn library_missing(why: &str) -> PdfError {
    PdfError::Unsupported {
        reason: format!(
            "rendering PDF pages needs the pdfium library, which is not installed ({why}); {INSTALL_HINT}"
        ),
    }
}

struct Loaded {
    path: PathBuf,
    pdfium: Pdfium,
}

/// The loaded library, and the lock every use of pdfium holds.
static PDFIUM: Mutex<Option<Loaded>> = Mutex::new(None);

/// Loads the library at `library` if no library is loaded yet, and holds the lock.
fn pdfium(library: &Path) -> Result<MutexGuard<'static, Option<Loaded>>, PdfError> {
    // A panic while the lock was held left no pdfium object half-made (documents and bitmaps are
    // dropped while unwinding), so a poisoned lock is still usable.
    let mut guard = PDFIUM
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Checked even once a library is loaded, so a configuration that names a missing file is
    // reported the same way whatever happened earlier in the process.
    if !library.is_file() {
        return Err(library_missing(&format!(
            "{} does not exist",
            library.display()
        )));
    }
    match guard.as_ref() {
        Some(loaded) if loaded.path != library => {
            tracing::warn!(
                requested = %library.display(),
                using = %loaded.path.display(),
                "pdfium is loaded once per process; keeping the first library"
            );
        }
        Some(_) => {}
        None => {
            let bindings =
                Pdfium::bind_to_library(library).map_err(|error| PdfError::Unsupported {
                    reason: format!(
                        "the pdfium library {} cannot be loaded ({}); {INSTALL_HINT}",
                        library.display(),
                        load_error(&error)
                    ),
                })?;
            *guard = Some(Loaded {
                path: library.to_path_buf(),
                pdfium: Pdfium::new(bindings),
            });
            tracing::info!(library = %library.display(), "pdfium loaded");
        }
    }
    Ok(guard)
}

fn load_error(error: &PdfiumError) -> String {
    match error {
        PdfiumError::LoadLibraryError(error) => error.to_string(),
        PdfiumError::LoadLibraryFunctionNameError(name) => format!(
            "it lacks the function {name}, so it is older than the pdfium build 8125 Quire needs"
        ),
        other => format!("{other:?}"),
    }
}

/// The library this process has loaded, if any (for `quire doctor` and the server's status).
pub fn loaded_library() -> Option<PathBuf> {
    PDFIUM
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .map(|loaded| loaded.path.clone())
}

/// Loads the library at `library` (if none is loaded yet) without rendering anything, for
/// `quire doctor`; the error is what rendering would answer.
pub fn check_library(library: &Path) -> Result<(), PdfError> {
    pdfium(library).map(drop)
}

/// Renders `pages` (1-based, in the order given) of the PDF in `bytes` with the pdfium library at
/// `library`.
///
/// Every page number is checked before any page is rendered. Errors: `unsupported` (no usable
/// library), `pdf_encrypted`, `pdf_damaged`, `pdf_page_out_of_range`, `pdf_render_failed`
/// (including a panic anywhere in the rendering).
pub fn render_pages(
    bytes: &[u8],
    pages: &[usize],
    library: &Path,
    options: &RenderOptions,
) -> Result<Vec<RenderedPage>, PdfError> {
    let guard = pdfium(library)?;
    let Some(loaded) = guard.as_ref() else {
        return Err(library_missing("the library was not loaded"));
    };
    let current = Cell::new(pages.first().copied().unwrap_or(0));
    let rendered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        render_locked(&loaded.pdfium, bytes, pages, options, &current)
    }));
    drop(guard);
    match rendered {
        Ok(result) => result,
        Err(panic) => Err(PdfError::RenderFailed {
            page: current.get(),
            reason: format!(
                "the renderer failed ({})",
                panic
                    .downcast_ref::<&str>()
                    .map(|text| text.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into())
            ),
        }),
    }
}

fn render_locked(
    pdfium: &Pdfium,
    bytes: &[u8],
    pages: &[usize],
    options: &RenderOptions,
    current: &Cell<usize>,
) -> Result<Vec<RenderedPage>, PdfError> {
    let document = open(pdfium, bytes)?;
    let count = usize::try_from(document.pages().len()).unwrap_or(0);
    if let Some(&page) = pages.iter().find(|&&page| page == 0 || page > count) {
        return Err(PdfError::PageOutOfRange { page, pages: count });
    }
    let mut rendered = Vec::with_capacity(pages.len());
    for &number in pages {
        current.set(number);
        rendered.push(render_page(&document, number, options)?);
    }
    Ok(rendered)
}

fn open<'a>(pdfium: &'a Pdfium, bytes: &'a [u8]) -> Result<PdfDocument<'a>, PdfError> {
    pdfium
        .load_pdf_from_byte_slice(bytes, None)
        .map_err(|error| match error {
            PdfiumError::PdfiumLibraryInternalError(
                PdfiumInternalError::PasswordError | PdfiumInternalError::SecurityError,
            ) => PdfError::Encrypted,
            PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FormatError) => {
                PdfError::Damaged {
                    reason: "pdfium cannot parse it".into(),
                }
            }
            other => PdfError::Damaged {
                reason: format!("pdfium cannot open it: {other:?}"),
            },
        })
}

fn render_page(
    document: &PdfDocument<'_>,
    number: usize,
    options: &RenderOptions,
) -> Result<RenderedPage, PdfError> {
    let failed = |reason: String| PdfError::RenderFailed {
        page: number,
        reason,
    };
    let index = i32::try_from(number - 1).map_err(|_| failed("page number too large".into()))?;
    let page = document
        .pages()
        .get(index)
        .map_err(|error| failed(format!("pdfium cannot load the page: {error:?}")))?;
    // pdfium reports the size with the page's /Rotate applied, which is how it draws it.
    let (width, height, scale) =
        pixel_size(page.width().value, page.height().value, options).map_err(failed)?;
    let config = PdfRenderConfig::new()
        .set_fixed_size(width as i32, height as i32)
        .set_format(PdfBitmapFormat::BGRA)
        .render_form_data(true)
        .render_annotations(true);
    let bitmap = page
        .render_with_config(&config)
        .map_err(|error| failed(format!("pdfium: {error:?}")))?;
    let (got_width, got_height) = (bitmap.width(), bitmap.height());
    if got_width != width as i32 || got_height != height as i32 {
        return Err(failed(format!(
            "pdfium drew {got_width}x{got_height} pixels, not {width}x{height}"
        )));
    }
    let rgba = bgra_rows_to_rgba(&bitmap.as_raw_bytes(), width as usize, height as usize)
        .ok_or_else(|| failed("pdfium's bitmap is smaller than its size says".into()))?;
    Ok(RenderedPage {
        page: number,
        width,
        height,
        scale,
        rgba,
    })
}

/// The rendered size of a page of `width` x `height` points: `options.scale` pixels per point,
/// scaled down (aspect ratio kept) to stay within `options.max_pixels`.
pub fn pixel_size(
    width: f32,
    height: f32,
    options: &RenderOptions,
) -> Result<(u32, u32, f32), String> {
    if !(width.is_finite() && height.is_finite() && width > 0.0 && height > 0.0) {
        return Err(format!(
            "the page has no drawable size ({width} x {height} points)"
        ));
    }
    let (width, height) = (f64::from(width), f64::from(height));
    let max_pixels = options.max_pixels.max(1) as f64;
    let mut scale = f64::from(options.scale).max(f64::MIN_POSITIVE);
    let wanted = (width * scale) * (height * scale);
    if wanted > max_pixels {
        scale *= (max_pixels / wanted).sqrt();
    }
    let mut pixels_wide = (width * scale).round().max(1.0);
    let mut pixels_high = (height * scale).round().max(1.0);
    // Rounding up may cross the cap by a row or column; flooring both cannot.
    if pixels_wide * pixels_high > max_pixels {
        pixels_wide = (width * scale).floor().max(1.0);
        pixels_high = (height * scale).floor().max(1.0);
    }
    // pdfium's bitmaps are addressed with 32-bit strides (4 bytes a pixel).
    let limit = f64::from(i32::MAX / 4);
    if pixels_wide > limit || pixels_high > limit {
        return Err(format!(
            "the page is too long and thin to render ({width} x {height} points)"
        ));
    }
    Ok((pixels_wide as u32, pixels_high as u32, scale as f32))
}

/// pdfium's BGRA rows (each `stride` bytes, at least `4 * width`) as tightly packed RGBA.
fn bgra_rows_to_rgba(raw: &[u8], width: usize, height: usize) -> Option<Vec<u8>> {
    if height == 0 {
        return Some(Vec::new());
    }
    let stride = raw.len() / height;
    let row_bytes = width.checked_mul(4)?;
    if stride < row_bytes {
        return None;
    }
    let mut rgba = Vec::with_capacity(row_bytes.checked_mul(height)?);
    for row in raw.chunks_exact(stride).take(height) {
        for pixel in row[..row_bytes].chunks_exact(4) {
            rgba.extend_from_slice(&[pixel[2], pixel[1], pixel[0], pixel[3]]);
        }
    }
    Some(rgba)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a4_at_twice_its_points() {
        let size = pixel_size(595.28, 841.89, &RenderOptions::STANDARD).unwrap();
        assert_eq!((size.0, size.1), (1191, 1684));
        assert_eq!(size.2, 2.0);
    }

    #[test]
    fn a_huge_page_is_scaled_down_to_the_cap_keeping_its_shape() {
        let options = RenderOptions {
            scale: 2.0,
            max_pixels: 1_000_000,
        };
        let (width, height, scale) = pixel_size(14_400.0, 7_200.0, &options).unwrap();
        assert!(u64::from(width) * u64::from(height) <= 1_000_000);
        assert!(u64::from(width) * u64::from(height) > 990_000);
        assert_eq!((width as f32 / height as f32 * 10.0).round(), 20.0);
        assert!(scale < 0.1);
    }

    #[test]
    fn pages_without_a_size_are_refused() {
        for (width, height) in [
            (0.0, 10.0),
            (10.0, -1.0),
            (f32::NAN, 10.0),
            (f32::INFINITY, 1.0),
        ] {
            assert!(pixel_size(width, height, &RenderOptions::STANDARD).is_err());
        }
    }

    #[test]
    fn bgra_with_padded_rows_becomes_packed_rgba() {
        // 2x2 pixels, stride 12 (4 bytes of padding a row).
        let raw = [
            1, 2, 3, 255, 4, 5, 6, 255, 0, 0, 0, 0, //
            7, 8, 9, 255, 10, 11, 12, 255, 0, 0, 0, 0,
        ];
        let rgba = bgra_rows_to_rgba(&raw, 2, 2).unwrap();
        assert_eq!(
            rgba,
            [3, 2, 1, 255, 6, 5, 4, 255, 9, 8, 7, 255, 12, 11, 10, 255]
        );
        assert!(bgra_rows_to_rgba(&raw[..8], 2, 2).is_none());
    }

    #[test]
    fn a_missing_library_is_unsupported_with_the_install_command() {
        let error = render_pages(
            b"%PDF-1.4",
            &[1],
            Path::new("/nonexistent/libpdfium.so"),
            &RenderOptions::STANDARD,
        )
        .unwrap_err();
        assert_eq!(error.code(), "unsupported");
        assert!(
            error.to_string().contains("quire pdfium install"),
            "{error}"
        );
    }
}
