//! Socket activation: take over the listening socket systemd passed (`LISTEN_FDS`), preferring
//! the one named `http` (`FileDescriptorName=http`), else the single inherited socket.

use std::net::TcpListener;
use std::os::fd::{FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    #[error("cannot read the sockets systemd passed")]
    Environment(#[source] std::io::Error),
    #[error(
        "systemd passed {count} sockets ({names}) and none is named \"http\"; set FileDescriptorName=http on the socket unit"
    )]
    Ambiguous { count: usize, names: String },
    #[error("the inherited socket is not a TCP listener")]
    NotTcp(#[source] std::io::Error),
}

static TAKEN: AtomicBool = AtomicBool::new(false);

/// The listener systemd handed over, if any. Call it once, early; later calls return `None`.
pub fn inherited_listener() -> Result<Option<TcpListener>, ActivationError> {
    if TAKEN.swap(true, Ordering::SeqCst) {
        return Ok(None);
    }
    let fds: Vec<(RawFd, String)> = sd_notify::listen_fds_with_names()
        .map_err(ActivationError::Environment)?
        .collect();
    let chosen = match fds.as_slice() {
        [] => return Ok(None),
        [(fd, _)] => *fd,
        many => match many.iter().find(|(_, name)| name == "http") {
            Some((fd, _)) => *fd,
            None => {
                return Err(ActivationError::Ambiguous {
                    count: many.len(),
                    names: many
                        .iter()
                        .map(|(_, name)| name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        },
    };
    // SAFETY: systemd passed `chosen` to this very process (sd-notify checked LISTEN_PID), it
    // stays open for our lifetime, and the TAKEN guard above makes this the only place that ever
    // wraps it, so exactly one owner closes it.
    #[allow(unsafe_code, reason = "no safe API adopts the fd systemd passed")]
    let listener = unsafe { TcpListener::from_raw_fd(chosen) };
    listener.local_addr().map_err(ActivationError::NotTcp)?;
    listener
        .set_nonblocking(true)
        .map_err(ActivationError::NotTcp)?;
    Ok(Some(listener))
}
