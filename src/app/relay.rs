//! The stdio client's side of a session whose server may change under it: newline-delimited
//! JSON-RPC relayed between stdin/stdout and a backend, which is either this process's own MCP
//! server (once it owns the vault's state) or the owner's socket. When an owner exits or dies,
//! the relay answers the requests it had in flight with an error, and replays the handshake
//! (initialize, initialized, log level, subscriptions) to the next backend, whose answers to
//! those it keeps from the client: the client sees one session throughout.
//!
//! `Memory` is the bookkeeping, pure; `relay` moves the bytes. Messages are never rewritten on
//! their way, only read for their `id` and `method`.

use std::collections::{BTreeMap, HashSet};

use serde::Deserialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;

/// The longest message a client or server may send (a whole note, JSON-escaped, fits well).
pub(super) const MAX_LINE: usize = 256 * 1024 * 1024;

/// What the relay reads of a message: enough to pair requests with answers and keep the handshake.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<ProbeParams>,
}

#[derive(Deserialize)]
struct ProbeParams {
    #[serde(default)]
    uri: Option<String>,
}

/// What the relay remembers of a session, so a new backend can be given the same session.
#[derive(Default)]
pub(super) struct Memory {
    initialize: Option<String>,
    initialized: Option<String>,
    log_level: Option<String>,
    /// Subscribed resource URIs and the request that subscribed each.
    subscriptions: BTreeMap<String, String>,
    /// Ids (as JSON text) of the client's requests the current backend has not answered.
    in_flight: HashSet<String>,
    /// Ids of replayed requests, whose answers are the relay's and never reach the client.
    replayed: HashSet<String>,
    replays: u64,
}

impl Memory {
    /// Notes a message from the client on its way to the backend.
    pub(super) fn note_client_message(&mut self, line: &str) {
        let Ok(probe) = serde_json::from_str::<Probe>(line) else {
            return;
        };
        let Some(method) = probe.method.as_deref() else {
            // A client's answer to a server request: nothing to remember.
            return;
        };
        if let Some(id) = &probe.id {
            self.in_flight.insert(id.to_string());
        }
        let uri = probe.params.and_then(|params| params.uri);
        match (method, uri) {
            ("initialize", _) => self.initialize = Some(line.to_owned()),
            ("notifications/initialized", _) => self.initialized = Some(line.to_owned()),
            ("logging/setLevel", _) => self.log_level = Some(line.to_owned()),
            ("resources/subscribe", Some(uri)) => {
                self.subscriptions.insert(uri, line.to_owned());
            }
            ("resources/unsubscribe", Some(uri)) => {
                self.subscriptions.remove(&uri);
            }
            _ => {}
        }
    }

    /// Notes a message from the backend; false when it answers a replay and is not the client's.
    pub(super) fn note_backend_message(&mut self, line: &str) -> bool {
        let Ok(probe) = serde_json::from_str::<Probe>(line) else {
            return true;
        };
        match (&probe.id, &probe.method) {
            (Some(id), None) => {
                let id = id.to_string();
                if self.replayed.remove(&id) {
                    return false;
                }
                self.in_flight.remove(&id);
                true
            }
            _ => true,
        }
    }

    /// The errors that answer the requests a backend took with it, to send to the client; the
    /// outcome of a write among them is unknown, and the message says how to find it out.
    pub(super) fn orphaned_answers(&mut self) -> Vec<String> {
        self.replayed.clear();
        self.in_flight
            .drain()
            .filter_map(|id| serde_json::from_str::<serde_json::Value>(&id).ok())
            .map(|id| {
                serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {
                        "code": -32603,
                        "message": "owner_exited: the Quire process that owned this vault exited \
                                    before answering; another one serves it now. A read can be \
                                    sent again; for a write, check the note (vault_read_note) or \
                                    the recent changes before repeating it.",
                    }
                })
                .to_string()
            })
            .collect()
    }

    /// The handshake for a new backend, with fresh ids on its requests; empty before the client
    /// has initialised (the client's own `initialize` then reaches the backend as usual).
    pub(super) fn replay(&mut self) -> Vec<String> {
        let Some(initialize) = self.initialize.clone() else {
            return Vec::new();
        };
        let mut lines = vec![self.with_replay_id(&initialize)];
        lines.extend(self.initialized.clone());
        let requests: Vec<String> = self
            .log_level
            .iter()
            .chain(self.subscriptions.values())
            .cloned()
            .collect();
        for request in requests {
            lines.push(self.with_replay_id(&request));
        }
        lines
    }

    fn with_replay_id(&mut self, request: &str) -> String {
        self.replays += 1;
        let id = format!("quire-relay-replay-{}", self.replays);
        let mut message: serde_json::Value = match serde_json::from_str(request) {
            Ok(message) => message,
            Err(_) => return request.to_owned(),
        };
        if let Some(object) = message.as_object_mut() {
            object.insert("id".into(), serde_json::Value::String(id.clone()));
        }
        self.replayed
            .insert(serde_json::Value::String(id).to_string());
        message.to_string()
    }

    /// Whether the client has a session that a new backend must be told of.
    pub(super) fn initialised(&self) -> bool {
        self.initialize.is_some()
    }
}

/// Reads one line of at most `MAX_LINE` bytes, without its newline; `None` at the end.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Option<String>> {
    let mut line = Vec::new();
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok((!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned()));
        }
        let (taken, done) = match buffer.iter().position(|byte| *byte == b'\n') {
            Some(end) => (end + 1, true),
            None => (buffer.len(), false),
        };
        line.extend_from_slice(&buffer[..taken]);
        reader.consume(taken);
        if line.len() > MAX_LINE {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a message longer than {MAX_LINE} bytes"),
            ));
        }
        if done {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
        }
    }
}

/// Reads lines on a task of its own into a channel, so a reader is never cut mid-line by a
/// `select!`; the channel closes at the end of the stream or on a read error.
pub(super) fn lines_of<R>(reader: R) -> mpsc::Receiver<String>
where
    R: AsyncRead + Send + Unpin + 'static,
{
    let (sender, receiver) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(reader);
        loop {
            match read_line(&mut reader).await {
                Ok(Some(line)) if line.trim().is_empty() => {}
                Ok(Some(line)) => {
                    if sender.send(line).await.is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Err(error) => {
                    tracing::warn!(%error, "stopped reading a message stream");
                    return;
                }
            }
        }
    });
    receiver
}

/// Why a relay ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// The client closed stdin (or stdout failed): the session is over.
    Client,
    /// The backend went away: the client's session goes on with the next one.
    Backend,
}

/// Relays until the client or the backend goes away. A new backend first gets the replayed
/// handshake; a backend that goes away leaves its in-flight requests answered with an error.
pub(super) async fn relay<W, BW>(
    memory: &mut Memory,
    client_lines: &mut mpsc::Receiver<String>,
    client_out: &mut W,
    mut backend_lines: mpsc::Receiver<String>,
    mut backend_out: BW,
) -> Ended
where
    W: AsyncWrite + Unpin,
    BW: AsyncWrite + Unpin,
{
    for line in memory.replay() {
        if send(&mut backend_out, &line).await.is_err() {
            return backend_gone(memory, client_out).await;
        }
    }
    loop {
        tokio::select! {
            line = client_lines.recv() => {
                let Some(line) = line else { return Ended::Client };
                memory.note_client_message(&line);
                if send(&mut backend_out, &line).await.is_err() {
                    return backend_gone(memory, client_out).await;
                }
            }
            line = backend_lines.recv() => {
                let Some(line) = line else {
                    return backend_gone(memory, client_out).await;
                };
                if memory.note_backend_message(&line) && send(client_out, &line).await.is_err() {
                    return Ended::Client;
                }
            }
        }
    }
}

async fn backend_gone<W: AsyncWrite + Unpin>(memory: &mut Memory, client_out: &mut W) -> Ended {
    for answer in memory.orphaned_answers() {
        if send(client_out, &answer).await.is_err() {
            return Ended::Client;
        }
    }
    Ended::Backend
}

async fn send<W: AsyncWrite + Unpin>(out: &mut W, line: &str) -> std::io::Result<()> {
    out.write_all(line.as_bytes()).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

    #[test]
    fn a_new_backend_gets_the_handshake_and_its_answers_stay_with_the_relay() {
        let mut memory = Memory::default();
        memory.note_client_message(INITIALIZE);
        memory.note_backend_message(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        memory.note_client_message(INITIALIZED);
        memory.note_client_message(r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"note://a.md"}}"#);
        memory.note_client_message(r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"note://b.md"}}"#);
        memory.note_client_message(r#"{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"note://a.md"}}"#);
        memory.note_client_message(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"vault_write_note"}}"#);
        for id in 1..4 {
            memory.note_backend_message(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#));
        }

        let orphaned = memory.orphaned_answers();
        assert_eq!(orphaned.len(), 1, "{orphaned:?}");
        assert!(orphaned[0].contains(r#""id":4"#) && orphaned[0].contains("owner_exited"));

        let replay = memory.replay();
        assert_eq!(replay.len(), 3, "{replay:?}");
        assert!(replay[0].contains(r#""method":"initialize""#));
        assert!(!replay[0].contains(r#""id":0"#));
        assert_eq!(replay[1], INITIALIZED);
        assert!(replay[2].contains("note://b.md"));
        let first_id = r#"{"jsonrpc":"2.0","id":"quire-relay-replay-1","result":{}}"#;
        assert!(
            !memory.note_backend_message(first_id),
            "a replay's answer reached the client"
        );
        assert!(memory.note_backend_message(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#));
    }

    #[test]
    fn nothing_is_replayed_before_the_client_initialises() {
        let mut memory = Memory::default();
        assert!(memory.replay().is_empty());
        memory.note_client_message("not json");
        assert!(!memory.initialised());
    }

    #[tokio::test]
    async fn lines_end_at_newlines_and_blank_ones_are_skipped() {
        let (mut writer, reader) = tokio::io::duplex(1024);
        let mut lines = lines_of(reader);
        writer
            .write_all(b"{\"a\":1}\r\n\n{\"b\":2}\n")
            .await
            .unwrap();
        assert_eq!(lines.recv().await.as_deref(), Some("{\"a\":1}"));
        assert_eq!(lines.recv().await.as_deref(), Some("{\"b\":2}"));
        drop(writer);
        assert_eq!(lines.recv().await, None);
    }
}
