//! Text embeddings and reranking for semantic search: the `Embedder` and `Reranker` traits, ONNX
//! Runtime implementations (`onnx.rs`, the only code that knows `ort`), a deterministic fake for
//! fast tests, the worker thread that owns the sessions, model folders and their manifest, where
//! the library and models are found, and `quire model install`.
//!
//! Every failure here is a value: a missing library, a missing model or a model that fails to load
//! makes the caller fall back to keyword search with a warning, never a crash or a hang (requests
//! from search wait a bounded time). This module may use `config`, never `index`, `ops` or `mcp`.

mod fake;
mod graph;
pub mod install;
mod locate;
mod manifest;
mod onnx;

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::Duration;

pub use fake::{FakeEmbedder, FakeReranker};
pub use graph::{gather_before_dequantize, integer_matmuls};
pub use locate::{ModelSources, Resolution, data_dir, resolve};
pub use manifest::{
    MANIFEST_FILE, MODEL_FILE, ModelDir, ModelKind, ModelManifest, Pooling, TOKENIZER_FILE,
};
pub use onnx::{
    Graph, OnnxEmbedder, OnnxReranker, exit_if_runtime_touched, is_exiting, load_runtime,
    normalize, process_exiting, return_large_buffers,
};

#[derive(Debug, Clone, thiserror::Error)]
pub enum EmbedError {
    #[error("ONNX Runtime is not available: {0}")]
    Runtime(String),
    #[error("the model cannot be used: {0}")]
    Model(String),
    #[error("inference failed: {0}")]
    Inference(String),
    #[error("the embedding worker did not answer within {0:?}")]
    TimedOut(Duration),
    #[error("the embedding worker has stopped")]
    Stopped,
}

/// What a text is, for models that prefix queries and documents differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    Query,
    Document,
}

/// Turns texts into vectors of `dimensions()` floats (unit length when the model normalises).
pub trait Embedder: Send {
    fn dimensions(&self) -> usize;
    fn embed(&mut self, texts: &[String], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// A bulk pass starts (`true`) or ends: the embedder may hold more memory meanwhile to run
    /// faster, and must give it back when the pass ends.
    fn set_bulk(&mut self, bulk: bool) -> Result<(), EmbedError> {
        let _ = bulk;
        Ok(())
    }
}

/// Scores how well each passage answers the query; higher is better, on the model's own scale.
pub trait Reranker: Send {
    fn score(&mut self, query: &str, passages: &[String]) -> Result<Vec<f32>, EmbedError>;
}

/// How long a search waits for its query vector or rerank scores before answering without them.
pub const QUERY_WAIT: Duration = Duration::from_secs(10);
/// Most query texts embedded in one model run when several searches arrive together.
const QUERY_BATCH: usize = 32;

type Reply<T> = mpsc::Sender<Result<T, EmbedError>>;

enum Job {
    Embed {
        texts: Vec<String>,
        kind: TextKind,
        reply: Reply<Vec<Vec<f32>>>,
    },
    Rerank {
        query: String,
        passages: Vec<String>,
        reply: Reply<Vec<f32>>,
    },
    /// A bulk pass starts (`true`) or ends; passes may overlap, the worker counts them.
    Bulk(bool),
}

impl Job {
    /// Lower runs first: a waiting search beats background document embedding.
    fn priority(&self) -> u8 {
        match self {
            Job::Embed {
                kind: TextKind::Query,
                ..
            } => 0,
            Job::Rerank { .. } => 1,
            // In order with the documents of the pass it brackets.
            Job::Embed { .. } | Job::Bulk(_) => 2,
        }
    }
}

/// What the loaded models are, for the index and for `quire doctor`.
#[derive(Debug, Clone)]
pub struct ModelInfo {
    pub name: String,
    pub dimensions: usize,
    /// Stored vectors made by another model (or another version of it) are dropped.
    pub identity: String,
    pub max_tokens: usize,
    pub reranker: Option<String>,
}

/// A handle on the embedding worker thread, which owns the model sessions; cheap to clone. The
/// thread ends when the last handle is dropped.
#[derive(Clone)]
pub struct EmbedService {
    jobs: mpsc::Sender<Job>,
    info: ModelInfo,
}

impl std::fmt::Debug for EmbedService {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EmbedService")
            .field("model", &self.info.name)
            .finish_non_exhaustive()
    }
}

/// What a worker needs to build its sessions, on its own thread.
pub type ModelFactory =
    Box<dyn FnOnce() -> Result<(Box<dyn Embedder>, Option<Box<dyn Reranker>>), EmbedError> + Send>;

impl EmbedService {
    /// Starts the worker, which builds the sessions with `factory`; returns once they are loaded
    /// (or failed to load).
    pub fn start(info: ModelInfo, factory: ModelFactory) -> Result<EmbedService, EmbedError> {
        let (jobs, receiver) = mpsc::channel::<Job>();
        let (loaded, load_outcome) = mpsc::channel();
        let expected = info.dimensions;
        std::thread::Builder::new()
            .name("quire-embed".into())
            .spawn(move || {
                let (embedder, reranker) = match factory() {
                    Ok(models) => models,
                    Err(error) => {
                        let _ = loaded.send(Err(error));
                        return;
                    }
                };
                if embedder.dimensions() != expected {
                    let _ = loaded.send(Err(EmbedError::Model(format!(
                        "the embedder makes {} dimensions, the manifest says {expected}",
                        embedder.dimensions()
                    ))));
                    return;
                }
                let _ = loaded.send(Ok(()));
                work(receiver, embedder, reranker);
            })
            .map_err(|error| EmbedError::Runtime(format!("cannot start a thread: {error}")))?;
        load_outcome.recv().map_err(|_| {
            EmbedError::Model("the model loader stopped (it may have crashed)".into())
        })??;
        Ok(EmbedService { jobs, info })
    }

    /// A worker over in-process models (tests and the fake embedder).
    pub fn with_models(
        info: ModelInfo,
        embedder: Box<dyn Embedder>,
        reranker: Option<Box<dyn Reranker>>,
    ) -> Result<EmbedService, EmbedError> {
        Self::start(info, Box::new(move || Ok((embedder, reranker))))
    }

    fn with_info(self, info: ModelInfo) -> EmbedService {
        EmbedService { info, ..self }
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    pub fn has_reranker(&self) -> bool {
        self.info.reranker.is_some()
    }

    /// The query's vector, waiting at most `QUERY_WAIT`.
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let (reply, answer) = mpsc::channel();
        self.jobs
            .send(Job::Embed {
                texts: vec![text.to_string()],
                kind: TextKind::Query,
                reply,
            })
            .map_err(|_| EmbedError::Stopped)?;
        let mut vectors = wait(&answer, Some(QUERY_WAIT))??;
        vectors.pop().ok_or(EmbedError::Stopped)
    }

    /// Vectors for document chunks, in order; waits as long as it takes (background work).
    pub fn embed_documents(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let (reply, answer) = mpsc::channel();
        self.jobs
            .send(Job::Embed {
                texts,
                kind: TextKind::Document,
                reply,
            })
            .map_err(|_| EmbedError::Stopped)?;
        wait(&answer, None)?
    }

    /// Marks a bulk pass (the background or `quire index --embed` embedding of many chunks)
    /// until the guard is dropped.
    pub fn bulk_pass(&self) -> BulkPass {
        let _ = self.jobs.send(Job::Bulk(true));
        BulkPass {
            jobs: self.jobs.clone(),
        }
    }

    /// Cross-encoder scores for the passages, waiting at most `QUERY_WAIT`.
    pub fn rerank(&self, query: &str, passages: Vec<String>) -> Result<Vec<f32>, EmbedError> {
        let (reply, answer) = mpsc::channel();
        self.jobs
            .send(Job::Rerank {
                query: query.to_string(),
                passages,
                reply,
            })
            .map_err(|_| EmbedError::Stopped)?;
        wait(&answer, Some(QUERY_WAIT))?
    }
}

/// While alive, the worker's embedder runs in its bulk mode (see `Embedder::set_bulk`).
#[must_use = "the bulk pass ends when this guard is dropped"]
pub struct BulkPass {
    jobs: mpsc::Sender<Job>,
}

impl Drop for BulkPass {
    fn drop(&mut self) {
        let _ = self.jobs.send(Job::Bulk(false));
    }
}

fn wait<T>(answer: &mpsc::Receiver<T>, limit: Option<Duration>) -> Result<T, EmbedError> {
    match limit {
        Some(limit) => answer.recv_timeout(limit).map_err(|error| match error {
            mpsc::RecvTimeoutError::Timeout => EmbedError::TimedOut(limit),
            mpsc::RecvTimeoutError::Disconnected => EmbedError::Stopped,
        }),
        None => answer.recv().map_err(|_| EmbedError::Stopped),
    }
}

/// The worker loop: takes every queued job, runs the most urgent first, and batches the queries
/// of concurrent searches into one model run.
fn work(
    receiver: mpsc::Receiver<Job>,
    mut embedder: Box<dyn Embedder>,
    mut reranker: Option<Box<dyn Reranker>>,
) {
    let mut pending: VecDeque<Job> = VecDeque::new();
    let mut bulk_passes = 0_usize;
    loop {
        if pending.is_empty() {
            match receiver.recv() {
                Ok(job) => pending.push_back(job),
                Err(_) => return,
            }
        }
        pending.extend(receiver.try_iter());
        let Some(best) = (0..pending.len()).min_by_key(|&at| pending[at].priority()) else {
            continue;
        };
        let Some(job) = pending.remove(best) else {
            continue;
        };
        match job {
            Job::Embed {
                texts,
                kind: TextKind::Query,
                reply,
            } => {
                // Join the other waiting queries into one run.
                let mut group = vec![(texts, reply)];
                let mut count = group[0].0.len();
                let mut at = 0;
                while at < pending.len() && count < QUERY_BATCH {
                    if pending[at].priority() == 0 {
                        if let Some(Job::Embed { texts, reply, .. }) = pending.remove(at) {
                            count += texts.len();
                            group.push((texts, reply));
                        }
                    } else {
                        at += 1;
                    }
                }
                let all: Vec<String> = group.iter().flat_map(|(t, _)| t.clone()).collect();
                match embedder.embed(&all, TextKind::Query) {
                    Ok(mut vectors) => {
                        for (texts, reply) in group.into_iter().rev() {
                            let rest = vectors.split_off(vectors.len().saturating_sub(texts.len()));
                            let _ = reply.send(Ok(rest));
                        }
                    }
                    Err(error) => {
                        for (_, reply) in group {
                            let _ = reply.send(Err(error.clone()));
                        }
                    }
                }
            }
            Job::Embed { texts, kind, reply } => {
                let _ = reply.send(embedder.embed(&texts, kind));
            }
            Job::Rerank {
                query,
                passages,
                reply,
            } => {
                let outcome = match reranker.as_mut() {
                    Some(reranker) => reranker.score(&query, &passages),
                    None => Err(EmbedError::Model("no reranker is configured".into())),
                };
                let _ = reply.send(outcome);
            }
            Job::Bulk(starts) => {
                let before = bulk_passes;
                bulk_passes = if starts {
                    bulk_passes + 1
                } else {
                    bulk_passes.saturating_sub(1)
                };
                // The embedder keeps the session it had when a switch fails; only speed or
                // memory differ.
                if (before == 0) != (bulk_passes == 0)
                    && let Err(error) = embedder.set_bulk(bulk_passes > 0)
                {
                    tracing::warn!(%error, "the model could not change its memory mode");
                }
            }
        }
    }
}

/// Cosine similarity of two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm_a = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let norm_b = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm_a == 0.0 || norm_b == 0.0 {
        0.0
    } else {
        dot / (norm_a * norm_b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service() -> EmbedService {
        EmbedService::with_models(
            ModelInfo {
                name: "fake".into(),
                dimensions: 64,
                identity: "fake:64".into(),
                max_tokens: 256,
                reranker: Some("fake".into()),
            },
            Box::new(FakeEmbedder::new(64)),
            Some(Box::new(FakeReranker)),
        )
        .expect("starts")
    }

    /// Records what the worker asked of it.
    struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    impl Embedder for Recorder {
        fn dimensions(&self) -> usize {
            2
        }
        fn embed(&mut self, texts: &[String], _: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0
                .lock()
                .expect("log")
                .push(format!("embed {}", texts.len()));
            Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
        }
        fn set_bulk(&mut self, bulk: bool) -> Result<(), EmbedError> {
            self.0.lock().expect("log").push(format!("bulk {bulk}"));
            Ok(())
        }
    }

    #[test]
    fn overlapping_bulk_passes_switch_the_embedder_once_each_way() {
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let info = ModelInfo {
            name: "recorder".into(),
            dimensions: 2,
            identity: "recorder:2".into(),
            max_tokens: 8,
            reranker: None,
        };
        let service =
            EmbedService::with_models(info, Box::new(Recorder(log.clone())), None).expect("starts");
        let first = service.bulk_pass();
        let second = service.bulk_pass();
        service.embed_documents(vec!["a".into()]).expect("embedded");
        drop(first);
        service
            .embed_documents(vec!["b".into(), "c".into()])
            .expect("embedded");
        drop(second);
        // Documents queue behind the end of the pass, so this one runs after the switch back.
        service.embed_documents(vec!["d".into()]).expect("embedded");
        assert_eq!(
            *log.lock().expect("log"),
            ["bulk true", "embed 1", "embed 2", "bulk false", "embed 1"]
        );
    }

    #[test]
    fn concurrent_queries_each_get_their_own_vector() {
        let service = service();
        let texts = ["cat", "kitten", "quarterly revenue", "the cat sat"];
        let handles: Vec<_> = texts
            .iter()
            .map(|text| {
                let service = service.clone();
                let text = text.to_string();
                std::thread::spawn(move || (text.clone(), service.embed_query(&text)))
            })
            .collect();
        let mut fake = FakeEmbedder::new(64);
        for handle in handles {
            let (text, vector) = handle.join().expect("thread");
            let expected = fake
                .embed(std::slice::from_ref(&text), TextKind::Query)
                .expect("fake")
                .remove(0);
            assert_eq!(vector.expect("embedded"), expected, "{text}");
        }
    }

    #[test]
    fn documents_and_rerank_go_through_the_worker() {
        let service = service();
        let vectors = service
            .embed_documents(vec!["a".into(), "b c".into(), "d".into()])
            .expect("embedded");
        assert_eq!(vectors.len(), 3);
        assert!(vectors.iter().all(|v| v.len() == 64));
        let scores = service
            .rerank("cat", vec!["a cat".into(), "revenue".into()])
            .expect("scores");
        assert_eq!(scores.len(), 2);
        assert!(scores[0] > scores[1]);
    }

    #[test]
    fn a_failing_factory_is_an_error_not_a_hang() {
        let outcome = EmbedService::start(
            ModelInfo {
                name: "broken".into(),
                dimensions: 4,
                identity: "broken".into(),
                max_tokens: 8,
                reranker: None,
            },
            Box::new(|| Err(EmbedError::Model("no such file".into()))),
        );
        assert!(matches!(outcome, Err(EmbedError::Model(_))));
    }

    #[test]
    fn a_missing_library_is_an_error() {
        let error = load_runtime(std::path::Path::new("/nonexistent/libonnxruntime.so"))
            .expect_err("missing");
        assert!(error.to_string().contains("does not exist"), "{error}");
    }
}
