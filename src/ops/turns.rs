//! Turns for whole-vault scans (`vault_grep`): at most twice as many run at once as the machine
//! has cores, and the others wait in the order they came.
//!
//! Without turns, 128 clients grepping at once each got a 128th of the cores: a grep's time budget
//! went on waiting for the CPU (p99 2–4 s against a 3 s budget on 2 cores), and which grep
//! finished first was luck (p99 2.5x p50). With turns a grep runs at full speed once it starts,
//! so its budget measures its own work, and the wait is first come, first served.

use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a scan waits for its turn before it gives up (a grep then answers `busy`). A scan's
/// own budget starts when its turn comes: with the wait cut at a grep's 3 s budget, a 32-client
/// mix of reads and greps answered `busy` where every grep would have finished a few seconds later.
const PATIENCE: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub struct Turns {
    /// How many scans may run at once.
    limit: usize,
    /// How long a scan waits for its turn before it gives up.
    patience: Duration,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    running: usize,
    /// The scans waiting, oldest first. A finished scan hands its turn to the first of them and
    /// wakes only that thread, not the hundred others that would check and sleep again.
    waiting: VecDeque<Waiter>,
    /// Tickets handed a turn whose thread has not yet woken to take it.
    handed: HashSet<u64>,
    next_ticket: u64,
}

#[derive(Debug)]
struct Waiter {
    ticket: u64,
    thread: Thread,
}

/// A running scan's turn; the next in line starts when it is dropped.
pub struct Turn<'a> {
    turns: &'a Turns,
}

/// No turn came within the caller's patience.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    /// Scans running when the caller gave up.
    pub running: usize,
    /// Scans still waiting.
    pub waiting: usize,
    /// How long the caller waited.
    pub waited: Duration,
}

impl Turns {
    pub fn new(limit: usize, patience: Duration) -> Turns {
        Turns {
            limit: limit.max(1),
            patience,
            state: Mutex::new(State::default()),
        }
    }

    /// Two turns per core the process may use: with one, the cores sat idle between turns and the
    /// greps' throughput fell by a tenth (108 against 119 greps/s at 32 clients on 2 cores,
    /// `tests/reliability/load.py --tools vault_grep`). A scan waits up to `PATIENCE`.
    pub fn two_per_core() -> Turns {
        Turns::new(
            2 * std::thread::available_parallelism().map_or(1, usize::from),
            PATIENCE,
        )
    }

    /// Waits for a turn, behind every scan that asked earlier, for at most the patience.
    pub fn wait(&self) -> Result<Turn<'_>, Busy> {
        let deadline = Instant::now() + self.patience;
        let ticket = {
            let mut state = self.lock();
            if state.running < self.limit && state.waiting.is_empty() {
                state.running += 1;
                return Ok(Turn { turns: self });
            }
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.waiting.push_back(Waiter {
                ticket,
                thread: std::thread::current(),
            });
            ticket
        };
        loop {
            // A turn handed over before this thread parks makes the park return at once.
            std::thread::park_timeout(deadline.saturating_duration_since(Instant::now()));
            let mut state = self.lock();
            if state.handed.remove(&ticket) {
                return Ok(Turn { turns: self });
            }
            if Instant::now() >= deadline {
                state.waiting.retain(|waiter| waiter.ticket != ticket);
                return Err(Busy {
                    running: state.running,
                    waiting: state.waiting.len(),
                    waited: self.patience,
                });
            }
        }
    }

    // Every change to the state is complete before the lock is released (nothing in between
    // can panic), so a poisoned lock still holds consistent counters.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut state = self.turns.lock();
        match state.waiting.pop_front() {
            // The turn passes straight to the next in line: `running` stays as it is.
            Some(next) => {
                state.handed.insert(next.ticket);
                next.thread.unpark();
            }
            None => state.running -= 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_more_than_the_limit_run_at_once_and_all_get_a_turn() {
        let turns = Arc::new(Turns::new(2, Duration::from_secs(30)));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (turns, running, most) = (turns.clone(), running.clone(), most.clone());
                std::thread::spawn(move || {
                    let _turn = turns.wait().expect("a turn");
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no panic");
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn turns_go_in_the_order_asked() {
        let turns = Arc::new(Turns::new(1, Duration::from_secs(30)));
        let first = turns.wait().expect("free");
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        for number in 0..5 {
            let (mine, order) = (turns.clone(), order.clone());
            threads.push(std::thread::spawn(move || {
                let _turn = mine.wait().expect("a turn");
                order.lock().expect("not poisoned").push(number);
            }));
            // Each asks once the one before it is queued.
            while turns.lock().waiting.len() < number + 1 {
                std::thread::yield_now();
            }
        }
        drop(first);
        for thread in threads {
            thread.join().expect("no panic");
        }
        assert_eq!(*order.lock().expect("not poisoned"), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_caller_out_of_patience_is_told_and_leaves_the_line() {
        let turns = Turns::new(1, Duration::from_millis(20));
        let held = turns.wait().expect("free");
        assert_eq!(
            turns.wait().err(),
            Some(Busy {
                running: 1,
                waiting: 0,
                waited: Duration::from_millis(20),
            })
        );
        drop(held);
        // The caller that gave up holds no place: the next asks and runs at once.
        assert!(turns.wait().is_ok());
    }
}
