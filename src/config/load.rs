//! `Config::load`: reads the file, finds the vault and the state directory, then lowers each
//! table in turn, so the first problem found is the one reported. Also where paths are made
//! absolute and the state directory is kept out of the vault.

use std::path::{Path, PathBuf};

use super::access::access;
use super::lower::{
    audit_rotation, check_disabled_tools, daily_notes, files_config, history, http_config,
    http_limits, max_note_bytes, memory_folder, oauth_config, protected_folders, safety, sandbox,
    search_config, sync_config, time_zone, tool_groups,
};
use super::raw::RawConfig;
use super::{Config, ConfigError, Environment, Overrides};
use crate::tool_groups::ToolGroup;

impl Config {
    /// Loads and validates; `known_tools` are the tool names `features.disabled_tools` may name.
    pub fn load(
        overrides: &Overrides,
        env: &Environment,
        known_tools: &[String],
    ) -> Result<Config, ConfigError> {
        let (raw, file_dir) = read_file(overrides, env)?;
        let vault = locate_vault(overrides, &raw, &file_dir, env)?;
        let (state_dir, index) = locate_state(overrides, &raw, &file_dir, env, &vault)?;
        let max_note_bytes = max_note_bytes(&raw.limits)?;
        let audit = audit_rotation(&raw.audit)?;
        let history = history(&raw.history)?;
        let safety = safety(&raw.safety)?;
        let http = http_config(&raw.http, overrides)?;
        let http_limits = http_limits(&raw.http)?;
        let sandbox = sandbox(raw.sandbox.as_deref())?;
        check_disabled_tools(&raw.features, known_tools)?;
        let mut tool_groups = tool_groups(&raw.tools)?;
        let access = access(&raw.acl, &raw.identities, &file_dir, env)?;
        let oauth = oauth_config(&raw.oauth, env)?;
        let (time_zone, time_zone_origin) = time_zone(&raw.time, env)?;
        let search = search_config(&raw.search, &file_dir, env)?;
        let sync = sync_config(&raw.sync, &file_dir, &vault)?;
        let memory_folder = memory_folder(&raw.memory)?;
        let files = files_config(&raw.files, &file_dir, env)?;
        if memory_folder.is_none() {
            // The layer is off: its tools go with it, whatever `[tools] groups` says.
            tool_groups.retain(|group| *group != ToolGroup::Memory);
        }
        if history.is_none() {
            // No history: nothing to list, restore or undo.
            tool_groups.retain(|group| *group != ToolGroup::History);
        }
        let protected_folders = protected_folders(raw.vault.protected_folders.as_deref())?;
        Ok(Config {
            audit,
            history,
            safety,
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
}

/// The file named by `--config`, parsed, and the folder its relative paths start from; without
/// one, an empty configuration and the working directory.
fn read_file(
    overrides: &Overrides,
    env: &Environment,
) -> Result<(RawConfig, PathBuf), ConfigError> {
    let Some(path) = &overrides.config else {
        return Ok((RawConfig::default(), env.current_dir.clone()));
    };
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
    Ok((raw, dir))
}

/// The vault folder, canonical. Paths from the file are relative to the file; paths from flags
/// to the working directory.
fn locate_vault(
    overrides: &Overrides,
    raw: &RawConfig,
    file_dir: &Path,
    env: &Environment,
) -> Result<PathBuf, ConfigError> {
    let vault = overrides
        .vault
        .as_ref()
        .map(|p| absolute(&env.current_dir, p))
        .or_else(|| raw.vault.path.as_ref().map(|p| absolute(file_dir, p)))
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
    Ok(vault)
}

/// The state directory and the index, both outside the vault.
fn locate_state(
    overrides: &Overrides,
    raw: &RawConfig,
    file_dir: &Path,
    env: &Environment,
    vault: &Path,
) -> Result<(PathBuf, PathBuf), ConfigError> {
    let index_override = overrides
        .index
        .as_ref()
        .map(|p| absolute(&env.current_dir, p))
        .or_else(|| raw.index.path.as_ref().map(|p| absolute(file_dir, p)));
    let state_dir = default_state_dir(vault, env)
        .or_else(|| {
            index_override
                .as_ref()
                .and_then(|index| index.parent().map(Path::to_path_buf))
        })
        .ok_or(ConfigError::NoStateDir)?;
    let index = index_override.unwrap_or_else(|| state_dir.join("index.db"));
    refuse_inside_vault("index.path", &index, vault)?;
    refuse_inside_vault("state directory", &state_dir, vault)?;
    Ok((state_dir, index))
}

pub(super) fn vault_name(vault: &Path) -> String {
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

pub(super) fn refuse_inside_vault(
    key: &'static str,
    path: &Path,
    vault: &Path,
) -> Result<(), ConfigError> {
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

pub(super) fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}
