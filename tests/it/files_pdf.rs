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
