//! Configuration: the TOML file and command-line flags, lowered once into a validated `Config`.
//!
//! `RawConfig` (`raw.rs`) mirrors the file exactly and refuses unknown keys; `Config::load`
//! (`load.rs`) applies flag overrides, resolves relative paths, derives the state directory, and
//! checks every value through `lower.rs` and `access.rs`, naming the offending key in its error.
//! Nothing downstream reads the environment or the file again. This file holds the checked types;
//! `secret.rs` the rule for reading a secret file.

mod access;
mod load;
mod lower;
mod raw;
mod secret;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use jiff::tz::TimeZone;
use url::Url;

use crate::ops::{AuditRotation, FileSettings};
use crate::tool_groups::ToolGroup;
use crate::vault::{DailyNotesOverrides, VaultPath};
pub use access::{Access, MIN_TOKEN_CHARS};
pub use secret::{SecretFileError, read_secret_file};

/// The largest note Quire reads or writes unless configured otherwise.
pub const DEFAULT_MAX_NOTE_BYTES: u64 = 10 * 1024 * 1024;
const MAX_NOTE_BYTES_CEILING: u64 = 1024 * 1024 * 1024;

/// How a cross-encoder's scores combine with the fused ranking (`search.rerank`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankMode {
    Off,
    /// Position-aware blending of the fused rank and the reranker's score.
    Blended,
}

/// `[search]`: semantic search settings, with what the environment adds.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    /// Where the library and models are looked for (`search.embeddings`, `model_dir`,
    /// `onnxruntime`, `reranker_dir`, `ORT_DYLIB_PATH`, the data directory), lowered into the type
    /// `embed` resolves them from.
    pub models: crate::embed::ModelSources,
    pub rerank: RerankMode,
}

/// Command-line values that override the file.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub vault: Option<PathBuf>,
    pub index: Option<PathBuf>,
    /// `serve --http ADDR`.
    pub http_listen: Option<String>,
    /// `serve --no-auth`.
    pub no_auth: bool,
}

/// The environment values configuration depends on, gathered by `main` so this module stays
/// testable without touching the process environment.
#[derive(Debug, Default, Clone)]
pub struct Environment {
    pub current_dir: PathBuf,
    pub home: Option<PathBuf>,
    pub xdg_state_home: Option<PathBuf>,
    /// Set by systemd's `StateDirectory=`.
    pub state_directory: Option<PathBuf>,
    /// The process environment, for `token_env` (development only).
    pub variables: HashMap<String, String>,
    /// The system's time zone (`$TZ`, else `/etc/localtime`), when it could be determined.
    pub system_time_zone: Option<TimeZone>,
}

impl Environment {
    pub fn from_process() -> Environment {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Environment {
            current_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            home: non_empty("HOME"),
            xdg_state_home: non_empty("XDG_STATE_HOME"),
            state_directory: non_empty("STATE_DIRECTORY")
                // systemd passes a colon-separated list when several are configured.
                .and_then(|dirs| {
                    dirs.to_str()
                        .and_then(|d| d.split(':').next())
                        .map(PathBuf::from)
                }),
            variables: std::env::vars().collect(),
            // Read once, before the sandbox exists; a reload reuses it.
            system_time_zone: TimeZone::try_system().ok(),
        }
    }
}

/// The validated configuration every component is built from.
#[derive(Debug, Clone)]
pub struct Config {
    pub config_file: Option<PathBuf>,
    /// Canonical path of the vault folder.
    pub vault: PathBuf,
    /// Where derived state (index, tokens, audit log) lives; never inside the vault.
    pub state_dir: PathBuf,
    pub index: PathBuf,
    pub max_note_bytes: u64,
    /// Set when Quire should serve Streamable HTTP instead of stdio.
    pub http: Option<HttpConfig>,
    /// `[http]` bounds that hold whenever HTTP is served, from `http.listen` or a socket systemd
    /// passed.
    pub http_limits: HttpLimits,
    pub read_only: bool,
    pub disabled_tools: Vec<String>,
    /// `[tools] groups`: the tool groups served, each once.
    pub tool_groups: Vec<ToolGroup>,
    pub sandbox: Sandbox,
    pub access: Access,
    pub oauth: OAuthConfig,
    /// The zone that decides "today" (daily notes, done dates, recurrence).
    pub time_zone: TimeZone,
    pub time_zone_origin: TimeZoneOrigin,
    /// `[daily_notes]`: values that win over `.obsidian/daily-notes.json`.
    pub daily_notes: DailyNotesOverrides,
    pub search: SearchConfig,
    pub sync: SyncConfig,
    /// `[memory]`: the memory layer's folder, or `None` when the layer is off.
    pub memory_folder: Option<VaultPath>,
    /// `[files]`: caps and budgets for `vault_read_file`, and where pdfium is looked for.
    pub files: FileSettings,
    /// `[vault] protected_folders`: the folders notes cannot be deleted from or moved out of or
    /// into; `None` for the default (the memory folder and the daily-notes folder, resolved on
    /// every call).
    pub protected_folders: Option<Vec<VaultPath>>,
    /// `[audit]`: when the audit log rotates.
    pub audit: AuditRotation,
    /// `[history]`: how much of every note's history is kept, or `None` when it is off.
    pub history: Option<crate::history::Retention>,
    /// `[safety]`: when destructive calls ask the user first.
    pub safety: crate::ops::Safety,
}

/// `[sync]`: how Quire cooperates with the vault's sync service (docs/SYNC.md). Each path is
/// absolute (relative ones are taken from the config file's folder) and outside the vault.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncConfig {
    /// Held shared (`flock`) during every write; the sync takes it exclusively.
    pub lock_file: Option<PathBuf>,
    /// Written by the sync once the first sync has completed; Quire serves only after that.
    pub first_sync_marker: Option<PathBuf>,
    /// The sync's JSON status (last success, conflicts), shown by `quire doctor` and `/healthz`.
    pub status_file: Option<PathBuf>,
}

/// The test-only variable that lets Client ID Metadata Documents come from this machine.
pub const CIMD_TEST_PORT_VARIABLE: &str = "QUIRE_TEST_CIMD_LOOPBACK_PORT";

/// `[oauth]`: how the authorization server (on when identities are configured) accepts clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// Accept https URLs as client IDs and fetch their Client ID Metadata Documents (outbound
    /// HTTPS, so the sandbox allows connecting to port 443). On by default.
    pub client_id_metadata_documents: bool,
    /// Tests only (`QUIRE_TEST_CIMD_LOOPBACK_PORT`): documents may also come from loopback
    /// addresses on this port, which the SSRF guard otherwise refuses.
    pub test_loopback_port: Option<u16>,
}

/// Where the time zone came from, for `check-config` and `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeZoneOrigin {
    /// `[time] timezone` in the config file.
    Configured,
    /// The system's zone (`$TZ` or `/etc/localtime`).
    System,
    /// Neither was available, so UTC.
    Fallback,
}

/// How strictly to confine the process with landlock (`sandbox = "..."`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    Required,
    BestEffort,
    Off,
}

#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub listen: SocketAddr,
    /// The external base URL (scheme, host, optional port), when behind a reverse proxy.
    pub public_url: Option<Url>,
    /// Extra `Host` values to accept, beyond loopback names and the public URL's host.
    pub allowed_hosts: Vec<String>,
    /// False only with `--no-auth`, which is accepted on loopback addresses alone.
    pub auth: bool,
}

/// At most this many 2025-11-25 MCP sessions are open at once unless configured otherwise: each
/// holds about 70 KiB until it ends, so about 70 MiB in all (docs/RELIABILITY.md, *Sessions*).
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// At most this many of them belong to one identity unless configured otherwise.
pub const DEFAULT_MAX_SESSIONS_PER_IDENTITY: usize = 64;
/// Neither cap may exceed this: about 7 GB of sessions.
const MAX_SESSIONS_CEILING: usize = 100_000;

/// `[http]` bounds on what callers can make the server hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Open 2025-11-25 sessions in all; a new one beyond it is refused (HTTP 503).
    pub max_sessions: usize,
    /// Open sessions of one identity; a new one beyond it closes that identity's least recently
    /// used session.
    pub max_sessions_per_identity: usize,
    /// Reverse proxies whose `X-Forwarded-For` says who is calling, for the OAuth rate limits;
    /// empty (the default), the header is ignored.
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid config file {path}:{message}")]
    Parse { path: PathBuf, message: String },
    #[error(
        "no vault given: pass --vault DIR or set `path` in the [vault] section of the config file"
    )]
    NoVault,
    #[error("vault.path: {path} does not exist or is not a folder ({reason})")]
    VaultMissing { path: PathBuf, reason: String },
    #[error(
        "{key}: {path} is inside the vault; state must live outside it so a sync client never uploads it (pick a folder outside {vault})"
    )]
    StateInsideVault {
        key: &'static str,
        path: PathBuf,
        vault: PathBuf,
    },
    #[error(
        "cannot find a state directory: set XDG_STATE_HOME or HOME, or set `path` in the [index] section"
    )]
    NoStateDir,
    #[error(
        "limits.max_note_bytes: {value} is out of range; use a number of bytes from 1 to {max}"
    )]
    MaxNoteBytes { value: u64, max: u64 },
    #[error("history.{key}: {value} is out of range; use {range}")]
    History {
        key: &'static str,
        value: u64,
        range: &'static str,
    },
    #[error("safety.{key}: {value} is not valid; use {expected}")]
    Safety {
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("audit.{key}: {value} is out of range; use {range}")]
    Audit {
        key: &'static str,
        value: u64,
        range: &'static str,
    },
    #[error("http.listen: {value:?} is not an address; use IP:PORT such as 127.0.0.1:8787")]
    Listen { value: String },
    #[error(
        "--no-auth is accepted only on a loopback address, and {listen} is not one; drop --no-auth (clients then need the bearer token) or bind 127.0.0.1"
    )]
    NoAuthOffLoopback { listen: SocketAddr },
    #[error("--no-auth applies to HTTP only; add --http 127.0.0.1:PORT or set http.listen")]
    NoAuthWithoutHttp,
    #[error("http.public_url: {value:?} is not an http(s) URL such as https://notes.example.org")]
    PublicUrl { value: String },
    #[error(
        "{key}: {value:?} is not an address or prefix; give the reverse proxy's address, such as \"127.0.0.1\" or \"10.0.0.0/8\""
    )]
    TrustedProxy { key: String, value: String },
    #[error(
        "sandbox: {value:?} is not a sandbox mode; use \"required\", \"best-effort\" or \"off\""
    )]
    SandboxMode { value: String },
    #[error("features.disabled_tools: unknown tool {name:?}; known tools are {known}")]
    UnknownTool { name: String, known: String },
    #[error("tools.groups: unknown group {name:?}; the groups are {valid}")]
    UnknownToolGroup { name: String, valid: String },
    #[error(
        "tools.groups is empty, which would serve no tools; name at least one of {valid}, or leave the key out to serve them all"
    )]
    NoToolGroups { valid: String },
    #[error("{key}: {message}")]
    Access { key: String, message: String },
    #[error("daily_notes.{key}: {message}")]
    DailyNotes { key: &'static str, message: String },
    #[error(
        "time.timezone: {value:?} is not an IANA time zone name; use one such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\", or leave the key out to use the system's zone"
    )]
    TimeZone { value: String },
    #[error("{key}: {message}")]
    Search { key: &'static str, message: String },
    #[error("{key}: {message}")]
    Setting { key: &'static str, message: String },
}

impl Config {
    /// Whether this configuration serves OAuth (HTTP with auth and identities) and fetches Client
    /// ID Metadata Documents, and so needs outbound HTTPS. `socket_activated`: systemd passed a
    /// listening socket, which means HTTP (with auth) even without `http.listen`.
    pub fn fetches_client_metadata(&self, socket_activated: bool) -> bool {
        self.oauth.client_id_metadata_documents
            && self.access.has_identities
            && self
                .http
                .as_ref()
                .map_or(socket_activated, |http| http.auth)
    }

    /// The time zone as `check-config` and `doctor` print it.
    pub fn time_zone_description(&self) -> String {
        let name = self.time_zone.iana_name().unwrap_or("an unnamed zone");
        match self.time_zone_origin {
            TimeZoneOrigin::Configured => format!("{name} (time.timezone)"),
            TimeZoneOrigin::System => format!("{name} (the system's)"),
            TimeZoneOrigin::Fallback => {
                "UTC (the system's zone could not be determined; set time.timezone)".into()
            }
        }
    }

    /// The vault's folder name, shown to clients and used to name the state directory.
    pub fn vault_name(&self) -> String {
        load::vault_name(&self.vault)
    }
}

/// Looks up an IANA time zone name: in the system's database (`$TZDIR`, `/usr/share/zoneinfo`,
/// `/etc/zoneinfo` on NixOS) first, so tzdata updates apply, then in the copy compiled into Quire,
/// so a machine (or a sandbox) without a readable system database still knows every zone.
pub fn resolve_time_zone(name: &str) -> Option<TimeZone> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    jiff::tz::db()
        .get(name)
        .or_else(|_| jiff::tz::TimeZoneDatabase::bundled().get(name))
        .ok()
        // `Etc/Unknown` is a real entry meaning "no zone"; as a setting it is a mistake.
        .filter(|zone| !zone.is_unknown())
}
