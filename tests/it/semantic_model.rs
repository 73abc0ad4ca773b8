//! Semantic search with the real all-MiniLM-L6-v2 model on ONNX Runtime: similarity sanity and
//! hybrid ranking. The model comes from `quire model install minilm --data-dir
//! target/quire-models` (tests/run does it once); without it these tests skip with a notice,
//! unless QUIRE_REQUIRE_MODEL=1 (the CI stage that installed it) makes a missing model a failure.

use std::path::{Path, PathBuf};

use quire::embed::{EmbedService, Graph, ModelDir, OnnxEmbedder, cosine};

/// The installed data directory (models/ and lib/), or `None` after printing why the test skips.
pub fn model_data() -> Option<PathBuf> {
    let dir = std::env::var_os("QUIRE_TEST_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/quire-models"));
    let ready = dir.join("lib/libonnxruntime.so").is_file()
        && dir.join("models/minilm/quire-model.json").is_file();
    if ready {
        return Some(dir);
    }
    if std::env::var("QUIRE_REQUIRE_MODEL").as_deref() == Ok("1") {
        panic!(
            "QUIRE_REQUIRE_MODEL=1 but no model in {}; run `quire model install minilm --data-dir {}`",
            dir.display(),
            dir.display()
        );
    }
    eprintln!(
        "SKIP: no real model in {} (run `quire model install minilm --data-dir {}`)",
        dir.display(),
        dir.display()
    );
    None
}

#[test]
fn similar_words_are_closer_than_unrelated_ones() {
    let Some(data) = model_data() else { return };
    let model = ModelDir::open(&data.join("models/minilm")).expect("model folder");
    let mut embedder =
        OnnxEmbedder::open(&data.join("lib/libonnxruntime.so"), &model).expect("loads");
    use quire::embed::{Embedder, TextKind};
    let texts: Vec<String> = ["cat", "kitten", "revenue"]
        .iter()
        .map(|t| t.to_string())
        .collect();
    let vectors = embedder.embed(&texts, TextKind::Document).expect("embeds");
    assert_eq!(vectors[0].len(), 384);
    let kitten = cosine(&vectors[0], &vectors[1]);
    let revenue = cosine(&vectors[0], &vectors[2]);
    assert!(
        kitten > revenue + 0.2,
        "cat/kitten {kitten} should beat cat/revenue {revenue}"
    );
    // Batching pads to the longest input: a short text embeds the same alone and in a batch.
    let alone = embedder
        .embed(&["cat".to_string()], TextKind::Document)
        .expect("embeds");
    let mixed = embedder
        .embed(
            &[
                "cat".to_string(),
                "a much longer sentence about the quarterly revenue of a company".to_string(),
            ],
            TextKind::Document,
        )
        .expect("embeds");
    assert!(cosine(&alone[0], &mixed[0]) > 0.999);
    // The bulk mode (arena session) changes memory and speed, never the vectors.
    embedder.set_bulk(true).expect("bulk session");
    let bulk = embedder.embed(&texts, TextKind::Document).expect("embeds");
    embedder.set_bulk(false).expect("lean session again");
    let lean = embedder.embed(&texts, TextKind::Document).expect("embeds");
    for ((before, during), after) in vectors.iter().zip(&bulk).zip(&lean) {
        assert!(cosine(before, during) > 0.9999);
        assert!(cosine(before, after) > 0.9999);
    }
}

/// The installed model's file and the vectors of `texts` with the graph loaded as `graph`.
fn model_bytes_and_vectors(data: &Path, graph: Graph, texts: &[&str]) -> (Vec<u8>, Vec<Vec<f32>>) {
    use quire::embed::{Embedder, TextKind};
    let model = ModelDir::open(&data.join("models/minilm")).expect("model folder");
    let library = data.join("lib/libonnxruntime.so");
    let texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    let bytes = std::fs::read(model.dir.join("model.onnx")).expect("model bytes");
    let vectors = OnnxEmbedder::open_graph(&library, &model, graph)
        .expect("loads")
        .embed(&texts, TextKind::Document)
        .expect("embeds");
    (bytes, vectors)
}

#[test]
fn gathering_before_dequantizing_changes_no_vector() {
    let Some(data) = model_data() else { return };
    let texts = [
        "cat",
        "The quarterly revenue of the company grew.",
        "Kittens purr and sleep all afternoon on the sofa.",
    ];
    // MiniLM int8 has the pattern (token and position tables); the result has it no more.
    let (bytes, rewritten) = model_bytes_and_vectors(&data, Graph::Int8Table, &texts);
    let once = quire::embed::gather_before_dequantize(&bytes).expect("the pattern is found");
    assert!(quire::embed::gather_before_dequantize(&once).is_none());
    let (_, as_written) = model_bytes_and_vectors(&data, Graph::AsWritten, &texts);
    for (a, b) in rewritten.iter().zip(&as_written) {
        let largest = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0_f32, f32::max);
        assert!(largest < 1e-5, "components differ by {largest}");
    }
}

#[test]
fn integer_matmuls_keep_every_vector_close_to_the_float_graph() {
    let Some(data) = model_data() else { return };
    let texts = [
        "cat",
        "The quarterly revenue of the company grew.",
        "Kittens purr and sleep all afternoon on the sofa.",
        "- [ ] call the plumber about the leaking tap 📅 2026-12-03 #home",
    ];
    // All 36 weight MatMuls of MiniLM's six layers (Q, K, V, output, two feed-forward) match;
    // the attention MatMuls (two activations) do not.
    let (bytes, float) = model_bytes_and_vectors(&data, Graph::Int8Table, &texts);
    let integer = quire::embed::integer_matmuls(&bytes).expect("the pattern is found");
    assert!(quire::embed::integer_matmuls(&integer).is_none());
    let text = String::from_utf8_lossy(&integer);
    assert_eq!(text.matches("MatMulInteger").count(), 36);
    let (_, int8) = model_bytes_and_vectors(&data, Graph::Int8MatMul, &texts);
    for (a, b) in float.iter().zip(&int8) {
        // Only the activations' rounding to 8 bits differs: the vectors point the same way.
        assert!(cosine(a, b) > 0.99, "cosine {}", cosine(a, b));
    }
    // And they still tell a cat from revenue.
    assert!(cosine(&int8[0], &int8[2]) > cosine(&int8[0], &int8[1]));
}

#[test]
fn the_service_resolves_the_installed_model() {
    let Some(data) = model_data() else { return };
    let sources = quire::embed::ModelSources {
        enabled: true,
        model_dir: None,
        onnxruntime: None,
        reranker_dir: None,
        ort_dylib_path: None,
        data_dir: Some(data),
    };
    let resolution = quire::embed::resolve(&sources);
    let service: EmbedService = resolution.start().expect("starts");
    let query = service.embed_query("small cat").expect("query");
    let docs = service
        .embed_documents(vec!["a kitten sleeps".into(), "tax revenue rose".into()])
        .expect("documents");
    assert!(cosine(&query, &docs[0]) > cosine(&query, &docs[1]));
}

/// The generated tiny cross-encoder (tests/semantic/make_tiny_cross_encoder.py writes it into
/// target/tiny-cross-encoder), or `None` after saying why the test skips.
fn tiny_cross_encoder() -> Option<PathBuf> {
    let dir = std::env::var_os("QUIRE_TEST_CROSS_ENCODER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tiny-cross-encoder")
        });
    if dir.join("quire-model.json").is_file() {
        return Some(dir);
    }
    if std::env::var("QUIRE_REQUIRE_MODEL").as_deref() == Ok("1") {
        panic!(
            "QUIRE_REQUIRE_MODEL=1 but no cross-encoder in {}",
            dir.display()
        );
    }
    eprintln!(
        "SKIP: no tiny cross-encoder in {} (tests/semantic/make_tiny_cross_encoder.py makes it)",
        dir.display()
    );
    None
}

fn model_sources(data: PathBuf, reranker_dir: Option<PathBuf>) -> quire::embed::ModelSources {
    quire::embed::ModelSources {
        enabled: true,
        model_dir: None,
        onnxruntime: None,
        reranker_dir,
        ort_dylib_path: None,
        data_dir: Some(data),
    }
}

#[test]
fn a_generated_cross_encoder_runs_through_the_reranker() {
    // Its weights are random: this proves the plumbing (pair encoding, shapes, batching), not
    // ranking quality.
    let Some(data) = model_data() else { return };
    let Some(cross) = tiny_cross_encoder() else {
        return;
    };
    let model = ModelDir::open(&cross).expect("cross-encoder folder");
    let mut reranker =
        quire::embed::OnnxReranker::open(&data.join("lib/libonnxruntime.so"), &model)
            .expect("loads");
    use quire::embed::Reranker;
    let passages: Vec<String> = [
        "a kitten sleeps",
        "tax revenue rose sharply this quarter",
        "x",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let scores = reranker.score("small cat", &passages).expect("scores");
    assert_eq!(scores.len(), 3);
    assert!(scores.iter().all(|s| s.is_finite()));
    assert!(scores[0] != scores[1] || scores[1] != scores[2]);
    // Deterministic, and each pair is scored on its own (batch-independent).
    let alone = reranker.score("small cat", &passages[..1]).expect("scores");
    assert!((alone[0] - scores[0]).abs() < 1e-4);
    // The two segments are told apart (token type ids reach the model).
    let swapped = reranker
        .score("a kitten sleeps", &["small cat".to_string()])
        .expect("scores");
    assert!((swapped[0] - scores[0]).abs() > 1e-6);
    // An embedder folder is refused as a reranker, and the reverse.
    let minilm = ModelDir::open(&data.join("models/minilm")).expect("model");
    assert!(
        quire::embed::OnnxReranker::open(&data.join("lib/libonnxruntime.so"), &minilm).is_err()
    );
    assert!(OnnxEmbedder::open(&data.join("lib/libonnxruntime.so"), &model).is_err());
}

/// A small vault where the right note uses other words than the query.
const VAULT: &[(&str, &str)] = &[
    (
        "Pets/Cat care.md",
        "# Looking after the kitten\nFeed her twice a day and brush her fur; she purrs when she is happy.\n",
    ),
    (
        "Work/Quarterly report.md",
        "# Q3 results\nRevenue grew eight percent and operating costs fell.\n",
    ),
    (
        "Garden/Vegetables.md",
        "# Vegetable beds\nTomatoes, beans and courgettes need water every morning.\n",
    ),
    (
        "Travel/Lisbon.md",
        "# Trip to Lisbon\nTrams, custard tarts and the view from the castle.\n",
    ),
];

#[test]
fn hybrid_search_finds_notes_by_meaning() {
    let Some(data) = model_data() else { return };
    let vault = crate::support::TestVault::with_notes(VAULT);
    let ops = &vault.ops;
    let service = quire::embed::resolve(&model_sources(data.clone(), None))
        .start()
        .expect("starts");
    ops.enable_semantic(quire::ops::SemanticSearch::new(service, false))
        .expect("enabled");
    let pass = ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(pass.counts.pending(), 0);
    let run = |ops: &quire::ops::Ops, query: &str, mode| {
        ops.search(
            &quire::ops::Context::owner(),
            quire::ops::SearchNotes {
                query: query.into(),
                mode,
                limit: Some(4),
                ..quire::ops::SearchNotes::default()
            },
        )
        .expect("search")
    };
    use quire::ops::SearchMode;
    // No note contains "pet" or "feline": keyword search cannot find the cat note.
    assert!(
        run(ops, "feline pet", SearchMode::Keyword)
            .results
            .is_empty()
    );
    let semantic = run(ops, "feline pet", SearchMode::Semantic);
    assert_eq!(semantic.search_mode, "semantic");
    assert_eq!(semantic.results[0].path, "Pets/Cat care.md");
    let hybrid = run(ops, "company finances", SearchMode::Hybrid);
    assert_eq!(hybrid.search_mode, "hybrid");
    assert!(!hybrid.reranked);
    assert_eq!(hybrid.results[0].path, "Work/Quarterly report.md");
    let auto = run(ops, "watering tomatoes", SearchMode::Auto);
    assert_eq!(auto.search_mode, "hybrid");
    assert_eq!(auto.results[0].path, "Garden/Vegetables.md");

    // With the tiny cross-encoder (random scores) the same candidates come back, reranked.
    let Some(cross) = tiny_cross_encoder() else {
        return;
    };
    let service = quire::embed::resolve(&model_sources(data, Some(cross)))
        .start()
        .expect("starts");
    assert!(service.has_reranker());
    ops.enable_semantic(quire::ops::SemanticSearch::new(service, true))
        .expect("enabled");
    let reranked = run(ops, "company finances", SearchMode::Hybrid);
    assert!(reranked.reranked);
    let set = |found: &quire::ops::SearchResults| {
        let mut paths: Vec<String> = found.results.iter().map(|h| h.path.clone()).collect();
        paths.sort();
        paths
    };
    assert_eq!(set(&reranked), set(&hybrid));
}
