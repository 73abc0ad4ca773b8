//! The sandbox plan: every path Quire may read or write and every port it may bind or connect to,
//! derived from the configuration (and the few environment variables that name files it reads),
//! for `systemd::apply_sandbox`.

use std::path::PathBuf;

use crate::config::{Config, Sandbox};
use crate::systemd::{SandboxMode, SandboxPlan};

/// Everything Quire may touch, derived from the configuration.
pub fn sandbox_plan(config: &Config, binds_itself: bool) -> SandboxPlan {
    let mut read_write = vec![config.state_dir.clone()];
    let mut read_only: Vec<PathBuf> = Vec::new();
    if config.read_only {
        read_only.push(config.vault.clone());
    } else {
        read_write.push(config.vault.clone());
    }
    if let Some(index_dir) = config.index.parent() {
        read_write.push(index_dir.to_path_buf());
    }
    read_only.extend(config.config_file.iter().cloned());
    // Its folder too, so a config saved the usual way (a new file renamed over the old one, as
    // editors and configuration tools do) is still readable when it is reloaded; never a home
    // folder or the root, which would open far more than configuration.
    let home = std::env::var_os("HOME").and_then(|home| std::fs::canonicalize(home).ok());
    read_only.extend(
        config
            .config_file
            .iter()
            .filter_map(|file| std::fs::canonicalize(file).ok())
            .filter_map(|file| file.parent().map(PathBuf::from))
            .filter(|folder| folder.parent().is_some() && Some(folder) != home.as_ref()),
    );
    // The folders of token files, not just the files: rotating a token by renaming a new file
    // into place must still be readable on reload.
    read_only.extend(
        config
            .access
            .token_files
            .iter()
            .filter_map(|file| file.parent().map(PathBuf::from))
            .filter(|folder| folder.exists()),
    );
    if let Some(credentials) = std::env::var_os("CREDENTIALS_DIRECTORY") {
        read_only.push(PathBuf::from(credentials));
    }
    let mut connect_ports = Vec::new();
    if config.fetches_client_metadata(!binds_itself) {
        // Client ID Metadata Documents: https on its default port (the fetcher refuses others),
        // and DNS over TCP for answers too long for UDP. Name resolution and the CA store need
        // their files (on NixOS these are links into /nix/store, which is readable anyway).
        connect_ports.extend([443, 53]);
        connect_ports.extend(config.oauth.test_loopback_port);
        read_only.extend(
            OUTBOUND_HTTPS_FILES
                .iter()
                .map(PathBuf::from)
                .filter(|path| path.exists()),
        );
        for variable in ["SSL_CERT_FILE", "SSL_CERT_DIR"] {
            read_only.extend(std::env::var_os(variable).map(PathBuf::from));
        }
    }
    // A time zone database named by `$TZDIR` (NixOS sets it for services) stays readable, so
    // zones resolve on a config reload as they did at start.
    if let Some(tzdir) = std::env::var_os("TZDIR").filter(|dir| !dir.is_empty()) {
        read_only.push(PathBuf::from(tzdir));
    }
    // The model worker loads the library and models after the sandbox applies.
    read_only.extend(semantic_paths(&crate::embed::resolve(
        &config.search.models,
    )));
    // `vault_read_file` loads pdfium on the first page it renders, after the sandbox applies.
    read_only.extend(pdfium_paths(&config.files.pdfium));
    // The sync's files: the lock is opened for reading (enough for flock); the marker and status
    // are replaced by rename, so their folders, which must exist (the sync service makes them).
    read_only.extend(config.sync.lock_file.iter().cloned());
    read_only.extend(
        [&config.sync.first_sync_marker, &config.sync.status_file]
            .into_iter()
            .flatten()
            .filter_map(|file| file.parent().map(PathBuf::from))
            .filter(|folder| folder.is_dir()),
    );
    SandboxPlan {
        mode: match config.sandbox {
            Sandbox::Required => SandboxMode::Required,
            Sandbox::BestEffort => SandboxMode::BestEffort,
            Sandbox::Off => SandboxMode::Off,
        },
        read_write,
        read_only,
        bind_port: config
            .http
            .as_ref()
            .filter(|_| binds_itself)
            .map(|http| http.listen.port()),
        connect_ports,
    }
}

/// What resolving a host name and checking a server certificate read, on Debian-like systems
/// (glibc's resolver and NSS configuration, the CA store) and with systemd-resolved.
const OUTBOUND_HTTPS_FILES: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/pki",
    "/etc/ca-certificates",
    "/run/systemd/resolve",
];

/// The folders semantic search reads: the library's (and, through a symlink, its target's) and
/// the model folders.
fn semantic_paths(resolution: &crate::embed::Resolution) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Ok(library) = &resolution.library {
        for path in [
            Some(library.value.clone()),
            library.value.canonicalize().ok(),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(parent) = path.parent() {
                paths.push(parent.to_path_buf());
            }
        }
    }
    if let Ok(model) = &resolution.model {
        paths.push(model.value.dir.clone());
    }
    if let Some(Ok(reranker)) = &resolution.reranker {
        paths.push(reranker.value.dir.clone());
    }
    if resolution.library.is_ok() && resolution.model.is_ok() {
        // ONNX Runtime reads the CPU's features to pick its kernels.
        paths.push(PathBuf::from("/proc/cpuinfo"));
        paths.push(PathBuf::from("/sys/devices/system/cpu"));
    }
    paths.dedup();
    paths
}

/// The folders pdfium may be loaded from: `pdfium::sandbox_paths`, plus the folder of the
/// library's real file when it is reached through a symbolic link (as in a Nix profile).
fn pdfium_paths(sources: &crate::files::pdf::pdfium::Sources) -> Vec<PathBuf> {
    let mut paths = crate::files::pdf::pdfium::sandbox_paths(sources);
    if let Ok(found) = crate::files::pdf::pdfium::locate(sources)
        && let Ok(real) = found.value.canonicalize()
        && let Some(folder) = real.parent()
        && !paths.iter().any(|path| path == folder)
    {
        paths.push(folder.to_path_buf());
    }
    paths
}
