//! The PDF reader (`quire::files::pdf`) on real PDFs nobody here wrote (`tests/data/pdf/README.md`
//! says where each came from) and on generated ones whose exact text is known
//! (`tests/data/pdf/generate.py`).

use std::path::PathBuf;

use quire::files::pdf::{PdfError, PdfLimits, PdfText, pdf_to_markdown};

fn data(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pdf")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn read(name: &str) -> PdfText {
    pdf_to_markdown(&data(name), &PdfLimits::STANDARD)
        .unwrap_or_else(|error| panic!("{name}: {} {error}", error.code()))
}

fn refused(name: &str) -> PdfError {
    match pdf_to_markdown(&data(name), &PdfLimits::STANDARD) {
        Ok(text) => panic!("{name} was read: {}", text.markdown),
        Err(error) => error,
    }
}

/// `needles` appear in `haystack` in this order.
fn in_order(haystack: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        match haystack[from..].find(needle) {
            Some(at) => from += at + needle.len(),
            None => panic!("{needle:?} missing or out of order after byte {from} in:\n{haystack}"),
        }
    }
}

#[test]
fn a_generated_pdf_comes_back_exactly_with_headings_code_and_links() {
    let text = read("generated-known.pdf");
    let expected = r#"---
title: "Quire PDF Fixture"
pages: 2
links: 2
---

# Getting Started

This document is generated so that its text is known exactly.

## Installing the Tool

Run the command `quire serve` to start the server.

```
fn main() {
    let vault = open("notes");
    for note in vault.notes() {
        println!("{}", note.title);
    }
}
```

### Links and References

See the project page or write to the authors.

---
<!-- page 2 of 2 -->

## Second Page

The same link again must be listed once.

Project page again

## Links

- [project page](https://example.org/quire) (page 1)
- [the authors](mailto:authors@example.org) (page 1)
"#;
    assert_eq!(text.markdown, expected);
    assert_eq!(text.title.as_deref(), Some("Quire PDF Fixture"));
    assert_eq!((text.pages, text.pages_read), (2, 2));
    assert!(text.has_text && text.truncated.is_none());
    let uris: Vec<&str> = text.links.iter().map(|link| link.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["https://example.org/quire", "mailto:authors@example.org"]
    );
}

#[test]
fn a_two_column_paper_keeps_its_columns_headings_and_code_listings() {
    // The TraceMonkey paper (PLDI 2009): two columns, TeX fonts with ligatures, listings in a
    // typewriter font.
    let text = read("tracemonkey.pdf");
    let markdown = &text.markdown;
    assert_eq!(text.pages, 14);
    assert_eq!(
        text.title.as_deref(),
        Some("Trace-based Just-in-Time Type Specialization for Dynamic Languages")
    );
    // The sieve listing of Figure 1, with its indentation rebuilt from glyph positions.
    in_order(
        markdown,
        &[
            "```\n1 for (var i = 2; i < 100; ++i) {\n2   if (!primes[i])\n3     continue;\n4   for (var k = i + i; i < 100; k += i)\n5     primes[k] = false;\n6 }\n```\n",
            "Figure 1. Sample program: sieve of Eratosthenes. `primes` is",
        ],
    );
    assert!(
        markdown.contains("```\nv0 := ld state[748]     // load primes from the trace activation record\n      st sp[0], v0      // store primes to interpreter stack\n"),
        "LIR listing:\n{markdown}"
    );
    // Left column (abstract, introduction's start) before the right column of page 1; the
    // ligatures of the TeX fonts come out as letters.
    in_order(
        markdown,
        &[
            "# Trace-based Just-in-Time Type Specialization for Dynamic Languages\n",
            "## Abstract\n\nDynamic languages such as JavaScript are more difficult to com-\npile than statically typed ones.",
            "Keywords JavaScript, just-in-time compilation, trace trees.",
            "## 1. Introduction\n",
            "and is used for the application logic of browser-based productivity",
            "<!-- page 2 of 14 -->",
            "## 2. Overview: Example Tracing Run\n",
            "## 3. Trace Trees\n",
            "## 10. Future Work\n",
            "## References\n",
        ],
    );
    // Section headings are one size; nothing of body size became a heading.
    let headings: Vec<&str> = markdown
        .lines()
        .filter(|line| line.starts_with('#'))
        .collect();
    assert!(headings.len() < 20, "{headings:#?}");
}

#[test]
fn a_two_column_article_from_a_layout_program_reads_column_by_column() {
    let text = read("two-column-quark.pdf");
    in_order(
        &text.markdown,
        &[
            "# Acute effect of speed exercise on nitric oxide (NO) level of footballers\n",
            "Aim: Exercise is one of the low-cost and easiest ways for improving life standards and physical\n",
            "<!-- page 2 of 5 -->",
            "Until 15-20 years ago, NO was thought to be\nmerely the exhaust gas of automobiles, an\n",
            "NO causes vasodilatation in veins and accelerates\nblood flow.",
        ],
    );
}

#[test]
fn uri_links_are_listed_once_with_the_text_under_them() {
    let text = read("geobase-links.pdf");
    assert_eq!(text.pages, 19);
    let links: Vec<(&str, Option<&str>, usize)> = text
        .links
        .iter()
        .map(|link| (link.uri.as_str(), link.text.as_deref(), link.page))
        .collect();
    assert_eq!(
        links,
        [
            (
                "mailto:geoginfo@RNCan.gc.ca",
                Some("geoginfo@RNCan.gc.ca"),
                1
            ),
            (
                "http://www.geogratis.gc.ca/",
                Some("www.GeoGratis.gc.ca"),
                1
            ),
        ]
    );
    assert!(text.markdown.contains("links: 2\n"), "{}", text.markdown);
    assert!(
        text.markdown.ends_with(
            "## Links\n\n- [geoginfo@RNCan.gc.ca](mailto:geoginfo@RNCan.gc.ca) (page 1)\n- [www.GeoGratis.gc.ca](http://www.geogratis.gc.ca/) (page 1)\n"
        ),
        "{}",
        text.markdown
    );
}

#[test]
fn latex_sections_become_headings_and_the_first_is_the_title() {
    let text = read("pdflatex-outline.pdf");
    assert_eq!(text.title.as_deref(), Some("Contents"));
    let headings: Vec<&str> = text
        .markdown
        .lines()
        .filter(|line| line.starts_with('#'))
        .collect();
    assert_eq!(
        headings,
        [
            "# Contents",
            "# 1 Foo",
            "# 2 Bar",
            "# 3 Baz",
            "# 4 Foo",
            "# 5 Bar",
            "# 6 Baz",
            "# 7 Foo",
            "# 8 Bar",
            "# 9 Baz"
        ]
    );
}

#[test]
fn a_pdf_without_a_text_layer_says_so() {
    let text = read("image-only.pdf");
    assert!(!text.has_text);
    assert!(
        text.markdown.contains("This PDF has no text layer"),
        "{}",
        text.markdown
    );
}

#[test]
fn encrypted_pdfs_open_with_the_empty_password_and_are_refused_otherwise() {
    let error = refused("encrypted-user-password.pdf");
    assert_eq!(error.code(), "pdf_encrypted");
    assert!(error.to_string().contains("password-protected"), "{error}");
    // Only an owner password: readers open it without asking, and so does Quire.
    let text = read("encrypted-empty-password.pdf");
    assert!(
        text.markdown.contains("pdf encryption test"),
        "{}",
        text.markdown
    );
}

#[test]
fn damaged_pdfs_are_typed_errors_never_panics() {
    let error = refused("damaged-pdf-parse.pdf");
    assert_eq!(error.code(), "pdf_damaged");
    assert!(error.to_string().contains("damaged"), "{error}");
    // Cut-off and corrupted copies of real files: an answer (text or an error), never a panic.
    let whole = data("crazyones.pdf");
    for cut in [10, 100, whole.len() / 3, whole.len() / 2, whole.len() - 10] {
        let _ = pdf_to_markdown(&whole[..cut], &PdfLimits::STANDARD);
    }
    let mut state = 0x2545_f491_u32;
    for _ in 0..200 {
        let mut bytes = whole.clone();
        for _ in 0..8 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let at = state as usize % bytes.len();
            bytes[at] = (state >> 8) as u8;
        }
        let _ = pdf_to_markdown(&bytes, &PdfLimits::STANDARD);
    }
}

#[test]
fn limits_stop_the_reading_and_say_so() {
    let bytes = data("tracemonkey.pdf");
    let limits = PdfLimits {
        max_pages: 2,
        ..PdfLimits::STANDARD
    };
    let text = pdf_to_markdown(&bytes, &limits).expect("reads");
    assert_eq!((text.pages, text.pages_read), (14, 2));
    assert!(text.truncated.is_some());
    assert!(
        text.markdown
            .contains("truncated: \"read 2 of 14 pages: only the first 2 pages are read\""),
        "{}",
        text.markdown
    );
    assert!(!text.markdown.contains("page 3 of 14"));

    let limits = PdfLimits {
        max_operations: 5_000,
        ..PdfLimits::STANDARD
    };
    let text = pdf_to_markdown(&bytes, &limits).expect("reads");
    assert!(text.pages_read < 14);
    assert!(
        text.truncated
            .as_deref()
            .is_some_and(|reason| reason.contains("too complex")),
        "{:?}",
        text.truncated
    );

    let limits = PdfLimits {
        max_output_bytes: 10_000,
        ..PdfLimits::STANDARD
    };
    let text = pdf_to_markdown(&bytes, &limits).expect("reads");
    assert!(text.pages_read < 14 && text.truncated.is_some());
}

/// Rendering pages with the real pdfium library (`quire::files::pdf::render`).
///
/// The library comes from `QUIRE_TEST_PDFIUM` (a `libpdfium.so`, from the pypdfium2 wheel that
/// `tests/run` downloads) and the wheel itself from `QUIRE_TEST_PDFIUM_WHEEL`. Without them these
/// tests print `SKIP:` and pass, unless `QUIRE_REQUIRE_PDFIUM=1` (set by `tests/run`) makes a
/// missing library a failure.
mod rendering {
    use std::path::{Path, PathBuf};

    use quire::files::pdf::pdfium::{self, Sources};
    use quire::files::pdf::render::{library_missing, loaded_library, pixel_size};
    use quire::files::pdf::{RenderOptions, RenderedPage, render_pages};

    use super::data;

    fn required(variable: &str, what: &str) -> Option<PathBuf> {
        match std::env::var_os(variable).filter(|value| !value.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None if std::env::var("QUIRE_REQUIRE_PDFIUM").as_deref() == Ok("1") => {
                panic!("QUIRE_REQUIRE_PDFIUM=1 but {variable} ({what}) is not set")
            }
            None => {
                eprintln!("SKIP: {variable} is not set ({what})");
                None
            }
        }
    }

    fn library() -> Option<PathBuf> {
        required("QUIRE_TEST_PDFIUM", "the path to libpdfium.so")
    }

    fn render(library: &Path, name: &str, pages: &[usize]) -> Vec<RenderedPage> {
        render_pages(&data(name), pages, library, &RenderOptions::STANDARD)
            .unwrap_or_else(|error| panic!("{name}: {} {error}", error.code()))
    }

    fn dark(page: &RenderedPage, x: u32, y: u32) -> bool {
        let at = ((y * page.width + x) * 4) as usize;
        let pixel = &page.rgba[at..at + 4];
        u32::from(pixel[0]) + u32::from(pixel[1]) + u32::from(pixel[2]) < 3 * 100
    }

    /// Dark pixels in the rectangle `[x0, x1) x [y0, y1)`.
    fn dark_in(page: &RenderedPage, (x0, y0): (u32, u32), (x1, y1): (u32, u32)) -> usize {
        (y0..y1.min(page.height))
            .flat_map(|y| (x0..x1.min(page.width)).map(move |x| (x, y)))
            .filter(|&(x, y)| dark(page, x, y))
            .count()
    }

    #[test]
    fn page_one_is_drawn_at_twice_its_size_in_points_with_the_heading_where_it_is_set() {
        let Some(library) = library() else { return };
        let pages = render(&library, "generated-known.pdf", &[1]);
        let page = &pages[0];
        // A4 is 595.28 x 841.89 points.
        assert_eq!((page.page, page.width, page.height), (1, 1191, 1684));
        assert_eq!(page.scale, 2.0);
        assert_eq!(page.rgba.len(), 1191 * 1684 * 4);
        assert!(
            page.rgba.chunks_exact(4).all(|pixel| pixel[3] == 255),
            "pages are opaque"
        );
        // generate.py sets "Getting Started" in 24 pt bold at fpdf's 10 mm margins: about
        // x 57-420, y 57-140 at 2x. The margins above and left of it stay white.
        let heading = dark_in(page, (57, 50), (430, 140));
        assert!(heading > 2_000, "only {heading} dark pixels in the heading");
        assert_eq!(
            dark_in(page, (0, 0), (1191, 50)),
            0,
            "the top margin has ink"
        );
        assert_eq!(
            dark_in(page, (0, 0), (50, 1684)),
            0,
            "the left margin has ink"
        );
        // Mostly paper: text covers a small part of a page.
        let total = dark_in(page, (0, 0), (1191, 1684));
        assert!(
            total < 1191 * 1684 / 10,
            "{total} dark pixels: the page is not mostly white"
        );
    }

    #[test]
    fn pages_come_back_in_the_order_asked_and_differ() {
        let Some(library) = library() else { return };
        let pages = render(&library, "generated-known.pdf", &[2, 1]);
        assert_eq!(pages.iter().map(|p| p.page).collect::<Vec<_>>(), [2, 1]);
        assert_ne!(pages[0].rgba, pages[1].rgba);
        assert!(dark_in(&pages[0], (0, 0), (pages[0].width, pages[0].height)) > 500);
    }

    #[test]
    fn a_scan_without_text_still_renders() {
        let Some(library) = library() else { return };
        // A 16x16 image filling a 3.84-point page: 8x8 pixels at 2x, not plain paper.
        let page = &render(&library, "image-only.pdf", &[1])[0];
        assert_eq!((page.width, page.height), (8, 8));
        let white = page
            .rgba
            .chunks_exact(4)
            .filter(|pixel| *pixel == [255, 255, 255, 255])
            .count();
        assert!(
            white < 64 / 2,
            "{white} of 64 pixels are white: the image was not drawn"
        );
        let distinct: std::collections::HashSet<&[u8]> = page.rgba.chunks_exact(4).collect();
        assert!(distinct.len() > 1, "one colour: the image was not drawn");
    }

    #[test]
    fn the_pixel_cap_scales_a_page_down_keeping_its_shape() {
        let Some(library) = library() else { return };
        let options = RenderOptions {
            scale: 2.0,
            max_pixels: 100_000,
        };
        let pages = render_pages(&data("generated-known.pdf"), &[1], &library, &options)
            .unwrap_or_else(|error| panic!("{} {error}", error.code()));
        let page = &pages[0];
        assert!(u64::from(page.width) * u64::from(page.height) <= 100_000);
        assert_eq!(
            (page.width, page.height, page.scale),
            pixel_size(595.28, 841.89, &options).unwrap()
        );
        // 266 x 376 would round past the cap, so both edges are floored.
        assert_eq!((page.width, page.height), (265, 376));
        assert!(page.scale < 0.5);
    }

    #[test]
    fn bad_pages_and_bad_files_give_their_codes() {
        let Some(library) = library() else { return };
        let known = data("generated-known.pdf");
        for pages in [&[3][..], &[1, 0], &[usize::MAX]] {
            let error = render_pages(&known, pages, &library, &RenderOptions::STANDARD)
                .expect_err("out of range");
            assert_eq!(error.code(), "pdf_page_out_of_range", "{pages:?}: {error}");
            assert!(error.to_string().contains("2 page(s)"), "{error}");
        }
        let code = |name: &str| {
            render_pages(&data(name), &[1], &library, &RenderOptions::STANDARD)
                .map(|_| "rendered")
                .unwrap_or_else(|error| error.code())
        };
        assert_eq!(code("encrypted-user-password.pdf"), "pdf_encrypted");
        assert_eq!(code("encrypted-empty-password.pdf"), "rendered");
        assert_eq!(code("damaged-pdf-parse.pdf"), "pdf_damaged");
        let error = render_pages(b"not a pdf", &[1], &library, &RenderOptions::STANDARD)
            .expect_err("garbage");
        assert_eq!(error.code(), "pdf_damaged");
    }

    #[test]
    fn every_page_of_every_fixture_and_of_damaged_copies_renders_or_gives_a_typed_error() {
        let Some(library) = library() else { return };
        // Small pages keep this quick; what is checked is that nothing crashes or panics.
        let options = RenderOptions {
            scale: 0.25,
            max_pixels: 1_000_000,
        };
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pdf");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .expect("fixtures")
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".pdf"))
            .collect();
        names.sort();
        let typed = [
            "pdf_encrypted",
            "pdf_damaged",
            "pdf_page_out_of_range",
            "pdf_render_failed",
        ];
        let mut whole_pages = 0;
        for name in names {
            let bytes = data(&name);
            // Every page the text reader counts; 1 for files it cannot read either.
            let count =
                quire::files::pdf::pdf_to_markdown(&bytes, &quire::files::pdf::PdfLimits::STANDARD)
                    .map(|text| text.pages)
                    .unwrap_or(1);
            let pages: Vec<usize> = (1..=count).collect();
            match render_pages(&bytes, &pages, &library, &options) {
                Ok(rendered) => whole_pages += rendered.len(),
                Err(error) => assert!(
                    typed.contains(&error.code()),
                    "{name}: {} {error}",
                    error.code()
                ),
            }
            // Cut in half, and every 61st byte of the last two thirds overwritten: compressed
            // streams and the cross-reference table break in ways pdfium must survive.
            let mut corrupted = bytes.clone();
            for at in (bytes.len() / 3..bytes.len()).step_by(61) {
                corrupted[at] ^= 0x5a;
            }
            for (what, damaged) in [
                ("truncated", &bytes[..bytes.len() / 2]),
                ("corrupted", &corrupted[..]),
            ] {
                for page in [1, count] {
                    if let Err(error) = render_pages(damaged, &[page], &library, &options) {
                        assert!(
                            typed.contains(&error.code()),
                            "{name} ({what}): {} {error}",
                            error.code()
                        );
                    }
                }
            }
        }
        // All pages of every fixture but the damaged one and the one that needs a password.
        assert_eq!(whole_pages, 97);
    }

    #[test]
    fn threads_rendering_at_once_are_serialised_and_all_succeed() {
        let Some(library) = library() else { return };
        let bytes = data("tracemonkey.pdf");
        let results: Vec<_> = std::thread::scope(|scope| {
            let workers: Vec<_> = (1..=4)
                .map(|page| {
                    let (bytes, library) = (&bytes, &library);
                    scope.spawn(move || {
                        render_pages(bytes, &[page], library, &RenderOptions::STANDARD)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().expect("no panic"))
                .collect()
        });
        for (index, result) in results.into_iter().enumerate() {
            let pages = result.unwrap_or_else(|error| panic!("{} {error}", error.code()));
            assert_eq!(pages[0].page, index + 1);
            assert!(dark_in(&pages[0], (0, 0), (pages[0].width, pages[0].height)) > 1_000);
        }
    }

    #[test]
    fn without_the_library_rendering_is_unsupported_and_says_how_to_install_it() {
        // Needs no library: this is what a machine without pdfium answers.
        let dir = tempfile::tempdir().expect("temp dir");
        let sources = Sources {
            configured: None,
            env: None,
            data_dir: Some(dir.path().to_path_buf()),
        };
        let why = pdfium::locate(&sources).expect_err("nothing installed");
        let error = library_missing(&why);
        assert_eq!(error.code(), "unsupported");
        let message = error.to_string();
        assert!(message.contains("quire pdfium install"), "{message}");
        assert!(message.contains("QUIRE_PDFIUM_LIBRARY"), "{message}");
        assert!(
            message.contains(&dir.path().display().to_string()),
            "{message}"
        );

        let absent = dir.path().join("pdfium/libpdfium.so");
        let error = render_pages(
            &data("generated-known.pdf"),
            &[1],
            &absent,
            &RenderOptions::STANDARD,
        )
        .expect_err("no library");
        assert_eq!(error.code(), "unsupported");
        assert!(
            error.to_string().contains("quire pdfium install"),
            "{error}"
        );

        // A file that is not a library is refused the same way, not a crash. The library is
        // loaded once per process, so this only means something before another test in the same
        // process (under `cargo test`; nextest runs each test alone) loaded the real one.
        if let Some(loaded) = loaded_library() {
            eprintln!(
                "SKIP (part): {} is already loaded in this process",
                loaded.display()
            );
            return;
        }
        let fake = dir.path().join("libpdfium.so");
        std::fs::write(&fake, b"not a shared object").expect("write");
        let error = render_pages(
            &data("generated-known.pdf"),
            &[1],
            &fake,
            &RenderOptions::STANDARD,
        )
        .expect_err("not a library");
        assert_eq!(error.code(), "unsupported");
        assert!(
            error.to_string().contains("quire pdfium install"),
            "{error}"
        );
    }

    #[test]
    fn the_library_installed_from_the_wheel_is_found_and_renders() {
        let Some(wheel) = required("QUIRE_TEST_PDFIUM_WHEEL", "the pypdfium2 wheel") else {
            return;
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let report = pdfium::install(&wheel, dir.path())
            .unwrap_or_else(|error| panic!("{} {error}", error.code()));
        assert_eq!(report.library, dir.path().join("pdfium/libpdfium.so"));
        assert!(
            report.lines[0].contains("sha256 matches PyPI's"),
            "{:?}",
            report.lines
        );
        let found = pdfium::locate(&Sources {
            configured: None,
            env: None,
            data_dir: Some(dir.path().to_path_buf()),
        })
        .expect("installed");
        assert_eq!(found.value, report.library);
        let pages = render(&found.value, "generated-known.pdf", &[1]);
        assert!(dark_in(&pages[0], (57, 50), (430, 140)) > 2_000);
    }
}

/// `quire pdfium install` without a wheel: the pinned wheel for this machine, checked by sha256.
mod pinned_wheel {
    use std::path::PathBuf;

    use quire::files::pdf::pdfium;

    #[test]
    fn a_downloaded_wheel_with_the_pinned_checksum_is_reused_not_fetched_again() {
        let Some(wheel) = std::env::var_os("QUIRE_TEST_PDFIUM_WHEEL").map(PathBuf::from) else {
            if std::env::var("QUIRE_REQUIRE_PDFIUM").as_deref() == Ok("1") {
                panic!("QUIRE_REQUIRE_PDFIUM=1 but QUIRE_TEST_PDFIUM_WHEEL is not set");
            }
            eprintln!("SKIP: QUIRE_TEST_PDFIUM_WHEEL is not set (the pypdfium2 wheel)");
            return;
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let wheels = dir.path().join("wheels");
        std::fs::create_dir_all(&wheels).expect("mkdir");
        let name = wheel.file_name().expect("a file name");
        std::fs::copy(&wheel, wheels.join(name)).expect("copy");
        let report = pdfium::download_and_install(&dir.path().join("data"), &wheels, false)
            .unwrap_or_else(|error| panic!("{} {error}", error.code()));
        assert!(report.lines[0].starts_with("reused"), "{:?}", report.lines);
        assert!(report.library.is_file());
    }

    /// Fetches about 4 MB from PyPI: `cargo nextest run --run-ignored only pinned_wheel`.
    #[test]
    #[ignore = "downloads from PyPI"]
    fn the_pinned_wheel_downloads_and_installs() {
        let dir = tempfile::tempdir().expect("temp dir");
        let report =
            pdfium::download_and_install(&dir.path().join("data"), &dir.path().join("w"), false)
                .unwrap_or_else(|error| panic!("{} {error}", error.code()));
        assert!(
            report.lines[0].starts_with("downloaded"),
            "{:?}",
            report.lines
        );
        assert!(
            report.lines[1].contains("sha256 matches PyPI's"),
            "{:?}",
            report.lines
        );
        assert!(report.library.is_file());
    }
}
