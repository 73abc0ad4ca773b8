//! Times the PDF text reader (`quire::files::pdf::pdf_to_markdown`): the 50-page generated paper
//! (two columns, headings, code listings) against the target of 1 s, and the real
//! 14-page TraceMonkey paper. Prints figures; never part of the test run.
//!
//! cargo bench --bench pdf

use std::path::PathBuf;
use std::time::{Duration, Instant};

use quire::files::pdf::{PdfLimits, pdf_to_markdown};

const RUNS: usize = 5;

fn main() {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pdf");
    let mut failed = false;
    for (name, target) in [
        ("paper-50-pages.pdf", Some(Duration::from_secs(1))),
        ("tracemonkey.pdf", None),
    ] {
        let bytes = match std::fs::read(folder.join(name)) {
            Ok(bytes) => bytes,
            Err(error) => {
                eprintln!("{name}: {error}");
                std::process::exit(2);
            }
        };
        let mut times = Vec::new();
        let mut summary = String::new();
        for _ in 0..RUNS {
            let start = Instant::now();
            match pdf_to_markdown(&bytes, &PdfLimits::STANDARD) {
                Ok(text) => {
                    summary = format!(
                        "{} pages, {} KiB of markdown",
                        text.pages,
                        text.markdown.len() / 1024
                    );
                }
                Err(error) => {
                    eprintln!("{name}: {} {error}", error.code());
                    std::process::exit(2);
                }
            }
            times.push(start.elapsed());
        }
        times.sort();
        let median = times[RUNS / 2];
        let verdict = match target {
            Some(target) if median > target => {
                failed = true;
                format!("OVER the {} ms target", target.as_millis())
            }
            Some(target) => format!("within the {} ms target", target.as_millis()),
            None => "no target".to_string(),
        };
        println!(
            "pdf text {name} ({} KiB, {summary}): median {:.1} ms, min {:.1} ms over {RUNS} runs; {verdict}",
            bytes.len() / 1024,
            median.as_secs_f64() * 1000.0,
            times[0].as_secs_f64() * 1000.0,
        );
    }
    if failed {
        std::process::exit(1);
    }
}
