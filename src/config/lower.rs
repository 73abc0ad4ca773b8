//! Lowering, table by table: each function takes one `Raw*` table and returns its checked
//! slice of `Config` or a `ConfigError` naming the key. Defaults are applied here, once.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use url::Url;

use super::load::{absolute, refuse_inside_vault};
use super::raw::{
    RawAudit, RawDailyNotes, RawFeatures, RawFiles, RawHttp, RawLimits, RawMemory, RawOAuth,
    RawSearch, RawSync, RawTime, RawTools,
};
use super::raw::{RawHistory, RawSafety};
use super::{
    CIMD_TEST_PORT_VARIABLE, ConfigError, DEFAULT_MAX_NOTE_BYTES, DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_IDENTITY, Environment, HttpConfig, HttpLimits, MAX_NOTE_BYTES_CEILING,
    MAX_SESSIONS_CEILING, OAuthConfig, Overrides, RerankMode, Sandbox, SearchConfig, SyncConfig,
    TimeZoneOrigin, resolve_time_zone,
};
use crate::history::Retention;
use crate::ops::{AuditRotation, FileSettings};
use crate::tool_groups::ToolGroup;
use crate::vault::{DailyNotesOverrides, VaultPath, WeekStart};

/// `[limits] max_note_bytes`, from 1 byte to `MAX_NOTE_BYTES_CEILING`.
pub(super) fn max_note_bytes(raw: &RawLimits) -> Result<u64, ConfigError> {
    let max_note_bytes = raw.max_note_bytes.unwrap_or(DEFAULT_MAX_NOTE_BYTES);
    if max_note_bytes == 0 || max_note_bytes > MAX_NOTE_BYTES_CEILING {
        return Err(ConfigError::MaxNoteBytes {
            value: max_note_bytes,
            max: MAX_NOTE_BYTES_CEILING,
        });
    }
    Ok(max_note_bytes)
}

/// `sandbox`: best effort unless said otherwise.
pub(super) fn sandbox(raw: Option<&str>) -> Result<Sandbox, ConfigError> {
    match raw {
        None | Some("best-effort") => Ok(Sandbox::BestEffort),
        Some("required") => Ok(Sandbox::Required),
        Some("off") => Ok(Sandbox::Off),
        Some(other) => Err(ConfigError::SandboxMode {
            value: other.to_string(),
        }),
    }
}

/// `[features] disabled_tools` may name only tools that exist.
pub(super) fn check_disabled_tools(
    raw: &RawFeatures,
    known_tools: &[String],
) -> Result<(), ConfigError> {
    for name in &raw.disabled_tools {
        if !known_tools.contains(name) {
            return Err(ConfigError::UnknownTool {
                name: name.clone(),
                known: known_tools.join(", "),
            });
        }
    }
    Ok(())
}

/// `[oauth]`, with the test-only loopback port from the environment.
pub(super) fn oauth_config(raw: &RawOAuth, env: &Environment) -> Result<OAuthConfig, ConfigError> {
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
    Ok(OAuthConfig {
        client_id_metadata_documents: raw.client_id_metadata_documents.unwrap_or(true),
        test_loopback_port,
    })
}

/// `[time] timezone`, else the system's zone, else UTC; and which of them it was.
pub(super) fn time_zone(
    raw: &RawTime,
    env: &Environment,
) -> Result<(TimeZone, TimeZoneOrigin), ConfigError> {
    Ok(match &raw.timezone {
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
    })
}

/// `[sync]`: each path absolute (relative to the config file) and outside the vault.
pub(super) fn sync_config(
    raw: &RawSync,
    file_dir: &Path,
    vault: &Path,
) -> Result<SyncConfig, ConfigError> {
    let sync_path = |key: &'static str, path: &Option<PathBuf>| {
        path.as_ref()
            .map(|path| {
                let path = absolute(file_dir, path);
                refuse_inside_vault(key, &path, vault).map(|()| path)
            })
            .transpose()
    };
    Ok(SyncConfig {
        lock_file: sync_path("sync.lock_file", &raw.lock_file)?,
        first_sync_marker: sync_path("sync.first_sync_marker", &raw.first_sync_marker)?,
        status_file: sync_path("sync.status_file", &raw.status_file)?,
    })
}

/// `[tools] groups` as groups, each once, in the order given; every group when the key is absent.
pub(super) fn tool_groups(raw: &RawTools) -> Result<Vec<ToolGroup>, ConfigError> {
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

/// Checks `[daily_notes]`: folder and template are vault paths, the format is not empty.
pub(super) fn daily_notes(raw: RawDailyNotes) -> Result<DailyNotesOverrides, ConfigError> {
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
pub(super) fn files_config(
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
pub(super) fn search_config(
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

/// `[safety]`: `confirm` is auto (ask when the client can), required or off; `confirm_over` a
/// number of notes (0 asks for any batch, undo or move).
pub(super) fn safety(raw: &RawSafety) -> Result<crate::ops::Safety, ConfigError> {
    use crate::ops::{ConfirmMode, Safety};
    let default = Safety::default();
    let confirm = match raw.confirm.as_deref() {
        None | Some("auto") => ConfirmMode::Auto,
        Some("required") => ConfirmMode::Required,
        Some("off") => ConfirmMode::Off,
        Some(other) => {
            return Err(ConfigError::Safety {
                key: "confirm",
                value: format!("{other:?}"),
                expected: "\"auto\" (ask when the client can show a question), \"required\" or \"off\"",
            });
        }
    };
    let confirm_over = match raw.confirm_over {
        None => default.confirm_over,
        Some(n) if n <= 100_000 => n as usize,
        Some(n) => {
            return Err(ConfigError::Safety {
                key: "confirm_over",
                value: n.to_string(),
                expected: "a number of notes from 0 to 100000",
            });
        }
    };
    Ok(Safety {
        confirm,
        confirm_over,
    })
}

/// `[history]`: how much history is kept (`None` when `enabled = false`): at least 1 MiB and a
/// day, so a setting cannot make every change prune the one before it.
pub(super) fn history(raw: &RawHistory) -> Result<Option<Retention>, ConfigError> {
    if raw.enabled == Some(false) {
        return Ok(None);
    }
    let default = Retention::default();
    let max_bytes = raw.max_bytes.unwrap_or(default.max_bytes);
    if max_bytes < 1 << 20 {
        return Err(ConfigError::History {
            key: "max_bytes",
            value: max_bytes,
            range: "a number of bytes of at least 1048576 (1 MiB)",
        });
    }
    let days = raw
        .max_age_days
        .unwrap_or(default.max_age.as_secs() / 86_400);
    if !(1..=36_500).contains(&days) {
        return Err(ConfigError::History {
            key: "max_age_days",
            value: days,
            range: "a number of days from 1 to 36500",
        });
    }
    Ok(Some(Retention {
        max_bytes,
        max_age: std::time::Duration::from_secs(days * 86_400),
    }))
}

/// `[audit]`: the size past which the audit log rotates (at least 64 KiB, so rotation stays rare)
/// and how many older files stay (1 to 100).
pub(super) fn audit_rotation(raw: &RawAudit) -> Result<AuditRotation, ConfigError> {
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

pub(super) fn http_config(
    raw: &RawHttp,
    overrides: &Overrides,
) -> Result<Option<HttpConfig>, ConfigError> {
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
pub(super) fn http_limits(raw: &RawHttp) -> Result<HttpLimits, ConfigError> {
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

/// `[memory]` lowered: the folder (default `About Me`), which must be a plain vault folder, or
/// `None` when `enabled = false`.
pub(super) fn memory_folder(raw: &RawMemory) -> Result<Option<VaultPath>, ConfigError> {
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
pub(super) fn protected_folders(
    raw: Option<&[String]>,
) -> Result<Option<Vec<VaultPath>>, ConfigError> {
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
