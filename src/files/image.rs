//! Fitting a vault image to the byte budget an MCP client accepts, so an agent can look at any
//! screenshot, scan or photo in the vault.
//! It owns decoding (through the `image` crate, never a hand-written codec), orientation, resizing
//! and re-encoding; it knows nothing of paths, the vault or MCP.
//!
//! Invariants, in the order the pipeline applies them:
//! 1. The pixel count is checked from the header before any pixel is decoded, and the decoder runs
//!    under `image::Limits`, so a decompression bomb costs a header parse, never gigabytes.
//! 2. The EXIF orientation is applied, so the agent sees the picture the way a photo viewer shows it.
//! 3. An image that already fits (within the budget, long edge at most [`MAX_LONG_EDGE`], upright) is
//!    sent byte for byte as it is.
//! 4. Otherwise: long edge at most [`MAX_LONG_EDGE`], then a fixed quality ladder (JPEG for opaque
//!    images, where an encoding over twice the budget skips to the lowest quality; PNG, which keeps
//!    alpha, for images with real transparency), then shrinking by
//!    √(budget/size) while the encoding is still too big, never below [`MIN_LONG_EDGE`]. Every step
//!    count is bounded and nothing depends on the clock, so the same input always gives the same
//!    output.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::imageops::FilterType;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};

/// The default budget for one encoded image: 48 KiB fits the tightest mainstream client's cap on an
/// image content block (the same figure Vault Cortex uses).
pub const DEFAULT_IMAGE_BUDGET: usize = 48 * 1024;

/// The default ceiling on decoded pixels: 100 megapixels covers every consumer and most medium
/// format cameras while keeping a decode under about 400 MB.
pub const DEFAULT_MAX_PIXELS: u64 = 100_000_000;

/// The longest edge an image is sent with; vision models downscale anything larger anyway.
pub const MAX_LONG_EDGE: u32 = 1568;

/// Shrinking to meet the budget stops here: smaller than this an image is no longer worth looking at.
pub const MIN_LONG_EDGE: u32 = 64;

/// One encoding tried on the way down to the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rung {
    Jpeg(u8),
    Png,
}

/// Opaque images walk down these JPEG qualities; the last one is the floor the shrinking uses.
const OPAQUE_LADDER: [Rung; 5] = [
    Rung::Jpeg(80),
    Rung::Jpeg(70),
    Rung::Jpeg(60),
    Rung::Jpeg(50),
    Rung::Jpeg(40),
];

/// Transparent images have one lossless PNG rung: PNG has no quality knob (and the `image` crate
/// encodes WebP only losslessly), so shrinking carries the budget.
const ALPHA_LADDER: [Rung; 1] = [Rung::Png];

/// An encoding more than this many times the budget skips the ladder's middle rungs.
const LADDER_REACH: usize = 2;

/// At most this many shrink steps follow the ladder; with the safety margin one or two suffice.
const MAX_SHRINK_STEPS: usize = 8;

/// The shrink factor √(budget/size) is multiplied by this, because encoded size does not fall exactly
/// with the pixel count and a step that lands just over the budget would cost another encode.
const SHRINK_MARGIN: f64 = 0.92;

/// The budget and safety limits of one fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FitOptions {
    /// The most bytes the encoded output may have.
    pub budget_bytes: usize,
    /// Images whose header declares more pixels than this are refused before decoding.
    pub max_pixels: u64,
}

impl FitOptions {
    /// The defaults: a 48 KiB budget and a 100-megapixel ceiling.
    pub const DEFAULT: FitOptions = FitOptions {
        budget_bytes: DEFAULT_IMAGE_BUDGET,
        max_pixels: DEFAULT_MAX_PIXELS,
    };
}

/// The formats Quire reads. Anything else that `image` recognises is `unsupported_format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputFormat {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl InputFormat {
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Png => "PNG",
            InputFormat::Jpeg => "JPEG",
            InputFormat::Gif => "GIF",
            InputFormat::WebP => "WebP",
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            InputFormat::Png => "image/png",
            InputFormat::Jpeg => "image/jpeg",
            InputFormat::Gif => "image/gif",
            InputFormat::WebP => "image/webp",
        }
    }

    fn image_format(self) -> ImageFormat {
        match self {
            InputFormat::Png => ImageFormat::Png,
            InputFormat::Jpeg => ImageFormat::Jpeg,
            InputFormat::Gif => ImageFormat::Gif,
            InputFormat::WebP => ImageFormat::WebP,
        }
    }
}

/// What the encoded output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// The input bytes, untouched.
    Original(InputFormat),
    /// Re-encoded as JPEG at this quality.
    Jpeg { quality: u8 },
    /// Re-encoded as PNG (lossless, keeps alpha).
    Png,
}

/// An image ready to send: the encoded bytes, their type and a one-line account of what was done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FittedImage {
    pub bytes: Vec<u8>,
    pub mime_type: &'static str,
    pub format: OutputFormat,
    pub width: u32,
    pub height: u32,
    pub original_format: InputFormat,
    pub original_bytes: usize,
    /// Stored dimensions, before the EXIF orientation is applied.
    pub original_width: u32,
    pub original_height: u32,
    /// The EXIF orientation value (1 to 8); 1 when the file has none.
    pub exif_orientation: u8,
    /// Whether the decoded image has at least one pixel that is not fully opaque.
    pub has_alpha: bool,
    /// One line for the agent: original size, dimensions and what was done.
    pub metadata: String,
}

/// Why an image cannot be sent. Each variant has a stable [`code`](ImageError::code).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("{}", too_many_pixels_message(*dimensions, *limit))]
    TooManyPixels {
        /// The declared dimensions, when the header was read far enough to know them.
        dimensions: Option<(u32, u32)>,
        limit: u64,
    },
    #[error("the file is not a readable image: {reason}")]
    Undecodable { reason: String },
    #[error("{detected} images are not supported; readable images are PNG, JPEG, GIF and WebP")]
    UnsupportedFormat { detected: String },
    #[error(
        "even at {width}x{height} pixels the image needs {smallest} bytes, more than the {budget}-byte budget"
    )]
    OverBudget {
        budget: usize,
        smallest: usize,
        width: u32,
        height: u32,
    },
    /// An encoder refused a decoded image; a bug, not a property of the file.
    #[error("re-encoding the image failed: {reason}")]
    Encode { reason: String },
}

impl ImageError {
    /// A stable machine-readable code, the first word of the tool error an adapter shows.
    pub fn code(&self) -> &'static str {
        match self {
            ImageError::TooManyPixels { .. } => "too_many_pixels",
            ImageError::Undecodable { .. } => "undecodable_image",
            ImageError::UnsupportedFormat { .. } => "unsupported_format",
            ImageError::OverBudget { .. } => "over_budget",
            ImageError::Encode { .. } => "internal",
        }
    }
}

/// Detects the format from the bytes (the extension may lie), refusing formats Quire does not read.
pub fn detect_format(bytes: &[u8]) -> Result<InputFormat, ImageError> {
    let format = image::guess_format(bytes).map_err(|_| ImageError::Undecodable {
        reason: "the content is not in any image format Quire recognises".to_owned(),
    })?;
    match format {
        ImageFormat::Png => Ok(InputFormat::Png),
        ImageFormat::Jpeg => Ok(InputFormat::Jpeg),
        ImageFormat::Gif => Ok(InputFormat::Gif),
        ImageFormat::WebP => Ok(InputFormat::WebP),
        other => Err(ImageError::UnsupportedFormat {
            detected: format!("{other:?}"),
        }),
    }
}

/// Fits `bytes` (a PNG, JPEG, GIF or WebP file) into `options.budget_bytes`. GIFs are read as their
/// first frame unless they are sent unchanged.
pub fn fit_image(bytes: &[u8], options: FitOptions) -> Result<FittedImage, ImageError> {
    let format = detect_format(bytes)?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format.image_format());
    reader.limits(decoder_limits(options.max_pixels));
    let mut decoder = reader
        .into_decoder()
        .map_err(|error| map_decode_error(error, options))?;
    let (original_width, original_height) = decoder.dimensions();
    if u64::from(original_width) * u64::from(original_height) > options.max_pixels {
        return Err(ImageError::TooManyPixels {
            dimensions: Some((original_width, original_height)),
            limit: options.max_pixels,
        });
    }
    let orientation = exif_orientation(&mut decoder);

    let facts = Facts {
        format,
        bytes: bytes.len(),
        width: original_width,
        height: original_height,
        orientation,
    };
    let long_edge = original_width.max(original_height);
    if bytes.len() <= options.budget_bytes
        && long_edge <= MAX_LONG_EDGE
        && orientation == Orientation::NoTransforms
    {
        return Ok(facts.finish(
            bytes.to_vec(),
            OutputFormat::Original(format),
            (original_width, original_height),
            None,
            &[],
        ));
    }

    let image =
        DynamicImage::from_decoder(decoder).map_err(|error| map_decode_error(error, options))?;
    let (base, has_alpha, mut steps) = upright_and_bounded(image, orientation, long_edge);
    let floor = match climb_ladder(&base, has_alpha, options.budget_bytes)? {
        Ok(encoded) => {
            return Ok(facts.finish_encoded(
                encoded,
                (base.width(), base.height()),
                has_alpha,
                &steps,
            ));
        }
        Err(floor) => floor,
    };
    shrink_to_budget(&base, floor, options, &facts, has_alpha, &mut steps)
}

/// The decoded image turned upright and with its long edge within `MAX_LONG_EDGE`, whether it
/// has real transparency, and the steps taken, for the result.
fn upright_and_bounded(
    image: DynamicImage,
    orientation: Orientation,
    long_edge: u32,
) -> (DynamicImage, bool, Vec<String>) {
    let has_alpha = has_real_alpha(&image);
    let mut steps: Vec<String> = Vec::new();
    if orientation != Orientation::NoTransforms {
        steps.push(format!(
            "EXIF orientation {} applied",
            orientation.to_exif()
        ));
    }
    // The bound is on the long edge, which turning does not change, so the image is resized
    // first: turning a 12-megapixel photo costs several times more than turning its resized copy.
    let mut base = if long_edge > MAX_LONG_EDGE {
        // `thumbnail` averages whole source areas: fast on a 12-megapixel photo and free of the
        // aliasing a point sample would leave.
        steps.push(format!("long edge resized to {MAX_LONG_EDGE} px"));
        halve_while_twice(image, MAX_LONG_EDGE).thumbnail(MAX_LONG_EDGE, MAX_LONG_EDGE)
    } else {
        image
    };
    base.apply_orientation(orientation);
    let base = normalise_pixels(base, has_alpha);
    (base, has_alpha, steps)
}

/// Encodes `base` down the quality ladder until it fits `budget`: the fitting encoding, else the
/// ladder's floor (its last rung and what that made).
fn climb_ladder(
    base: &DynamicImage,
    has_alpha: bool,
    budget: usize,
) -> Result<Result<Encoded, (Rung, Encoded)>, ImageError> {
    let ladder: &[Rung] = if has_alpha {
        &ALPHA_LADDER
    } else {
        &OPAQUE_LADDER
    };
    let mut floor = (
        Rung::Png,
        Encoded {
            bytes: Vec::new(),
            format: OutputFormat::Png,
        },
    );
    let mut index = 0;
    while let Some(&rung) = ladder.get(index) {
        let encoded = encode(base, rung)?;
        if encoded.bytes.len() <= budget {
            return Ok(Ok(encoded));
        }
        // The whole ladder takes a photo's JPEG to about half its size; an encoding more than
        // `LADDER_REACH` times the budget cannot fit on a middle rung, so the walk goes straight
        // to the floor instead of spending an encode on each.
        let hopeless = encoded.bytes.len() > budget.saturating_mul(LADDER_REACH);
        let floor_index = ladder.len() - 1;
        index = if hopeless && index < floor_index {
            floor_index
        } else {
            index + 1
        };
        floor = (rung, encoded);
    }
    Ok(Err(floor))
}

/// Shrinks `base` step by step, encoded as the ladder's floor, until it fits the budget or
/// reaches `MIN_LONG_EDGE` (then `OverBudget`, naming the smallest size reached).
fn shrink_to_budget(
    base: &DynamicImage,
    floor: (Rung, Encoded),
    options: FitOptions,
    facts: &Facts,
    has_alpha: bool,
    steps: &mut Vec<String>,
) -> Result<FittedImage, ImageError> {
    let (floor_rung, mut current) = floor;
    let (mut width, mut height) = (base.width(), base.height());
    for _ in 0..MAX_SHRINK_STEPS {
        let long = width.max(height);
        if long <= MIN_LONG_EDGE {
            break;
        }
        let factor =
            (options.budget_bytes as f64 / current.bytes.len() as f64).sqrt() * SHRINK_MARGIN;
        let target_long =
            ((f64::from(long) * factor).floor() as u32).clamp(MIN_LONG_EDGE, long - 1);
        (width, height) = scaled(base.width(), base.height(), target_long);
        let shrunk = base.resize_exact(width, height, FilterType::Triangle);
        current = encode(&shrunk, floor_rung)?;
        if current.bytes.len() <= options.budget_bytes {
            steps.push(format!("shrunk to {width}x{height} px to fit the budget"));
            return Ok(facts.finish_encoded(current, (width, height), has_alpha, steps));
        }
    }
    Err(ImageError::OverBudget {
        budget: options.budget_bytes,
        smallest: current.bytes.len(),
        width,
        height,
    })
}

/// Limits handed to the decoder as a second line of defence: a side longer than the pixel ceiling
/// allows even as a one-pixel-high strip is refused by the decoder itself, and allocations stay
/// within four bytes per allowed pixel plus room for the decoder's own buffers.
fn decoder_limits(max_pixels: u64) -> Limits {
    let mut limits = Limits::default();
    let max_side = u32::try_from(max_pixels).unwrap_or(u32::MAX);
    limits.max_image_width = Some(max_side);
    limits.max_image_height = Some(max_side);
    limits.max_alloc = Some(max_pixels.saturating_mul(8).max(64 * 1024 * 1024));
    limits
}

fn map_decode_error(error: image::ImageError, options: FitOptions) -> ImageError {
    match error {
        image::ImageError::Limits(_) => ImageError::TooManyPixels {
            dimensions: None,
            limit: options.max_pixels,
        },
        image::ImageError::Unsupported(unsupported) => ImageError::UnsupportedFormat {
            detected: unsupported.to_string(),
        },
        other => ImageError::Undecodable {
            reason: other.to_string(),
        },
    }
}

/// The EXIF orientation, or none. A damaged EXIF block must not make a readable picture unreadable:
/// it is then shown as stored.
fn exif_orientation(decoder: &mut impl ImageDecoder) -> Orientation {
    match decoder.orientation() {
        Ok(Orientation::NoTransforms) | Err(_) => {}
        Ok(orientation) => return orientation,
    }
    // Some writers (Pillow among them) keep JPEG's `Exif\0\0` prefix inside a WebP EXIF chunk,
    // where the format has the bare TIFF structure; `image` then finds no orientation.
    decoder
        .exif_metadata()
        .ok()
        .flatten()
        .and_then(|exif| {
            exif.strip_prefix(b"Exif\0\0")
                .and_then(Orientation::from_exif_chunk)
        })
        .unwrap_or(Orientation::NoTransforms)
}

fn too_many_pixels_message(dimensions: Option<(u32, u32)>, limit: u64) -> String {
    match dimensions {
        Some((width, height)) => format!(
            "the image is {width}x{height} pixels, more than the {limit} pixels Quire decodes; it was not decoded"
        ),
        None => format!(
            "the image needs more memory than {limit} pixels allow (a possible decompression bomb); it was not decoded"
        ),
    }
}

/// Halves `image` by averaging 2x2 blocks while its long edge stays at least twice `long`. The
/// area average `thumbnail` then does costs about 110 instructions a source pixel; a 2x2 average
/// costs a tenth of that, so a 12-megapixel photo reaches 1568 px in under a third of the work
/// (callgrind: 1.34 G instructions for `thumbnail` alone), and the result is still an area average.
fn halve_while_twice(image: DynamicImage, long: u32) -> DynamicImage {
    let mut image = image;
    while image.width().max(image.height()) >= long.saturating_mul(2) {
        image = match image {
            DynamicImage::ImageRgb8(buffer) => DynamicImage::ImageRgb8(halve(&buffer)),
            DynamicImage::ImageRgba8(buffer) => DynamicImage::ImageRgba8(halve(&buffer)),
            DynamicImage::ImageLuma8(buffer) => DynamicImage::ImageLuma8(halve(&buffer)),
            DynamicImage::ImageLumaA8(buffer) => DynamicImage::ImageLumaA8(halve(&buffer)),
            // 16-bit and float images are rare enough to take the general path.
            other => return other,
        };
    }
    image
}

/// Each output pixel is the rounded mean of a 2x2 block; an odd last row or column is dropped
/// (half a pixel of a several-thousand-pixel edge).
fn halve<P>(source: &image::ImageBuffer<P, Vec<u8>>) -> image::ImageBuffer<P, Vec<u8>>
where
    P: image::Pixel<Subpixel = u8>,
{
    let channels = usize::from(P::CHANNEL_COUNT);
    let (width, height) = (source.width() / 2, source.height() / 2);
    let stride = source.width() as usize * channels;
    let raw = source.as_raw();
    let mut out = Vec::with_capacity(width as usize * height as usize * channels);
    for y in 0..height as usize {
        let top = &raw[2 * y * stride..][..stride];
        let bottom = &raw[(2 * y + 1) * stride..][..stride];
        for x in 0..width as usize {
            let at = 2 * x * channels;
            for c in 0..channels {
                let sum = u16::from(top[at + c])
                    + u16::from(top[at + channels + c])
                    + u16::from(bottom[at + c])
                    + u16::from(bottom[at + channels + c]);
                out.push(((sum + 2) / 4) as u8);
            }
        }
    }
    image::ImageBuffer::from_raw(width, height, out).unwrap_or_else(|| {
        // The length is width * height * channels by construction.
        image::ImageBuffer::new(width, height)
    })
}

fn has_real_alpha(image: &DynamicImage) -> bool {
    if !image.color().has_alpha() {
        return false;
    }
    match image {
        DynamicImage::ImageLumaA8(buffer) => buffer.pixels().any(|pixel| pixel.0[1] < u8::MAX),
        DynamicImage::ImageRgba8(buffer) => buffer.pixels().any(|pixel| pixel.0[3] < u8::MAX),
        DynamicImage::ImageLumaA16(buffer) => buffer.pixels().any(|pixel| pixel.0[1] < u16::MAX),
        DynamicImage::ImageRgba16(buffer) => buffer.pixels().any(|pixel| pixel.0[3] < u16::MAX),
        other => other.to_rgba8().pixels().any(|pixel| pixel.0[3] < u8::MAX),
    }
}

/// Converts to the 8-bit layout the chosen encoder takes: grey stays grey (smaller), alpha is
/// dropped when no pixel uses it, 16-bit and float images become 8-bit.
fn normalise_pixels(image: DynamicImage, has_alpha: bool) -> DynamicImage {
    let grey = matches!(
        image,
        DynamicImage::ImageLuma8(_)
            | DynamicImage::ImageLumaA8(_)
            | DynamicImage::ImageLuma16(_)
            | DynamicImage::ImageLumaA16(_)
    );
    match (grey, has_alpha) {
        (true, false) => DynamicImage::ImageLuma8(image.to_luma8()),
        (true, true) => DynamicImage::ImageLumaA8(image.to_luma_alpha8()),
        (false, false) => DynamicImage::ImageRgb8(image.to_rgb8()),
        (false, true) => DynamicImage::ImageRgba8(image.to_rgba8()),
    }
}

struct Encoded {
    bytes: Vec<u8>,
    format: OutputFormat,
}

fn encode(image: &DynamicImage, rung: Rung) -> Result<Encoded, ImageError> {
    let mut bytes = Vec::new();
    let format = match rung {
        Rung::Jpeg(quality) => {
            JpegEncoder::new_with_quality(&mut bytes, quality)
                .encode_image(image)
                .map_err(|error| ImageError::Encode {
                    reason: error.to_string(),
                })?;
            OutputFormat::Jpeg { quality }
        }
        Rung::Png => {
            let encoder = PngEncoder::new_with_quality(
                &mut bytes,
                CompressionType::Best,
                PngFilter::Adaptive,
            );
            image
                .write_with_encoder(encoder)
                .map_err(|error| ImageError::Encode {
                    reason: error.to_string(),
                })?;
            OutputFormat::Png
        }
    };
    Ok(Encoded { bytes, format })
}

/// Dimensions with the long edge `long` and the aspect ratio of `width`x`height`, at least 1x1.
fn scaled(width: u32, height: u32, long: u32) -> (u32, u32) {
    let ratio = |short: u32, long_side: u32| {
        ((u64::from(short) * u64::from(long) + u64::from(long_side) / 2) / u64::from(long_side))
            .max(1) as u32
    };
    if width >= height {
        (long, ratio(height, width))
    } else {
        (ratio(width, height), long)
    }
}

struct Facts {
    format: InputFormat,
    bytes: usize,
    width: u32,
    height: u32,
    orientation: Orientation,
}

impl Facts {
    fn finish_encoded(
        &self,
        encoded: Encoded,
        dimensions: (u32, u32),
        has_alpha: bool,
        steps: &[String],
    ) -> FittedImage {
        self.finish(
            encoded.bytes,
            encoded.format,
            dimensions,
            Some(has_alpha),
            steps,
        )
    }

    fn finish(
        &self,
        bytes: Vec<u8>,
        format: OutputFormat,
        (width, height): (u32, u32),
        has_alpha: Option<bool>,
        steps: &[String],
    ) -> FittedImage {
        let mime_type = match format {
            OutputFormat::Original(input) => input.mime_type(),
            OutputFormat::Jpeg { .. } => "image/jpeg",
            OutputFormat::Png => "image/png",
        };
        let original = format!(
            "{} {}, {}x{} px",
            self.format.name(),
            human_bytes(self.bytes),
            self.width,
            self.height
        );
        let metadata = match format {
            OutputFormat::Original(_) => format!("Image: {original}; sent unchanged."),
            OutputFormat::Jpeg { quality } => format!(
                "Image: {original}; sent as JPEG {}, {width}x{height} px at quality {quality}{}.",
                human_bytes(bytes.len()),
                steps_suffix(steps),
            ),
            OutputFormat::Png => format!(
                "Image: {original}; sent as PNG {}, {width}x{height} px, transparency kept{}.",
                human_bytes(bytes.len()),
                steps_suffix(steps),
            ),
        };
        FittedImage {
            bytes,
            mime_type,
            format,
            width,
            height,
            original_format: self.format,
            original_bytes: self.bytes,
            original_width: self.width,
            original_height: self.height,
            exif_orientation: self.orientation.to_exif(),
            // An image sent unchanged was not decoded, so its alpha is unknown; it is reported as
            // "not used", which is all a caller needs (nothing was converted).
            has_alpha: has_alpha.unwrap_or(false),
            metadata,
        }
    }
}

fn steps_suffix(steps: &[String]) -> String {
    if steps.is_empty() {
        String::new()
    } else {
        format!(" ({})", steps.join(", "))
    }
}

/// Sizes as people read them: bytes below 1 KiB, then KiB and MiB with one decimal.
pub fn human_bytes(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if value < KIB * KIB {
        format!("{:.1} KiB", value / KIB)
    } else {
        format!("{:.1} MiB", value / (KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::{DynamicImage, halve, halve_while_twice, human_bytes, scaled};

    #[test]
    fn halving_averages_blocks_and_stops_above_twice_the_bound() {
        let source =
            image::RgbImage::from_fn(9, 4, |x, y| image::Rgb([(x * 10) as u8, (y * 20) as u8, 7]));
        let half = halve(&source);
        assert_eq!((half.width(), half.height()), (4, 2));
        // The block at (2..4, 0..2): x 20,30 and y 0,20 average to 25 and 10 (rounded).
        assert_eq!(half.get_pixel(1, 0).0, [25, 10, 7]);
        let big = DynamicImage::ImageRgb8(image::RgbImage::new(4032, 3024));
        let halved = halve_while_twice(big, 1568);
        assert_eq!((halved.width(), halved.height()), (2016, 1512));
        let small = DynamicImage::ImageRgb8(image::RgbImage::new(3000, 2000));
        assert_eq!(halve_while_twice(small, 1568).width(), 3000);
    }

    #[test]
    fn scaled_keeps_the_aspect_ratio_and_the_long_edge() {
        assert_eq!(scaled(4032, 3024, 1568), (1568, 1176));
        assert_eq!(scaled(3024, 4032, 1568), (1176, 1568));
        assert_eq!(scaled(10_000, 10, 64), (64, 1));
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(48 * 1024), "48.0 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 + 100 * 1024), "3.1 MiB");
    }
}
