//! Running as a systemd service: socket activation, sd-notify (readiness, status, watchdog,
//! stopping) and the landlock sandbox. Each part degrades cleanly when systemd or landlock is absent,
//! so the same binary runs on a laptop and as a hardened service.
//!
//! This is the only module that takes over inherited file descriptors or talks to the service
//! manager.

mod activation;
mod readiness;
mod sandbox;

pub use activation::{ActivationError, inherited_listener};
pub use readiness::{ServiceNotifier, spawn_watchdog};
pub use sandbox::{SandboxError, SandboxMode, SandboxPlan, SandboxReport, apply_sandbox};

/// True when systemd started this process (it sets `INVOCATION_ID` for every unit it runs).
pub fn under_systemd() -> bool {
    std::env::var_os("INVOCATION_ID").is_some() || std::env::var_os("NOTIFY_SOCKET").is_some()
}
