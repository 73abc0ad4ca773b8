//! The file-listing benchmark: a program that prints figures, not a timed test (`harness = false`).
//!
//!     cargo bench --bench list_files [-- FILES...]        (default: 10000)
//!
//! For each size it writes that many files into a fresh vault (100 folders of notes, images,
//! PDFs, canvases and CSVs, 7 in 10 of them notes), opens it as `quire serve` does, and times
//! `Ops::list_files` (a walk of the file system, not the index): the whole vault recursively, the
//! same filtered to one extension, and one folder without recursion; first page of 50 each, p50
//! and p95 of 51 calls after a warm-up call. Issue 20's target: 50 ms at 10,000 files.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire::index::{Index, IndexOptions};
use quire::ops::{Context, ListFiles, Ops};
use quire::vault::Vault;

const CALLS: usize = 51;
const EXTENSIONS: [&str; 10] = [
    "md", "md", "md", "md", "md", "md", "md", "png", "pdf", "csv",
];

fn main() {
    let sizes: Vec<usize> = {
        let args: Vec<usize> = std::env::args()
            .skip(1)
            .filter(|arg| !arg.starts_with("--"))
            .filter_map(|arg| arg.parse().ok())
            .collect();
        if args.is_empty() { vec![10_000] } else { args }
    };
    println!(
        "quire list_files benchmark ({} build)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    for size in sizes {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("vault");
        for n in 0..size {
            let folder = root.join(format!("Folder {:02}", n % 100));
            std::fs::create_dir_all(&folder).expect("mkdir");
            let extension = EXTENSIONS[n % EXTENSIONS.len()];
            std::fs::write(
                folder.join(format!("file {n:05}.{extension}")),
                format!("content of file {n}\n"),
            )
            .expect("write");
        }
        let vault = Arc::new(Vault::open(&root, 10 * 1024 * 1024).expect("vault"));
        let index = Index::open(
            &dir.path().join("index.db"),
            Arc::clone(&vault),
            IndexOptions::default(),
        )
        .expect("index");
        index.wait_ready().expect("reconcile");
        let ops = Ops::new(vault, index);
        let ctx = Context::owner();
        let cases: [(&str, ListFiles); 3] = [
            (
                "whole vault, recursive",
                ListFiles {
                    recursive: true,
                    ..ListFiles::default()
                },
            ),
            (
                "whole vault, recursive, extensions [png]",
                ListFiles {
                    recursive: true,
                    extensions: vec!["png".into()],
                    ..ListFiles::default()
                },
            ),
            (
                "one folder, not recursive",
                ListFiles {
                    folder: Some("Folder 07".into()),
                    ..ListFiles::default()
                },
            ),
        ];
        println!("{size} files:");
        for (name, request) in cases {
            let total = ops.list_files(&ctx, request.clone()).expect("list").total;
            let mut times: Vec<Duration> = (0..CALLS)
                .map(|_| {
                    let started = Instant::now();
                    let list = ops.list_files(&ctx, request.clone()).expect("list");
                    std::hint::black_box(list);
                    started.elapsed()
                })
                .collect();
            times.sort();
            println!(
                "  {name:<42} {total:>6} matching   p50 {:>7.2} ms   p95 {:>7.2} ms",
                ms(times[CALLS / 2]),
                ms(times[CALLS * 95 / 100])
            );
        }
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
