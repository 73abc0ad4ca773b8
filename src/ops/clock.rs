//! The clock: "now" and "today" in the configured time zone (`[time] timezone`).
//!
//! Everything that asks what day it is (daily notes, done dates, recurrence) asks here, so the
//! whole server agrees on one zone. The zone is resolved once at startup (`Config::load`), before
//! the sandbox exists, so reading the clock never touches the disk. Tests can pin the instant.

use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

use super::shared::Ops;

/// The zone "today" is computed in, and optionally a fixed instant standing in for the system
/// clock (tests and reproducible runs).
#[derive(Debug, Clone)]
pub(super) struct Clock {
    zone: TimeZone,
    fixed: Option<Timestamp>,
}

impl Default for Clock {
    // UTC until `Ops::with_time_zone` says otherwise; the app always says otherwise.
    fn default() -> Clock {
        Clock {
            zone: TimeZone::UTC,
            fixed: None,
        }
    }
}

impl Ops {
    /// Computes "today" and "now" in `zone` (the configured `[time] timezone` or the system's).
    pub fn with_time_zone(mut self, zone: TimeZone) -> Ops {
        self.clock.zone = zone;
        self
    }

    /// Freezes the clock at `instant`, for tests that must not depend on the real date.
    pub fn with_fixed_now(mut self, instant: Timestamp) -> Ops {
        self.clock.fixed = Some(instant);
        self
    }

    pub fn time_zone(&self) -> &TimeZone {
        &self.clock.zone
    }

    /// The current instant in the configured zone.
    pub fn now(&self) -> ZonedDateTime {
        self.clock
            .fixed
            .unwrap_or_else(Timestamp::now)
            .to_zoned_datetime(self.clock.zone.clone())
    }

    /// The calendar date it is now in the configured zone.
    pub fn today(&self) -> Date {
        self.now().date()
    }
}
