//! `quire pdfium install`: the pdfium library that renders PDF pages as images (`vault_read_file`
//! with `raw: true`), in Quire's data directory. Needs no configuration and no vault.

use std::path::Path;

use crate::files::pdf::pdfium;

/// Installs pdfium from `wheel` (a pypdfium2 wheel, a folder holding `libpdfium.so`, or the
/// library itself), else downloads the pinned pypdfium2 wheel from PyPI and checks its sha256.
pub fn install(wheel: Option<&Path>, data_dir: Option<&Path>) -> anyhow::Result<String> {
    let data_dir = super::model::chosen_data_dir(data_dir)?;
    let report = match wheel {
        Some(source) => pdfium::install(source, &data_dir)?,
        None => {
            let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
            pdfium::download_and_install(&data_dir, &data_dir.join("downloads"), progress)?
        }
    };
    Ok(report.lines.join("\n")
        + "\n`quire serve` now renders PDF pages with it (vault_read_file with raw: true).\n")
}
