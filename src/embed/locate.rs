//! Which ONNX Runtime library and which model folders semantic search uses, and why: the
//! configuration first (`search.onnxruntime`, `search.model_dir`, `search.reranker_dir`), then
//! `ORT_DYLIB_PATH`, then what `quire model install` put into the data directory.
//!
//! What to look at arrives as `ModelSources`, which `config` lowers `[search]` into, so this module
//! never reads the configuration itself. Nothing is loaded here; `quire doctor` prints the reasons
//! and `serve` starts the worker from the result.

use std::path::{Path, PathBuf};

use super::install::{DEFAULT_MODEL, LIBRARY_FILE};
use super::{
    EmbedError, EmbedService, Embedder, ModelDir, ModelInfo, ModelKind, OnnxEmbedder, OnnxReranker,
    Reranker,
};
use crate::native::{Located, named_library};

/// Quire's data directory: `$XDG_DATA_HOME/quire`, else `~/.local/share/quire`.
pub fn data_dir(xdg_data_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    xdg_data_home
        .map(|dir| dir.join("quire"))
        .or_else(|| home.map(|home| home.join(".local/share/quire")))
}

/// Where to look for the ONNX Runtime library and the models. `config` lowers `[search]` and the
/// environment into this, so this module reads no configuration of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSources {
    /// False (`search.embeddings = false`) turns semantic search off; keyword search always works.
    pub enabled: bool,
    /// `search.model_dir`: an embedding model folder.
    pub model_dir: Option<PathBuf>,
    /// `search.onnxruntime`: the ONNX Runtime shared library (`libonnxruntime.so`).
    pub onnxruntime: Option<PathBuf>,
    /// `search.reranker_dir`: a cross-encoder model folder for reranking.
    pub reranker_dir: Option<PathBuf>,
    /// `ORT_DYLIB_PATH` from the environment, used when `onnxruntime` is not set.
    pub ort_dylib_path: Option<PathBuf>,
    /// Where `quire model install` puts models and the library (`data_dir`).
    pub data_dir: Option<PathBuf>,
}

impl ModelSources {
    /// Neither a library nor a model is configured or installed: semantic search was never set
    /// up, which is the default state rather than a fault.
    pub fn never_set_up(&self, resolution: &Resolution) -> bool {
        self.enabled
            && self.model_dir.is_none()
            && self.onnxruntime.is_none()
            && self.ort_dylib_path.is_none()
            && resolution.library.is_err()
            && resolution.model.is_err()
    }
}

/// The outcome of looking for the library and models; an `Err` says why there is none.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub library: Result<Located<PathBuf>, String>,
    pub model: Result<Located<ModelDir>, String>,
    /// `None` when no reranker is configured.
    pub reranker: Option<Result<Located<ModelDir>, String>>,
}

/// Looks for the library and the models as configured; reads manifests, loads nothing.
pub fn resolve(search: &ModelSources) -> Resolution {
    if !search.enabled {
        let off = "semantic search is off (search.embeddings = false)".to_string();
        return Resolution {
            library: Err(off.clone()),
            model: Err(off),
            reranker: None,
        };
    }
    Resolution {
        library: library(search),
        model: model(search),
        reranker: search.reranker_dir.as_ref().map(|dir| {
            ModelDir::open(dir)
                .map_err(|error| error.to_string())
                .and_then(|model| match model.manifest.kind {
                    ModelKind::CrossEncoder => Ok(Located {
                        value: model,
                        why: "search.reranker_dir".into(),
                    }),
                    ModelKind::Embedder => Err(format!(
                        "search.reranker_dir: {} is an embedding model, not a cross-encoder",
                        dir.display()
                    )),
                })
        }),
    }
}

fn library(search: &ModelSources) -> Result<Located<PathBuf>, String> {
    if let Some(path) = &search.onnxruntime {
        return named_library(path, "search.onnxruntime");
    }
    if let Some(path) = &search.ort_dylib_path {
        return named_library(path, "ORT_DYLIB_PATH");
    }
    match &search.data_dir {
        Some(data) => {
            let path = data.join("lib").join(LIBRARY_FILE);
            if path.is_file() {
                Ok(Located {
                    value: path,
                    why: "the data directory, where `quire model install` puts it".into(),
                })
            } else {
                Err(format!(
                    "no ONNX Runtime library: none in {} (run `quire model install {DEFAULT_MODEL}`), and neither search.onnxruntime nor ORT_DYLIB_PATH is set",
                    data.join("lib").display()
                ))
            }
        }
        None => Err(
            "no ONNX Runtime library: set search.onnxruntime or ORT_DYLIB_PATH (no data directory: HOME is not set)".into(),
        ),
    }
}

fn model(search: &ModelSources) -> Result<Located<ModelDir>, String> {
    if let Some(dir) = &search.model_dir {
        return ModelDir::open(dir)
            .map_err(|error| format!("search.model_dir: {error}"))
            .and_then(|model| embedder_only(model, "search.model_dir"));
    }
    let Some(data) = &search.data_dir else {
        return Err("no model: set search.model_dir (no data directory: HOME is not set)".into());
    };
    let models = data.join("models");
    // The default model first, then any other installed embedder in name order.
    let mut candidates = vec![models.join(DEFAULT_MODEL)];
    if let Ok(entries) = std::fs::read_dir(&models) {
        let mut others: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_dir() && !candidates.contains(path))
            .collect();
        others.sort();
        candidates.extend(others);
    }
    for dir in candidates {
        if let Ok(model) = ModelDir::open(&dir)
            && model.manifest.kind == ModelKind::Embedder
        {
            return Ok(Located {
                why: format!("the data directory {}", dir.display()),
                value: model,
            });
        }
    }
    Err(format!(
        "no model: none installed in {} (run `quire model install {DEFAULT_MODEL}`) and search.model_dir is not set",
        models.display()
    ))
}

fn embedder_only(model: ModelDir, key: &str) -> Result<Located<ModelDir>, String> {
    match model.manifest.kind {
        ModelKind::Embedder => Ok(Located {
            value: model,
            why: key.to_string(),
        }),
        ModelKind::CrossEncoder => Err(format!(
            "{key}: {} is a cross-encoder; point search.reranker_dir at it and search.model_dir at an embedding model",
            model.dir.display()
        )),
    }
}

impl Resolution {
    /// Starts the embedding worker with the resolved library and models. A reranker that fails to
    /// load is logged and left out; search then runs without reranking.
    pub fn start(&self) -> Result<EmbedService, EmbedError> {
        let library = self
            .library
            .as_ref()
            .map_err(|why| EmbedError::Runtime(why.clone()))?
            .value
            .clone();
        let model = self
            .model
            .as_ref()
            .map_err(|why| EmbedError::Model(why.clone()))?
            .value
            .clone();
        let reranker = match &self.reranker {
            Some(Ok(found)) => Some(found.value.clone()),
            Some(Err(why)) => {
                tracing::warn!(reason = %why, "the reranker cannot be used; searching without reranking");
                None
            }
            None => None,
        };
        let info = ModelInfo {
            name: model.manifest.name.clone(),
            dimensions: model.manifest.dimensions,
            identity: model.identity(),
            max_tokens: model.manifest.max_tokens,
            reranker: reranker.as_ref().map(|r| r.manifest.name.clone()),
        };
        let mut info_for_worker = info.clone();
        let factory = Box::new(move || {
            let embedder: Box<dyn Embedder> = Box::new(OnnxEmbedder::open(&library, &model)?);
            let reranker: Option<Box<dyn Reranker>> = match reranker {
                Some(dir) => match OnnxReranker::open(&library, &dir) {
                    Ok(reranker) => Some(Box::new(reranker)),
                    Err(error) => {
                        tracing::warn!(%error, "the reranker failed to load; searching without reranking");
                        None
                    }
                },
                None => None,
            };
            Ok((embedder, reranker))
        });
        let service = EmbedService::start(info.clone(), factory)?;
        // The reranker may have failed to load inside the worker; probe it once so `info` tells
        // the truth about reranking.
        if info.reranker.is_some() && service.rerank("probe", vec!["probe".to_string()]).is_err() {
            info_for_worker.reranker = None;
            return Ok(service.with_info(info_for_worker));
        }
        Ok(service)
    }
}
