//! MCP logging (`logging/setLevel`, `notifications/message`) for one session.
//!
//! The 2026-07-28 revision drops protocol logging and rmcp marks it deprecated, but clients on
//! 2025-11-25 still use it, so this module keeps it alive in one place with the lint allowed.
#![allow(deprecated)]

use std::sync::Mutex;

use rmcp::model::{
    LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParam, ServerNotification,
};
use rmcp::service::{Peer, RoleServer};

/// The minimum level a client asked for; `info` until it says otherwise.
#[derive(Debug)]
pub struct ClientLogLevel(Mutex<LoggingLevel>);

impl Default for ClientLogLevel {
    fn default() -> Self {
        ClientLogLevel(Mutex::new(LoggingLevel::Info))
    }
}

impl ClientLogLevel {
    pub fn set(&self, level: LoggingLevel) {
        *self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = level;
    }

    fn wants(&self, level: LoggingLevel) -> bool {
        let wanted = *self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        severity(level) >= severity(wanted)
    }

    /// Tells the client about a failed tool call: internal errors at `error`, others at `warning`.
    pub async fn tool_failed(&self, peer: &Peer<RoleServer>, tool: &str, code: &str, text: &str) {
        let level = if code == "internal" {
            LoggingLevel::Error
        } else {
            LoggingLevel::Warning
        };
        if !self.wants(level) {
            return;
        }
        let mut param = LoggingMessageNotificationParam::new(
            level,
            serde_json::Value::String(format!("{tool} failed: {text}")),
        );
        param.logger = Some("quire".into());
        let notification =
            ServerNotification::LoggingMessageNotification(LoggingMessageNotification::new(param));
        // A client that went away cannot be told anything; the log on stderr still has it.
        let _ = peer.send_notification(notification).await;
    }
}

fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
