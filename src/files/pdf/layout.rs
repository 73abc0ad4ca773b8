//! Text lines positioned on pages → markdown: headings from font sizes above the body size,
//! fenced code for whole monospace lines, inline code for monospace runs, page separators and a
//! links footer.
//!
//! Pure: no PDF parsing here, so the rules are tested on hand-built lines.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A run of text in one font kind and size within a line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Run {
    pub text: String,
    /// Font size in points (user space).
    pub size: f64,
    pub monospace: bool,
}

/// One line of text, in the order the content stream drew it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    /// Position along the text direction where the line starts, in points.
    pub start: f64,
    /// Position across the text direction (the baseline; larger is higher on the page).
    pub baseline: f64,
    pub runs: Vec<Run>,
    /// The average advance of this line's monospace glyphs, for indentation; 0 when none.
    pub monospace_advance: f64,
}

/// A link annotation's target with the text under it, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdfLink {
    pub uri: String,
    /// The text drawn inside the link's rectangle (on the page where it first appears).
    pub text: Option<String>,
    /// 1-based page where the link first appears.
    pub page: usize,
}

/// What the header says about the document.
pub(super) struct Header<'a> {
    pub title: Option<&'a str>,
    pub pages: usize,
    pub pages_read: usize,
    pub links: &'a [PdfLink],
    pub truncated: Option<&'a str>,
}

/// Font sizes are compared in half points, so 9.96 and 10.0 are one size.
fn size_key(size: f64) -> i64 {
    (size * 2.0).round() as i64
}

impl Line {
    fn text(&self) -> String {
        self.runs.iter().map(|run| run.text.as_str()).collect()
    }

    fn is_blank(&self) -> bool {
        self.runs.iter().all(|run| run.text.trim().is_empty())
    }

    /// Every visible character is monospace.
    fn is_code(&self) -> bool {
        !self.is_blank()
            && self
                .runs
                .iter()
                .all(|run| run.monospace || run.text.trim().is_empty())
    }

    /// The size carrying most of the line's visible characters.
    fn dominant_size(&self) -> f64 {
        let mut counts: BTreeMap<i64, (usize, f64)> = BTreeMap::new();
        for run in &self.runs {
            let visible = run.text.chars().filter(|c| !c.is_whitespace()).count();
            let entry = counts.entry(size_key(run.size)).or_insert((0, run.size));
            entry.0 += visible;
        }
        counts
            .values()
            .max_by_key(|(count, _)| *count)
            .map_or(0.0, |(_, size)| *size)
    }
}

/// The size (in half points) carrying the most visible characters in the document: body text.
fn body_size(pages: &[Vec<Line>]) -> Option<i64> {
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for run in pages.iter().flatten().flat_map(|line| &line.runs) {
        *counts.entry(size_key(run.size)).or_default() +=
            run.text.chars().filter(|c| !c.is_whitespace()).count();
    }
    // Ties go to the smaller size, so a short document is not all headings.
    counts
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(size, _)| *size)
}

/// The heading level of each size larger than the body: the largest is `#`, then `##`, then
/// `###` for the rest.
fn heading_levels(pages: &[Vec<Line>], body: i64) -> BTreeMap<i64, usize> {
    let mut sizes: Vec<i64> = pages
        .iter()
        .flatten()
        .filter(|line| is_heading_candidate(line, body))
        .map(|line| size_key(line.dominant_size()))
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    sizes
        .into_iter()
        .enumerate()
        .map(|(rank, size)| (size, (rank + 1).min(3)))
        .collect()
}

fn is_heading_candidate(line: &Line, body: i64) -> bool {
    if line.is_blank() || line.is_code() {
        return false;
    }
    let size = line.dominant_size();
    let text = line.text();
    let text = text.trim();
    // At least half a point and 5 % larger than the body, short, and with a letter in it: big
    // page numbers, figure labels of one digit and whole paragraphs in a large font stay text.
    size_key(size) > body
        && size * 2.0 >= body as f64 * 1.05
        && text.chars().count() <= 200
        && text.chars().any(char::is_alphabetic)
}

/// Renders the document. `pages` holds every page read, in order.
pub(super) fn render(header: &Header<'_>, pages: &[Vec<Line>]) -> String {
    let mut out = String::new();
    out.push_str("---\n");
    if let Some(title) = header.title {
        let _ = writeln!(out, "title: {}", json_string(title));
    }
    let _ = writeln!(out, "pages: {}", header.pages);
    let _ = writeln!(out, "links: {}", header.links.len());
    if let Some(reason) = header.truncated {
        let _ = writeln!(
            out,
            "truncated: {}",
            json_string(&format!(
                "read {} of {} pages: {reason}",
                header.pages_read, header.pages
            ))
        );
    }
    out.push_str("---\n\n");

    let has_text = pages.iter().flatten().any(|line| !line.is_blank());
    if !has_text {
        let _ = writeln!(
            out,
            "_This PDF has no text layer: its {} page{} {} images only (a scan or a drawing), so there is no text to read. Render the pages as images to see them._",
            header.pages,
            if header.pages == 1 { "" } else { "s" },
            if header.pages == 1 { "is" } else { "are" },
        );
    } else {
        let body = body_size(pages).unwrap_or(0);
        let levels = heading_levels(pages, body);
        for (index, lines) in pages.iter().enumerate() {
            if index > 0 {
                let _ = write!(
                    out,
                    "\n---\n<!-- page {} of {} -->\n\n",
                    index + 1,
                    header.pages
                );
            }
            render_page(&mut out, lines, body, &levels);
        }
    }

    if !header.links.is_empty() {
        out.push_str("\n## Links\n\n");
        for link in header.links {
            match &link.text {
                Some(text) if !text.trim().is_empty() && text.trim() != link.uri => {
                    let _ = writeln!(
                        out,
                        "- [{}]({}) (page {})",
                        text.trim().replace(['[', ']'], ""),
                        link.uri.replace(' ', "%20").replace(')', "%29"),
                        link.page
                    );
                }
                _ => {
                    let _ = writeln!(out, "- <{}> (page {})", link.uri, link.page);
                }
            }
        }
    }
    out
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

/// What a page's output is made of, before blank lines are decided.
enum Block {
    Heading { level: usize, text: String },
    Code(Vec<String>),
    Paragraph(Vec<String>),
}

fn render_page(out: &mut String, lines: &[Line], body: i64, levels: &BTreeMap<i64, usize>) {
    let mut blocks: Vec<Block> = Vec::new();
    let mut previous: Option<&Line> = None;
    // The code block's left edge and glyph advance, for indentation.
    let mut code_origin = (0.0f64, 0.0f64);
    for line in lines.iter().filter(|line| !line.is_blank()) {
        let size = line.dominant_size();
        let gap_before = previous.map(|previous| {
            let drop = previous.baseline - line.baseline;
            let reference = previous.dominant_size().max(size).max(1.0);
            // Moving up (a new column) or a gap of more than a line and a half starts a block.
            drop < -reference * 0.5 || drop > reference * 1.6
        });
        let new_block = gap_before.unwrap_or(true);
        if line.is_code() {
            match blocks.last_mut() {
                Some(Block::Code(code)) => {
                    if new_block {
                        code.push(String::new());
                    }
                    code.push(code_line(line, code_origin));
                }
                _ => {
                    code_origin = code_block_origin(lines, line);
                    blocks.push(Block::Code(vec![code_line(line, code_origin)]));
                }
            }
        } else if is_heading_candidate(line, body)
            && let Some(level) = levels.get(&size_key(size)).copied()
        {
            let text = inline_text(line);
            match blocks.last_mut() {
                // A heading that wraps onto a second line is one heading.
                Some(Block::Heading {
                    level: last_level,
                    text: last_text,
                }) if *last_level == level && !new_block => {
                    last_text.push(' ');
                    last_text.push_str(text.trim());
                }
                _ => blocks.push(Block::Heading {
                    level,
                    text: text.trim().to_string(),
                }),
            }
        } else {
            let text = inline_text(line);
            match blocks.last_mut() {
                Some(Block::Paragraph(paragraph)) if !new_block => paragraph.push(text),
                _ => blocks.push(Block::Paragraph(vec![text])),
            }
        }
        previous = Some(line);
    }
    for (index, block) in blocks.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match block {
            Block::Heading { level, text } => {
                let _ = writeln!(out, "{} {}", "#".repeat(*level), text);
            }
            Block::Code(code) => {
                let fence = if code.iter().any(|line| line.contains("```")) {
                    "````"
                } else {
                    "```"
                };
                let _ = writeln!(out, "{fence}");
                for line in code {
                    let _ = writeln!(out, "{line}");
                }
                let _ = writeln!(out, "{fence}");
            }
            Block::Paragraph(paragraph) => {
                for line in paragraph {
                    let _ = writeln!(out, "{}", line.trim_end());
                }
            }
        }
    }
}

/// The left edge and glyph advance of the run of code lines starting at `first`.
fn code_block_origin(lines: &[Line], first: &Line) -> (f64, f64) {
    let position = lines
        .iter()
        .position(|line| std::ptr::eq(line, first))
        .unwrap_or(0);
    let block: Vec<&Line> = lines[position..]
        .iter()
        .filter(|line| !line.is_blank())
        .take_while(|line| line.is_code())
        .collect();
    let start = block
        .iter()
        .map(|line| line.start)
        .fold(f64::INFINITY, f64::min);
    let advances: Vec<f64> = block
        .iter()
        .map(|line| line.monospace_advance)
        .filter(|advance| *advance > 0.0)
        .collect();
    let advance = if advances.is_empty() {
        0.0
    } else {
        advances.iter().sum::<f64>() / advances.len() as f64
    };
    (if start.is_finite() { start } else { 0.0 }, advance)
}

fn code_line(line: &Line, (origin, advance): (f64, f64)) -> String {
    let indent = if advance > 0.0 {
        ((line.start - origin) / advance).round().max(0.0) as usize
    } else {
        0
    };
    let text = line.text();
    format!("{}{}", " ".repeat(indent.min(200)), text.trim_end())
}

/// A prose line with its monospace runs as inline code.
fn inline_text(line: &Line) -> String {
    let mut out = String::new();
    for run in &line.runs {
        if run.monospace && !run.text.trim().is_empty() {
            let leading = &run.text[..run.text.len() - run.text.trim_start().len()];
            let trailing = &run.text[run.text.trim_end().len()..];
            let code = run.text.trim();
            let ticks = if code.contains('`') { "`` " } else { "`" };
            let closing = if code.contains('`') { " ``" } else { "`" };
            // Adjacent code runs (a size change inside code) join into one span.
            if out.ends_with('`') && leading.is_empty() && !out.ends_with(" ``") {
                out.pop();
                let _ = write!(out, "{code}`{trailing}");
            } else {
                let _ = write!(out, "{leading}{ticks}{code}{closing}{trailing}");
            }
        } else {
            out.push_str(&run.text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, size: f64, monospace: bool) -> Run {
        Run {
            text: text.to_string(),
            size,
            monospace,
        }
    }

    fn line(baseline: f64, start: f64, runs: Vec<Run>) -> Line {
        let monospace_advance = if runs.iter().any(|run| run.monospace) {
            6.0
        } else {
            0.0
        };
        Line {
            start,
            baseline,
            runs,
            monospace_advance,
        }
    }

    fn header(links: &[PdfLink]) -> Header<'_> {
        Header {
            title: Some("A \"quoted\" title"),
            pages: 2,
            pages_read: 2,
            links,
            truncated: None,
        }
    }

    #[test]
    fn sizes_above_the_body_become_headings_by_rank_and_code_is_fenced() {
        let page = vec![
            line(800.0, 72.0, vec![run("Big Title", 24.0, false)]),
            line(760.0, 72.0, vec![run("Section One", 16.0, false)]),
            line(
                740.0,
                72.0,
                vec![run("Body text that is long enough.", 10.0, false)],
            ),
            line(
                728.0,
                72.0,
                vec![
                    run("Call ", 10.0, false),
                    run("run()", 10.0, true),
                    run(" now.", 10.0, false),
                ],
            ),
            line(700.0, 72.0, vec![run("fn main() {", 10.0, true)]),
            line(688.0, 96.0, vec![run("go();", 10.0, true)]),
            line(676.0, 72.0, vec![run("}", 10.0, true)]),
            line(650.0, 72.0, vec![run("Sub part", 12.0, false)]),
            line(630.0, 72.0, vec![run("Smaller heading", 11.0, false)]),
            line(
                610.0,
                72.0,
                vec![run("More body text here, and more.", 10.0, false)],
            ),
        ];
        let links = [PdfLink {
            uri: "https://example.org/a".into(),
            text: Some("example".into()),
            page: 1,
        }];
        let markdown = render(
            &header(&links),
            &[
                page,
                vec![line(800.0, 72.0, vec![run("Second page.", 10.0, false)])],
            ],
        );
        let expected = "---\ntitle: \"A \\\"quoted\\\" title\"\npages: 2\nlinks: 1\n---\n\n\
# Big Title\n\n## Section One\n\nBody text that is long enough.\nCall `run()` now.\n\n\
```\nfn main() {\n    go();\n}\n```\n\n### Sub part\n\n### Smaller heading\n\nMore body text here, and more.\n\
\n---\n<!-- page 2 of 2 -->\n\nSecond page.\n\n## Links\n\n- [example](https://example.org/a) (page 1)\n";
        assert_eq!(markdown, expected);
    }

    #[test]
    fn a_document_without_text_says_so() {
        let markdown = render(
            &Header {
                title: None,
                pages: 3,
                pages_read: 3,
                links: &[],
                truncated: None,
            },
            &[vec![], vec![], vec![]],
        );
        assert!(markdown.contains("no text layer"), "{markdown}");
        assert!(markdown.contains("its 3 pages are images"), "{markdown}");
    }

    #[test]
    fn a_wrapped_heading_is_one_heading_and_backticks_in_code_get_a_longer_fence() {
        let page = vec![
            line(800.0, 72.0, vec![run("A Long Title That", 20.0, false)]),
            line(778.0, 72.0, vec![run("Wraps", 20.0, false)]),
            line(
                740.0,
                72.0,
                vec![
                    run("Use ", 10.0, false),
                    run("a`b", 10.0, true),
                    run(" here and there.", 10.0, false),
                ],
            ),
        ];
        let markdown = render(&header(&[]), &[page]);
        assert!(
            markdown.contains("# A Long Title That Wraps\n"),
            "{markdown}"
        );
        assert!(markdown.contains("Use `` a`b `` here"), "{markdown}");
    }
}
