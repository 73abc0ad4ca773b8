//! Notes as MCP resources: `note://{+path}` URIs, paged listing, reads, and per-session
//! subscriptions that turn vault changes into `resources/updated` and `list_changed` notifications.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use rmcp::ErrorData;
use rmcp::model::{ResourceUpdatedNotificationParam, ServerNotification};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::broadcast;

use crate::acl::Principal;
use crate::index::{ChangeKind, VaultChange};
use crate::ops::Ops;

pub const SCHEME: &str = "note://";
pub const TEMPLATE: &str = "note://{+path}";

/// Characters a `{+path}` expansion must encode: everything outside RFC 6570's unreserved and
/// reserved sets, i.e. controls, space, and `"%<>\^`{|}` (plus non-ASCII, always encoded).
const PATH_ENCODE: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'#')
    .add(b'?')
    .add(b'[')
    .add(b']');

pub fn uri_of(path: &str) -> String {
    format!("{SCHEME}{}", utf8_percent_encode(path, PATH_ENCODE))
}

/// The vault path a `note://` URI names, or an MCP error saying what a valid URI looks like.
pub fn path_of(uri: &str) -> Result<String, ErrorData> {
    let encoded = uri.strip_prefix(SCHEME).ok_or_else(|| {
        ErrorData::invalid_params(
            format!("{uri:?} is not a Quire resource; note URIs look like note://Folder/Note.md"),
            None,
        )
    })?;
    percent_decode_str(encoded)
        .decode_utf8()
        .map(|path| path.into_owned())
        .map_err(|_| {
            ErrorData::invalid_params(
                format!("{uri:?} does not percent-decode to UTF-8 text"),
                None,
            )
        })
}

/// The URIs one session has subscribed to.
#[derive(Debug, Default)]
pub struct Subscriptions {
    uris: Mutex<HashSet<String>>,
}

impl Subscriptions {
    pub fn add(&self, uri: String) {
        self.lock().insert(uri);
    }

    pub fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }

    fn contains(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }

    // The set stays consistent even if a holder panicked, so poisoning is ignored.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.uris
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Forwards vault changes to one client until its connection closes.
/// Changes to notes the session's caller may not read are dropped: neither `resources/updated`
/// nor `list_changed` may hint that such a note exists.
pub async fn forward_changes(
    mut changes: broadcast::Receiver<VaultChange>,
    subscriptions: Arc<Subscriptions>,
    peer: Peer<RoleServer>,
    visible: impl Fn(&str) -> bool + Send + 'static,
) {
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "a slow client missed vault changes");
                if peer.notify_resource_list_changed().await.is_err() {
                    return;
                }
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if !change.path.ends_with(".md") || !visible(&change.path) {
            continue;
        }
        let uri = uri_of(&change.path);
        if subscriptions.contains(&uri) {
            let notification = ServerNotification::ResourceUpdatedNotification(
                rmcp::model::ResourceUpdatedNotification::new(
                    ResourceUpdatedNotificationParam::new(uri),
                ),
            );
            if peer.send_notification(notification).await.is_err() {
                return;
            }
        }
        if change.kind != ChangeKind::Modified && peer.notify_resource_list_changed().await.is_err()
        {
            return;
        }
    }
}

/// Sends `tools/list_changed` when a policy reload changes whether this session's caller may
/// write, which is what decides its tool set.
pub async fn announce_tool_changes(
    mut reloads: broadcast::Receiver<()>,
    ops: Arc<Ops>,
    principal: Principal,
    peer: Peer<RoleServer>,
) {
    let mut writes = ops.policy().may_write_somewhere(&principal);
    loop {
        match reloads.recv().await {
            Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
        let now = ops.policy().may_write_somewhere(&principal);
        if now != writes {
            writes = now;
            if peer.notify_tool_list_changed().await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip() {
        for path in [
            "Daily/2026-11-30.md",
            "Reading/Caf\u{e9} Notes.md",
            "a%b #c?.md",
        ] {
            let uri = uri_of(path);
            assert!(uri.starts_with(SCHEME));
            assert!(!uri.contains(' '));
            assert_eq!(path_of(&uri).expect("decodes"), path);
        }
        assert_eq!(uri_of("A/B c.md"), "note://A/B%20c.md");
        assert!(path_of("file:///etc/passwd").is_err());
    }
}
