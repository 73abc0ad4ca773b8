//! "Today" for everything that stamps or compares dates (task done dates, recurrence, date filters).
//! It is the system's local date for now; the `[time] timezone` setting makes it configurable.

use super::Ops;

impl Ops {
    /// The civil date of the present moment in the system's time zone.
    pub fn today(&self) -> jiff::civil::Date {
        jiff::ZonedDateTime::now().date()
    }
}
