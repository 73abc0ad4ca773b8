//! Notes as MCP resources: `note://{+path}` URIs, paged listing, reads, and per-session
//! subscriptions that turn vault changes into `resources/updated` and `list_changed` notifications.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam,
    ServerNotification,
};
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::error::resource_error;
use crate::acl::Principal;
use crate::index::{ChangeKind, VaultChange};
use crate::ops::{self, Context, Ops};

pub const SCHEME: &str = "note://";
pub const TEMPLATE: &str = "note://{+path}";

/// Page size of `resources/list`.
const RESOURCE_PAGE: u32 = 200;

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
    // Another scheme names nothing here: "not found", with the URI in `data` as the spec asks.
    let encoded = uri.strip_prefix(SCHEME).ok_or_else(|| {
        ErrorData::resource_not_found(
            format!("{uri:?} is not a Quire resource; note URIs look like note://Folder/Note.md"),
            Some(serde_json::json!({ "uri": uri })),
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

/// One page of `resources/list`: the notes `principal` may read, from `cursor` on.
pub async fn list(
    ops: Arc<Ops>,
    principal: Principal,
    cursor: Option<String>,
) -> Result<ListResourcesResult, ErrorData> {
    let listed = tokio::task::spawn_blocking(move || {
        ops.list_notes(
            &Context::new(principal, "resources/list"),
            ops::ListNotes {
                limit: Some(RESOURCE_PAGE),
                cursor,
                ..ops::ListNotes::default()
            },
        )
    })
    .await
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    .map_err(|error| resource_error(error, None))?;
    let resources = listed
        .notes
        .into_iter()
        .map(|note| {
            let mut resource = Resource::new(uri_of(&note.path), note.path);
            resource.title = Some(note.title);
            resource.mime_type = Some("text/markdown".into());
            resource.size = Some(note.bytes);
            resource
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = listed.next_cursor;
    Ok(result)
}

/// The one resource template: a note by its path.
pub fn templates() -> ListResourceTemplatesResult {
    let mut template = ResourceTemplate::new(TEMPLATE, "note");
    template.title = Some("Vault note".into());
    template.description = Some("A markdown note of the vault, by its vault-relative path.".into());
    template.mime_type = Some("text/markdown".into());
    ListResourceTemplatesResult::with_all_items(vec![template])
}

/// `resources/read` of the note `uri` names, whole, as `principal` may read it.
pub async fn read(
    ops: Arc<Ops>,
    principal: Principal,
    uri: String,
) -> Result<ReadResourceResponse, ErrorData> {
    let path = path_of(&uri)?;
    let read = tokio::task::spawn_blocking(move || {
        ops.read_note(
            &Context::new(principal, "resources/read"),
            ops::ReadNote {
                path,
                mode: ops::ReadMode::Full {
                    start_line: None,
                    limit: None,
                },
            },
        )
    })
    .await
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
    .map_err(|error| resource_error(error, Some(&uri)))?;
    let contents = ResourceContents::text(read.content.unwrap_or_default(), uri)
        .with_mime_type("text/markdown");
    Ok(ReadResourceResult::new(vec![contents]).into())
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
    session_ended: CancellationToken,
) {
    loop {
        let received = tokio::select! {
            () = session_ended.cancelled() => return,
            received = changes.recv() => received,
        };
        let change = match received {
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
        let Some((uri, list_changed)) = notice(&change, &visible) else {
            continue;
        };
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
        if list_changed && peer.notify_resource_list_changed().await.is_err() {
            return;
        }
    }
}

/// What a vault change means to a client: the note's URI and whether the list of notes changed;
/// nothing for files that are not notes or that the caller may not read.
fn notice(change: &VaultChange, visible: &impl Fn(&str) -> bool) -> Option<(String, bool)> {
    if !change.path.ends_with(".md") || !visible(&change.path) {
        return None;
    }
    Some((uri_of(&change.path), change.kind != ChangeKind::Modified))
}

/// The streams one `subscriptions/listen` request (MCP 2026-07-28) follows.
pub struct Listen {
    pub ops: Arc<Ops>,
    pub principal: Principal,
    pub changes: broadcast::Receiver<VaultChange>,
    pub reloads: broadcast::Receiver<()>,
    /// Fires when the server begins to shut down, so the stream ends with its final result.
    pub closing: CancellationToken,
}

/// Serves one `subscriptions/listen` stream until the client cancels it, the connection drops or
/// the server shuts down. The sink sends only what the acknowledged filter holds and stamps the
/// subscription id on each notification; a note the caller may not read never produces one.
pub async fn listen(subscription: &SubscriptionContext, mut streams: Listen) {
    let sink = subscription.sink();
    let accepted = sink.accepted().clone();
    let subscribed = |uri: &str| {
        accepted
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.iter().any(|u| u == uri))
    };
    let ops = Arc::clone(&streams.ops);
    let principal = streams.principal.clone();
    let visible = move |path: &str| {
        ops.visibility(&Context::new(principal.clone(), "subscriptions/listen"))
            .shows(path)
    };
    let mut writes = streams.ops.policy().may_write_somewhere(&streams.principal);
    loop {
        let sent = tokio::select! {
            () = subscription.cancelled() => return,
            () = streams.closing.cancelled() => return,
            change = streams.changes.recv() => match change {
                Ok(change) => match notice(&change, &visible) {
                    None => Ok(()),
                    Some((uri, list_changed)) => {
                        let mut sent = Ok(());
                        if subscribed(&uri) {
                            sent = sink.notify_resource_updated(uri).await;
                        }
                        if sent.is_ok() && list_changed && accepted.resources_list_changed == Some(true) {
                            sent = sink.notify_resource_list_changed().await;
                        }
                        sent
                    }
                },
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    // Which notes changed is lost: tell the client to re-read what it follows.
                    tracing::debug!(missed, "a slow subscription missed vault changes");
                    let mut sent = Ok(());
                    for uri in accepted.resource_subscriptions.iter().flatten() {
                        let readable = path_of(uri).is_ok_and(|path| visible(&path));
                        if sent.is_ok() && readable {
                            sent = sink.notify_resource_updated(uri.clone()).await;
                        }
                    }
                    if sent.is_ok() && accepted.resources_list_changed == Some(true) {
                        sent = sink.notify_resource_list_changed().await;
                    }
                    sent
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            reload = streams.reloads.recv() => match reload {
                Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    let now = streams.ops.policy().may_write_somewhere(&streams.principal);
                    if now != writes && accepted.tools_list_changed == Some(true) {
                        writes = now;
                        sink.notify_tool_list_changed().await
                    } else {
                        writes = now;
                        Ok(())
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        if let Err(error) = sent {
            tracing::debug!(%error, "a subscription stream ended");
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
    session_ended: CancellationToken,
) {
    let mut writes = ops.policy().may_write_somewhere(&principal);
    loop {
        let received = tokio::select! {
            () = session_ended.cancelled() => return,
            received = reloads.recv() => received,
        };
        match received {
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
