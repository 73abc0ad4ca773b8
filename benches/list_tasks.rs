//! The task-listing benchmark: a program that prints figures, not a timed test (`harness = false`).
//!
//!     cargo bench --bench list_tasks [-- SIZE...]        (default: 10000)
//!
//! For each size it generates the synthetic vault (`benches/gen_vault.py --seed 42`, vocabulary of
//! `../shared/vaults/tasks-docs`, cached under `target/bench-tasks/`), indexes it, and times
//! `Ops::list_tasks` (filtered, sorted and paged in SQL) beside `Ops::list_tasks_in_memory` (the
//! listing it replaced, which reads every checkbox row of the scope) in the same run, for the three
//! filters of issue 23: none, `status: TODO` sorted by due, and `due before today` (first page of
//! 50 each). Each figure is the p50 of the best of three rounds of 21 calls after a warm-up call
//! (one round of 3 for the in-memory listing above 20,000 notes, where a call takes seconds).
//! Without the vocabulary folder (or python3) it prints a SKIP notice and exits successfully.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quire::index::{Index, IndexOptions};
use quire::ops::{Context, ListTasks, Ops, TaskDateFilter, TaskList, TaskSort};
use quire::vault::Vault;

#[path = "support/synthetic_vault.rs"]
mod synthetic_vault;

const MAX_NOTE_BYTES: u64 = 10 * 1024 * 1024;
const ROUNDS: usize = 3;
const CALLS: usize = 21;

fn main() {
    let sizes: Vec<usize> = {
        let args: Vec<String> = std::env::args()
            .skip(1)
            .filter(|arg| !arg.starts_with("--"))
            .collect();
        if args.is_empty() {
            vec![10_000]
        } else {
            args.iter()
                .map(|arg| arg.parse().expect("sizes are note counts, e.g. 10000"))
                .collect()
        }
    };
    let Some(generator) = synthetic_vault::generator("bench-tasks") else {
        return;
    };
    println!(
        "quire list_tasks benchmark ({} build)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    for size in sizes {
        let vault_dir = generator.vault(size);
        let vault = Arc::new(Vault::open(&vault_dir, MAX_NOTE_BYTES).expect("open vault"));
        let index = Index::open(
            &generator.work().join(format!("index-{size}.db")),
            Arc::clone(&vault),
            IndexOptions::default(),
        )
        .expect("open index");
        let ops = Ops::new(vault, index);
        let ctx = Context::owner();
        let all = ops
            .list_tasks_in_memory(
                &ctx,
                ListTasks {
                    limit: Some(1),
                    ..ListTasks::default()
                },
            )
            .expect("list");
        println!(
            "\n== {size} notes (first task: {:?})",
            all.tasks.first().map(|task| &task.path)
        );
        let filters: [(&str, ListTasks); 3] = [
            ("none", ListTasks::default()),
            (
                "status TODO, sort by due",
                ListTasks {
                    status: vec!["TODO".to_owned()],
                    sort_by: TaskSort::Due,
                    ..ListTasks::default()
                },
            ),
            (
                "due before today",
                ListTasks {
                    due: Some(TaskDateFilter {
                        before: Some("today".to_owned()),
                        ..TaskDateFilter::default()
                    }),
                    ..ListTasks::default()
                },
            ),
        ];
        println!("| filter | in memory (before) p50 | SQL (after) p50 | same page |");
        println!("|---|---|---|---|");
        for (name, request) in filters {
            // The in-memory listing takes seconds per call on large vaults: fewer calls there.
            let (rounds, calls) = if size > 20_000 {
                (1, 3)
            } else {
                (ROUNDS, CALLS)
            };
            let memory = p50(rounds, calls, || {
                ops.list_tasks_in_memory(&ctx, request.clone())
                    .expect("list")
            });
            let sql = p50(ROUNDS, CALLS, || {
                ops.list_tasks(&ctx, request.clone()).expect("list")
            });
            let same = ops.list_tasks(&ctx, request.clone()).expect("list").tasks
                == ops
                    .list_tasks_in_memory(&ctx, request.clone())
                    .expect("list")
                    .tasks;
            println!(
                "| {name} | {:.1} ms | {:.2} ms | {same} |",
                memory.as_secs_f64() * 1e3,
                sql.as_secs_f64() * 1e3
            );
        }
    }
}

/// The median call time of the best of `rounds` rounds of `calls` calls (other work on a shared
/// machine only adds).
fn p50(rounds: usize, calls: usize, mut call: impl FnMut() -> TaskList) -> Duration {
    std::hint::black_box(call());
    (0..rounds)
        .map(|_| {
            let mut times: Vec<Duration> = (0..calls)
                .map(|_| {
                    let started = Instant::now();
                    std::hint::black_box(call());
                    started.elapsed()
                })
                .collect();
            times.sort();
            times[calls / 2]
        })
        .min()
        .unwrap_or_default()
}
