//! The index benchmark: a program that prints figures, not a timed test (`harness = false`, so
//! `cargo nextest run` never runs it).
//!
//!     cargo bench --bench index [-- SIZE...]        (default: 10000)
//!
//! For each size it generates a deterministic synthetic vault with `benches/gen_vault.py` (the port
//! of `../shared/tools/gen_vault.py`, same output; cached under `target/bench-index/`), with its
//! vocabulary taken from `../shared/vaults/tasks-docs`, then prints: the cold index time, the restart time on the
//! unchanged vault (each the best of three runs), in-process `vault_search` latency (p50/p95 over the generator's 200 queries,
//! limit 10, snippets included), the resident memory of a fresh process that opened the index and
//! ran the queries, and, as the floor, the same cold-index and query figures for a bare FTS5 table
//! (path, title, body; bm25 top 10 with `snippet()`) over the same notes. Without the vocabulary
//! folder (or python3) it prints a SKIP notice and exits successfully.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire::index::{Index, IndexOptions};
use quire::ops::{Context, Ops, SearchNotes};
use quire::vault::Vault;

#[path = "support/synthetic_vault.rs"]
mod synthetic_vault;

const MAX_NOTE_BYTES: u64 = 10 * 1024 * 1024;
const WARMUP_QUERIES: usize = 20;
/// Runs per figure; the best is reported, as other work on a shared machine only adds time.
const ROUNDS: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    if args.first().map(String::as_str) == Some("rss-probe") {
        rss_probe(&args[1..]);
        return;
    }
    // Quiet unless QUIRE_LOG asks (QUIRE_LOG=quire=debug shows the reconcile's phases).
    quire::telemetry::init_quiet();
    let sizes: Vec<usize> = if args.is_empty() {
        vec![10_000]
    } else {
        args.iter()
            .map(|arg| arg.parse().expect("sizes are note counts, e.g. 10000"))
            .collect()
    };
    let Some(generator) = synthetic_vault::generator("bench-index") else {
        return;
    };
    println!(
        "quire index benchmark ({} build, {} cores)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    for size in sizes {
        run(size, &generator);
    }
}

fn run(size: usize, generator: &synthetic_vault::Generator) {
    let vault_dir = generator.vault(size);
    let queries_file = generator.queries(size);
    let work = generator.work();
    let queries: Vec<String> = std::fs::read_to_string(&queries_file)
        .expect("queries")
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_string)
        .collect();
    let vault = Arc::new(Vault::open(&vault_dir, MAX_NOTE_BYTES).expect("open vault"));
    let notes = vault
        .scan(None)
        .expect("scan")
        .into_iter()
        .filter(|file| file.path.extension().as_deref() == Some("md"))
        .count();
    let text_bytes: u64 = vault
        .scan(None)
        .expect("scan")
        .iter()
        .filter(|file| file.path.extension().as_deref() == Some("md"))
        .map(|file| file.bytes)
        .sum();
    println!(
        "\n== {size} generated notes ({notes} .md files with the daily notes, {:.1} MB of markdown), {} queries",
        text_bytes as f64 / 1e6,
        queries.len()
    );

    // The machine is shared: every figure is the best of ROUNDS runs.
    let db = work.join(format!("index-{size}.db"));
    let mut cold = Duration::MAX;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let index = Index::open(
            &db,
            Arc::clone(&vault),
            IndexOptions {
                rebuild: true,
                progress: None,
                heartbeat: None,
                without_chunks: false,
            },
        )
        .expect("open index");
        let stats = index.wait_ready().expect("cold index");
        cold = cold.min(started.elapsed());
        assert_eq!(stats.parsed, notes);
        drop(index);
        // Let the old writer close its connection before the next open.
        std::thread::sleep(Duration::from_millis(200));
    }

    let mut restart = Duration::MAX;
    let mut index = None;
    for _ in 0..ROUNDS {
        drop(index.take());
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let reopened =
            Index::open(&db, Arc::clone(&vault), IndexOptions::default()).expect("reopen");
        let stats = reopened.wait_ready().expect("restart");
        restart = restart.min(started.elapsed());
        assert_eq!(stats.parsed, 0);
        index = Some(reopened);
    }
    let index = index.expect("opened");

    let ops = Ops::new(Arc::clone(&vault), index);
    let ctx = Context::owner();
    let mut hits = 0;
    let search = |query: &str| {
        ops.search(
            &ctx,
            SearchNotes {
                query: query.to_string(),
                limit: Some(10),
                ..SearchNotes::default()
            },
        )
        .expect("search")
        .results
        .len()
    };
    for query in queries.iter().take(WARMUP_QUERIES) {
        search(query);
    }
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let mut latencies = Vec::new();
        hits = 0;
        for query in &queries {
            let started = Instant::now();
            hits += search(query);
            latencies.push(started.elapsed());
        }
        rounds.push(percentiles(&mut latencies));
    }
    let (p50, p95) = best(&rounds);
    // The ranking alone (the FTS5 query and its rows, no snippets), to see where time goes.
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let mut ranking = Vec::new();
        for query in &queries {
            let parsed = quire::index::parse_query(query);
            let started = Instant::now();
            ops.index()
                .search(&parsed, &Default::default(), None, 10, &|_| true)
                .expect("rank");
            ranking.push(started.elapsed());
        }
        rounds.push(percentiles(&mut ranking));
    }
    let (rank_p50, rank_p95) = best(&rounds);
    drop(ops);
    let db_bytes = std::fs::metadata(&db).map_or(0, |m| m.len());

    let exe = std::env::current_exe().expect("own path");
    let probe = Command::new(exe)
        .arg("rss-probe")
        .arg(&vault_dir)
        .arg(&db)
        .arg(&queries_file)
        .output()
        .expect("run the RSS probe");
    let probe = String::from_utf8_lossy(&probe.stdout).trim().to_string();

    let (floor_cold, floor_latencies, floor_bytes) =
        floor(&vault, &work.join(format!("floor-{size}.db")), &queries);

    let (floor_p50, floor_p95) = floor_latencies;
    println!("| figure | quire | bare FTS5 floor | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| cold index | {:.2} s | {:.2} s | {:.2}x |",
        cold.as_secs_f64(),
        floor_cold.as_secs_f64(),
        cold.as_secs_f64() / floor_cold.as_secs_f64()
    );
    println!(
        "| restart, unchanged vault | {:.3} s | - | - |",
        restart.as_secs_f64()
    );
    println!(
        "| search p50 | {} | {} | {:.2}x |",
        millis(p50),
        millis(floor_p50),
        p50.as_secs_f64() / floor_p50.as_secs_f64()
    );
    println!(
        "| search p95 | {} | {} | {:.2}x |",
        millis(p95),
        millis(floor_p95),
        p95.as_secs_f64() / floor_p95.as_secs_f64()
    );
    println!(
        "| ranking only (no snippets) p50 / p95 | {} / {} | - | - |",
        millis(rank_p50),
        millis(rank_p95)
    );
    println!("| RSS after restart + queries (fresh process) | {probe} | - | - |");
    println!(
        "| database size | {:.1} MB | {:.1} MB | - |",
        db_bytes as f64 / 1e6,
        floor_bytes as f64 / 1e6
    );
    println!("({hits} hits over {} queries)", queries.len());
}

/// In a fresh process: open the existing index (a restart), run every query, report memory.
fn rss_probe(args: &[String]) {
    let [vault_dir, db, queries_file] = args else {
        panic!("rss-probe VAULT DB QUERIES");
    };
    let vault = Arc::new(Vault::open(Path::new(vault_dir), MAX_NOTE_BYTES).expect("vault"));
    let index =
        Index::open(Path::new(db), Arc::clone(&vault), IndexOptions::default()).expect("index");
    index.wait_ready().expect("ready");
    let ops = Ops::new(vault, index);
    let queries = std::fs::read_to_string(queries_file).expect("queries");
    for query in queries.lines() {
        ops.search(
            &Context::owner(),
            SearchNotes {
                query: query.to_string(),
                limit: Some(10),
                ..SearchNotes::default()
            },
        )
        .expect("search");
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or("?".to_string(), |kb| format!("{:.1} MB", kb / 1024.0))
    };
    println!("{} (peak {})", field("VmRSS:"), field("VmHWM:"));
}

/// The floor: one FTS5 table (path, title, body) filled from the same files in one transaction,
/// queried as the naive statement does: bm25 top 10 with `snippet()` in the same SELECT.
fn floor(vault: &Vault, db: &Path, queries: &[String]) -> (Duration, (Duration, Duration), u64) {
    let mut cold = Duration::MAX;
    let mut connection = None;
    for _ in 0..ROUNDS {
        drop(connection.take());
        for suffix in ["", "-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            let _ = std::fs::remove_file(name);
        }
        let started = Instant::now();
        let mut fresh = rusqlite::Connection::open(db).expect("floor db");
        fresh
            .query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .expect("wal");
        fresh
            .pragma_update(None, "synchronous", "NORMAL")
            .expect("synchronous");
        fresh
            .execute_batch("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, body)")
            .expect("create");
        let files = vault.scan(None).expect("scan");
        let transaction = fresh.transaction().expect("transaction");
        {
            let mut insert = transaction
                .prepare("INSERT INTO notes(path, title, body) VALUES(?1, ?2, ?3)")
                .expect("prepare");
            for file in files
                .iter()
                .filter(|file| file.path.extension().as_deref() == Some("md"))
            {
                let body = std::fs::read_to_string(&file.fs_path).unwrap_or_default();
                insert
                    .execute((file.path.as_str(), file.path.stem(), body))
                    .expect("insert");
            }
        }
        transaction.commit().expect("commit");
        cold = cold.min(started.elapsed());
        connection = Some(fresh);
    }
    let connection = connection.expect("built");
    let mut statement = connection
        .prepare(
            "SELECT path, snippet(notes, 2, '**', '**', '…', 24) FROM notes WHERE notes MATCH ?1 ORDER BY bm25(notes) LIMIT 10",
        )
        .expect("prepare query");
    let mut run = |query: &str| {
        let expression: Vec<String> = query
            .split_whitespace()
            .map(|word| format!("\"{}\"", word.replace('"', "\"\"")))
            .collect();
        statement
            .query_map([expression.join(" ")], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .expect("query")
            .count()
    };
    for query in queries.iter().take(WARMUP_QUERIES) {
        run(query);
    }
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let mut latencies = Vec::new();
        for query in queries {
            let started = Instant::now();
            run(query);
            latencies.push(started.elapsed());
        }
        rounds.push(percentiles(&mut latencies));
    }
    drop(statement);
    drop(connection);
    (
        cold,
        best(&rounds),
        std::fs::metadata(db).map_or(0, |m| m.len()),
    )
}

/// The round with the lowest median (its p50 and p95).
fn best(rounds: &[(Duration, Duration)]) -> (Duration, Duration) {
    rounds
        .iter()
        .copied()
        .min_by_key(|(p50, _)| *p50)
        .unwrap_or((Duration::ZERO, Duration::ZERO))
}

fn percentiles(latencies: &mut [Duration]) -> (Duration, Duration) {
    latencies.sort();
    let at = |fraction: f64| {
        let index = ((latencies.len() as f64 - 1.0) * fraction).round() as usize;
        latencies[index]
    };
    (at(0.50), at(0.95))
}

fn millis(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1e3)
}
