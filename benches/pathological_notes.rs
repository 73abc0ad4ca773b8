//! The pathological-notes benchmark: a program that prints figures, not a timed test
//! (`harness = false`, so `cargo nextest run` never runs it).
//!
//!     cargo bench --bench pathological_notes [-- SHAPE...]
//!
//! Every note is untrusted text, and the index writer parses each note it stores, so no content
//! may make parsing super-linear (issue 47, finding F2: a 400 KB line of `[a](` took 30 s and held
//! the writer all that time). For each shape below it builds notes of 50 KB, 400 KB and 10 MB (the
//! note size cap) and times `quire::index::parse_note`, the function the writer calls on every note
//! (block scan, properties, links, tags, task sites and their facts, headings, chunks), printing
//! the best of the rounds in milliseconds and the note's link, tag and task-site counts.
//! A typical note repeated to size is the control: its figures are what a linear parse costs.
//! Two canvas shapes are timed through `canvas_links`, which the writer calls on canvas files.
//!
//! A size is skipped when the growth measured between the two smaller sizes (quadratic growth from
//! 50 KB alone) predicts it would take longer than the budget (`QUIRE_BENCH_BUDGET_S`, default 30 s): quadratic code at 10 MB would
//! take hours. `QUIRE_BENCH_ROUNDS` (default 3) sets the rounds per figure.

use std::time::{Duration, Instant};

use quire::index::parse_note;
use quire::markdown::links::canvas_links;

const SIZES: [usize; 3] = [50 * 1024, 400 * 1024, 10 * 1024 * 1024];
const ROUNDS: usize = 3;
const BUDGET: Duration = Duration::from_secs(30);

/// A shape: its name and how a note of about `size` bytes is built.
type Shape = (&'static str, fn(usize) -> String);

/// `unit` repeated to `size` bytes.
fn repeated(unit: &str, size: usize) -> String {
    unit.repeat(size / unit.len().max(1))
}

/// The note around `unit` repeated in a properties block, as `head` starts it.
fn in_properties(head: &str, unit: &str, tail: &str, size: usize) -> String {
    format!("---\n{head}{}{tail}\n---\nbody\n", repeated(unit, size))
}

const SHAPES: &[Shape] = &[
    ("typical note (control)", |size| {
        repeated(
            "## Plans\nSome prose with a [[Wiki link|alias]], a [markdown link](Folder/Note%20x.md#Part) \
             and a #tag, `code` and $x^2$ math.\n- [ ] a task 📅 2025-01-01 #work\n  - a child item \
             ![[image.png]]\n> a quote with [[Other]]\n\n",
            size,
        )
    }),
    // The three shapes of the finding: every opener scanned to the end of its line.
    ("[a](", |size| repeated("[a](", size)),
    ("[[", |size| repeated("[[", size)),
    ("![", |size| repeated("![", size)),
    // The same scans, reached otherwise.
    ("[", |size| repeated("[", size)),
    ("[a", |size| repeated("[a", size)),
    ("![[", |size| repeated("![[", size)),
    ("[a](<", |size| repeated("[a](<", size)),
    ("[a](<b [a](<", |size| {
        format!("{}>", repeated("[a](<b ", size))
    }),
    ("[a](b (", |size| repeated("[a](b (", size)),
    ("[a](( (nested destination)", |size| {
        repeated("[a](((", size)
    }),
    // Links found: each one's column was counted from the start of its line.
    ("[[a]]", |size| repeated("[[a]]", size)),
    ("[a](b)", |size| repeated("[a](b)", size)),
    // Property links: each placed by a search of the block from its start.
    ("property list of [[a]]", |size| {
        in_properties("k:\n", "  - \"[[a]]\"\n", "", size)
    }),
    ("property flow list of [[a]]", |size| {
        in_properties("k: [", "\"[[a]]\", ", "]", size)
    }),
    ("property links, distinct, 100 bytes each", |size| {
        let mut yaml = String::from("---\n");
        let padding = "x".repeat(80);
        for index in 0..size / 100 {
            yaml.push_str(&format!("k{index}: \"[[{index} {padding}]]\"\n"));
        }
        yaml.push_str("---\nbody\n");
        yaml
    }),
    // Deeply nested list items: every blank line walked them all.
    ("- nested items, then blank lines", |size| {
        format!(
            "{}x\n{}",
            repeated("- ", size / 2),
            repeated("\n", size / 2)
        )
    }),
    // Tasks under many headings: each task looked for its heading from the first.
    ("headings, then tasks", |size| {
        format!(
            "{}{}",
            repeated("# h\n", size / 2),
            repeated("- [ ] t\n", size / 2)
        )
    }),
    // A Kanban board of setext lanes: each lane read to the end of the note.
    ("kanban of setext lanes", |size| {
        format!(
            "---\nkanban-plugin: basic\n---\n{}- [ ] t\n",
            repeated("lane\n=\n", size)
        )
    }),
    // Shapes that were already linear, kept so they stay so.
    ("(", |size| repeated("(", size)),
    ("#", |size| repeated("#", size)),
    ("`", |size| repeated("`", size)),
    ("$a ", |size| repeated("$a ", size)),
    ("<a ", |size| repeated("<a ", size)),
    ("%%", |size| repeated("%%", size)),
    ("<!--", |size| repeated("<!--", size)),
    ("==", |size| repeated("==", size)),
    ("^", |size| repeated("^", size)),
    ("> ", |size| repeated("> ", size)),
    ("- [ ] a (lines)", |size| repeated("- [ ] a\n", size)),
];

/// Canvas files: the writer reads their links with `canvas_links`.
const CANVAS_SHAPES: &[Shape] = &[
    ("canvas: a text node of [[a]]", |size| {
        format!(
            r#"{{"nodes":[{{"id":"1","type":"text","text":"{}"}}]}}"#,
            repeated("[[a]]", size)
        )
    }),
    ("canvas: nodes written with \\u escapes", |size| {
        let nodes: Vec<String> = (0..size / 60)
            .map(|index| {
                format!(r#"{{"id":"{index}","type":"text","text":"\u0041 [[b{index}]]"}}"#)
            })
            .collect();
        format!("{{\"nodes\":[\n{}\n]}}", nodes.join(",\n"))
    }),
];

fn main() {
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|argument| !argument.starts_with("--"))
        .collect();
    let rounds = env_number("QUIRE_BENCH_ROUNDS").unwrap_or(ROUNDS);
    let budget = env_number("QUIRE_BENCH_BUDGET_S").map_or(BUDGET, |seconds| {
        Duration::from_secs(u64::try_from(seconds).unwrap_or(u64::MAX))
    });
    println!(
        "quire::index::parse_note of pathological notes ({} build, best of {rounds} rounds, ms; budget {} s)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        budget.as_secs()
    );
    println!(
        "{:<42} {:>10} {:>10} {:>10}   links/tags/task sites at 400 KB | 10 MB",
        "shape", "50 KB", "400 KB", "10 MB"
    );
    for (name, build) in SHAPES {
        if !wanted.is_empty() && !wanted.iter().any(|wanted| wanted == name) {
            continue;
        }
        run_shape(name, *build, rounds, budget, &|text| {
            let parsed = parse_note("Pathological", text, true);
            format!(
                "{}/{}/{}",
                parsed.links.len(),
                parsed.tags.len(),
                parsed.task_sites.len()
            )
        });
    }
    println!("\nquire::markdown::links::canvas_links of canvas files (links at 400 KB | 10 MB)");
    for (name, build) in CANVAS_SHAPES {
        if !wanted.is_empty() && !wanted.iter().any(|wanted| wanted == name) {
            continue;
        }
        run_shape(name, *build, rounds, budget, &|text| {
            canvas_links(text).len().to_string()
        });
    }
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&number| number > 0)
}

/// Times `parse` on one shape at each size, skipping a size its growth so far says would exceed
/// the budget; `parse` answers with the counts to show.
fn run_shape(
    name: &str,
    build: fn(usize) -> String,
    rounds: usize,
    budget: Duration,
    parse: &dyn Fn(&str) -> String,
) {
    let mut cells = Vec::new();
    let mut measured: Vec<(usize, Duration)> = Vec::new();
    let mut counts = Vec::new();
    for size in SIZES {
        if let Some(predicted) = predicted(&measured, size)
            && predicted > budget
        {
            cells.push(format!("~{:.0} s?", predicted.as_secs_f64()));
            continue;
        }
        let text = build(size);
        let mut best = Duration::MAX;
        let mut found = String::new();
        for _ in 0..rounds {
            let started = Instant::now();
            found = parse(&text);
            best = best.min(started.elapsed());
            if best > budget {
                break;
            }
        }
        if size > SIZES[0] {
            counts.push(found);
        }
        measured.push((text.len(), best));
        cells.push(format!("{:.1}", best.as_secs_f64() * 1000.0));
    }
    println!(
        "{name:<42} {:>10} {:>10} {:>10}   {}",
        cells.first().map_or("", String::as_str),
        cells.get(1).map_or("", String::as_str),
        cells.get(2).map_or("", String::as_str),
        counts.join(" | ")
    );
}

/// The time at `size` that the growth between the last two measurements predicts (a power law,
/// at least linear), or quadratic growth from a single one; `None` before any.
fn predicted(measured: &[(usize, Duration)], size: usize) -> Option<Duration> {
    // Times under a millisecond say little about growth; count them as a millisecond.
    let seconds = |time: &Duration| time.as_secs_f64().max(1e-3);
    let (large, large_time) = measured.last()?;
    let exponent = match measured {
        [.., (small, small_time), _] => ((seconds(large_time) / seconds(small_time)).ln()
            / (*large as f64 / *small as f64).ln())
        .max(1.0),
        _ => 2.0,
    };
    let predicted = seconds(large_time) * (size as f64 / *large as f64).powf(exponent);
    Some(Duration::from_secs_f64(predicted.min(1e9)))
}
