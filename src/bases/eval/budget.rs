//! What one query may spend across every evaluation it makes: steps, the bytes of the values it
//! keeps at once (formula cells, sort and group keys, summary inputs, the page's cells), and a stop
//! its caller signals through `Environment::interrupted` (a deadline, a cancelled request).
//!
//! Each evaluation keeps its own `MAX_STEPS`, so one costly cell fails alone; the query's budget
//! bounds them together, since a base of a few hundred bytes can hold a hundred formulas over
//! thousands of rows. Once spent the budget stays spent: every later evaluation fails at its first
//! step, and `run_view` answers the `Overrun` instead of a view.

use std::cell::{Cell, RefCell};

use super::super::env::Environment;
use super::EvalError;

/// The most steps one query may take over all its evaluations.
pub const MAX_QUERY_STEPS: u64 = 50_000_000;
/// The most bytes of values one query may hold at once.
pub const MAX_QUERY_BYTES: u64 = 64 << 20;
/// How many steps pass between two questions to `Environment::interrupted`, which may read a
/// clock: often enough to stop within milliseconds, rarely enough to cost nothing.
const POLL_EVERY: u64 = 1 << 14;

/// Why a query stopped before its view was complete.
#[derive(Debug, Clone, PartialEq)]
pub enum Overrun {
    /// The steps of all evaluations together passed `limit`.
    Steps { limit: u64 },
    /// Holding `what` (a formula or column, for the row at `path`) brought the values the query
    /// holds past `limit` bytes.
    Bytes {
        limit: u64,
        what: String,
        path: String,
    },
    /// The caller asked to stop (its deadline passed, or the request was cancelled).
    Interrupted,
}

/// One query's budget, shared by every evaluation of the query.
#[derive(Debug)]
pub struct Budget {
    max_steps: u64,
    max_bytes: u64,
    steps: Cell<u64>,
    held: Cell<u64>,
    next_poll: Cell<u64>,
    overrun: RefCell<Option<Overrun>>,
}

impl Budget {
    pub fn new(max_steps: u64, max_bytes: u64) -> Budget {
        Budget {
            max_steps,
            max_bytes,
            steps: Cell::new(0),
            held: Cell::new(0),
            next_poll: Cell::new(0),
            overrun: RefCell::new(None),
        }
    }

    /// The budget of one query of a tool: `MAX_QUERY_STEPS` and `MAX_QUERY_BYTES`.
    pub fn for_query() -> Budget {
        Budget::new(MAX_QUERY_STEPS, MAX_QUERY_BYTES)
    }

    /// No bound but the caller's stop, for one expression evaluated alone (its `MAX_STEPS` and
    /// the value caps still hold).
    pub fn unbounded() -> Budget {
        Budget::new(u64::MAX, u64::MAX)
    }

    /// Why the query must stop, once it must.
    pub fn overrun(&self) -> Option<Overrun> {
        self.overrun.borrow().clone()
    }

    /// How many steps the query took so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    /// How many bytes of values the query holds now.
    pub fn held(&self) -> u64 {
        self.held.get()
    }

    fn stop(&self, overrun: Overrun) -> EvalError {
        let mut slot = self.overrun.borrow_mut();
        if slot.is_none() {
            *slot = Some(overrun);
        }
        EvalError::OverBudget
    }

    /// Counts `units` steps; asks `env` whether to stop every `POLL_EVERY` steps.
    pub(super) fn spend(&self, units: u64, env: &dyn Environment) -> Result<(), EvalError> {
        if self.overrun.borrow().is_some() {
            return Err(EvalError::OverBudget);
        }
        let steps = self.steps.get().saturating_add(units);
        self.steps.set(steps);
        if steps > self.max_steps {
            return Err(self.stop(Overrun::Steps {
                limit: self.max_steps,
            }));
        }
        if steps >= self.next_poll.get() {
            self.next_poll.set(steps.saturating_add(POLL_EVERY));
            if env.interrupted() {
                return Err(self.stop(Overrun::Interrupted));
            }
        }
        Ok(())
    }

    /// Asks `env` whether to stop, between evaluations (a row whose cells are all cheap takes
    /// few steps, so the step count alone would poll too rarely).
    pub fn check(&self, env: &dyn Environment) -> Result<(), Overrun> {
        if let Some(overrun) = self.overrun() {
            return Err(overrun);
        }
        if env.interrupted() {
            let _ = self.stop(Overrun::Interrupted);
            return Err(Overrun::Interrupted);
        }
        Ok(())
    }

    /// Takes `bytes` more into what the query holds, for `what` of the row at `path`.
    pub fn hold(&self, bytes: u64, what: &str, path: &str) -> Result<(), Overrun> {
        if let Some(overrun) = self.overrun() {
            return Err(overrun);
        }
        let held = self.held.get().saturating_add(bytes);
        self.held.set(held);
        if held > self.max_bytes {
            let overrun = Overrun::Bytes {
                limit: self.max_bytes,
                what: what.to_owned(),
                path: path.to_owned(),
            };
            let _ = self.stop(overrun.clone());
            return Err(overrun);
        }
        Ok(())
    }

    /// Gives back `bytes` the query no longer holds.
    pub fn release(&self, bytes: u64) {
        self.held.set(self.held.get().saturating_sub(bytes));
    }
}
