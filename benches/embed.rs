//! Embedding speed beside its floor: a program that prints figures, not a timed test
//! (`harness = false`, so `cargo nextest run` never runs it).
//!
//!     cargo bench --bench embed [-- --vault DIR] [--rounds N]
//!
//! The chunks are the exact texts Quire embeds for the notes of a vault (`../shared/vaults/tasks-docs`
//! by default, else `examples/vault`), taken the way an indexing pass takes them: steps of 32 notes,
//! each step sorted by length, runs of 8, ONNX Runtime's arena session (`Embedder::set_bulk`).
//! In each round, alternating: the floor (the same model file through ONNX Runtime's Python API
//! and the `tokenizers` package, `benches/embed_floor.py`, the whole set sorted by length, batches
//! of 8 and of 32), Quire with fp32 arithmetic (`Graph::Int8Table`) and Quire with int8 arithmetic
//! (`Graph::Int8MatMul`). Prints chunks/s per round and the best of each, and how far the vectors
//! of each are from the floor's (the lowest cosine).
//! Needs the model in target/quire-models (`quire model install minilm --data-dir target/quire-models`)
//! and, for the floor, `onnxruntime` and `tokenizers` in target/py
//! (`target/py/bin/pip install onnxruntime==1.32.0 tokenizers`); whatever is missing is skipped
//! with a notice.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use quire::embed::{Embedder, Graph, ModelDir, OnnxEmbedder, TextKind, cosine};

/// As the indexing pass (`ops::search::semantic`): notes per step and chunks per model run.
const NOTES_PER_STEP: usize = 32;
const CHUNKS_PER_RUN: usize = 8;

fn main() {
    quire::telemetry::init_quiet();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|at| args.get(at + 1))
            .cloned()
    };
    let rounds: usize = value("--rounds").and_then(|n| n.parse().ok()).unwrap_or(3);
    // As many threads as Quire's sessions use (`onnx::session_threads`): the cores, at most 4.
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 4)
        .to_string();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("QUIRE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared"));
    let vault = value("--vault").map(PathBuf::from).unwrap_or_else(|| {
        let docs = shared.join("vaults/tasks-docs");
        if docs.is_dir() {
            docs
        } else {
            println!("NOTICE: {} is absent; using examples/vault", docs.display());
            repo.join("examples/vault")
        }
    });
    let models = std::env::var_os("QUIRE_TEST_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target/quire-models"));
    let model_dir = models.join("models/minilm");
    let library = models.join("lib/libonnxruntime.so");
    let Ok(model) = ModelDir::open(&model_dir) else {
        println!(
            "SKIP: no model in {} (quire model install minilm --data-dir {})",
            model_dir.display(),
            models.display()
        );
        return;
    };
    let work = repo.join("target/bench-embed");
    std::fs::create_dir_all(&work).expect("create target/bench-embed");

    let steps = chunk_steps(&vault);
    let texts: Vec<String> = steps.iter().flatten().cloned().collect();
    let chars: usize = texts.iter().map(String::len).sum();
    println!(
        "quire embedding bench ({} build, {} cores, ONNX Runtime {} threads): {} chunks of {} notes in {} (mean {} bytes)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        std::thread::available_parallelism().map_or(1, usize::from),
        threads,
        texts.len(),
        count_notes(&vault),
        vault.display(),
        chars / texts.len().max(1)
    );
    let chunks_file = work.join("chunks.json");
    std::fs::write(
        &chunks_file,
        serde_json::to_vec(&texts).expect("chunks as JSON"),
    )
    .expect("write chunks.json");

    let python = repo.join("target/py/bin/python");
    let floor_ready = Command::new(&python)
        .args(["-c", "import onnxruntime, tokenizers, numpy"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !floor_ready {
        println!(
            "NOTICE: no floor: {} cannot import onnxruntime and tokenizers ({} -m pip install onnxruntime==1.32.0 tokenizers)",
            python.display(),
            python.display()
        );
    }

    let mut best: Vec<(String, f64)> = Vec::new();
    let mut record = |name: &str, rate: f64| match best.iter_mut().find(|(n, _)| n == name) {
        Some((_, old)) => *old = old.max(rate),
        None => best.push((name.to_owned(), rate)),
    };
    let mut floor_vectors: Option<Vec<Vec<f32>>> = None;
    let mut agreement: Vec<(String, f32)> = Vec::new();
    for round in 1..=rounds {
        if floor_ready {
            for batch in [8, 32] {
                let out = work.join(format!("floor-{batch}.f32"));
                let Some(rate) = floor(
                    &python,
                    &repo.join("benches/embed_floor.py"),
                    &chunks_file,
                    &model_dir,
                    batch,
                    &threads,
                    &out,
                ) else {
                    continue;
                };
                println!("round {round}: floor, Python, batches of {batch}: {rate:.1} chunks/s");
                record(&format!("floor (Python ONNX Runtime, batch {batch})"), rate);
                if floor_vectors.is_none() {
                    floor_vectors = read_vectors(&out, model.manifest.dimensions);
                }
            }
        }
        for (graph, name) in [
            (Graph::Int8Table, "Quire, fp32 arithmetic (Int8Table)"),
            (Graph::Int8MatMul, "Quire, int8 arithmetic (Int8MatMul)"),
        ] {
            let (rate, vectors) = quire_pass(&library, &model, graph, &steps);
            println!("round {round}: {name}: {rate:.1} chunks/s");
            record(name, rate);
            if round == 1
                && let Some(floor) = &floor_vectors
            {
                let lowest = vectors
                    .iter()
                    .zip(floor)
                    .map(|(a, b)| cosine(a, b))
                    .fold(f32::INFINITY, f32::min);
                agreement.push((name.to_owned(), lowest));
            }
        }
    }
    println!("\nbest of {rounds} rounds, chunks/s:");
    let floor_best = best
        .iter()
        .filter(|(name, _)| name.starts_with("floor"))
        .map(|(_, rate)| *rate)
        .fold(0.0_f64, f64::max);
    for (name, rate) in &best {
        if floor_best > 0.0 {
            println!(
                "  {name}: {rate:.1} ({:.2}x the best floor)",
                rate / floor_best
            );
        } else {
            println!("  {name}: {rate:.1}");
        }
    }
    for (name, lowest) in agreement {
        println!("  lowest cosine to the floor's vector, {name}: {lowest:.5}");
    }
}

/// The chunk texts of the vault's notes, in path order, grouped into the indexing pass's steps
/// and sorted by length within each, with the pass's deduplication by hash.
fn chunk_steps(vault: &Path) -> Vec<Vec<String>> {
    let mut notes = Vec::new();
    collect_notes(vault, &mut notes);
    notes.sort();
    let mut seen = std::collections::HashSet::new();
    let mut steps = Vec::new();
    for step in notes.chunks(NOTES_PER_STEP) {
        let mut texts = Vec::new();
        for path in step {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            for (hash, chunk) in quire::index::note_chunks(&stem, &text) {
                if seen.insert(hash) {
                    texts.push(chunk.text);
                }
            }
        }
        texts.sort_by_key(String::len);
        steps.push(texts);
    }
    steps
}

fn collect_notes(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        if path.is_dir() {
            collect_notes(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

fn count_notes(vault: &Path) -> usize {
    let mut notes = Vec::new();
    collect_notes(vault, &mut notes);
    notes.len()
}

/// One indexing-style pass over every step with a fresh embedder: chunks/s and the vectors in
/// input order.
fn quire_pass(
    library: &Path,
    model: &ModelDir,
    graph: Graph,
    steps: &[Vec<String>],
) -> (f64, Vec<Vec<f32>>) {
    let mut embedder = OnnxEmbedder::open_graph(library, model, graph).expect("model loads");
    embedder.set_bulk(true).expect("arena session");
    let started = Instant::now();
    let mut vectors = Vec::new();
    for step in steps {
        for run in step.chunks(CHUNKS_PER_RUN) {
            vectors.extend(
                embedder
                    .embed(run, TextKind::Document)
                    .expect("a run embeds"),
            );
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    (vectors.len() as f64 / seconds, vectors)
}

fn floor(
    python: &Path,
    script: &Path,
    chunks: &Path,
    model_dir: &Path,
    batch: usize,
    threads: &str,
    out: &Path,
) -> Option<f64> {
    let output = Command::new(python)
        .arg(script)
        .arg(chunks)
        .arg(model_dir)
        .args(["--batch", &batch.to_string(), "--threads", threads, "--out"])
        .arg(out)
        .output()
        .ok()?;
    if !output.status.success() {
        println!(
            "floor failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return None;
    }
    let line = String::from_utf8_lossy(&output.stdout);
    let figures: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    figures.get("chunks_per_s")?.as_f64()
}

/// The floor's vectors, which it writes sorted back into input order.
fn read_vectors(path: &Path, dimensions: usize) -> Option<Vec<Vec<f32>>> {
    let bytes = std::fs::read(path).ok()?;
    let floats: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    Some(floats.chunks(dimensions).map(<[f32]>::to_vec).collect())
}
