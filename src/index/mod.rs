//! Derived state about the vault, kept current from the file system. Today: the watcher that turns
//! file-system events into `VaultChange`s. The SQLite index will live here too.
//!
//! Nothing here is a source of truth: it only observes the vault, and it never writes to it.

mod watcher;

pub use watcher::{ChangeKind, VaultChange, VaultWatcher, WatchError};
