//! `quire model install NAME` and `quire model list`: embedding models and the ONNX Runtime
//! library in Quire's data directory. Needs no configuration and no vault.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// `quire model install NAME`: downloads the model and the library into `data_dir`, else Quire's
/// data directory.
pub fn install(name: &str, data_dir: Option<&Path>) -> anyhow::Result<String> {
    let data_dir = chosen_data_dir(data_dir)?;
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let report = crate::embed::install::install(&data_dir, name, progress)?;
    Ok(report.lines.join("\n")
        + "\n`quire serve` now uses it; `quire doctor` shows what semantic search uses.\n")
}

/// `quire model list`: the models Quire knows and which are installed in `data_dir`, else Quire's
/// data directory.
pub fn list(data_dir: Option<&Path>) -> anyhow::Result<String> {
    Ok(crate::embed::install::list(&chosen_data_dir(data_dir)?))
}

/// `--data-dir`, else `$XDG_DATA_HOME/quire` or `~/.local/share/quire`.
pub(super) fn chosen_data_dir(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    match given {
        Some(dir) => Ok(dir.to_path_buf()),
        None => crate::embed::data_dir(
            non_empty("XDG_DATA_HOME").as_deref(),
            non_empty("HOME").as_deref(),
        )
        .context("no data directory: set XDG_DATA_HOME or HOME, or pass --data-dir"),
    }
}
