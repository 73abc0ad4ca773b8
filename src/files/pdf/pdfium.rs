//! Where the pdfium library comes from: finding it (`locate`) and putting it into Quire's data
//! directory (`install` from a local pypdfium2 wheel, a folder or the library itself;
//! `download_and_install` from PyPI, checked against the sha256 pinned here), for
//! `quire pdfium install`.
//!
//! The library is taken from pypdfium2's wheels because PyPI is reachable where Quire is built
//! and deployed and the wheels ship a self-contained `libpdfium.so` (glibc only); no Python is
//! needed at run time. It lands as `<data dir>/pdfium/libpdfium.so`, next to the model
//! directory `quire model install` fills.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::native::{self, DownloadError, Located, Wheel, named_library};

/// The library's file name, in the data directory and in any folder `install` is given.
pub const LIBRARY_FILE: &str = "libpdfium.so";
/// The environment variable that names the library, after the configuration.
pub const LIBRARY_ENV: &str = "QUIRE_PDFIUM_LIBRARY";
/// Where the library sits inside a pypdfium2 wheel.
pub const WHEEL_MEMBER: &str = "pypdfium2_raw/libpdfium.so";
/// The largest library `install` accepts (pypdfium2 5.15.2's is 8 MB): a zip entry claiming more
/// is refused before it is inflated.
const MAX_LIBRARY_BYTES: u64 = 128 * 1024 * 1024;

/// Where `install` puts the library in `data_dir`.
pub fn installed_path(data_dir: &Path) -> PathBuf {
    data_dir.join("pdfium").join(LIBRARY_FILE)
}

/// A pypdfium2 wheel on PyPI, with the size and sha256 PyPI publishes for it (from
/// `https://pypi.org/simple/pypdfium2/` as JSON, queried when the pin was made).
#[derive(Debug, Clone, Copy)]
pub struct PinnedWheel {
    /// `std::env::consts::ARCH` of the machines it is for.
    pub arch: &'static str,
    pub url: &'static str,
    pub sha256: &'static str,
    pub bytes: u64,
}

/// pypdfium2's version, and the pdfium build its library is.
pub const PYPDFIUM2_VERSION: &str = "5.15.2";
pub const PDFIUM_BUILD: u32 = 8149;

/// pypdfium2 5.15.2 (pdfium 8149) for glibc Linux. `nixos/packages/pdfium-wheel.nix` pins the
/// same files.
pub const WHEELS: &[PinnedWheel] = &[
    PinnedWheel {
        arch: "x86_64",
        url: "https://files.pythonhosted.org/packages/c8/e5/2e668bc1bc6fe22f9006694b5571a2dd2c9b874d6a21d16ee839c8f7f6ea/pypdfium2-5.15.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        sha256: "dc31aea5b0fb9fefc9b537a65f4113980b2c40798445736a7e6565bc85161e37",
        bytes: 4_020_833,
    },
    PinnedWheel {
        arch: "aarch64",
        url: "https://files.pythonhosted.org/packages/03/1f/7a18e64c50049dce8512239bcdb9f8469d0a0c352dd42ae85b6b01d143f8/pypdfium2-5.15.2-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
        sha256: "dd46e93c0c3a73f6cea8489baff6d77a5d0759dd53fbbce0aeb49c91830176fc",
        bytes: 3_887_212,
    },
];

/// Where to look for the library, in order.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// A path from the configuration.
    pub configured: Option<PathBuf>,
    /// `QUIRE_PDFIUM_LIBRARY`.
    pub env: Option<PathBuf>,
    /// Quire's data directory (`embed::data_dir`), where `install` puts the library.
    pub data_dir: Option<PathBuf>,
}

impl Sources {
    /// `configured` and `data_dir` as given, the variable from this process's environment (an
    /// empty value counts as unset).
    pub fn with_process_env(configured: Option<PathBuf>, data_dir: Option<PathBuf>) -> Sources {
        Sources {
            configured,
            env: std::env::var_os(LIBRARY_ENV)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from),
            data_dir,
        }
    }
}

/// Finds the library: the configured path, else `QUIRE_PDFIUM_LIBRARY`, else what `install` put in
/// the data directory. A path that is named but missing is an error, not a reason to look
/// further, so a typo is reported instead of silently using another library. The error says
/// where Quire looked; `render::library_missing` turns it into the `unsupported` answer.
pub fn locate(sources: &Sources) -> Result<Located<PathBuf>, String> {
    if let Some(path) = &sources.configured {
        return named_library(path, "the configuration");
    }
    if let Some(path) = &sources.env {
        return named_library(path, LIBRARY_ENV);
    }
    match &sources.data_dir {
        Some(data) => {
            let path = installed_path(data);
            if path.is_file() {
                Ok(Located {
                    value: path,
                    why: "the data directory, where `quire pdfium install` puts it".into(),
                })
            } else {
                Err(format!(
                    "none at {}, and {LIBRARY_ENV} is not set",
                    path.display()
                ))
            }
        }
        None => Err(format!(
            "{LIBRARY_ENV} is not set and there is no data directory (HOME is not set)"
        )),
    }
}

/// What the landlock sandbox must leave readable so the library can be loaded after it applies
/// (rendering loads pdfium on first use): the folder of the library `locate` finds, and the data
/// directory's `pdfium` folder when it exists, so a library `install` renames into place later
/// is readable too. Folders, not files, because a reinstall replaces the file.
pub fn sandbox_paths(sources: &Sources) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Ok(found) = locate(sources)
        && let Some(folder) = found.value.parent()
    {
        paths.push(folder.to_path_buf());
    }
    if let Some(data) = &sources.data_dir {
        let folder = data.join("pdfium");
        if folder.is_dir() && !paths.contains(&folder) {
            paths.push(folder);
        }
    }
    paths
}

/// Why the library could not be installed. `code()` is stable.
#[derive(Debug, thiserror::Error)]
pub enum PdfiumInstallError {
    #[error("{path} does not exist")]
    SourceMissing { path: PathBuf },
    #[error(
        "{source_path} holds no libpdfium.so (looked for {looked_for}); give a pypdfium2 wheel, a folder holding libpdfium.so, or the library itself"
    )]
    NotInSource {
        source_path: PathBuf,
        looked_for: String,
    },
    #[error("{path} is not a pdfium library: {reason}")]
    NotALibrary { path: PathBuf, reason: String },
    #[error(
        "{path} is a library for {found}, but this machine is {expected}; use the pypdfium2 wheel for {expected}"
    )]
    WrongArchitecture {
        path: PathBuf,
        found: String,
        expected: String,
    },
    #[error("{path}: not a readable wheel (zip): {message}")]
    Wheel { path: PathBuf, message: String },
    /// The download failed or its checksum did not match (`native::download`'s own texts).
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error(
        "there is no pinned pypdfium2 wheel for {0}; download the one for this machine and install it with `quire pdfium install --wheel FILE`"
    )]
    NoWheelForArchitecture(String),
    #[error("{path}: {message}")]
    Files { path: PathBuf, message: String },
}

impl PdfiumInstallError {
    /// The stable code a caller can branch on.
    pub fn code(&self) -> &'static str {
        match self {
            PdfiumInstallError::SourceMissing { .. } => "pdfium_source_missing",
            PdfiumInstallError::NotInSource { .. } => "pdfium_not_in_source",
            PdfiumInstallError::NotALibrary { .. } => "pdfium_not_a_library",
            PdfiumInstallError::WrongArchitecture { .. } => "pdfium_wrong_architecture",
            PdfiumInstallError::Wheel { .. } => "pdfium_wheel_unreadable",
            PdfiumInstallError::Download(DownloadError::Download { .. }) => {
                "pdfium_download_failed"
            }
            PdfiumInstallError::Download(DownloadError::Checksum { .. }) => {
                "pdfium_checksum_mismatch"
            }
            PdfiumInstallError::Download(DownloadError::Files { .. }) => "pdfium_files",
            PdfiumInstallError::NoWheelForArchitecture(_) => "pdfium_no_wheel",
            PdfiumInstallError::Files { .. } => "pdfium_files",
        }
    }
}

fn files_error(path: &Path) -> impl Fn(std::io::Error) -> PdfiumInstallError + '_ {
    move |error| PdfiumInstallError::Files {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// What an install did.
#[derive(Debug, Clone)]
pub struct InstallReport {
    /// The installed library.
    pub library: PathBuf,
    /// Lines for the command's output.
    pub lines: Vec<String>,
}

/// Installs the library into `data_dir` from `source`: a pypdfium2 wheel (or any zip holding
/// `libpdfium.so`), a folder holding `libpdfium.so` (directly, under `lib/` or under
/// `pypdfium2_raw/`), or the library file itself. The library is checked to be a 64-bit shared
/// object for this machine's architecture, written under a temporary name and renamed into
/// place, replacing any earlier one.
pub fn install(source: &Path, data_dir: &Path) -> Result<InstallReport, PdfiumInstallError> {
    let metadata = std::fs::metadata(source).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            PdfiumInstallError::SourceMissing {
                path: source.to_path_buf(),
            }
        } else {
            files_error(source)(error)
        }
    })?;
    let mut lines = Vec::new();
    let (library, from) = if metadata.is_dir() {
        let candidates = [
            source.join(LIBRARY_FILE),
            source.join("lib").join(LIBRARY_FILE),
            source.join("pypdfium2_raw").join(LIBRARY_FILE),
        ];
        let Some(found) = candidates.iter().find(|path| path.is_file()) else {
            return Err(PdfiumInstallError::NotInSource {
                source_path: source.to_path_buf(),
                looked_for: candidates
                    .iter()
                    .map(|path| path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        (read_library_file(found)?, found.clone())
    } else {
        let mut head = [0u8; 4];
        let read = std::fs::File::open(source)
            .and_then(|mut file| file.read(&mut head))
            .map_err(files_error(source))?;
        if read == 4 && head == *b"PK\x03\x04" {
            let hash = sha256_file(source)?;
            lines.push(describe_wheel(source, &hash));
            let (bytes, member) = from_wheel(source)?;
            (bytes, source.join(member))
        } else {
            (read_library_file(source)?, source.to_path_buf())
        }
    };
    check_elf(&library, &from)?;
    let target = installed_path(data_dir);
    write_atomically(&library, &target)?;
    lines.push(format!(
        "pdfium: installed {} ({:.1} MB, sha256 {}) from {}",
        target.display(),
        library.len() as f64 / 1_000_000.0,
        hex::encode(Sha256::digest(&library)),
        from.display()
    ));
    Ok(InstallReport {
        library: target,
        lines,
    })
}

/// Downloads the pinned pypdfium2 wheel for this machine from PyPI, checks its sha256, and
/// installs its library into `data_dir` (see `install`). `wheel_dir` keeps the download; a wheel
/// already there with the right checksum is reused. `progress` draws a progress bar on stderr.
pub fn download_and_install(
    data_dir: &Path,
    wheel_dir: &Path,
    progress: bool,
) -> Result<InstallReport, PdfiumInstallError> {
    let arch = std::env::consts::ARCH;
    let wheel = WHEELS
        .iter()
        .find(|wheel| wheel.arch == arch)
        .ok_or_else(|| PdfiumInstallError::NoWheelForArchitecture(arch.to_string()))?;
    let file_name = wheel.url.rsplit('/').next().unwrap_or("pypdfium2.whl");
    let path = wheel_dir.join(file_name);
    let reused = path.is_file() && sha256_file(&path)? == wheel.sha256;
    if !reused {
        std::fs::create_dir_all(wheel_dir).map_err(files_error(wheel_dir))?;
        download(wheel, wheel_dir, progress)?;
    }
    let mut report = install(&path, data_dir)?;
    report.lines.insert(
        0,
        format!(
            "{} {file_name} ({:.1} MB), sha256 {} verified",
            if reused { "reused" } else { "downloaded" },
            wheel.bytes as f64 / 1_000_000.0,
            wheel.sha256
        ),
    );
    Ok(report)
}

/// The download itself is the one checked downloader's (one home for outbound HTTPS): streamed,
/// hashed as it arrives, and deleted unless the sha256 matches.
fn download(wheel: &PinnedWheel, dir: &Path, progress: bool) -> Result<(), PdfiumInstallError> {
    let shared = Wheel {
        url: wheel.url,
        sha256: wheel.sha256,
        bytes: wheel.bytes,
    };
    native::download(&shared, dir, progress)?;
    Ok(())
}

fn sha256_file(path: &Path) -> Result<String, PdfiumInstallError> {
    let mut file = std::fs::File::open(path).map_err(files_error(path))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(files_error(path))?;
    Ok(hex::encode(hasher.finalize()))
}

/// A line saying which wheel this is, and whether it is one of the pinned ones.
fn describe_wheel(path: &Path, hash: &str) -> String {
    match WHEELS.iter().find(|wheel| wheel.sha256 == hash) {
        Some(wheel) => format!(
            "{}: pypdfium2 {PYPDFIUM2_VERSION} for {} (pdfium {PDFIUM_BUILD}), sha256 matches PyPI's",
            path.display(),
            wheel.arch
        ),
        None => format!(
            "{}: sha256 {hash}, not the pinned pypdfium2 {PYPDFIUM2_VERSION}; installing it anyway",
            path.display()
        ),
    }
}

fn read_library_file(path: &Path) -> Result<Vec<u8>, PdfiumInstallError> {
    let size = std::fs::metadata(path).map_err(files_error(path))?.len();
    if size > MAX_LIBRARY_BYTES {
        return Err(PdfiumInstallError::NotALibrary {
            path: path.to_path_buf(),
            reason: format!("{size} bytes is larger than any pdfium build"),
        });
    }
    std::fs::read(path).map_err(files_error(path))
}

/// The library's bytes from a wheel, and the member they came from.
fn from_wheel(wheel: &Path) -> Result<(Vec<u8>, String), PdfiumInstallError> {
    let zip_error = |message: String| PdfiumInstallError::Wheel {
        path: wheel.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(wheel).map_err(files_error(wheel))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|error| zip_error(error.to_string()))?;
    // pypdfium2's own layout first; any other zip with exactly one `libpdfium.so` also works.
    let member = if archive.index_for_name(WHEEL_MEMBER).is_some() {
        WHEEL_MEMBER.to_string()
    } else {
        let mut found = archive
            .file_names()
            .filter_map(Result::ok)
            .map(|name| name.into_owned())
            .filter(|name| name == LIBRARY_FILE || name.ends_with(&format!("/{LIBRARY_FILE}")))
            .collect::<Vec<_>>();
        found.sort();
        match found.as_slice() {
            [one] => one.clone(),
            _ => {
                return Err(PdfiumInstallError::NotInSource {
                    source_path: wheel.to_path_buf(),
                    looked_for: format!(
                        "{WHEEL_MEMBER}, or one {LIBRARY_FILE} anywhere in the zip (found {})",
                        found.len()
                    ),
                });
            }
        }
    };
    let entry = archive
        .by_name(&member)
        .map_err(|error| zip_error(format!("{member}: {error}")))?;
    if entry.size() > MAX_LIBRARY_BYTES {
        return Err(PdfiumInstallError::NotALibrary {
            path: wheel.join(&member),
            reason: format!("{} bytes is larger than any pdfium build", entry.size()),
        });
    }
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    // The declared size may lie; the limit on what is read does not.
    entry
        .take(MAX_LIBRARY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| zip_error(format!("{member}: {error}")))?;
    if bytes.len() as u64 > MAX_LIBRARY_BYTES {
        return Err(PdfiumInstallError::NotALibrary {
            path: wheel.join(&member),
            reason: "it inflates beyond any pdfium build".into(),
        });
    }
    Ok((bytes, member))
}

/// A 64-bit little-endian ELF shared object for this machine, so a wrong download is refused at
/// install time instead of at the first render.
fn check_elf(bytes: &[u8], path: &Path) -> Result<(), PdfiumInstallError> {
    let refuse = |reason: &str| PdfiumInstallError::NotALibrary {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    if bytes.len() < 64 || bytes[..4] != *b"\x7fELF" {
        return Err(refuse("it is not an ELF file"));
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return Err(refuse("it is not a 64-bit little-endian ELF file"));
    }
    let kind = u16::from_le_bytes([bytes[16], bytes[17]]);
    if kind != 3 {
        return Err(refuse("it is not a shared library (ELF type is not DYN)"));
    }
    let machine = match u16::from_le_bytes([bytes[18], bytes[19]]) {
        62 => "x86_64",
        183 => "aarch64",
        243 => "riscv64",
        other => return check_machine(path, &format!("ELF machine {other}")),
    };
    check_machine(path, machine)
}

fn check_machine(path: &Path, found: &str) -> Result<(), PdfiumInstallError> {
    let expected = std::env::consts::ARCH;
    if found == expected {
        Ok(())
    } else {
        Err(PdfiumInstallError::WrongArchitecture {
            path: path.to_path_buf(),
            found: found.to_string(),
            expected: expected.to_string(),
        })
    }
}

fn write_atomically(bytes: &[u8], target: &Path) -> Result<(), PdfiumInstallError> {
    let dir = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(files_error(dir))?;
    let staging = dir.join(format!(
        ".{LIBRARY_FILE}.install-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    let written = (|| {
        let mut file = std::fs::File::create(&staging)?;
        file.write_all(bytes)?;
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o755))?;
        file.sync_all()
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&staging);
        return Err(files_error(&staging)(error));
    }
    // A running server that already loaded the old library keeps its mapping of the old inode.
    std::fs::rename(&staging, target).map_err(|error| {
        let _ = std::fs::remove_file(&staging);
        files_error(target)(error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf(machine: u16) -> Vec<u8> {
        let mut bytes = vec![0u8; 64];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2;
        bytes[5] = 1;
        bytes[16..18].copy_from_slice(&3u16.to_le_bytes());
        bytes[18..20].copy_from_slice(&machine.to_le_bytes());
        bytes
    }

    fn this_machine() -> u16 {
        match std::env::consts::ARCH {
            "aarch64" => 183,
            _ => 62,
        }
    }

    #[test]
    fn locate_prefers_the_configuration_then_the_variable_then_the_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let installed = installed_path(&data);
        std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
        std::fs::write(&installed, b"x").unwrap();
        let configured = dir.path().join("configured.so");
        std::fs::write(&configured, b"x").unwrap();
        let env = dir.path().join("env.so");
        std::fs::write(&env, b"x").unwrap();

        let mut sources = Sources {
            configured: Some(configured.clone()),
            env: Some(env.clone()),
            data_dir: Some(data.clone()),
        };
        assert_eq!(locate(&sources).unwrap().value, configured);
        sources.configured = None;
        assert_eq!(locate(&sources).unwrap().value, env);
        sources.env = None;
        let found = locate(&sources).unwrap();
        assert_eq!(found.value, installed);
        assert!(found.why.contains("quire pdfium install"));

        std::fs::remove_file(&installed).unwrap();
        let why = locate(&sources).unwrap_err();
        assert!(why.contains(&installed.display().to_string()), "{why}");
        assert!(why.contains(LIBRARY_ENV), "{why}");

        // A named path that is missing is reported, not skipped.
        sources.env = Some(dir.path().join("typo.so"));
        std::fs::write(&installed, b"x").unwrap();
        let why = locate(&sources).unwrap_err();
        assert!(
            why.contains("typo.so") && why.contains(LIBRARY_ENV),
            "{why}"
        );
    }

    #[test]
    fn the_sandbox_keeps_the_library_folders_readable() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let mut sources = Sources {
            configured: None,
            env: None,
            data_dir: Some(data.clone()),
        };
        assert!(sandbox_paths(&sources).is_empty());
        std::fs::create_dir_all(data.join("pdfium")).unwrap();
        assert_eq!(sandbox_paths(&sources), vec![data.join("pdfium")]);
        std::fs::write(installed_path(&data), b"x").unwrap();
        assert_eq!(sandbox_paths(&sources), vec![data.join("pdfium")]);
        let elsewhere = dir.path().join("opt/libpdfium.so");
        std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
        std::fs::write(&elsewhere, b"x").unwrap();
        sources.configured = Some(elsewhere);
        assert_eq!(
            sandbox_paths(&sources),
            vec![dir.path().join("opt"), data.join("pdfium")]
        );
    }

    #[test]
    fn install_takes_the_library_from_a_folder_or_a_zip_and_checks_it() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let library = elf(this_machine());

        // A folder laid out like an unpacked wheel.
        let folder = dir.path().join("unpacked");
        std::fs::create_dir_all(folder.join("pypdfium2_raw")).unwrap();
        std::fs::write(folder.join("pypdfium2_raw/libpdfium.so"), &library).unwrap();
        let report = install(&folder, &data).unwrap();
        assert_eq!(report.library, installed_path(&data));
        assert_eq!(std::fs::read(&report.library).unwrap(), library);

        // A zip with the library somewhere else than pypdfium2 puts it.
        let zip_path = dir.path().join("other.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
            let options = zip::write::SimpleFileOptions::default();
            zip.start_file("README", options).unwrap();
            zip.write_all(b"hello").unwrap();
            zip.start_file("x/lib/libpdfium.so", options).unwrap();
            zip.write_all(&library).unwrap();
            zip.finish().unwrap();
        }
        let report = install(&zip_path, &data).unwrap();
        assert!(
            report.lines[0].contains("not the pinned"),
            "{:?}",
            report.lines
        );

        // The wrong architecture, and something that is not a library at all.
        let foreign = dir.path().join("foreign.so");
        std::fs::write(&foreign, elf(if this_machine() == 62 { 183 } else { 62 })).unwrap();
        assert_eq!(
            install(&foreign, &data).unwrap_err().code(),
            "pdfium_wrong_architecture"
        );
        let text = dir.path().join("notes.txt");
        std::fs::write(
            &text,
            b"not a library at all, but long enough to have an ELF header's size of bytes",
        )
        .unwrap();
        assert_eq!(
            install(&text, &data).unwrap_err().code(),
            "pdfium_not_a_library"
        );
        assert_eq!(
            install(&dir.path().join("absent.whl"), &data)
                .unwrap_err()
                .code(),
            "pdfium_source_missing"
        );
        let empty = dir.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        assert_eq!(
            install(&empty, &data).unwrap_err().code(),
            "pdfium_not_in_source"
        );
        // The installed library is still the good one, and no staging files are left behind.
        assert_eq!(std::fs::read(installed_path(&data)).unwrap(), library);
        let left: Vec<_> = std::fs::read_dir(data.join("pdfium"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from(LIBRARY_FILE)]);
    }

    #[test]
    fn every_architecture_has_one_pinned_wheel() {
        for arch in ["x86_64", "aarch64"] {
            assert_eq!(WHEELS.iter().filter(|w| w.arch == arch).count(), 1);
        }
        for wheel in WHEELS {
            assert_eq!(wheel.sha256.len(), 64);
            assert!(wheel.url.contains(PYPDFIUM2_VERSION) && wheel.url.contains(wheel.arch));
        }
    }
}
