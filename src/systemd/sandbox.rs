//! The landlock sandbox, applied before the async runtime starts so every thread inherits it.
//!
//! Quire may then read and write only the vault (read only when `read_only`), the state directory
//! and the index, and read only its config file and folder, systemd credentials and the system's
//! libraries; with a kernel that supports it, it may bind only its own port and connect only to
//! the ports of the plan (443 and 53 while OAuth Client ID Metadata Documents are fetched, else
//! none). A path outside these fails with a permission error inside Quire (a tool error), never a
//! crash.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

/// The ABI this build asks for; the kernel may provide less (best effort decides what to do).
const TARGET_ABI: ABI = ABI::V6;

/// System locations a dynamically linked binary (and, later, ONNX Runtime) needs to read.
const SYSTEM_READ_ONLY: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/nix/store",
    "/etc/ld.so.cache",
    // The time zone database: the system's zone and the zoneinfo folders jiff searches
    // (`/etc/zoneinfo` is NixOS's; its files live in /nix/store).
    "/etc/localtime",
    "/etc/zoneinfo",
    "/dev/null",
    "/dev/urandom",
    "/proc/self",
    "/sys/fs/cgroup",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// Refuse to start unless landlock fully enforces the ruleset.
    Required,
    /// Enforce what the kernel supports and log what is not enforced.
    BestEffort,
    Off,
}

/// What the sandbox should allow.
#[derive(Debug, Clone)]
pub struct SandboxPlan {
    pub mode: SandboxMode,
    pub read_write: Vec<PathBuf>,
    pub read_only: Vec<PathBuf>,
    /// A TCP port Quire binds itself (none under socket activation).
    pub bind_port: Option<u16>,
    /// TCP ports Quire may connect to (outbound HTTPS for Client ID Metadata Documents).
    pub connect_ports: Vec<u16>,
}

/// What was enforced, for the log and `quire doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxReport {
    Off,
    FullyEnforced,
    PartiallyEnforced,
    NotEnforced(String),
}

impl std::fmt::Display for SandboxReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SandboxReport::Off => f.write_str("off (sandbox = \"off\")"),
            SandboxReport::FullyEnforced => f.write_str("landlock fully enforced"),
            SandboxReport::PartiallyEnforced => {
                f.write_str("landlock partially enforced (the kernel lacks some access rights)")
            }
            SandboxReport::NotEnforced(why) => write!(f, "not enforced: {why}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("sandbox = \"required\", but landlock could not be fully enforced: {0}")]
    Required(String),
}

/// Restricts the calling thread (call it before any other thread exists).
pub fn apply_sandbox(plan: &SandboxPlan) -> Result<SandboxReport, SandboxError> {
    if plan.mode == SandboxMode::Off {
        return Ok(SandboxReport::Off);
    }
    let report = match restrict(plan) {
        Ok(RulesetStatus::FullyEnforced) => SandboxReport::FullyEnforced,
        Ok(RulesetStatus::PartiallyEnforced) => SandboxReport::PartiallyEnforced,
        Ok(RulesetStatus::NotEnforced) => {
            SandboxReport::NotEnforced(
                "landlock is unavailable (the kernel lacks it, or a seccomp filter such as SystemCallFilter= blocks its system calls)".into(),
            )
        }
        Err(error) => SandboxReport::NotEnforced(error.to_string()),
    };
    if plan.mode == SandboxMode::Required && report != SandboxReport::FullyEnforced {
        return Err(SandboxError::Required(report.to_string()));
    }
    Ok(report)
}

fn restrict(plan: &SandboxPlan) -> Result<RulesetStatus, landlock::RulesetError> {
    let fs_all = AccessFs::from_all(TARGET_ABI);
    let fs_read = AccessFs::from_read(TARGET_ABI);
    let existing = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths.iter().filter(|p| p.exists()).cloned().collect()
    };
    let system: Vec<PathBuf> = SYSTEM_READ_ONLY
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(fs_all)?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?
        .create()?
        .add_rules(path_beneath_rules(existing(&plan.read_write), fs_all))?
        .add_rules(path_beneath_rules(existing(&plan.read_only), fs_read))?
        .add_rules(path_beneath_rules(system, fs_read))?;
    if let Some(port) = plan.bind_port {
        ruleset = ruleset.add_rule(NetPort::new(port, AccessNet::BindTcp))?;
    }
    for port in &plan.connect_ports {
        ruleset = ruleset.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
    }
    Ok(ruleset.restrict_self()?.ruleset)
}
