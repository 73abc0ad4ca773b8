//! The image-fitting benchmark: a program that prints figures, not a timed test (`harness = false`,
//! so `cargo nextest run` never runs it).
//!
//!     cargo bench --bench files [-- PHOTO.jpg]
//!
//! It fits a 12-megapixel JPEG (4032x3024, a phone camera's size) to the default 48 KiB budget, as
//! `vault_read_file` does for a photo in the vault, once as stored and once with EXIF orientation 6
//! (so the rotation is timed too). Without an argument the photo is generated: smooth gradients,
//! shapes and fine noise, encoded at quality 90, which compresses about as badly as a real photo.
//! It prints the input, the output, the best and median of the rounds, and the share of the time the
//! decode alone takes. The target (issue 20) is at most 300 ms in release.

use std::time::{Duration, Instant};

use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, RgbImage};
use quire::files::image::{FitOptions, fit_image, human_bytes};

/// Rounds per figure; the best and the median are reported. `QUIRE_BENCH_ROUNDS` overrides it.
const ROUNDS: usize = 7;
const TARGET: Duration = Duration::from_millis(300);

fn rounds() -> usize {
    std::env::var("QUIRE_BENCH_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&rounds| rounds > 0)
        .unwrap_or(ROUNDS)
}

/// A deterministic 12-megapixel picture with a photo's mix of smooth areas, edges and grain.
fn generated_photo() -> Vec<u8> {
    let (width, height) = (4032_u32, 3024_u32);
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let picture = RgbImage::from_fn(width, height, |x, y| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let grain = (state & 0x1f) as i32 - 16;
        let (fx, fy) = (x as f32 / width as f32, y as f32 / height as f32);
        let sky = (fy * 180.0) as i32;
        let disc = ((fx - 0.6).powi(2) + (fy - 0.4).powi(2)).sqrt() < 0.15;
        let stripes = ((x / 37 + y / 53) % 2) as i32 * 40;
        let channel = |base: i32| (base + grain).clamp(0, 255) as u8;
        if disc {
            image::Rgb([channel(230), channel(200 - sky / 4), channel(60)])
        } else if fy > 0.65 {
            image::Rgb([channel(40 + stripes), channel(110 + stripes), channel(50)])
        } else {
            image::Rgb([
                channel(90 + sky / 3),
                channel(140 + sky / 4),
                channel(235 - sky / 5),
            ])
        }
    });
    let mut bytes = Vec::new();
    JpegEncoder::new_with_quality(&mut bytes, 90)
        .encode_image(&DynamicImage::ImageRgb8(picture))
        .expect("encoding the generated photo");
    bytes
}

/// The same JPEG with an EXIF block saying "rotate 90° clockwise to view" (orientation 6).
fn with_orientation_six(jpeg: &[u8]) -> Vec<u8> {
    let tiff: &[u8] = &[
        b'I', b'I', 42, 0, 8, 0, 0, 0, // little-endian TIFF, first IFD at 8
        1, 0, // one entry
        0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, // Orientation, SHORT, 1 value: 6
        0, 0, 0, 0, // no next IFD
    ];
    let length = u16::try_from(2 + 6 + tiff.len()).expect("small segment");
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xff, 0xe1]);
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(b"Exif\0\0");
    out.extend_from_slice(tiff);
    out.extend_from_slice(&jpeg[2..]);
    out
}

fn time<T>(rounds: usize, mut run: impl FnMut() -> T) -> (Duration, Duration, T) {
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for _ in 0..rounds {
        let started = Instant::now();
        last = Some(run());
        times.push(started.elapsed());
    }
    times.sort();
    let result = last.expect("at least one round");
    (times[0], times[times.len() / 2], result)
}

fn main() {
    let rounds = rounds();
    let argument = std::env::args()
        .skip(1)
        .find(|argument| !argument.starts_with('-'));
    let (label, photo) = match argument {
        Some(path) => {
            let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
            (path, bytes)
        }
        None => (
            "generated 4032x3024 JPEG, quality 90".to_owned(),
            generated_photo(),
        ),
    };
    let rotated = with_orientation_six(&photo);
    println!(
        "fit_image to {} ({rounds} rounds, best / median)",
        human_bytes(FitOptions::DEFAULT.budget_bytes)
    );
    let mut worst = Duration::ZERO;
    for (name, bytes) in [("as stored", &photo), ("EXIF orientation 6", &rotated)] {
        let (decode_best, _, decoded) = time(rounds, || image::load_from_memory(bytes));
        let decoded = decoded.expect("the input decodes");
        let (best, median, fitted) = time(rounds, || fit_image(bytes, FitOptions::DEFAULT));
        let fitted = fitted.expect("the photo fits");
        assert!(fitted.bytes.len() <= FitOptions::DEFAULT.budget_bytes);
        println!(
            "  {label}, {name}: {} in, {}x{} px",
            human_bytes(bytes.len()),
            decoded.width(),
            decoded.height()
        );
        println!("    {}", fitted.metadata);
        println!(
            "    fit: best {:.0} ms, median {:.0} ms (decode alone: {:.0} ms)",
            best.as_secs_f64() * 1000.0,
            median.as_secs_f64() * 1000.0,
            decode_best.as_secs_f64() * 1000.0
        );
        worst = worst.max(median);
    }
    let verdict = if worst <= TARGET { "within" } else { "OVER" };
    println!(
        "  slowest median {:.0} ms: {verdict} the {} ms target",
        worst.as_secs_f64() * 1000.0,
        TARGET.as_millis()
    );
}
