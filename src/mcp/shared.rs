//! What every session of one server shares, computed once when the server starts: the
//! operations, the vault's change events, the feature set, and the tool list it yields (a
//! stateless client makes every request a session of its own, so nothing here may be per session).

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::instructions::Instructions;
use super::{QuireServer, ToolGroup, tools};
use crate::index::VaultChange;
use crate::ops::Ops;

/// Which tools a deployment offers.
#[derive(Debug, Clone)]
pub struct Features {
    pub read_only: bool,
    pub disabled_tools: Vec<String>,
    /// The tool groups served (`[tools] groups`).
    pub groups: Vec<ToolGroup>,
    /// When destructive calls ask the user first (`[safety]`).
    pub safety: crate::ops::Safety,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            read_only: false,
            disabled_tools: Vec::new(),
            groups: ToolGroup::ALL.to_vec(),
            safety: crate::ops::Safety::default(),
        }
    }
}

/// Everything sessions share: the operations, vault change events and the feature set, and what
/// is derived from them once rather than per session (a stateless client makes every request a
/// session of its own).
pub struct Shared {
    pub ops: Arc<Ops>,
    /// Seals the questions of destructive calls under 2026-07-28 (`confirm`).
    pub confirmations: super::confirm::Confirmations,
    pub changes: broadcast::Sender<VaultChange>,
    pub features: Features,
    /// Ticks whenever the access policy is replaced, so sessions whose tool set changed can say so.
    pub policy_changes: broadcast::Sender<()>,
    pub(super) instructions: Arc<Instructions>,
    /// Fires when the server begins to shut down: `subscriptions/listen` streams end with their
    /// final result before the transport closes.
    pub closing: CancellationToken,
    /// The tools this deployment offers (the feature set applied), before per-caller filtering.
    /// Shared, not cloned per handler: a stateless request builds a handler, and cloning some 60
    /// routes with their schemas was about 4 % of the CPU of 32 connections reading notes.
    pub(super) tools: Arc<ToolRouter<QuireServer>>,
    /// What `tools/list` shows a caller who may write, and one who may only read: descriptions
    /// never mention a tool the list leaves out.
    pub(super) listed: tools::Listings,
}

impl Shared {
    /// Computes the shared parts once; call [`Shared::follow_changes`] to keep them current.
    pub fn new(
        ops: Arc<Ops>,
        changes: broadcast::Sender<VaultChange>,
        features: Features,
        policy_changes: broadcast::Sender<()>,
    ) -> Shared {
        let tools = offered_tools(&features);
        let listed = tools::Listings::new(&tools);
        let instructions = Arc::new(Instructions::new(&ops, listed.offered_names()));
        Shared {
            ops,
            changes,
            features,
            policy_changes,
            instructions,
            closing: CancellationToken::new(),
            confirmations: super::confirm::Confirmations::default(),
            tools: Arc::new(tools),
            listed,
        }
    }

    /// Keeps the server instructions current as the vault and the policy change; runs until the
    /// change channels close.
    pub async fn follow_changes(self: Arc<Self>) {
        Arc::clone(&self.instructions)
            .follow(
                Arc::clone(&self.ops),
                self.changes.subscribe(),
                self.policy_changes.subscribe(),
            )
            .await;
    }
}

/// The served groups' tools minus those the deployment turns off (read-only, `disabled_tools`).
fn offered_tools(features: &Features) -> ToolRouter<QuireServer> {
    let mut tool_router = tools::router(&features.groups);
    let removed: HashSet<String> = tool_router
        .list_all()
        .into_iter()
        .filter(|tool| {
            (features.read_only && tools::writes(tool))
                || features
                    .disabled_tools
                    .iter()
                    .any(|name| name == tool.name.as_ref())
        })
        .map(|tool| tool.name.to_string())
        .collect();
    for name in &removed {
        tool_router.remove_route(name);
    }
    tool_router
}
