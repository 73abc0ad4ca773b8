//! What `quire serve` does before the async runtime exists: the state and index folders, the sync
//! lock, the socket systemd passed, and the sandbox, applied while this is the only thread so
//! every thread started later inherits it.

use anyhow::Context as _;

use crate::config::Config;
use crate::systemd::SandboxReport;

/// What must happen before the async runtime exists: the state directory (landlock can only allow
/// paths that exist), the socket systemd passed, and the sandbox itself, so every thread the
/// runtime starts inherits it.
pub fn prepare(config: &Config) -> anyhow::Result<Prepared> {
    create_state_dir(config)?;
    if let Some(index_dir) = config.index.parent() {
        std::fs::create_dir_all(index_dir)
            .with_context(|| format!("cannot create the index folder {}", index_dir.display()))?;
        // The sandbox grants the index folder; SQLite's own default places it does not.
        crate::index::use_temp_folder(index_dir).with_context(|| {
            format!(
                "cannot give SQLite the index folder {} for its temporary files",
                index_dir.display()
            )
        })?;
    }
    if let Some(lock_file) = config.sync.lock_file.as_ref().filter(|file| !file.exists()) {
        // It must exist before landlock, which allows only existing paths; the sync service
        // usually creates it, and either side creating it first is fine.
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(lock_file)
            .with_context(|| format!("cannot create the sync lock file {}", lock_file.display()))?;
    }
    let inherited = crate::systemd::inherited_listener()?;
    let plan = super::sandbox::sandbox_plan(config, inherited.is_none());
    let report = crate::systemd::apply_sandbox(&plan)?;
    tracing::info!(sandbox = %report, "sandbox");
    Ok(Prepared {
        inherited,
        confined: matches!(
            report,
            SandboxReport::FullyEnforced | SandboxReport::PartiallyEnforced
        ),
    })
}

/// What `prepare` leaves for `serve`.
#[derive(Debug)]
pub struct Prepared {
    /// The socket systemd passed, if any.
    pub inherited: Option<std::net::TcpListener>,
    /// Landlock confines the process to the paths (inodes) that existed at start.
    pub confined: bool,
}

/// The state directory holds derived data only; it is private to the service user.
pub fn create_state_dir(config: &Config) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&config.state_dir)
        .with_context(|| {
            format!(
                "cannot create the state directory {}",
                config.state_dir.display()
            )
        })
}
