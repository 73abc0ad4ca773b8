//! One process owns a vault's state at a time: the index, the watcher, the history, the per-note
//! locks and the sessions' memory live in the process that holds `owner.lock` in the state
//! directory. A later `quire serve` on the same vault attaches to it through `owner.sock` beside
//! the lock instead of opening a second copy of everything, and only the holder of the lock ever
//! settles the pending changes of the history or finishes cut moves (issue 63, F3: two owners
//! settled each other's live changes as if a kill had cut them short).
//!
//! The lock is `flock`, which the kernel drops when the holder exits or dies, so a dead owner
//! never blocks the next; the socket is a path in the state directory (mode 0700, the socket
//! 0600) and a peer of another user is refused even so.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;

use crate::mcp::Shared;

const LOCK_FILE: &str = "owner.lock";
const SOCKET_FILE: &str = "owner.sock";

/// How often a process that waits for the lock asks again.
const OWN_POLL: Duration = Duration::from_millis(250);

/// Held while this process owns the vault's state; dropping it (or exiting) lets the next take it.
#[derive(Debug)]
pub struct StateOwnership {
    _lock: File,
}

/// Takes the state directory's lock if no live process holds it, writing this process's id into
/// the lock file for the messages of those who find it taken.
pub fn try_own_state(state_dir: &Path) -> anyhow::Result<Option<StateOwnership>> {
    let path = state_dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot open the owner lock {}", path.display()))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(error) if error == rustix::io::Errno::WOULDBLOCK => return Ok(None),
        Err(error) => {
            return Err(std::io::Error::from(error))
                .with_context(|| format!("cannot lock the owner lock {}", path.display()));
        }
    }
    // The id is for people and messages only; the lock itself is what counts.
    file.set_len(0)
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .with_context(|| format!("cannot write the owner lock {}", path.display()))?;
    Ok(Some(StateOwnership { _lock: file }))
}

/// The process id the current owner wrote, for messages.
pub(super) fn state_owner_pid(state_dir: &Path) -> Option<u32> {
    std::fs::read_to_string(state_dir.join(LOCK_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The owner as messages name it: `pid N`, or `pid unknown` when the lock file says nothing.
pub fn owner_named(state_dir: &Path) -> String {
    state_owner_pid(state_dir).map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}"))
}

/// Waits until this process owns the vault's state, saying once who holds it meanwhile: an HTTP
/// server has no client of its own to relay, so it serves only once it is the owner.
pub(super) async fn wait_to_own(state_dir: &Path) -> anyhow::Result<StateOwnership> {
    let mut announced = false;
    loop {
        if let Some(ownership) = try_own_state(state_dir)? {
            if announced {
                tracing::info!("the other Quire exited; this one now owns the vault's state");
            }
            return Ok(ownership);
        }
        if !announced {
            announced = true;
            tracing::warn!(
                owner_pid = state_owner_pid(state_dir),
                state_dir = %state_dir.display(),
                "another quire serve owns this vault's state; an HTTP server waits until it exits \
                 (stdio clients attach to it instead)"
            );
        }
        tokio::time::sleep(OWN_POLL).await;
    }
}

fn socket_path(state_dir: &Path) -> PathBuf {
    state_dir.join(SOCKET_FILE)
}

/// Binds the owner's socket, replacing a dead owner's (the lock says none is alive). A path too
/// long for a socket address leaves the vault without one: later servers then wait to own it.
pub(super) fn listen(state_dir: &Path) -> anyhow::Result<Option<UnixListener>> {
    let path = socket_path(state_dir);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            return Err(error).with_context(|| {
                format!("cannot remove a dead owner's socket {}", path.display())
            });
        }
    }
    let listener = match UnixListener::bind(&path) {
        Ok(listener) => listener,
        Err(error) if error.kind() == std::io::ErrorKind::InvalidInput => {
            tracing::warn!(socket = %path.display(), %error, "the state directory's path is too long for the owner socket; other quire serve processes on this vault will wait instead of attaching");
            return Ok(None);
        }
        Err(error) => {
            return Err(error)
                .with_context(|| format!("cannot bind the owner socket {}", path.display()));
        }
    };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot make the owner socket {} private", path.display()))?;
    Ok(Some(listener))
}

/// Connects to the owner's socket; `None` when nothing listens there (yet, or any more).
pub(super) async fn connect(state_dir: &Path) -> Option<UnixStream> {
    UnixStream::connect(socket_path(state_dir)).await.ok()
}

/// How many attached sessions the owner serves, so a stdio owner whose own client left keeps
/// serving the others until they leave too.
#[derive(Clone)]
pub(super) struct Attached {
    count: Arc<watch::Sender<usize>>,
}

impl Attached {
    pub(super) fn new() -> Attached {
        Attached {
            count: Arc::new(watch::channel(0).0),
        }
    }

    /// Resolves once no attached session is left.
    pub(super) async fn none_left(&self) {
        let mut count = self.count.subscribe();
        // The sender lives in `self`, so the channel cannot close while this waits.
        let _ = count.wait_for(|count| *count == 0).await;
    }

    pub(super) fn now(&self) -> usize {
        *self.count.borrow()
    }

    fn enter(&self) -> AttachedSession {
        self.count.send_modify(|count| *count += 1);
        AttachedSession {
            count: Arc::clone(&self.count),
        }
    }
}

struct AttachedSession {
    count: Arc<watch::Sender<usize>>,
}

impl Drop for AttachedSession {
    fn drop(&mut self) {
        self.count
            .send_modify(|count| *count = count.saturating_sub(1));
    }
}

/// Serves every process that attaches over the owner's socket, one MCP session each, as the
/// local user (the stdio principal): the socket is reachable only by the state directory's owner.
pub(super) async fn serve_attached(
    listener: UnixListener,
    shared: Arc<Shared>,
    attached: Attached,
    state_uid: u32,
) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "cannot accept on the owner socket");
                tokio::time::sleep(OWN_POLL).await;
                continue;
            }
        };
        match stream.peer_cred() {
            Ok(peer) if peer.uid() == state_uid => {}
            Ok(peer) => {
                tracing::warn!(
                    uid = peer.uid(),
                    "refused a process of another user on the owner socket"
                );
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot tell who connected to the owner socket; refused");
                continue;
            }
        }
        let session = attached.enter();
        let shared = Arc::clone(&shared);
        tracing::info!(
            sessions = attached.now(),
            "a quire serve attached to this one"
        );
        tokio::spawn(async move {
            let (read, write) = stream.into_split();
            if let Err(error) = crate::mcp::serve_stream(shared, read, write).await {
                tracing::debug!(%error, "an attached session ended");
            }
            drop(session);
        });
    }
}

/// The user who owns the state directory, the only one whose processes may attach.
pub(super) fn state_uid(state_dir: &Path) -> anyhow::Result<u32> {
    Ok(std::fs::metadata(state_dir)
        .with_context(|| format!("cannot read the state directory {}", state_dir.display()))?
        .uid())
}
