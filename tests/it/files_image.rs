//! Fitting real photographs and a real transparent image to the byte budget: orientation applied
//! pixel for pixel, alpha kept, budgets met, bombs refused from the header.
//! The inputs in `tests/data/files/` are listed with their sources in `SOURCES.md` there.

use std::path::PathBuf;

use image::metadata::Orientation;
use image::{DynamicImage, GenericImageView};
use quire::files::image::{
    DEFAULT_IMAGE_BUDGET, FitOptions, FittedImage, ImageError, MAX_LONG_EDGE, OutputFormat,
    fit_image,
};

fn data(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/files")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn fit(name: &str, budget_bytes: usize) -> FittedImage {
    let options = FitOptions {
        budget_bytes,
        ..FitOptions::DEFAULT
    };
    fit_image(&data(name), options).unwrap_or_else(|error| panic!("{name}: {error}"))
}

fn decode(bytes: &[u8]) -> DynamicImage {
    image::load_from_memory(bytes).expect("the output decodes")
}

/// Mean absolute difference per channel (0-255) between two images of the same size.
fn difference(a: &DynamicImage, b: &DynamicImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let (a, b) = (a.to_rgb8(), b.to_rgb8());
    let total: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    total as f64 / a.as_raw().len() as f64
}

const ALL_ORIENTATIONS: [Orientation; 8] = [
    Orientation::NoTransforms,
    Orientation::Rotate90,
    Orientation::Rotate180,
    Orientation::Rotate270,
    Orientation::FlipHorizontal,
    Orientation::FlipVertical,
    Orientation::Rotate90FlipH,
    Orientation::Rotate270FlipH,
];

/// Asserts `output` looks like `upright` and unlike every other orientation of it, so a missing or
/// wrong rotation cannot pass.
fn assert_upright(label: &str, output: &DynamicImage, upright: &DynamicImage) {
    let correct = difference(output, upright);
    assert!(
        correct < 12.0,
        "{label}: differs from the upright photo by {correct:.1}"
    );
    for orientation in &ALL_ORIENTATIONS[1..] {
        let mut other = upright.clone();
        other.apply_orientation(*orientation);
        if other.dimensions() != output.dimensions() {
            continue;
        }
        let wrong = difference(output, &other);
        assert!(
            wrong > correct * 2.5,
            "{label}: as close to {orientation:?} ({wrong:.1}) as to upright ({correct:.1})"
        );
    }
}

#[test]
fn every_exif_orientation_of_a_real_photo_comes_out_upright() {
    let upright = decode(&data("hopper.jpg"));
    for exif in 2..=8 {
        let name = format!("hopper_orientation_{exif}.jpg");
        let fitted = fit(&name, DEFAULT_IMAGE_BUDGET);
        assert_eq!(fitted.exif_orientation, exif, "{name}");
        assert!(
            matches!(fitted.format, OutputFormat::Jpeg { .. }),
            "{name}: {:?}",
            fitted.format
        );
        assert!(
            fitted
                .metadata
                .contains(&format!("EXIF orientation {exif} applied")),
            "{}",
            fitted.metadata
        );
        assert_upright(&name, &decode(&fitted.bytes), &upright);
    }
}

#[test]
fn orientation_six_swaps_the_dimensions_of_a_camera_photo() {
    // flower.jpg is a Canon PowerShot S40 photo (480x360, EXIF orientation 1); the `_6` copy differs
    // only in the orientation value, so its upright form is the original turned 90° clockwise.
    let fitted = fit("flower_orientation_6.jpg", DEFAULT_IMAGE_BUDGET);
    assert_eq!((fitted.original_width, fitted.original_height), (480, 360));
    assert_eq!((fitted.width, fitted.height), (360, 480));
    let output = decode(&fitted.bytes);
    assert_eq!(output.dimensions(), (360, 480));
    let mut expected = decode(&data("flower.jpg"));
    expected.apply_orientation(Orientation::Rotate90);
    assert_upright("flower_orientation_6.jpg", &output, &expected);
}

#[test]
fn webp_orientation_is_applied_too() {
    let fitted = fit("hopper_orientation_6.webp", DEFAULT_IMAGE_BUDGET);
    assert_eq!(fitted.exif_orientation, 6);
    assert_upright(
        "hopper_orientation_6.webp",
        &decode(&fitted.bytes),
        &decode(&data("hopper.jpg")),
    );
}

#[test]
fn an_image_that_already_fits_is_sent_unchanged() {
    for (name, mime_type) in [
        ("flower.jpg", "image/jpeg"),
        ("transparent.png", "image/png"),
        ("hopper.gif", "image/gif"),
        ("transparent.webp", "image/webp"),
    ] {
        let fitted = fit(name, DEFAULT_IMAGE_BUDGET);
        assert_eq!(fitted.bytes, data(name), "{name}");
        assert_eq!(fitted.mime_type, mime_type);
        assert!(
            fitted.metadata.ends_with("sent unchanged."),
            "{}",
            fitted.metadata
        );
    }
}

#[test]
fn a_tall_phone_photo_is_resized_to_the_long_edge_and_fits() {
    let original = data("ultrahdr.jpg");
    let fitted = fit("ultrahdr.jpg", DEFAULT_IMAGE_BUDGET);
    assert_eq!(
        (fitted.original_width, fitted.original_height),
        (1512, 2688)
    );
    assert!(fitted.bytes.len() <= DEFAULT_IMAGE_BUDGET);
    assert!(fitted.height <= MAX_LONG_EDGE && fitted.height > fitted.width);
    // The aspect ratio survives resizing (to the pixel).
    let expected_width = (f64::from(fitted.height) * 1512.0 / 2688.0).round() as u32;
    assert!(
        fitted.width.abs_diff(expected_width) <= 1,
        "{}x{}",
        fitted.width,
        fitted.height
    );
    let output = decode(&fitted.bytes);
    assert_eq!(output.dimensions(), (fitted.width, fitted.height));
    assert!(
        fitted
            .metadata
            .starts_with("Image: JPEG 47.1 KiB, 1512x2688 px; sent as JPEG"),
        "{}",
        fitted.metadata
    );
    assert!(
        fitted.metadata.contains("long edge resized to 1568 px"),
        "{}",
        fitted.metadata
    );
    // The same photo at a tight budget walks the ladder to its floor and shrinks.
    let tight = fit("ultrahdr.jpg", 12 * 1024);
    assert!(tight.bytes.len() <= 12 * 1024);
    assert_eq!(tight.format, OutputFormat::Jpeg { quality: 40 });
    assert!(tight.height < fitted.height && tight.height >= 64);
    assert!(tight.metadata.contains("shrunk to"), "{}", tight.metadata);
    assert_eq!(
        decode(&tight.bytes).dimensions(),
        (tight.width, tight.height)
    );
    assert!(original.len() > tight.bytes.len());
}

#[test]
fn transparency_is_kept_when_an_image_must_be_re_encoded() {
    // Budgets below each file's size force a re-encode; PNG is lossless, so shrinking meets them.
    for (name, budget) in [
        ("transparent.png", 13_000),
        ("transparent.webp", 7_000),
        ("transparent.gif", 7_000),
    ] {
        let original = decode(&data(name));
        let fitted = fit(name, budget);
        assert!(
            fitted.bytes.len() <= budget,
            "{name}: {} > {budget}",
            fitted.bytes.len()
        );
        assert!(fitted.has_alpha, "{name}");
        assert_eq!(fitted.format, OutputFormat::Png, "{name}");
        assert_eq!(fitted.mime_type, "image/png");
        let output = decode(&fitted.bytes);
        assert!(output.color().has_alpha(), "{name}");
        let rgba = output.to_rgba8();
        let transparent = rgba.pixels().filter(|pixel| pixel.0[3] == 0).count();
        let opaque = rgba.pixels().filter(|pixel| pixel.0[3] == 255).count();
        assert!(
            transparent > 0 && opaque > 0,
            "{name}: {transparent} clear, {opaque} opaque"
        );
        // The corners of these pictures are background: they stay see-through.
        assert_eq!(rgba.get_pixel(0, 0).0[3], 0, "{name}");
        assert!(
            output.width() < original.width(),
            "{name} was shrunk to meet the budget"
        );
        assert!(
            fitted.metadata.contains("transparency kept"),
            "{}",
            fitted.metadata
        );
    }
}

#[test]
fn fitting_is_deterministic() {
    let first = fit("flower_orientation_6.jpg", 8 * 1024);
    let second = fit("flower_orientation_6.jpg", 8 * 1024);
    assert!(first.metadata.contains("shrunk to"), "{}", first.metadata);
    assert_eq!(first, second);
}

#[test]
fn a_generated_noisy_image_walks_the_whole_ladder_and_stays_above_the_floor() {
    // Noise compresses worst of all, so this needs both the ladder and the shrinking.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noisy = image::RgbImage::from_fn(1200, 700, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let [r, g, b, ..] = state.to_le_bytes();
        image::Rgb([r, g, b])
    });
    let mut bytes = Vec::new();
    DynamicImage::ImageRgb8(noisy)
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .expect("encode the input");
    let fitted = fit_image(&bytes, FitOptions::DEFAULT).expect("fits");
    assert!(fitted.bytes.len() <= DEFAULT_IMAGE_BUDGET);
    assert_eq!(fitted.format, OutputFormat::Jpeg { quality: 40 });
    assert!(fitted.width.max(fitted.height) >= 64);
    assert!(fitted.width > fitted.height);
    assert_eq!(
        decode(&fitted.bytes).dimensions(),
        (fitted.width, fitted.height)
    );
}

#[test]
fn a_budget_nothing_fits_is_an_error_not_an_oversized_image() {
    let options = FitOptions {
        budget_bytes: 200,
        ..FitOptions::DEFAULT
    };
    let error = fit_image(&data("ultrahdr.jpg"), options).expect_err("200 bytes is too small");
    assert_eq!(error.code(), "over_budget");
    let ImageError::OverBudget {
        width,
        height,
        smallest,
        ..
    } = error
    else {
        unreachable!()
    };
    assert_eq!(width.max(height), 64, "stopped at the floor");
    assert!(smallest > 200);
}

/// A PNG that declares `width`x`height` and ends after a few bytes of image data: decoding it for
/// real would need gigabytes, so refusing it quickly proves the refusal came from the header.
fn png_bomb(width: u32, height: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], body: &[u8]) {
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(body);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &[0x78, 0x9c, 0x62, 0x00]);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffff_u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A baseline JPEG that declares `width`x`height` in its frame header and has no scan data.
fn jpeg_bomb(width: u16, height: u16) -> Vec<u8> {
    let mut out = vec![0xff, 0xd8];
    // A quantisation table, so the decoder reaches the frame header.
    out.extend_from_slice(&[0xff, 0xdb, 0x00, 0x43, 0x00]);
    out.extend_from_slice(&[1; 64]);
    out.extend_from_slice(&[0xff, 0xc0, 0x00, 0x0b, 0x08]);
    out.extend_from_slice(&height.to_be_bytes());
    out.extend_from_slice(&width.to_be_bytes());
    out.extend_from_slice(&[0x01, 0x01, 0x11, 0x00]);
    // The start of a scan: headers end here, and the (absent) pixels would follow.
    out.extend_from_slice(&[0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00]);
    out.extend_from_slice(&[0x00; 16]);
    out.extend_from_slice(&[0xff, 0xd9]);
    out
}

/// A GIF whose logical screen and only frame are `width`x`height`.
fn gif_bomb(width: u16, height: u16) -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&height.to_le_bytes());
    out.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    out.push(0x2c);
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&height.to_le_bytes());
    out.extend_from_slice(&[0, 2, 2, 0x4c, 0x01, 0, 0x3b]);
    out
}

#[test]
fn decompression_bombs_are_refused_from_the_header() {
    let started = std::time::Instant::now();
    let cases = [
        ("png", png_bomb(100_000, 100_000), Some((100_000, 100_000))),
        ("jpeg", jpeg_bomb(65_000, 65_000), Some((65_000, 65_000))),
        ("gif", gif_bomb(65_535, 65_535), Some((65_535, 65_535))),
    ];
    for (label, bytes, dimensions) in cases {
        let error = fit_image(&bytes, FitOptions::DEFAULT).expect_err(label);
        assert_eq!(error.code(), "too_many_pixels", "{label}: {error}");
        let ImageError::TooManyPixels {
            dimensions: found, ..
        } = error
        else {
            unreachable!()
        };
        if found.is_some() {
            assert_eq!(found, dimensions, "{label}");
        }
    }
    // A 12-megapixel photo passes a 100-megapixel ceiling but not a 10-megapixel one.
    let options = FitOptions {
        max_pixels: 1_000_000,
        ..FitOptions::DEFAULT
    };
    let error = fit_image(&data("ultrahdr.jpg"), options).expect_err("4 megapixels > 1");
    assert_eq!(
        error,
        ImageError::TooManyPixels {
            dimensions: Some((1512, 2688)),
            limit: 1_000_000
        }
    );
    assert!(error.to_string().contains("1512x2688"), "{error}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "nothing was decoded"
    );
}

#[test]
fn other_formats_and_garbage_are_typed_errors() {
    let bmp = b"BM\x3a\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\x18\0\0\0\0\0\x04\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\xff\0";
    let error = fit_image(bmp, FitOptions::DEFAULT).expect_err("bmp");
    assert_eq!(error.code(), "unsupported_format", "{error}");
    assert!(error.to_string().contains("Bmp"), "{error}");

    let error = fit_image(b"just some text, not a picture", FitOptions::DEFAULT).expect_err("text");
    assert_eq!(error.code(), "undecodable_image");

    // A PNG cut in half fails when its pixels are read (a tiny budget forces the decode).
    let mut truncated = data("transparent.png");
    truncated.truncate(truncated.len() / 2);
    let options = FitOptions {
        budget_bytes: 1024,
        ..FitOptions::DEFAULT
    };
    let error = fit_image(&truncated, options).expect_err("half a PNG");
    assert_eq!(error.code(), "undecodable_image", "{error}");
    // zune-jpeg, like browsers, shows a cut-off JPEG with its missing part filled: still a picture.
    let mut truncated = data("flower.jpg");
    truncated.truncate(truncated.len() / 3);
    let fitted = fit_image(&truncated, options).expect("a partial JPEG is shown");
    assert!(fitted.bytes.len() <= 1024);
    assert_eq!((fitted.original_width, fitted.original_height), (480, 360));
}
