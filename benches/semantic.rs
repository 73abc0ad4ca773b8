//! The semantic search eval and benchmark: a program that prints figures, not a timed test
//! (`harness = false`, so `cargo nextest run` never runs it).
//!
//!     cargo bench --bench semantic [-- --synthetic] [--limit-queries N]
//!         [--only-synthetic] [--synthetic-index FILE]
//!
//! Retrieval quality, nDCG@10 and recall@10 for keyword, semantic and hybrid `vault_search`:
//! (a) a labelled set built from `../shared/vaults/tasks-docs`: each unique section heading (two
//!     or more words, level 2 or deeper) is a query whose answer is its note, and every such
//!     heading line is removed from the indexed copy, so the query text is not in the note as a
//!     heading; (b) the Lee corpus (50 news documents with human similarity ratings, from the
//!     `gensim` 4.4.0 wheel; `benches/fetch_lee.sh` extracts it into target/lee): each document's
//!     first sentence is the query (and is left out of the indexed copy), the document itself is
//!     left out of its results, graded gains
//!     are the human ratings, and a document rated 0.5 or more similar counts as relevant.
//! Speed: chunks embedded per second, query latency p50/p95 (query embedding, KNN, keyword leg,
//! fusion, snippets), and the process's resident memory with the model loaded; with
//! `--synthetic`, also the full embedding time of the 10k synthetic vault of `benches/index.rs`.
//! The model is target/quire-models (`quire model install minilm --data-dir target/quire-models`).
//! Whatever input is missing is skipped with a notice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire::embed::ModelSources;
use quire::index::{Index, IndexOptions};
use quire::ops::{Context, Ops, SearchMode, SearchNotes, SemanticSearch};
use quire::vault::Vault;

const MODES: [(SearchMode, &str); 3] = [
    (SearchMode::Keyword, "keyword"),
    (SearchMode::Semantic, "semantic"),
    (SearchMode::Hybrid, "hybrid"),
];

fn main() {
    quire::telemetry::init_quiet();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--synthetic-index FILE` starts (c) from a copy of an index.db a previous `--synthetic` run
    // left (target/bench-semantic/c/index.db), so the query figures come without re-embedding.
    let synthetic_index = args
        .iter()
        .position(|a| a == "--synthetic-index")
        .and_then(|at| args.get(at + 1))
        .map(PathBuf::from);
    let only_synthetic = args.iter().any(|a| a == "--only-synthetic");
    let synthetic =
        only_synthetic || synthetic_index.is_some() || args.iter().any(|a| a == "--synthetic");
    let only_lee = args.iter().any(|a| a == "--only-lee");
    let limit_queries = args
        .iter()
        .position(|a| a == "--limit-queries")
        .and_then(|at| args.get(at + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("QUIRE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared"));
    let models = std::env::var_os("QUIRE_TEST_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target/quire-models"));
    let search = ModelSources {
        enabled: true,
        model_dir: None,
        onnxruntime: None,
        reranker_dir: None,
        ort_dylib_path: None,
        data_dir: Some(models.clone()),
    };
    if quire::embed::resolve(&search).start().is_err() {
        println!(
            "SKIP: no model in {} (quire model install minilm --data-dir {})",
            models.display(),
            models.display()
        );
        return;
    }
    println!(
        "quire semantic search eval ({} build, {} cores, model all-MiniLM-L6-v2 int8)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let work = repo.join("target/bench-semantic");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create target/bench-semantic");

    let vault = shared.join("vaults/tasks-docs");
    if only_lee || only_synthetic {
        println!("\n(a) skipped");
    } else if vault.is_dir() {
        let (notes, queries) = heading_queries(&vault);
        let queries: Vec<_> = queries.into_iter().take(limit_queries).collect();
        println!(
            "\n(a) tasks-docs headings: {} queries over {} notes (heading lines removed from the index)",
            queries.len(),
            notes.len()
        );
        let bench = Bench::open(&work.join("a"), &notes, &search);
        bench.report_embedding();
        let mut table = Vec::new();
        for (mode, name) in MODES {
            let (mut ndcg, mut recall) = (0.0, 0.0);
            for (query, answer) in &queries {
                let found = bench.search(query, mode, 10);
                if let Some(rank) = found.iter().position(|p| p == answer) {
                    ndcg += 1.0 / ((rank + 2) as f64).log2();
                    recall += 1.0;
                }
            }
            let n = queries.len().max(1) as f64;
            table.push((name, ndcg / n, recall / n));
        }
        print_table(&table);
        bench.report_latency(queries.iter().map(|(q, _)| q.as_str()));
        println!("  resident memory with the model loaded: {}", rss());
    } else {
        println!("SKIP (a): {} is absent", vault.display());
    }

    let lee = repo.join("target/lee");
    if only_synthetic {
        println!("\n(b) skipped");
    } else if lee.join("lee.cor").is_file() {
        lee_eval(&lee, &work.join("b"), &search);
    } else {
        println!(
            "\nSKIP (b): no Lee corpus in {} (run benches/fetch_lee.sh)",
            lee.display()
        );
    }

    if synthetic {
        let vault = repo.join("target/bench-index/vault-10000");
        let queries_file = repo.join("target/bench-index/vault-10000.queries.txt");
        if !queries_file.is_file() {
            let status = Command::new("python3")
                .arg(repo.join("benches/gen_vault.py"))
                .arg(&vault)
                .args(["--notes", "10000", "--vocab-from"])
                .arg(shared.join("vaults/tasks-docs"))
                .status()
                .expect("python3");
            assert!(status.success(), "gen_vault.py failed");
        }
        println!("\n(c) the 10k synthetic vault ({})", vault.display());
        if let Some(index) = &synthetic_index {
            std::fs::create_dir_all(work.join("c")).expect("mkdir");
            std::fs::copy(index, work.join("c/index.db")).expect("copy the index");
            println!(
                "  starting from {} (the embedding figure covers only what it lacks)",
                index.display()
            );
        }
        let bench = Bench::open_dir(&work.join("c"), &vault, &search);
        bench.report_embedding();
        let queries = std::fs::read_to_string(&queries_file).expect("queries");
        bench.report_latency(queries.lines().filter(|l| !l.trim().is_empty()));
        println!("  resident memory with the model loaded: {}", rss());
    }
}

struct Bench {
    ops: Ops,
    embed_time: Duration,
    chunks: u64,
}

impl Bench {
    /// Writes `notes` into a fresh vault under `dir`, indexes and embeds it.
    fn open(dir: &Path, notes: &[(String, String)], search: &ModelSources) -> Bench {
        let root = dir.join("vault");
        for (path, text) in notes {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(file, text).expect("write");
        }
        Self::open_dir(dir, &root, search)
    }

    fn open_dir(dir: &Path, root: &Path, search: &ModelSources) -> Bench {
        std::fs::create_dir_all(dir).expect("mkdir");
        let vault = Arc::new(Vault::open(root, 10 << 20).expect("vault"));
        let index = Index::open(
            &dir.join("index.db"),
            Arc::clone(&vault),
            IndexOptions::default(),
        )
        .expect("index");
        index.wait_ready().expect("indexed");
        let ops = Ops::new(vault, index);
        let service = quire::embed::resolve(search).start().expect("model");
        ops.enable_semantic(SemanticSearch::new(service, false))
            .expect("enabled");
        let started = Instant::now();
        let pass = ops.embed_pending(&|_| {}).expect("embedded");
        Bench {
            ops,
            embed_time: started.elapsed(),
            chunks: pass.counts.chunks,
        }
    }

    fn report_embedding(&self) {
        println!(
            "  embedded {} chunks in {:.1} s: {:.0} chunks/s",
            self.chunks,
            self.embed_time.as_secs_f64(),
            self.chunks as f64 / self.embed_time.as_secs_f64().max(1e-9)
        );
    }

    fn search(&self, query: &str, mode: SearchMode, limit: u32) -> Vec<String> {
        let found = self
            .ops
            .search(
                &Context::owner(),
                SearchNotes {
                    query: query.to_string(),
                    mode,
                    limit: Some(limit),
                    ..SearchNotes::default()
                },
            )
            .expect("search");
        let expected = match mode {
            SearchMode::Keyword => "keyword",
            SearchMode::Semantic => "semantic",
            _ => "hybrid",
        };
        assert_eq!(found.search_mode, expected, "{query:?}");
        found.results.into_iter().map(|hit| hit.path).collect()
    }

    fn report_latency<'a>(&self, queries: impl Iterator<Item = &'a str>) {
        let queries: Vec<&str> = queries.collect();
        for (mode, name) in MODES {
            let mut times: Vec<Duration> = queries
                .iter()
                .map(|query| {
                    let started = Instant::now();
                    self.search(query, mode, 10);
                    started.elapsed()
                })
                .collect();
            times.sort();
            let at = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
            println!(
                "  {name:<8} vault_search latency over {} queries: p50 {:.1} ms, p95 {:.1} ms",
                times.len(),
                at(0.5).as_secs_f64() * 1e3,
                at(0.95).as_secs_f64() * 1e3
            );
        }
    }
}

fn print_table(rows: &[(&str, f64, f64)]) {
    println!("  | mode     | nDCG@10 | recall@10 |");
    println!("  |----------|---------|-----------|");
    for (name, ndcg, recall) in rows {
        println!("  | {name:<8} | {ndcg:.3}   | {recall:.3}     |");
    }
}

/// (path, text) of a note, or (query, answer path) of a labelled query.
type Pairs = Vec<(String, String)>;

/// The vault's notes (path, text with the query headings removed) and the queries (heading,
/// note path).
fn heading_queries(vault: &Path) -> (Pairs, Pairs) {
    let mut notes = Vec::new();
    for entry in walk(vault) {
        let rel = entry
            .strip_prefix(vault)
            .expect("inside")
            .to_string_lossy()
            .replace('\\', "/");
        if rel.split('/').any(|seg| seg.starts_with('.')) || !rel.ends_with(".md") {
            continue;
        }
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        notes.push((rel, text));
    }
    notes.sort();
    let clean = |heading: &str| {
        heading
            .chars()
            .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '-')
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (_, text) in &notes {
        for heading in quire::markdown::headings::headings(text) {
            *counts
                .entry(clean(&heading.text).to_lowercase())
                .or_default() += 1;
        }
    }
    let mut queries = Vec::new();
    for (path, text) in &mut notes {
        let mut remove = Vec::new();
        for heading in quire::markdown::headings::headings(text) {
            let query = clean(&heading.text);
            if heading.level < 2
                || query.split_whitespace().count() < 2
                || heading.text.contains("[[")
                || counts.get(&query.to_lowercase()) != Some(&1)
            {
                continue;
            }
            queries.push((query, path.clone()));
            remove.push(heading.line);
        }
        if !remove.is_empty() {
            *text = text
                .lines()
                .enumerate()
                .filter(|(at, _)| !remove.contains(&(at + 1)))
                .map(|(_, line)| line)
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
    (notes, queries)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

fn lee_eval(lee: &Path, dir: &Path, search: &ModelSources) {
    // lee.cor is Latin-1 in places.
    let docs: Vec<String> =
        String::from_utf8_lossy(&std::fs::read(lee.join("lee.cor")).expect("lee.cor"))
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(str::to_string)
            .collect();
    let raw: Vec<Vec<f64>> = std::fs::read_to_string(lee.join("similarities0-1.txt"))
        .expect("similarities")
        .lines()
        .map(|line| {
            line.split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect()
        })
        .collect();
    let n = docs.len().min(raw.len());
    // The file holds the upper triangle; mirror it.
    let sim = |i: usize, j: usize| if i <= j { raw[i][j] } else { raw[j][i] };
    // Each document is indexed without its first sentence (the query), as the headings are in (a):
    // otherwise keyword search, which requires every word, finds only the source document.
    let notes: Vec<(String, String)> = docs
        .iter()
        .enumerate()
        .take(n)
        .map(|(i, text)| {
            let query = first_sentence(text);
            let rest = text.find(". ").map_or("", |at| &text[at + 2..]).to_string();
            let rest = if query.split_whitespace().count() >= 30 {
                // A first "sentence" cut at 30 words: drop just those words.
                text.split_whitespace()
                    .skip(30)
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                rest
            };
            (format!("lee/doc{i:02}.md"), format!("{rest}\n"))
        })
        .collect();
    println!(
        "\n(b) Lee corpus: {n} documents; the first sentence of each is the query and is left out of the indexed copy"
    );
    let bench = Bench::open(dir, &notes, search);
    bench.report_embedding();
    let mut table = Vec::new();
    for (mode, name) in MODES {
        let (mut ndcg, mut recall, mut with_relevant) = (0.0, 0.0, 0usize);
        for (i, doc) in docs.iter().enumerate().take(n) {
            let query: String = first_sentence(doc);
            let own = format!("lee/doc{i:02}.md");
            let found: Vec<usize> = bench
                .search(&query, mode, 11)
                .into_iter()
                .filter(|path| *path != own)
                .take(10)
                .filter_map(|path| {
                    path.strip_prefix("lee/doc")?
                        .strip_suffix(".md")?
                        .parse()
                        .ok()
                })
                .collect();
            let dcg: f64 = found
                .iter()
                .enumerate()
                .map(|(rank, &j)| sim(i, j) / ((rank + 2) as f64).log2())
                .sum();
            let mut ideal: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| sim(i, j)).collect();
            ideal.sort_by(|a, b| b.total_cmp(a));
            let idcg: f64 = ideal
                .iter()
                .take(10)
                .enumerate()
                .map(|(rank, gain)| gain / ((rank + 2) as f64).log2())
                .sum();
            ndcg += if idcg > 0.0 { dcg / idcg } else { 0.0 };
            let relevant: Vec<usize> = (0..n).filter(|&j| j != i && sim(i, j) >= 0.5).collect();
            if !relevant.is_empty() {
                with_relevant += 1;
                recall += found.iter().filter(|j| relevant.contains(j)).count() as f64
                    / relevant.len() as f64;
            }
        }
        table.push((name, ndcg / n as f64, recall / with_relevant.max(1) as f64));
    }
    print_table(&table);
    bench.report_latency(
        docs.iter()
            .take(n)
            .map(|doc| doc.split_whitespace().take(6).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
    );
    println!("  resident memory with the model loaded: {}", rss());
}

fn first_sentence(text: &str) -> String {
    let end = text.find(". ").map_or(text.len(), |at| at + 1);
    text[..end]
        .split_whitespace()
        .take(30)
        .collect::<Vec<_>>()
        .join(" ")
}

/// This process's resident set size now and at its peak (VmRSS, VmHWM).
fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .map(|line| line[name.len()..].trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    format!("{} (peak {})", field("VmRSS:"), field("VmHWM:"))
}
