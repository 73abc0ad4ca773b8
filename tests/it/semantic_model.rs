//! Semantic search with the real all-MiniLM-L6-v2 model on ONNX Runtime: similarity sanity and
//! hybrid ranking. The model comes from `quire model install minilm --data-dir
//! target/quire-models` (tests/run does it once); without it these tests skip with a notice,
//! unless QUIRE_REQUIRE_MODEL=1 (the CI stage that installed it) makes a missing model a failure.

use std::path::PathBuf;

use quire::embed::{EmbedService, ModelDir, OnnxEmbedder, cosine};

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
}

#[test]
fn the_service_resolves_the_installed_model() {
    let Some(data) = model_data() else { return };
    let search = quire::config::SearchConfig {
        embeddings: true,
        model_dir: None,
        onnxruntime: None,
        reranker_dir: None,
        rerank: quire::config::RerankMode::Off,
        ort_dylib_path: None,
        data_dir: Some(data),
    };
    let resolution = quire::embed::resolve(&search);
    let service: EmbedService = resolution.start().expect("starts");
    let query = service.embed_query("small cat").expect("query");
    let docs = service
        .embed_documents(vec!["a kitten sleeps".into(), "tax revenue rose".into()])
        .expect("documents");
    assert!(cosine(&query, &docs[0]) > cosine(&query, &docs[1]));
}
