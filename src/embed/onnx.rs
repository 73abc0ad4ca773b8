//! ONNX Runtime sessions: loading the shared library once per process, and the embedder and
//! cross-encoder that run a model folder's `model.onnx` on tokens from its `tokenizer.json`.
//!
//! The library is loaded with `ort::init_from` (never downloaded, never linked), so a missing or
//! too old library is an error value the caller turns into keyword search, not a crash. This is
//! the only file that knows `ort` and `tokenizers`.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::session::Session;
use ort::value::Tensor;
use tokenizers::{
    EncodeInput, Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams,
};

use super::manifest::{MODEL_FILE, ModelDir, ModelKind, Pooling, TOKENIZER_FILE};
use super::{EmbedError, Embedder, Reranker, TextKind};

/// The process's ONNX Runtime environment: ort allows one, and loads the library only once.
static ENVIRONMENT: OnceLock<Mutex<Option<Result<Loaded, String>>>> = OnceLock::new();

#[derive(Clone)]
struct Loaded {
    environment: ort::environment::Environment,
    path: PathBuf,
}

/// Loads ONNX Runtime from `library` (once per process; later calls reuse the first library and
/// fail the same way the first call failed). Returns the version when the library names one.
pub fn load_runtime(library: &Path) -> Result<String, EmbedError> {
    loaded(library).map(|_| ort_version())
}

/// Set once the process has begun to exit; see `runtime_log`.
static EXITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that the process is about to exit (a stdio client went away, a signal arrived).
pub fn process_exiting() {
    EXITING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Ends the process at once with `code` when ONNX Runtime was ever touched, without running the
/// C++ static destructors `exit` runs: a model still loading on another thread keeps calling
/// into the runtime while `exit` tears it down, and the runtime then aborts ("cpuinfo_get_cores_count
/// called before cpuinfo is initialized", SIGABRT) instead of the clean exit a client that
/// leaves early must get. Flushes stdout and stderr first. Returns when the runtime was never used.
pub fn exit_if_runtime_touched(code: i32) {
    if ENVIRONMENT.get().is_none() {
        return;
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[allow(
        unsafe_code,
        reason = "the standard library has no exit that skips atexit handlers"
    )]
    // SAFETY: `_exit` ends the process immediately and never returns; nothing of ours runs after
    // it, and the index and the vault are crash-safe by design (WAL, atomic renames).
    unsafe {
        libc::_exit(code)
    }
}

/// Whether `process_exiting` was called: work cut short then is not a failure to report.
pub fn is_exiting() -> bool {
    EXITING.load(std::sync::atomic::Ordering::Relaxed)
}

/// ONNX Runtime's own log lines, through `tracing` at their level instead of raw coloured lines
/// on stderr. Once the process is exiting they are dropped: a model still loading then fails
/// with errors such as "GetElementType is not implemented", which say nothing about the vault
/// and alarm whoever reads the log.
fn runtime_log(
    level: ort::logging::LogLevel,
    category: &str,
    _id: &str,
    location: &str,
    message: &str,
) {
    if is_exiting() {
        return;
    }
    // One level down from ONNX Runtime's own: its warnings are about the host (no GPU, no
    // place for a telemetry id under the sandbox), and Quire reports a failed load or run with
    // its own error, which names what the user can do.
    use ort::logging::LogLevel;
    match level {
        LogLevel::Verbose | LogLevel::Info => {
            tracing::trace!(target: "onnxruntime", category, location, "{message}")
        }
        LogLevel::Warning => {
            tracing::debug!(target: "onnxruntime", category, location, "{message}")
        }
        LogLevel::Error | LogLevel::Fatal => {
            tracing::warn!(target: "onnxruntime", category, location, "{message}")
        }
    }
}

fn loaded(library: &Path) -> Result<Loaded, EmbedError> {
    let cell = ENVIRONMENT.get_or_init(|| Mutex::new(None));
    let mut state = cell.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if state.is_none() {
        // A missing file is not remembered: the library may be installed while Quire runs.
        if !library.is_file() {
            return Err(EmbedError::Runtime(format!(
                "{} does not exist",
                library.display()
            )));
        }
        return_large_buffers();
        let outcome = {
            ort::init_from(library)
                .map_err(|error| error.to_string())
                .and_then(|builder| {
                    builder
                        .with_name("quire")
                        .with_telemetry(false)
                        .with_logger(std::sync::Arc::new(runtime_log))
                        .build()
                        .map_err(|error| error.to_string())
                })
                .map(|environment| Loaded {
                    environment,
                    path: library.to_path_buf(),
                })
        };
        *state = Some(outcome);
    }
    match state.as_ref() {
        Some(Ok(loaded)) if loaded.path == library => Ok(loaded.clone()),
        Some(Ok(loaded)) => {
            tracing::warn!(
                wanted = %library.display(),
                using = %loaded.path.display(),
                "ONNX Runtime is loaded once per process; keeping the first library"
            );
            Ok(loaded.clone())
        }
        Some(Err(message)) => Err(EmbedError::Runtime(message.clone())),
        None => Err(EmbedError::Runtime("ONNX Runtime was not loaded".into())),
    }
}

/// Makes glibc serve allocations of 128 KiB and more with their own mappings, which `free` hands
/// back to the system. Inference allocates and frees many such buffers (activations, weights
/// cast to float) on several threads; with glibc's adaptive threshold they end up in per-thread
/// heaps that never shrink (an idle server kept about 250 MB instead of about 80 MB in a
/// measurement with the release build, level-1 optimisation, after embedding the example vault).
/// `serve` sets it at start too: reading a 50 MiB attachment otherwise raises the adaptive
/// threshold, and each blocking thread's heap kept about 10 MB after such reads.
pub fn return_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code, reason = "glibc's mallopt has no safe wrapper")]
    // SAFETY: `mallopt` only changes glibc's allocation policy for later allocations; it takes
    // two integers, touches no memory of ours, and is safe to call while other threads allocate.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn ort_version() -> String {
    // "ORT Build Info: git-branch=rel-1.32.0, ..." names the version; keep it short.
    let info = ort::info();
    info.split(',')
        .find_map(|part| part.trim().strip_prefix("ORT Build Info: git-branch=rel-"))
        .map_or_else(
            || "loads".to_string(),
            |version| format!("version {version}"),
        )
}

/// Threads one ONNX session may use: the machine's cores, at most four (more buys little for
/// small models and starves the rest of the server).
fn session_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |cores| cores.get())
        .clamp(1, 4)
}

/// How a session holds its working memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Memory {
    /// Buffers go back to the system after each run: an idle server stays small.
    Lean,
    /// ONNX Runtime's CPU arena keeps buffers for the next run: a bulk pass embeds about twice
    /// as fast (no fresh pages to fault in for every batch) for about 65 MB more at its peak,
    /// all returned when the session is dropped. Memory patterns stay off: they keep a plan per
    /// input shape, and every batch length is a new shape (about 120 MB more, and slower).
    Arena,
}

/// The graph Quire loads an embedding model with. Int8 arithmetic embeds MiniLM 1.3x faster
/// than fp32 and holds 27 MB less, with nDCG@10 within 0.003 on both labelled sets of
/// `cargo bench --bench semantic` (docs/PERFORMANCE.md). Vectors stored by the fp32 graph are
/// kept (`ModelDir::identity` does not name the arithmetic): each is within a cosine of 0.995
/// of what this graph makes of the same text (`cargo bench --bench embed`), and re-embedding a
/// large vault on upgrade would leave it on keyword search for many minutes.
const DEFAULT_GRAPH: Graph = Graph::Int8MatMul;

/// The graph a reranker is loaded with: its logits are cut at a relevance floor, and int8
/// arithmetic has not been measured against one, so it keeps fp32 arithmetic.
const RERANKER_GRAPH: Graph = Graph::Int8Table;

/// Which of `graph.rs`'s rewrites the model's graph is loaded with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Graph {
    /// The file as it is.
    AsWritten,
    /// The token table kept in int8 (`gather_before_dequantize`); fp32 arithmetic.
    Int8Table,
    /// Also int8 arithmetic in every weight `MatMul` (`integer_matmuls`).
    Int8MatMul,
}

impl Graph {
    /// The model bytes this choice loads, `None` for the bytes as they are.
    fn rewrite(self, bytes: &[u8]) -> Option<Vec<u8>> {
        match self {
            Graph::AsWritten => None,
            Graph::Int8Table => super::graph::gather_before_dequantize(bytes),
            Graph::Int8MatMul => {
                let table = super::graph::gather_before_dequantize(bytes);
                if !integer_products_are_exact() {
                    return table;
                }
                let source = table.as_deref().unwrap_or(bytes);
                super::graph::integer_matmuls(source).or(table)
            }
        }
    }
}

/// Whether this CPU gives ONNX Runtime an exact `u8 × s8` integer product. Without VNNI, x86's
/// fast path (`vpmaddubsw`) saturates pairs of products at 16 bits, which full-range activations
/// and weights can reach; such CPUs keep fp32 arithmetic rather than risk worse vectors that
/// were never measured. ARM's dot-product instructions accumulate in 32 bits.
fn integer_products_are_exact() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni")
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

fn open_session(
    library: &Path,
    model: &ModelDir,
    memory: Memory,
    graph: Graph,
) -> Result<Session, EmbedError> {
    let loaded = loaded(library)?;
    let path = model.dir.join(MODEL_FILE);
    let failed =
        |error: String| EmbedError::Model(format!("cannot load {}: {error}", path.display()));
    let arena = memory == Memory::Arena;
    // Lean: without the CPU arena, a batch's buffers are returned after the run instead of being
    // kept at their peak for the life of the process; with
    // `return_large_buffers` and the token table kept in int8 (`graph.rs`), an idle server with
    // int8 MiniLM loaded holds about 120 MB.
    // ONNX Runtime's full graph optimisations stay on: at level 1 without constant folding the
    // process needed about 60 MB less, but every run cast all int8 weights to float again and a
    // query took about 85 ms instead of 5 ms (measured with benches/semantic.rs, docs/PERFORMANCE.md).
    let mut builder = Session::builder(&loaded.environment)
        .map_err(|error| failed(error.to_string()))?
        .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(arena).build()])
        .map_err(|error| failed(error.to_string()))?
        .with_memory_pattern(false)
        .map_err(|error| failed(error.to_string()))?
        .with_intra_threads(session_threads())
        .map_err(|error| failed(error.to_string()))?;
    let bytes = std::fs::read(&path).map_err(|error| failed(error.to_string()))?;
    let rewritten = graph.rewrite(&bytes);
    builder
        .commit_from_memory(rewritten.as_deref().unwrap_or(&bytes))
        .map_err(|error| failed(error.to_string()))
}

/// The model's tokenizer, padding each batch to its longest input and truncating at the
/// manifest's limit (shipped tokenizers often pad every input to a fixed length, which wastes
/// most of the compute on short chunks).
fn open_tokenizer(model: &ModelDir) -> Result<Tokenizer, EmbedError> {
    let path = model.dir.join(TOKENIZER_FILE);
    let mut tokenizer = Tokenizer::from_file(&path)
        .map_err(|error| EmbedError::Model(format!("cannot read {}: {error}", path.display())))?;
    let mut padding = tokenizer.get_padding().cloned().unwrap_or_default();
    padding.strategy = PaddingStrategy::BatchLongest;
    let padding: PaddingParams = padding;
    tokenizer.with_padding(Some(padding));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: model.manifest.max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|error| {
            EmbedError::Model(format!("{}: cannot truncate: {error}", path.display()))
        })?;
    Ok(tokenizer)
}

/// A model run's first output (shape and values) and the attention mask it was fed.
struct RunOutput {
    shape: Vec<usize>,
    data: Vec<f32>,
    mask: Vec<i64>,
}

/// The three BERT inputs as [batch, length] tensors, fed by the names the graph declares.
fn run_encodings(session: &mut Session, encodings: &[Encoding]) -> Result<RunOutput, EmbedError> {
    let batch = encodings.len();
    let length = encodings.first().map_or(0, |e| e.get_ids().len());
    let mut ids = Vec::with_capacity(batch * length);
    let mut mask = Vec::with_capacity(batch * length);
    let mut types = Vec::with_capacity(batch * length);
    for encoding in encodings {
        ids.extend(encoding.get_ids().iter().map(|&id| i64::from(id)));
        mask.extend(encoding.get_attention_mask().iter().map(|&m| i64::from(m)));
        types.extend(encoding.get_type_ids().iter().map(|&t| i64::from(t)));
    }
    let shape = [batch, length];
    let failed = |error: ort::Error| EmbedError::Inference(error.to_string());
    let wanted: Vec<String> = session
        .inputs()
        .iter()
        .map(|input| input.name().to_string())
        .collect();
    let mut inputs: Vec<(String, ort::session::SessionInputValue<'_>)> = Vec::new();
    for name in wanted {
        let data = match name.as_str() {
            "input_ids" => ids.clone(),
            "attention_mask" => mask.clone(),
            "token_type_ids" => types.clone(),
            other => {
                return Err(EmbedError::Model(format!(
                    "the model wants an input named {other:?}; Quire feeds input_ids, attention_mask and token_type_ids"
                )));
            }
        };
        let tensor = Tensor::from_array((shape, data)).map_err(failed)?;
        inputs.push((name, tensor.into()));
    }
    let outputs = session.run(inputs).map_err(failed)?;
    let first = outputs
        .values()
        .next()
        .ok_or_else(|| EmbedError::Inference("the model has no output".into()))?;
    let (out_shape, data) = first.try_extract_tensor::<f32>().map_err(failed)?;
    let out_shape: Vec<usize> = out_shape.iter().map(|&d| d.max(0) as usize).collect();
    Ok(RunOutput {
        shape: out_shape,
        data: data.to_vec(),
        mask,
    })
}

/// A sentence-embedding model on ONNX Runtime.
pub struct OnnxEmbedder {
    session: Session,
    memory: Memory,
    graph: Graph,
    tokenizer: Tokenizer,
    model: ModelDir,
    library: PathBuf,
}

impl OnnxEmbedder {
    pub fn open(library: &Path, model: &ModelDir) -> Result<OnnxEmbedder, EmbedError> {
        Self::open_graph(library, model, DEFAULT_GRAPH)
    }

    /// Loads the graph with the given rewrites: for checking what each changes (memory, speed,
    /// the vectors) against the graph as written.
    pub fn open_graph(
        library: &Path,
        model: &ModelDir,
        graph: Graph,
    ) -> Result<OnnxEmbedder, EmbedError> {
        if model.manifest.kind != ModelKind::Embedder {
            return Err(EmbedError::Model(format!(
                "{} is a cross-encoder, not an embedding model",
                model.dir.display()
            )));
        }
        Ok(OnnxEmbedder {
            tokenizer: open_tokenizer(model)?,
            session: open_session(library, model, Memory::Lean, graph)?,
            memory: Memory::Lean,
            graph,
            model: model.clone(),
            library: library.to_path_buf(),
        })
    }
}

impl Embedder for OnnxEmbedder {
    fn dimensions(&self) -> usize {
        self.model.manifest.dimensions
    }

    fn set_bulk(&mut self, bulk: bool) -> Result<(), EmbedError> {
        let memory = if bulk { Memory::Arena } else { Memory::Lean };
        if memory != self.memory {
            // The new session is built before the old one goes, so a failure leaves a working one.
            self.session = open_session(&self.library, &self.model, memory, self.graph)?;
            self.memory = memory;
        }
        Ok(())
    }

    fn embed(&mut self, texts: &[String], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let prefix = match kind {
            TextKind::Query => &self.model.manifest.query_prefix,
            TextKind::Document => &self.model.manifest.document_prefix,
        };
        let inputs: Vec<EncodeInput<'_>> = texts
            .iter()
            .map(|text| EncodeInput::from(format!("{prefix}{text}")))
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|error| EmbedError::Inference(format!("cannot tokenize: {error}")))?;
        let RunOutput { shape, data, mask } = run_encodings(&mut self.session, &encodings)?;
        let dims = self.model.manifest.dimensions;
        let batch = texts.len();
        let vectors = match shape.as_slice() {
            // Token vectors: pool them.
            [b, length, hidden] if *b == batch && *hidden == dims => (0..batch)
                .map(|row| {
                    pool(
                        &data[row * length * hidden..(row + 1) * length * hidden],
                        &mask[row * length..(row + 1) * length],
                        *hidden,
                        self.model.manifest.pooling,
                    )
                })
                .collect::<Vec<_>>(),
            // Already pooled (a `sentence_embedding` output).
            [b, hidden] if *b == batch && *hidden == dims => {
                data.chunks(dims).map(<[f32]>::to_vec).collect::<Vec<_>>()
            }
            other => {
                return Err(EmbedError::Model(format!(
                    "the model's first output has shape {other:?}; expected [{batch}, tokens, {dims}] or [{batch}, {dims}] (check \"dimensions\" in the manifest)"
                )));
            }
        };
        Ok(vectors
            .into_iter()
            .map(|mut vector| {
                if self.model.manifest.normalize {
                    normalize(&mut vector);
                }
                vector
            })
            .collect())
    }
}

fn pool(tokens: &[f32], mask: &[i64], hidden: usize, pooling: Pooling) -> Vec<f32> {
    match pooling {
        Pooling::Cls => tokens[..hidden].to_vec(),
        Pooling::Mean => {
            let mut sum = vec![0f32; hidden];
            let mut count = 0f32;
            for (position, &on) in mask.iter().enumerate() {
                if on == 0 {
                    continue;
                }
                count += 1.0;
                let token = &tokens[position * hidden..(position + 1) * hidden];
                for (total, value) in sum.iter_mut().zip(token) {
                    *total += value;
                }
            }
            if count > 0.0 {
                for total in &mut sum {
                    *total /= count;
                }
            }
            sum
        }
    }
}

/// Scales to unit length (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        for value in vector {
            *value /= norm;
        }
    }
}

/// A cross-encoder (query, passage) -> relevance model on ONNX Runtime.
pub struct OnnxReranker {
    session: Session,
    tokenizer: Tokenizer,
}

impl OnnxReranker {
    pub fn open(library: &Path, model: &ModelDir) -> Result<OnnxReranker, EmbedError> {
        if model.manifest.kind != ModelKind::CrossEncoder {
            return Err(EmbedError::Model(format!(
                "{} is not a cross-encoder (set \"kind\": \"cross-encoder\" in its {})",
                model.dir.display(),
                super::manifest::MANIFEST_FILE
            )));
        }
        Ok(OnnxReranker {
            tokenizer: open_tokenizer(model)?,
            session: open_session(library, model, Memory::Lean, RERANKER_GRAPH)?,
        })
    }
}

impl Reranker for OnnxReranker {
    fn score(&mut self, query: &str, passages: &[String]) -> Result<Vec<f32>, EmbedError> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        let inputs: Vec<EncodeInput<'_>> = passages
            .iter()
            .map(|passage| EncodeInput::from((query.to_string(), passage.clone())))
            .collect();
        let encodings = self
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|error| EmbedError::Inference(format!("cannot tokenize: {error}")))?;
        let RunOutput { shape, data, .. } = run_encodings(&mut self.session, &encodings)?;
        let batch = passages.len();
        // Logits are [batch] or [batch, labels]; the first label is the relevance score.
        let per_row = match shape.as_slice() {
            [b] if *b == batch => 1,
            [b, labels] if *b == batch && *labels >= 1 => *labels,
            other => {
                return Err(EmbedError::Model(format!(
                    "the cross-encoder's output has shape {other:?}; expected [{batch}] or [{batch}, labels]"
                )));
            }
        };
        Ok(data.chunks(per_row).map(|row| row[0]).collect())
    }
}
