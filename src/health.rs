//! Liveness of long-running components, for the systemd watchdog.
//!
//! A component that must never hang (the index writer, the vault watcher) owns a `Heartbeat` and
//! beats it from its own loop; `Health::check` reports the first component whose last beat is older
//! than the allowed age. The watchdog pings systemd only while every component is fresh, so a hung
//! component gets the service restarted instead of silently serving stale data.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One component's last sign of life.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    origin: Instant,
    last_millis: Arc<AtomicU64>,
}

impl Heartbeat {
    fn new(origin: Instant) -> Heartbeat {
        let heartbeat = Heartbeat {
            origin,
            last_millis: Arc::new(AtomicU64::new(0)),
        };
        heartbeat.beat();
        heartbeat
    }

    pub fn beat(&self) {
        let now = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_millis.store(now, Ordering::Relaxed);
    }

    fn age(&self) -> Duration {
        let now = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(now.saturating_sub(self.last_millis.load(Ordering::Relaxed)))
    }
}

/// The registry of heartbeats the watchdog looks at.
#[derive(Debug)]
pub struct Health {
    origin: Instant,
    components: Mutex<Vec<(String, Heartbeat)>>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            origin: Instant::now(),
            components: Mutex::new(Vec::new()),
        }
    }
}

impl Health {
    /// Registers a component; it must beat at least every few seconds from now on.
    pub fn register(&self, name: &str) -> Heartbeat {
        let heartbeat = Heartbeat::new(self.origin);
        self.lock().push((name.to_string(), heartbeat.clone()));
        heartbeat
    }

    /// `Err` names the first component that has been silent for longer than `max_age`.
    pub fn check(&self, max_age: Duration) -> Result<(), String> {
        for (name, heartbeat) in self.lock().iter() {
            let age = heartbeat.age();
            if age > max_age {
                return Err(format!(
                    "{name} has not made progress for {} ms",
                    age.as_millis()
                ));
            }
        }
        Ok(())
    }

    // The list is only ever pushed to, so a panic elsewhere cannot leave it inconsistent.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Heartbeat)>> {
        self.components
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_component_fails_the_check() {
        let health = Health::default();
        let writer = health.register("index writer");
        assert!(health.check(Duration::from_millis(50)).is_ok());
        std::thread::sleep(Duration::from_millis(80));
        let error = health.check(Duration::from_millis(50)).expect_err("stale");
        assert!(error.contains("index writer"), "{error}");
        writer.beat();
        assert!(health.check(Duration::from_millis(50)).is_ok());
    }
}
