//! Configuration: the TOML file and command-line flags, lowered once into a validated `Config`.
//!
//! `RawConfig` mirrors the file exactly and refuses unknown keys; `Config::load` applies flag
//! overrides, resolves relative paths, derives the state directory, and checks every value, naming
//! the offending key in its error. Nothing downstream reads the environment or the file again.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use std::collections::{BTreeMap, HashMap};

use jiff::tz::TimeZone;
use serde::Deserialize;
use url::Url;

use crate::acl::{IdentityRules, Policy, Rule};
use crate::mcp::ToolGroup;
use crate::ops::{AuditRotation, FileSettings};
use crate::vault::{DailyNotesOverrides, VaultPath, WeekStart};

/// The largest note Quire reads or writes unless configured otherwise.
pub const DEFAULT_MAX_NOTE_BYTES: u64 = 10 * 1024 * 1024;
const MAX_NOTE_BYTES_CEILING: u64 = 1024 * 1024 * 1024;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    sandbox: Option<String>,
    #[serde(default)]
    vault: RawVault,
    #[serde(default)]
    index: RawIndex,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    http: RawHttp,
    #[serde(default)]
    features: RawFeatures,
    #[serde(default)]
    tools: RawTools,
    #[serde(default)]
    acl: RawAcl,
    #[serde(default, rename = "identity")]
    identities: Vec<RawIdentity>,
    #[serde(default)]
    oauth: RawOAuth,
    #[serde(default)]
    time: RawTime,
    #[serde(default)]
    daily_notes: RawDailyNotes,
    #[serde(default)]
    search: RawSearch,
    #[serde(default)]
    sync: RawSync,
    #[serde(default)]
    memory: RawMemory,
    #[serde(default)]
    files: RawFiles,
    #[serde(default)]
    audit: RawAudit,
}

/// `[files]`: reading the vault's files that are not notes (`vault_read_file`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFiles {
    max_read_bytes: Option<u64>,
    image_budget_bytes: Option<usize>,
    max_text_bytes: Option<usize>,
    pdf_render_pages: Option<usize>,
    pdfium_library: Option<PathBuf>,
}

/// `[memory]`: the folder where agents keep dated facts about the user.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemory {
    enabled: Option<bool>,
    folder: Option<String>,
}

/// `[sync]`: the files Quire shares with the vault's sync service (docs/SYNC.md).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSync {
    lock_file: Option<PathBuf>,
    first_sync_marker: Option<PathBuf>,
    status_file: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSearch {
    embeddings: Option<bool>,
    model_dir: Option<PathBuf>,
    onnxruntime: Option<PathBuf>,
    reranker_dir: Option<PathBuf>,
    rerank: Option<String>,
}

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

/// Overrides for Obsidian's daily-notes settings; each key set here wins over the vault's.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDailyNotes {
    folder: Option<String>,
    format: Option<String>,
    template: Option<String>,
    week_start: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOAuth {
    client_id_metadata_documents: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTime {
    /// An IANA name such as `Europe/Berlin`; absent means the system's zone.
    timezone: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAcl {
    #[serde(default)]
    always_deny: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIdentity {
    name: String,
    token_file: Option<PathBuf>,
    token_env: Option<String>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

/// The shortest identity token accepted: long enough that guessing is hopeless.
pub const MIN_TOKEN_CHARS: usize = 32;

/// Who may connect and what each identity may do.
#[derive(Clone, Default)]
pub struct Access {
    pub policy: Policy,
    /// Identities whose token was found: (name, token).
    pub tokens: Vec<(String, String)>,
    /// Identities left out because their token is missing: (name, why), for the log.
    pub disabled: Vec<(String, String)>,
    /// Whether any `[[identity]]` is configured; then the owner token is not used over HTTP.
    pub has_identities: bool,
    /// Every `token_file`, so the sandbox lets a reload read them again.
    pub token_files: Vec<PathBuf>,
}

impl std::fmt::Debug for Access {
    // Never print the tokens.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("policy", &self.policy)
            .field(
                "tokens",
                &self.tokens.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("disabled", &self.disabled)
            .finish()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    listen: Option<String>,
    public_url: Option<String>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    max_sessions: Option<usize>,
    max_sessions_per_identity: Option<usize>,
    #[serde(default)]
    trusted_proxies: Vec<String>,
}

/// `[tools]`: which tool groups the server offers (default: all).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTools {
    groups: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFeatures {
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    disabled_tools: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVault {
    path: Option<PathBuf>,
    /// Folders `vault_delete_note` and `vault_move_note` refuse to touch; replaces the default
    /// (the memory and daily-notes folders).
    protected_folders: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawIndex {
    path: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    max_bytes: Option<u64>,
    keep: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_note_bytes: Option<u64>,
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
    /// Loads and validates; `known_tools` are the tool names `features.disabled_tools` may name.
    pub fn load(
        overrides: &Overrides,
        env: &Environment,
        known_tools: &[String],
    ) -> Result<Config, ConfigError> {
        let (raw, file_dir) = match &overrides.config {
            Some(path) => {
                let path = absolute(&env.current_dir, path);
                let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                let raw: RawConfig = toml::from_str(&text).map_err(|error| ConfigError::Parse {
                    path: path.clone(),
                    // TOML's own report points a caret at the spot; keep its lines.
                    message: format!("\n  {}", error.to_string().trim_end().replace('\n', "\n  ")),
                })?;
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                (raw, dir)
            }
            None => (RawConfig::default(), env.current_dir.clone()),
        };
        // Paths from the file are relative to the file; paths from flags to the working directory.
        let vault = overrides
            .vault
            .as_ref()
            .map(|p| absolute(&env.current_dir, p))
            .or_else(|| raw.vault.path.as_ref().map(|p| absolute(&file_dir, p)))
            .ok_or(ConfigError::NoVault)?;
        let vault = vault
            .canonicalize()
            .map_err(|error| ConfigError::VaultMissing {
                path: vault.clone(),
                reason: error.to_string(),
            })?;
        if !vault.is_dir() {
            return Err(ConfigError::VaultMissing {
                path: vault,
                reason: "it is a file".into(),
            });
        }
        let index_override = overrides
            .index
            .as_ref()
            .map(|p| absolute(&env.current_dir, p))
            .or_else(|| raw.index.path.as_ref().map(|p| absolute(&file_dir, p)));
        let state_dir = default_state_dir(&vault, env)
            .or_else(|| {
                index_override
                    .as_ref()
                    .and_then(|index| index.parent().map(Path::to_path_buf))
            })
            .ok_or(ConfigError::NoStateDir)?;
        let index = index_override.unwrap_or_else(|| state_dir.join("index.db"));
        refuse_inside_vault("index.path", &index, &vault)?;
        refuse_inside_vault("state directory", &state_dir, &vault)?;
        let max_note_bytes = raw.limits.max_note_bytes.unwrap_or(DEFAULT_MAX_NOTE_BYTES);
        if max_note_bytes == 0 || max_note_bytes > MAX_NOTE_BYTES_CEILING {
            return Err(ConfigError::MaxNoteBytes {
                value: max_note_bytes,
                max: MAX_NOTE_BYTES_CEILING,
            });
        }
        let audit = audit_rotation(&raw.audit)?;
        let http = http_config(&raw.http, overrides)?;
        let http_limits = http_limits(&raw.http)?;
        let sandbox = match raw.sandbox.as_deref() {
            None | Some("best-effort") => Sandbox::BestEffort,
            Some("required") => Sandbox::Required,
            Some("off") => Sandbox::Off,
            Some(other) => {
                return Err(ConfigError::SandboxMode {
                    value: other.to_string(),
                });
            }
        };
        for name in &raw.features.disabled_tools {
            if !known_tools.contains(name) {
                return Err(ConfigError::UnknownTool {
                    name: name.clone(),
                    known: known_tools.join(", "),
                });
            }
        }
        let mut tool_groups = tool_groups(&raw.tools)?;
        let access = access(&raw.acl, &raw.identities, &file_dir, env)?;
        let test_loopback_port = match env.variables.get(CIMD_TEST_PORT_VARIABLE) {
            None => None,
            Some(value) => Some(
                value
                    .parse::<u16>()
                    .ok()
                    .filter(|port| *port != 0)
                    .ok_or_else(|| ConfigError::Access {
                        key: CIMD_TEST_PORT_VARIABLE.into(),
                        message: format!("{value:?} is not a TCP port"),
                    })?,
            ),
        };
        let oauth = OAuthConfig {
            client_id_metadata_documents: raw.oauth.client_id_metadata_documents.unwrap_or(true),
            test_loopback_port,
        };
        let (time_zone, time_zone_origin) = match &raw.time.timezone {
            Some(name) => (
                resolve_time_zone(name).ok_or_else(|| ConfigError::TimeZone {
                    value: name.clone(),
                })?,
                TimeZoneOrigin::Configured,
            ),
            None => match &env.system_time_zone {
                Some(zone) => (zone.clone(), TimeZoneOrigin::System),
                None => (TimeZone::UTC, TimeZoneOrigin::Fallback),
            },
        };
        let search = search_config(&raw.search, &file_dir, env)?;
        let sync_path = |key: &'static str, path: &Option<PathBuf>| {
            path.as_ref()
                .map(|path| {
                    let path = absolute(&file_dir, path);
                    refuse_inside_vault(key, &path, &vault).map(|()| path)
                })
                .transpose()
        };
        let sync = SyncConfig {
            lock_file: sync_path("sync.lock_file", &raw.sync.lock_file)?,
            first_sync_marker: sync_path("sync.first_sync_marker", &raw.sync.first_sync_marker)?,
            status_file: sync_path("sync.status_file", &raw.sync.status_file)?,
        };
        let memory_folder = memory_folder(&raw.memory)?;
        let files = files_config(&raw.files, &file_dir, env)?;
        if memory_folder.is_none() {
            // The layer is off: its tools go with it, whatever `[tools] groups` says.
            tool_groups.retain(|group| *group != ToolGroup::Memory);
        }
        let protected_folders = protected_folders(raw.vault.protected_folders.as_deref())?;
        Ok(Config {
            audit,
            files,
            memory_folder,
            protected_folders,
            sync,
            access,
            search,
            oauth,
            http,
            http_limits,
            read_only: raw.features.read_only,
            sandbox,
            disabled_tools: raw.features.disabled_tools,
            tool_groups,
            config_file: overrides
                .config
                .as_ref()
                .map(|p| absolute(&env.current_dir, p)),
            vault,
            state_dir,
            index,
            max_note_bytes,
            time_zone,
            time_zone_origin,
            daily_notes: daily_notes(raw.daily_notes)?,
        })
    }

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
        vault_name(&self.vault)
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

/// Checks `[daily_notes]`: folder and template are vault paths, the format is not empty.
/// `[tools] groups` as groups, each once, in the order given; every group when the key is absent.
fn tool_groups(raw: &RawTools) -> Result<Vec<ToolGroup>, ConfigError> {
    let valid = || {
        ToolGroup::ALL
            .iter()
            .map(|group| group.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(names) = &raw.groups else {
        return Ok(ToolGroup::ALL.to_vec());
    };
    if names.is_empty() {
        return Err(ConfigError::NoToolGroups { valid: valid() });
    }
    let mut groups = Vec::new();
    for name in names {
        let group = ToolGroup::parse(name).ok_or_else(|| ConfigError::UnknownToolGroup {
            name: name.clone(),
            valid: valid(),
        })?;
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    Ok(groups)
}

fn daily_notes(raw: RawDailyNotes) -> Result<DailyNotesOverrides, ConfigError> {
    let invalid = |key: &'static str, message: String| ConfigError::DailyNotes { key, message };
    if let Some(folder) = &raw.folder {
        VaultPath::parse_folder(folder.trim()).map_err(|error| {
            invalid(
                "folder",
                format!("{folder:?} is not a folder inside the vault ({error}); use a vault-relative folder such as \"Journal\", or \"\" for the root"),
            )
        })?;
    }
    if let Some(format) = &raw.format
        && format.trim().is_empty()
    {
        return Err(invalid(
            "format",
            "the format is empty; use a moment.js format such as \"YYYY-MM-DD\", or leave the key out to use Obsidian's".into(),
        ));
    }
    if let Some(template) = raw.template.as_deref().map(str::trim)
        && !template.is_empty()
    {
        VaultPath::parse(template).map_err(|error| {
            invalid(
                "template",
                format!("{template:?} is not a note path inside the vault ({error}); use a vault-relative path such as \"Templates/Daily\", or \"\" for no template"),
            )
        })?;
    }
    let week_start = match raw.week_start.as_deref().map(str::trim) {
        None => None,
        Some(day) if day.eq_ignore_ascii_case("sunday") => Some(WeekStart::Sunday),
        Some(day) if day.eq_ignore_ascii_case("monday") => Some(WeekStart::Monday),
        Some(other) => {
            return Err(invalid(
                "week_start",
                format!(
                    "{other:?} is not a week start; use \"sunday\" (English weeks, the default) or \"monday\" (German, French and most European languages)"
                ),
            ));
        }
    };
    Ok(DailyNotesOverrides {
        week_start,
        folder: raw.folder.map(|folder| folder.trim().to_string()),
        format: raw.format.map(|format| format.trim().to_string()),
        template: raw.template.map(|template| template.trim().to_string()),
    })
}

/// `value`, or `default` when it is not given, if it lies within `min..=max`.
fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    key: &'static str,
    value: Option<T>,
    default: T,
    (min, max): (T, T),
    unit: &str,
) -> Result<T, ConfigError> {
    let value = value.unwrap_or(default);
    if value < min || value > max {
        return Err(ConfigError::Setting {
            key,
            message: format!("{value} is out of range; use {min} to {max} {unit}"),
        });
    }
    Ok(value)
}

/// Lowers `[files]`: each value checked against a range that keeps a read bounded, the pdfium
/// path relative to the config file, and the environment's `QUIRE_PDFIUM_LIBRARY` and data
/// directory added as the places pdfium is looked for after it.
fn files_config(
    raw: &RawFiles,
    file_dir: &Path,
    env: &Environment,
) -> Result<FileSettings, ConfigError> {
    let defaults = FileSettings::default();
    let variable = |name: &str| {
        env.variables
            .get(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    Ok(FileSettings {
        max_read_bytes: in_range(
            "files.max_read_bytes",
            raw.max_read_bytes,
            defaults.max_read_bytes,
            (1, 4 * 1024 * 1024 * 1024),
            "bytes",
        )?,
        image_budget_bytes: in_range(
            "files.image_budget_bytes",
            raw.image_budget_bytes,
            defaults.image_budget_bytes,
            (1024, 16 * 1024 * 1024),
            "bytes",
        )?,
        max_text_bytes: in_range(
            "files.max_text_bytes",
            raw.max_text_bytes,
            defaults.max_text_bytes,
            (1, 64 * 1024 * 1024),
            "bytes",
        )?,
        pdf_render_pages: in_range(
            "files.pdf_render_pages",
            raw.pdf_render_pages,
            defaults.pdf_render_pages,
            (1, 50),
            "pages",
        )?,
        pdfium: crate::files::pdf::pdfium::Sources {
            configured: raw.pdfium_library.as_ref().map(|p| absolute(file_dir, p)),
            env: variable(crate::files::pdf::pdfium::LIBRARY_ENV),
            data_dir: crate::embed::data_dir(
                variable("XDG_DATA_HOME").as_deref(),
                env.home.as_deref(),
            ),
        },
    })
}

/// Lowers `[search]`: paths relative to the config file, `rerank` checked.
fn search_config(
    raw: &RawSearch,
    file_dir: &Path,
    env: &Environment,
) -> Result<SearchConfig, ConfigError> {
    let rerank = match raw.rerank.as_deref() {
        None | Some("off") => RerankMode::Off,
        Some("blended") => RerankMode::Blended,
        Some(other) => {
            return Err(ConfigError::Search {
                key: "search.rerank",
                message: format!("{other:?} is not a rerank mode; use \"blended\" or \"off\""),
            });
        }
    };
    if rerank == RerankMode::Blended && raw.reranker_dir.is_none() {
        return Err(ConfigError::Search {
            key: "search.rerank",
            message:
                "\"blended\" needs a cross-encoder: set search.reranker_dir to its model folder"
                    .into(),
        });
    }
    let variable = |name: &str| {
        env.variables
            .get(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    Ok(SearchConfig {
        models: crate::embed::ModelSources {
            enabled: raw.embeddings.unwrap_or(true),
            model_dir: raw.model_dir.as_ref().map(|p| absolute(file_dir, p)),
            onnxruntime: raw.onnxruntime.as_ref().map(|p| absolute(file_dir, p)),
            reranker_dir: raw.reranker_dir.as_ref().map(|p| absolute(file_dir, p)),
            ort_dylib_path: variable("ORT_DYLIB_PATH"),
            data_dir: crate::embed::data_dir(
                variable("XDG_DATA_HOME").as_deref(),
                env.home.as_deref(),
            ),
        },
        rerank,
    })
}

/// `[audit]`: the size past which the audit log rotates (at least 64 KiB, so rotation stays rare)
/// and how many older files stay (1 to 100).
fn audit_rotation(raw: &RawAudit) -> Result<AuditRotation, ConfigError> {
    let default = AuditRotation::default();
    let max_bytes = raw.max_bytes.unwrap_or(default.max_bytes);
    if max_bytes < 64 * 1024 {
        return Err(ConfigError::Audit {
            key: "max_bytes",
            value: max_bytes,
            range: "a number of bytes of at least 65536",
        });
    }
    let keep = raw.keep.unwrap_or(default.keep);
    if !(1..=100).contains(&keep) {
        return Err(ConfigError::Audit {
            key: "keep",
            value: u64::from(keep),
            range: "a count of older files from 1 to 100",
        });
    }
    Ok(AuditRotation { max_bytes, keep })
}

fn http_config(raw: &RawHttp, overrides: &Overrides) -> Result<Option<HttpConfig>, ConfigError> {
    let Some(listen) = overrides.http_listen.as_ref().or(raw.listen.as_ref()) else {
        if overrides.no_auth {
            return Err(ConfigError::NoAuthWithoutHttp);
        }
        return Ok(None);
    };
    let listen: SocketAddr = listen.parse().map_err(|_| ConfigError::Listen {
        value: listen.clone(),
    })?;
    if overrides.no_auth && !listen.ip().is_loopback() {
        return Err(ConfigError::NoAuthOffLoopback { listen });
    }
    let public_url = raw
        .public_url
        .as_ref()
        .map(|value| {
            Url::parse(value)
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
                .ok_or_else(|| ConfigError::PublicUrl {
                    value: value.clone(),
                })
        })
        .transpose()?;
    Ok(Some(HttpConfig {
        listen,
        public_url,
        allowed_hosts: raw.allowed_hosts.clone(),
        auth: !overrides.no_auth,
    }))
}

/// Lowers the `[http]` keys that bound what callers can make the server hold, and the proxies
/// trusted to say who a caller is.
fn http_limits(raw: &RawHttp) -> Result<HttpLimits, ConfigError> {
    let trusted_proxies = raw
        .trusted_proxies
        .iter()
        .enumerate()
        .map(|(at, text)| {
            let text = text.trim();
            text.parse::<ipnet::IpNet>()
                .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map(|net| net.trunc())
                .map_err(|_| ConfigError::TrustedProxy {
                    key: format!("http.trusted_proxies[{at}]"),
                    value: text.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(HttpLimits {
        trusted_proxies,
        max_sessions: in_range(
            "http.max_sessions",
            raw.max_sessions,
            DEFAULT_MAX_SESSIONS,
            (1, MAX_SESSIONS_CEILING),
            "sessions",
        )?,
        max_sessions_per_identity: in_range(
            "http.max_sessions_per_identity",
            raw.max_sessions_per_identity,
            DEFAULT_MAX_SESSIONS_PER_IDENTITY,
            (1, MAX_SESSIONS_CEILING),
            "sessions",
        )?,
    })
}

fn parse_rules(key: &str, raw: &[String]) -> Result<Vec<Rule>, ConfigError> {
    raw.iter()
        .enumerate()
        .map(|(at, text)| {
            Rule::parse(text).map_err(|error| ConfigError::Access {
                key: format!("{key}[{at}]"),
                message: error.to_string(),
            })
        })
        .collect()
}

/// Lowers `[acl]` and `[[identity]]`: rules parsed, names and tokens checked, tokens read.
fn access(
    acl: &RawAcl,
    identities: &[RawIdentity],
    file_dir: &Path,
    env: &Environment,
) -> Result<Access, ConfigError> {
    let always_deny = parse_rules("acl.always_deny", &acl.always_deny)?;
    let mut rules = BTreeMap::new();
    let mut tokens: Vec<(String, String)> = Vec::new();
    let mut disabled = Vec::new();
    let mut token_files = Vec::new();
    for (at, identity) in identities.iter().enumerate() {
        let key = format!("identity[{at}]");
        let name = identity.name.trim();
        let valid_name = !name.is_empty()
            && name != "owner"
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid_name {
            return Err(ConfigError::Access {
                key: format!("{key}.name"),
                message: format!(
                    "{:?} is not a usable name; use letters, digits, '-', '_' or '.' (and not \"owner\")",
                    identity.name
                ),
            });
        }
        let identity_rules = IdentityRules {
            read: parse_rules(&format!("{key}.read"), &identity.read)?,
            write: parse_rules(&format!("{key}.write"), &identity.write)?,
            deny: parse_rules(&format!("{key}.deny"), &identity.deny)?,
        };
        if rules.insert(name.to_string(), identity_rules).is_some() {
            return Err(ConfigError::Access {
                key: format!("{key}.name"),
                message: format!("the identity {name:?} is configured twice"),
            });
        }
        let token = match (&identity.token_file, &identity.token_env) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(ConfigError::Access {
                    key: key.clone(),
                    message: "set exactly one of token_file (a file holding the token, e.g. a systemd credential) or token_env (an environment variable, for development)".into(),
                });
            }
            (Some(file), None) => {
                let path = absolute(file_dir, file);
                token_files.push(path.clone());
                match read_secret_file(&path) {
                    Ok(text) => Ok(text.trim().to_string()),
                    Err(SecretFileError::Exposed { mode }) => {
                        return Err(ConfigError::Access {
                            key: format!("{key}.token_file"),
                            message: format!(
                                "{} can be read by other users (mode {mode:o}); run chmod 600 on it (or let systemd pass it with LoadCredential=)",
                                path.display()
                            ),
                        });
                    }
                    Err(SecretFileError::Io(error)) => Err(format!(
                        "cannot read token_file {}: {error}",
                        path.display()
                    )),
                }
            }
            (None, Some(variable)) => env
                .variables
                .get(variable)
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
                .ok_or_else(|| format!("the environment variable {variable} is not set")),
        };
        let token = match token {
            Ok(token) if !token.is_empty() => token,
            Ok(_) => {
                disabled.push((name.to_string(), "its token file is empty".to_string()));
                continue;
            }
            Err(why) => {
                disabled.push((name.to_string(), why));
                continue;
            }
        };
        if token.chars().count() < MIN_TOKEN_CHARS {
            return Err(ConfigError::Access {
                key: format!("{key}.token"),
                message: format!(
                    "the token of {name:?} has fewer than {MIN_TOKEN_CHARS} characters; create one with `quire token new --identity {name}`"
                ),
            });
        }
        if let Some((other, _)) = tokens.iter().find(|(_, existing)| *existing == token) {
            return Err(ConfigError::Access {
                key: format!("{key}.token"),
                message: format!(
                    "{name:?} has the same token as {other:?}; every identity needs its own"
                ),
            });
        }
        tokens.push((name.to_string(), token));
    }
    Ok(Access {
        policy: Policy::new(always_deny, rules),
        tokens,
        disabled,
        has_identities: !identities.is_empty(),
        token_files,
    })
}

fn vault_name(vault: &Path) -> String {
    vault
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "vault".to_string())
}

/// `$STATE_DIRECTORY` under systemd; otherwise `$XDG_STATE_HOME/quire/<name>-<hash>` (or
/// `~/.local/state/...`), where the hash of the vault's absolute path keeps two vaults that share a
/// folder name apart.
fn default_state_dir(vault: &Path, env: &Environment) -> Option<PathBuf> {
    if let Some(dir) = &env.state_directory {
        return Some(dir.clone());
    }
    let base = env
        .xdg_state_home
        .clone()
        .or_else(|| env.home.as_ref().map(|home| home.join(".local/state")))?;
    Some(
        base.join("quire")
            .join(format!("{}-{}", vault_name(vault), short_hash(vault))),
    )
}

/// A stable 8-hex-digit digest of the path. FNV-1a rather than `DefaultHasher`, whose output may
/// change between Rust releases and would orphan existing state directories.
fn short_hash(path: &Path) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

fn refuse_inside_vault(key: &'static str, path: &Path, vault: &Path) -> Result<(), ConfigError> {
    if canonical_prefix(path).starts_with(vault) {
        return Err(ConfigError::StateInsideVault {
            key,
            path: path.to_path_buf(),
            vault: vault.to_path_buf(),
        });
    }
    Ok(())
}

/// Canonicalises the longest existing ancestor of `path` and re-attaches the rest, so a state path
/// that does not exist yet is still compared through symlinks.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut result = canonical;
            result.extend(rest.iter().rev());
            return result;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Why a secret file was not used.
#[derive(Debug)]
pub enum SecretFileError {
    Io(std::io::Error),
    /// Users other than the owner may read it; the mode is given without the file-type bits.
    Exposed {
        mode: u32,
    },
}

/// Reads a file holding a secret (a token or key), refusing one that other users may read.
///
/// The one rule for every secret file (the owner token, the OAuth key, identity tokens): no
/// permission for "others", and no permission for the group unless the file carries a POSIX ACL.
/// With an ACL the group bits of the mode are the ACL's mask, not the owning group's access:
/// systemd's `LoadCredential=` hands a service its credentials as root-owned 0400 files with an ACL
/// entry for the service's user, which `stat` reports as 0440, and those must stay usable. The
/// mode is read from the opened file, so the check and the read concern the same inode.
pub fn read_secret_file(path: &Path) -> Result<String, SecretFileError> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let mut file = std::fs::File::open(path).map_err(SecretFileError::Io)?;
    let mode = file
        .metadata()
        .map_err(SecretFileError::Io)?
        .permissions()
        .mode()
        & 0o777;
    let group_bits_are_an_acl_mask = || {
        let mut value = [0u8; 256];
        match rustix::fs::fgetxattr(&file, "system.posix_acl_access", &mut value[..]) {
            Ok(_) => true,
            // The ACL exists but is longer than the buffer.
            Err(error) => error == rustix::io::Errno::RANGE,
        }
    };
    if mode & 0o007 != 0 || (mode & 0o070 != 0 && !group_bits_are_an_acl_mask()) {
        return Err(SecretFileError::Exposed { mode });
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(SecretFileError::Io)?;
    Ok(text)
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// `[memory]` lowered: the folder (default `About Me`), which must be a plain vault folder, or
/// `None` when `enabled = false`.
fn memory_folder(raw: &RawMemory) -> Result<Option<VaultPath>, ConfigError> {
    if raw.enabled == Some(false) {
        return Ok(None);
    }
    let folder = raw
        .folder
        .as_deref()
        .unwrap_or(crate::vault::DEFAULT_MEMORY_FOLDER)
        .trim_matches('/');
    VaultPath::parse(folder)
        .map(Some)
        .map_err(|error| ConfigError::Setting {
            key: "memory.folder",
            message: format!(
                "{folder:?} is not a vault folder ({error}); give a vault-relative folder such as \"About Me\""
            ),
        })
}

/// `[vault] protected_folders` lowered: vault folders, each once; `None` when the key is absent.
fn protected_folders(raw: Option<&[String]>) -> Result<Option<Vec<VaultPath>>, ConfigError> {
    let Some(raw) = raw else { return Ok(None) };
    let mut folders: Vec<VaultPath> = Vec::new();
    for folder in raw {
        let trimmed = folder.trim().trim_matches('/');
        let parsed = VaultPath::parse_folder(trimmed).map_err(|error| ConfigError::Setting {
            key: "vault.protected_folders",
            message: format!(
                "{folder:?} is not a vault folder ({error}); give vault-relative folders such as \"About Me\""
            ),
        })?;
        let Some(parsed) = parsed else {
            return Err(ConfigError::Setting {
                key: "vault.protected_folders",
                message: format!(
                    "{folder:?} names the vault root, which would forbid every delete and move; name folders such as \"About Me\", or use [features] disabled_tools to turn vault_delete_note and vault_move_note off"
                ),
            });
        };
        if !folders.contains(&parsed) {
            folders.push(parsed);
        }
    }
    Ok(Some(folders))
}
