//! Glyph widths of the proportional standard 14 fonts for printable ASCII, used when a PDF names
//! one of those fonts without a /Widths array (PDF writers may omit it for these fonts), so word
//! gaps and link text are found from true positions instead of estimates.
//!
//! The numbers are the `WX` values of codes 32-126 from Adobe's Core 14 AFM files, taken as
//! published (through pypdf's `core_font_metrics.py`); this table is a modified extract of them.
//! Adobe's notice, which must stay with them:
//!
//! > This file and the 14 PostScript(R) AFM files it accompanies may be used, copied, and
//! > distributed for any purpose and without charge, with or without modification, provided that
//! > all copyright notices are retained; that the AFM files are not distributed without this
//! > file; that all modifications to this file or any of the AFM files are prominently noted in
//! > the modified file(s); and that this paragraph is not modified. Adobe Systems has no
//! > responsibility or obligation to support the use of the AFM files.
//!
//! Copyright (c) 1985, 1987, 1989, 1990, 1991, 1992, 1993, 1997 Adobe Systems Incorporated. All
//! Rights Reserved.

/// Widths in thousandths of an em of codes 32 (space) to 126 (`~`).
pub(super) const WIDTHS: &[(&str, [u16; 95])] = &[
    (
        "Helvetica",
        [
            278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556,
            556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667,
            667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722,
            667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500,
            556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278,
            556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
        ],
    ),
    (
        "Helvetica-Bold",
        [
            278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556,
            556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722,
            722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722,
            667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556,
            611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333,
            611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
        ],
    ),
    (
        "Times-Roman",
        [
            250, 333, 408, 500, 500, 833, 778, 180, 333, 333, 500, 564, 250, 333, 250, 278, 500,
            500, 500, 500, 500, 500, 500, 500, 500, 500, 278, 278, 564, 564, 564, 444, 921, 722,
            667, 667, 722, 611, 556, 722, 722, 333, 389, 722, 611, 889, 722, 722, 556, 722, 667,
            556, 611, 722, 722, 944, 722, 722, 611, 333, 278, 333, 469, 500, 333, 444, 500, 444,
            500, 444, 333, 500, 500, 278, 278, 500, 278, 778, 500, 500, 500, 500, 333, 389, 278,
            500, 500, 722, 500, 500, 444, 480, 200, 480, 541,
        ],
    ),
    (
        "Times-Bold",
        [
            250, 333, 555, 500, 500, 1000, 833, 278, 333, 333, 500, 570, 250, 333, 250, 278, 500,
            500, 500, 500, 500, 500, 500, 500, 500, 500, 333, 333, 570, 570, 570, 500, 930, 722,
            667, 722, 722, 667, 611, 778, 778, 389, 500, 778, 667, 944, 722, 778, 611, 778, 722,
            556, 667, 722, 722, 1000, 722, 722, 667, 333, 278, 333, 581, 500, 333, 500, 556, 444,
            556, 444, 333, 500, 556, 278, 333, 556, 278, 833, 556, 500, 556, 556, 444, 389, 333,
            556, 500, 722, 500, 500, 444, 394, 220, 394, 520,
        ],
    ),
    (
        "Times-Italic",
        [
            250, 333, 420, 500, 500, 833, 778, 214, 333, 333, 500, 675, 250, 333, 250, 278, 500,
            500, 500, 500, 500, 500, 500, 500, 500, 500, 333, 333, 675, 675, 675, 500, 920, 611,
            611, 667, 722, 611, 611, 722, 722, 333, 444, 667, 556, 833, 667, 722, 611, 722, 611,
            500, 556, 722, 611, 833, 611, 556, 556, 389, 278, 389, 422, 500, 333, 500, 500, 444,
            500, 444, 278, 500, 500, 278, 278, 444, 278, 722, 500, 500, 500, 500, 389, 389, 278,
            500, 444, 667, 444, 444, 389, 400, 275, 400, 541,
        ],
    ),
    (
        "Times-BoldItalic",
        [
            250, 389, 555, 500, 500, 833, 778, 278, 333, 333, 500, 570, 250, 333, 250, 278, 500,
            500, 500, 500, 500, 500, 500, 500, 500, 500, 333, 333, 570, 570, 570, 500, 832, 667,
            667, 667, 722, 667, 667, 722, 778, 389, 500, 667, 611, 889, 722, 722, 611, 722, 667,
            556, 611, 722, 667, 889, 667, 611, 611, 333, 278, 333, 570, 500, 333, 500, 500, 444,
            500, 444, 333, 500, 556, 278, 278, 500, 278, 778, 556, 500, 500, 500, 389, 389, 278,
            556, 444, 667, 500, 444, 389, 348, 220, 348, 570,
        ],
    ),
];

/// The ASCII widths for a standard font name (`Arial` and the oblique/italic variants map to the
/// nearest table), or `None` for fonts not covered.
pub(super) fn ascii_widths(name: &str) -> Option<&'static [u16; 95]> {
    let bold = name.contains("Bold");
    let italic = name.contains("Italic") || name.contains("Oblique");
    let family = if name.starts_with("Helvetica") || name.starts_with("Arial") {
        if bold { "Helvetica-Bold" } else { "Helvetica" }
    } else if name.starts_with("Times") {
        match (bold, italic) {
            (false, false) => "Times-Roman",
            (true, false) => "Times-Bold",
            (false, true) => "Times-Italic",
            (true, true) => "Times-BoldItalic",
        }
    } else {
        return None;
    };
    WIDTHS
        .iter()
        .find(|(font, _)| *font == family)
        .map(|(_, widths)| widths)
}
