//! The model folder's manifest, `quire-model.json`: what a model is (an embedder or a
//! cross-encoder), its vector size, how its token vectors are pooled, its token limit and the
//! prefixes it expects on queries and documents.
//!
//! The manifest is read once when a model is loaded; a folder without one, or with one that does
//! not parse, is refused with the file named (the caller then degrades to keyword search).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::EmbedError;

/// The manifest's file name inside a model folder.
pub const MANIFEST_FILE: &str = "quire-model.json";
/// The ONNX graph inside a model folder.
pub const MODEL_FILE: &str = "model.onnx";
/// The Hugging Face tokenizer inside a model folder.
pub const TOKENIZER_FILE: &str = "tokenizer.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// Text in, one vector out (sentence embeddings).
    #[default]
    Embedder,
    /// A (query, passage) pair in, one relevance score out.
    CrossEncoder,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The mean of the token vectors under the attention mask (MiniLM, most sentence-transformers).
    #[default]
    Mean,
    /// The first token's vector (`[CLS]`; the bge family).
    Cls,
}

/// `quire-model.json`. Unknown keys are allowed so a manifest can carry notes such as `source`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelManifest {
    pub name: String,
    #[serde(default)]
    pub kind: ModelKind,
    /// Vector size; 0 for a cross-encoder.
    #[serde(default)]
    pub dimensions: usize,
    #[serde(default)]
    pub pooling: Pooling,
    /// L2-normalise vectors (cosine similarity becomes a dot product).
    #[serde(default = "yes")]
    pub normalize: bool,
    /// Longest input in tokens; longer input is truncated.
    pub max_tokens: usize,
    /// Put in front of a search query before embedding (bge: "Represent this sentence ...").
    #[serde(default)]
    pub query_prefix: String,
    /// Put in front of every document chunk before embedding.
    #[serde(default)]
    pub document_prefix: String,
}

fn yes() -> bool {
    true
}

/// A model folder whose manifest has been read.
#[derive(Debug, Clone)]
pub struct ModelDir {
    pub dir: PathBuf,
    pub manifest: ModelManifest,
}

impl ModelDir {
    /// Reads and checks `dir`'s manifest and that the model and tokenizer files exist.
    pub fn open(dir: &Path) -> Result<ModelDir, EmbedError> {
        let manifest_path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&manifest_path).map_err(|error| {
            EmbedError::Model(format!("cannot read {}: {error}", manifest_path.display()))
        })?;
        let manifest: ModelManifest = serde_json::from_str(&text).map_err(|error| {
            EmbedError::Model(format!("{} is not valid: {error}", manifest_path.display()))
        })?;
        if manifest.kind == ModelKind::Embedder && manifest.dimensions == 0 {
            return Err(EmbedError::Model(format!(
                "{}: an embedder needs \"dimensions\" (for example 384)",
                manifest_path.display()
            )));
        }
        if manifest.max_tokens < 8 {
            return Err(EmbedError::Model(format!(
                "{}: \"max_tokens\" must be at least 8",
                manifest_path.display()
            )));
        }
        for file in [MODEL_FILE, TOKENIZER_FILE] {
            if !dir.join(file).is_file() {
                return Err(EmbedError::Model(format!(
                    "{} has no {file}",
                    dir.display()
                )));
            }
        }
        Ok(ModelDir {
            dir: dir.to_path_buf(),
            manifest,
        })
    }

    /// Identifies the vectors this model produces: stored vectors from another model are dropped.
    pub fn identity(&self) -> String {
        let size = std::fs::metadata(self.dir.join(MODEL_FILE)).map_or(0, |meta| meta.len());
        format!(
            "{}:{}:{:?}:{}:{size}",
            self.manifest.name,
            self.manifest.dimensions,
            self.manifest.pooling,
            self.manifest.document_prefix
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_nix_package_manifest() {
        // The shape nixos/packages/model-bge-small.nix writes.
        let text = r#"{"name":"bge-small-en-v1.5","dimensions":384,"pooling":"cls","normalize":true,"max_tokens":512,"source":"https://huggingface.co/BAAI/bge-small-en-v1.5"}"#;
        let manifest: ModelManifest = serde_json::from_str(text).expect("parses");
        assert_eq!(manifest.kind, ModelKind::Embedder);
        assert_eq!(manifest.pooling, Pooling::Cls);
        assert_eq!(manifest.dimensions, 384);
        assert!(manifest.query_prefix.is_empty());
    }

    #[test]
    fn a_folder_without_files_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let error = ModelDir::open(dir.path()).expect_err("no manifest");
        assert!(error.to_string().contains(MANIFEST_FILE), "{error}");
        std::fs::write(
            dir.path().join(MANIFEST_FILE),
            r#"{"name":"x","dimensions":4,"max_tokens":64}"#,
        )
        .expect("write");
        let error = ModelDir::open(dir.path()).expect_err("no model");
        assert!(error.to_string().contains(MODEL_FILE), "{error}");
    }
}
