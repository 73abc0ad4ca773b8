//! The memory recall eval: recall@5 of `vault_memory_recall` (`Ops::memory_recall`) over the
//! labelled set in tests/data/memory-recall, keyword-only and hybrid (keyword + the entries'
//! vectors, fused and cut), with the real model. A program that prints figures, not a timed test
//! (`harness = false`, so `cargo nextest run` never runs it).
//!
//!     cargo bench --bench memory_recall
//!
//! The model is target/quire-models, or QUIRE_TEST_MODELS
//! (`quire model install minilm --data-dir target/quire-models`); without it only the keyword
//! figure is printed. Add `--rerank` to also run hybrid with the installed reranker, if any.

#[path = "support/memory_recall_set.rs"]
mod memory_recall_set;

use std::path::PathBuf;
use std::sync::Arc;

use quire::embed::ModelSources;
use quire::index::{Index, IndexOptions};
use quire::ops::{Context, GetMemory, Ops, SemanticSearch};
use quire::vault::Vault;

const K: u32 = 5;

fn main() {
    quire::telemetry::init_quiet();
    let rerank = std::env::args().any(|arg| arg == "--rerank");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let models = std::env::var_os("QUIRE_TEST_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target/quire-models"));
    let scratch = tempfile::tempdir().expect("temporary folder");
    let vault = Arc::new(Vault::open(&memory_recall_set::vault_dir(), 10 << 20).expect("vault"));
    let index = Index::open(
        &scratch.path().join("index.db"),
        Arc::clone(&vault),
        IndexOptions::default(),
    )
    .expect("index");
    index.wait_ready().expect("indexed");
    let ops = Ops::new(vault, index);
    let queries = memory_recall_set::queries();
    let entries = ops
        .get_memory(&Context::owner(), GetMemory::default())
        .expect("entries");
    let paraphrases = queries
        .iter()
        .filter(|labelled| memory_recall_set::shares_no_word(labelled, &entries))
        .count();
    println!(
        "memory recall set: {} entries in {} files, {} queries ({} share no word with their entries)",
        entries.len(),
        ops.list_memory_files(&Context::owner())
            .map(|files| files.len())
            .unwrap_or(0),
        queries.len(),
        paraphrases
    );
    report(
        "keyword-only",
        &memory_recall_set::evaluate(&ops, &queries, K),
    );

    let sources = ModelSources {
        enabled: true,
        model_dir: None,
        onnxruntime: None,
        reranker_dir: None,
        ort_dylib_path: None,
        data_dir: Some(models.clone()),
    };
    let service = match quire::embed::resolve(&sources).start() {
        Ok(service) => service,
        Err(error) => {
            println!(
                "SKIP hybrid: no model in {} ({error}; quire model install minilm --data-dir {})",
                models.display(),
                models.display()
            );
            return;
        }
    };
    let name = service.info().name.clone();
    let reranks = rerank && service.has_reranker();
    ops.enable_semantic(SemanticSearch::new(service, reranks))
        .expect("enabled");
    let pass = ops.embed_pending(&|_| {}).expect("embedded");
    println!("model {name}: {} vectors embedded", pass.embedded);
    let label = if reranks { "hybrid+rerank" } else { "hybrid" };
    report(label, &memory_recall_set::evaluate(&ops, &queries, K));
}

fn report(label: &str, score: &memory_recall_set::Score) {
    let mut modes: Vec<&str> = score.modes.iter().copied().collect();
    modes.sort_unstable();
    println!(
        "  {label:<14} recall@{K} {:.3}  (mean {:.1} entries returned; mode {})",
        score.recall,
        score.returned,
        modes.join("/")
    );
    if !score.missed.is_empty() {
        println!("    missed: {}", score.missed.join("; "));
    }
}
