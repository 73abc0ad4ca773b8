//! The move benchmark: a program that prints figures, not a timed test (`harness = false`, so
//! `cargo nextest run` never runs it).
//!
//!     cargo bench --bench move_note [-- SIZE]        (default: 10000)
//!
//! It generates the deterministic synthetic vault of `benches/gen_vault.py` (cached under
//! `target/bench-move/`, vocabulary from `../shared/vaults/tasks-docs`), indexes it, picks the note
//! with the most backlinks (a hub: the generator's link targets follow a power law), and times
//! `Ops::move_note` moving it to another folder under another name, with every link rewritten, and
//! back again (which restores every byte). It prints the backlink count, the files rewritten, the
//! time of a dry run and of each move (the best of three rounds: the machine is shared), and checks
//! that no link broke. Without the vocabulary folder (or python3) it prints a SKIP notice.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire::index::{Index, IndexOptions};
use quire::ops::{Context, MoveNote, Ops};
use quire::vault::Vault;

#[path = "support/synthetic_vault.rs"]
mod synthetic_vault;

const MAX_NOTE_BYTES: u64 = 10 * 1024 * 1024;
/// Rounds per figure; the best is reported. `QUIRE_BENCH_ROUNDS` overrides it (1 for a quick look).
const ROUNDS: usize = 3;

fn rounds() -> usize {
    std::env::var("QUIRE_BENCH_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|rounds| *rounds > 0)
        .unwrap_or(ROUNDS)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    quire::telemetry::init_quiet();
    let size: usize = args
        .first()
        .map(|arg| arg.parse().expect("the size is a note count, e.g. 10000"))
        .unwrap_or(10_000);
    let Some(generator) = synthetic_vault::generator("bench-move") else {
        return;
    };
    let vault_dir = generator.vault(size);
    let work = generator.work();
    println!(
        "quire move benchmark ({} build, {} cores)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let vault = Arc::new(Vault::open(&vault_dir, MAX_NOTE_BYTES).expect("open vault"));
    let index = Index::open(
        &work.join(format!("index-{size}.db")),
        Arc::clone(&vault),
        IndexOptions {
            rebuild: false,
            progress: None,
            heartbeat: None,
            without_chunks: false,
        },
    )
    .expect("open index");
    let stats = index.wait_ready().expect("reconcile");
    let ops = Ops::new(Arc::clone(&vault), index.clone());

    // The note with the most incoming links from other files.
    let graph = index.link_graph().expect("graph");
    let links = index.all_links().expect("links");
    let mut incoming: HashMap<&str, (usize, HashSet<&str>)> = HashMap::new();
    for link in &links {
        if let Some(target) = graph.resolve(link)
            && target != link.source
            && target.ends_with(".md")
        {
            let entry = incoming.entry(target).or_default();
            entry.0 += 1;
            entry.1.insert(link.source.as_str());
        }
    }
    let mut by_count: Vec<(usize, usize, &str)> = incoming
        .iter()
        .map(|(path, (count, sources))| (*count, sources.len(), *path))
        .collect();
    by_count.sort();
    // The figure: a note with 1,000+ backlinks (the least linked such note), then the
    // vault's biggest hub for scale.
    let picks: Vec<(usize, usize, String)> = by_count
        .iter()
        .find(|(count, ..)| *count >= 1000)
        .into_iter()
        .chain(by_count.last())
        .map(|(count, sources, path)| (*count, *sources, path.to_string()))
        .collect();
    if picks.is_empty() {
        println!("SKIP: the generated vault has no links");
        return;
    }
    println!("\n== {} notes indexed, {} links", stats.notes, links.len());
    for (backlinks, sources, path) in picks {
        time_moves(&ops, &index, &path, backlinks, sources);
    }
}

fn time_moves(ops: &Ops, index: &Index, hub: &str, backlinks: usize, sources: usize) {
    let name = hub
        .rsplit('/')
        .next()
        .unwrap_or(hub)
        .trim_end_matches(".md");
    let moved_to = format!("Moved Here/{name} Renamed.md");
    println!(
        "\nmoving '{hub}' ({backlinks} backlinks from {sources} files) to '{moved_to}' and back"
    );
    let ctx = Context::owner();
    let request = |from: &str, to: &str, dry_run: bool| MoveNote {
        old_path: from.to_owned(),
        new_path: to.to_owned(),
        dry_run,
        prune_empty_folders: true,
    };
    let mut dry = Duration::MAX;
    let mut forward = Duration::MAX;
    let mut back = Duration::MAX;
    let mut rewritten = (0, 0);
    let rounds = rounds();
    for round in 0..rounds {
        let started = Instant::now();
        let plan = ops
            .move_note(&ctx, request(hub, &moved_to, true))
            .expect("dry run");
        dry = dry.min(started.elapsed());
        let started = Instant::now();
        let moved = ops
            .move_note(&ctx, request(hub, &moved_to, false))
            .expect("move");
        forward = forward.min(started.elapsed());
        assert_eq!(plan.rewritten.len(), moved.rewritten.len());
        rewritten = (
            moved.rewritten.len(),
            moved.rewritten.iter().map(|file| file.changes.len()).sum(),
        );
        if round == 0 {
            let graph = index.link_graph().expect("graph");
            let now = index
                .links_named(&[quire::markdown::links::lookup_name(&moved_to)])
                .expect("links")
                .iter()
                .filter(|link| graph.resolve(link) == Some(moved_to.as_str()))
                .count();
            assert_eq!(now, backlinks, "every backlink must follow the moved note");
        }
        let started = Instant::now();
        ops.move_note(&ctx, request(&moved_to, hub, false))
            .expect("move back");
        back = back.min(started.elapsed());
    }
    println!(
        "files rewritten: {}, links rewritten: {}",
        rewritten.0, rewritten.1
    );
    println!("dry run (plan only): {} ms", format_millis(dry));
    println!(
        "move with every rewrite: {} ms (best of {rounds}); move back: {} ms",
        format_millis(forward),
        format_millis(back)
    );
}

fn format_millis(duration: Duration) -> String {
    format!("{:.1}", duration.as_secs_f64() * 1000.0)
}
