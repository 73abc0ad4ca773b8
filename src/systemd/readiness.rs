//! sd-notify: READY, STATUS, WATCHDOG and STOPPING messages to the service manager. Without
//! `NOTIFY_SOCKET` every call is a no-op.

use std::sync::Arc;
use std::time::Duration;

use sd_notify::NotifyState;

use crate::health::Health;

#[derive(Debug, Clone, Copy, Default)]
pub struct ServiceNotifier;

impl ServiceNotifier {
    pub fn ready(&self) {
        send(&[NotifyState::Ready]);
    }

    pub fn status(&self, status: &str) {
        send(&[NotifyState::Status(status)]);
    }

    pub fn stopping(&self) {
        send(&[NotifyState::Stopping]);
    }

    /// A watchdog ping for a wait that is not a hang (the first sync, before any component runs).
    pub fn alive(&self) {
        if sd_notify::watchdog_enabled().is_some() {
            send(&[NotifyState::Watchdog]);
        }
    }
}

fn send(states: &[NotifyState<'_>]) {
    if let Err(error) = sd_notify::notify(states) {
        tracing::debug!(%error, "could not notify the service manager");
    }
}

/// When systemd asked for a watchdog (`WATCHDOG_USEC`), pings it at half the interval for as long
/// as every component in `health` keeps beating; a hung component stops the pings and systemd
/// restarts the service.
pub fn spawn_watchdog(health: Arc<Health>) {
    let Some(timeout) = sd_notify::watchdog_enabled() else {
        return;
    };
    let period = (timeout / 2).max(Duration::from_millis(50));
    tracing::info!(
        timeout_ms = timeout.as_millis() as u64,
        "systemd watchdog enabled"
    );
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(period);
        loop {
            ticker.tick().await;
            match health.check(timeout) {
                Ok(()) => send(&[NotifyState::Watchdog]),
                Err(reason) => {
                    tracing::error!(%reason, "withholding the watchdog ping");
                }
            }
        }
    });
}
