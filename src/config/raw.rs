//! The configuration file as TOML has it: one `Raw*` type per table, every key optional unless
//! the file is useless without it, and unknown keys refused (`deny_unknown_fields`), so a typo is
//! an error naming it rather than a silently ignored setting. Nothing here is checked; `load.rs`
//! and its helpers lower these into `Config`.

use std::path::PathBuf;

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    pub(super) sandbox: Option<String>,
    #[serde(default)]
    pub(super) vault: RawVault,
    #[serde(default)]
    pub(super) index: RawIndex,
    #[serde(default)]
    pub(super) limits: RawLimits,
    #[serde(default)]
    pub(super) http: RawHttp,
    #[serde(default)]
    pub(super) features: RawFeatures,
    #[serde(default)]
    pub(super) tools: RawTools,
    #[serde(default)]
    pub(super) acl: RawAcl,
    #[serde(default, rename = "identity")]
    pub(super) identities: Vec<RawIdentity>,
    #[serde(default)]
    pub(super) oauth: RawOAuth,
    #[serde(default)]
    pub(super) time: RawTime,
    #[serde(default)]
    pub(super) daily_notes: RawDailyNotes,
    #[serde(default)]
    pub(super) search: RawSearch,
    #[serde(default)]
    pub(super) sync: RawSync,
    #[serde(default)]
    pub(super) memory: RawMemory,
    #[serde(default)]
    pub(super) history: RawHistory,
    #[serde(default)]
    pub(super) safety: RawSafety,
    #[serde(default)]
    pub(super) files: RawFiles,
    #[serde(default)]
    pub(super) audit: RawAudit,
}

/// `[files]`: reading the vault's files that are not notes (`vault_read_file`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFiles {
    pub(super) max_read_bytes: Option<u64>,
    pub(super) image_budget_bytes: Option<usize>,
    pub(super) max_text_bytes: Option<usize>,
    pub(super) pdf_render_pages: Option<usize>,
    pub(super) pdfium_library: Option<PathBuf>,
}

/// `[memory]`: the folder where agents keep dated facts about the user.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMemory {
    pub(super) enabled: Option<bool>,
    pub(super) folder: Option<String>,
}

/// `[sync]`: the files Quire shares with the vault's sync service (docs/SYNC.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSync {
    pub(super) lock_file: Option<PathBuf>,
    pub(super) first_sync_marker: Option<PathBuf>,
    pub(super) status_file: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSearch {
    pub(super) embeddings: Option<bool>,
    pub(super) model_dir: Option<PathBuf>,
    pub(super) onnxruntime: Option<PathBuf>,
    pub(super) reranker_dir: Option<PathBuf>,
    pub(super) rerank: Option<String>,
}

/// Overrides for Obsidian's daily-notes settings; each key set here wins over the vault's.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDailyNotes {
    pub(super) folder: Option<String>,
    pub(super) format: Option<String>,
    pub(super) template: Option<String>,
    pub(super) week_start: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOAuth {
    pub(super) client_id_metadata_documents: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTime {
    /// An IANA name such as `Europe/Berlin`; absent means the system's zone.
    pub(super) timezone: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAcl {
    #[serde(default)]
    pub(super) always_deny: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIdentity {
    pub(super) name: String,
    pub(super) token_file: Option<PathBuf>,
    pub(super) token_env: Option<String>,
    #[serde(default)]
    pub(super) read: Vec<String>,
    #[serde(default)]
    pub(super) write: Vec<String>,
    #[serde(default)]
    pub(super) deny: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    pub(super) listen: Option<String>,
    pub(super) public_url: Option<String>,
    #[serde(default)]
    pub(super) allowed_hosts: Vec<String>,
    pub(super) max_sessions: Option<usize>,
    pub(super) max_sessions_per_identity: Option<usize>,
    #[serde(default)]
    pub(super) trusted_proxies: Vec<String>,
}

/// `[tools]`: which tool groups the server offers (default: all).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTools {
    pub(super) groups: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFeatures {
    #[serde(default)]
    pub(super) read_only: bool,
    #[serde(default)]
    pub(super) disabled_tools: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVault {
    pub(super) path: Option<PathBuf>,
    /// Folders `vault_delete_note` and `vault_move_note` refuse to touch; replaces the default
    /// (the memory and daily-notes folders).
    pub(super) protected_folders: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIndex {
    pub(super) path: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHistory {
    pub(super) enabled: Option<bool>,
    pub(super) max_bytes: Option<u64>,
    pub(super) max_age_days: Option<u64>,
}

/// `[safety]`: when destructive calls ask the user first.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSafety {
    pub(super) confirm: Option<String>,
    pub(super) confirm_over: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAudit {
    pub(super) max_bytes: Option<u64>,
    pub(super) keep: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    pub(super) max_note_bytes: Option<u64>,
}
