//! The completion benchmark: a program that prints figures, not a timed test (`harness = false`,
//! so `cargo nextest run` never runs it).
//!
//!     cargo bench --bench complete [-- SIZE]        (default: 10000)
//!
//! It generates the deterministic synthetic vault of `benches/gen_vault.py` (cached under
//! `target/bench-complete/`, vocabulary from `../shared/vaults/tasks-docs`), indexes it, and times
//! `completion/complete`'s three answers as `Ops` gives them: `note://` paths by prefix (empty,
//! a folder, a folder and two letters, a file-name prefix, a prefix matching nothing), as the owner
//! and as an identity whose rules deny the largest folder (so every candidate passes the ACL
//! check), memory file names and daily-note dates. Each figure is the p50 and p95 of 200 calls.
//! The budget is 20 ms per answer on a 10k-note vault. Without the vocabulary folder (or python3)
//! it prints a SKIP notice.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::index::{Index, IndexOptions};
use quire::ops::{Completions, Context, Ops, OpsError};
use quire::vault::Vault;

#[path = "support/synthetic_vault.rs"]
mod synthetic_vault;

const MAX_NOTE_BYTES: u64 = 10 * 1024 * 1024;
const CALLS: usize = 200;
const BUDGET: Duration = Duration::from_millis(20);

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
    let Some(generator) = synthetic_vault::generator("bench-complete") else {
        return;
    };
    let vault_dir = generator.vault(size);
    println!(
        "quire completion benchmark ({} build, {} cores)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let vault = Arc::new(Vault::open(&vault_dir, MAX_NOTE_BYTES).expect("open vault"));
    let index = Index::open(
        &generator.work().join(format!("index-{size}.db")),
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
    let paths = index
        .note_paths(&quire::index::NoteFilter::default())
        .expect("paths");
    println!("vault: {} notes ({stats:?})", paths.len());

    // The largest top-level folder, and a file name, for prefixes that match many and few.
    let mut folders: HashMap<&str, usize> = HashMap::new();
    for path in &paths {
        if let Some((folder, _)) = path.split_once('/') {
            *folders.entry(folder).or_default() += 1;
        }
    }
    let (big, big_count) = folders
        .iter()
        .max_by_key(|(_, count)| **count)
        .map(|(folder, count)| ((*folder).to_owned(), *count))
        .expect("the vault has folders");
    let name: String = paths
        .iter()
        .find_map(|path| path.rsplit_once('/').map(|(_, name)| name.to_lowercase()))
        .expect("a note in a folder")
        .chars()
        .take(3)
        .collect();
    let two_letters = paths
        .iter()
        .filter_map(|path| path.strip_prefix(&format!("{big}/")))
        .nth(big_count / 2)
        .map(|rest| format!("{big}/{}", rest.chars().take(2).collect::<String>()))
        .expect("a note in the largest folder");
    println!("largest folder: {big}/ ({big_count} notes)");

    let rule = |text: &str| Rule::parse(text).expect("rule");
    let mut identities = BTreeMap::new();
    identities.insert(
        "agent".to_owned(),
        IdentityRules {
            read: vec![rule("/")],
            write: Vec::new(),
            deny: vec![rule(&format!("{big}/"))],
        },
    );
    ops.set_policy(Policy::new(Vec::new(), identities));
    let owner = Context::owner();
    let agent = Context::new(
        Principal::Identity {
            name: "agent".into(),
            client_id: None,
        },
        "bench",
    );

    let cases: Vec<Case> = vec![
        note_case("note path \"\"", &owner, &ops, ""),
        note_case(&format!("note path {big:?}"), &owner, &ops, &big),
        note_case(
            &format!("note path {two_letters:?}"),
            &owner,
            &ops,
            &two_letters,
        ),
        note_case(
            &format!("note path {name:?} (file names)"),
            &owner,
            &ops,
            &name,
        ),
        note_case("note path \"zzzz\" (no match)", &owner, &ops, "zzzz"),
        note_case("note path \"\", restricted", &agent, &ops, ""),
        note_case(
            &format!("note path {big:?}, restricted (all denied)"),
            &agent,
            &ops,
            &big,
        ),
        (
            "memory file \"\"".to_owned(),
            &owner,
            Box::new(|ctx| ops.complete_memory_file(ctx, "")),
        ),
        (
            "daily date \"\"".to_owned(),
            &owner,
            Box::new(|ctx| ops.complete_daily_date(ctx, "")),
        ),
    ];
    println!(
        "\n{:<48} {:>7} {:>9} {:>9}",
        "completion", "values", "p50 ms", "p95 ms"
    );
    let mut over = Vec::new();
    for (label, ctx, run) in &cases {
        let first = run(ctx).expect("complete");
        let mut times: Vec<Duration> = (0..CALLS)
            .map(|_| {
                let start = Instant::now();
                let found = run(ctx).expect("complete");
                let took = start.elapsed();
                assert_eq!(found, first, "the same question gets the same answer");
                took
            })
            .collect();
        times.sort();
        let p50 = times[CALLS / 2];
        let p95 = times[CALLS * 95 / 100];
        println!(
            "{label:<48} {:>6}{} {:>9.2} {:>9.2}",
            first.values.len(),
            if first.has_more { "+" } else { " " },
            p50.as_secs_f64() * 1e3,
            p95.as_secs_f64() * 1e3
        );
        if p95 > BUDGET {
            over.push(label.clone());
        }
    }
    if over.is_empty() {
        println!("\nevery p95 is within the {} ms budget", BUDGET.as_millis());
    } else {
        println!(
            "\nOVER the {} ms budget: {}",
            BUDGET.as_millis(),
            over.join(", ")
        );
    }
}

type Case<'a> = (
    String,
    &'a Context,
    Box<dyn Fn(&Context) -> Result<Completions, OpsError> + 'a>,
);

fn note_case<'a>(label: &str, ctx: &'a Context, ops: &'a Ops, prefix: &str) -> Case<'a> {
    let prefix = prefix.to_owned();
    (
        label.to_owned(),
        ctx,
        Box::new(move |ctx| ops.complete_note_path(ctx, &prefix)),
    )
}
