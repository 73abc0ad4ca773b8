//! `quire connect CLIENT`: the configuration that makes an MCP client start this binary on a
//! vault over stdio, printed (with the file it belongs in), or with `--write` merged into that
//! client's user-wide configuration file.
//!
//! A write never loses what the file held: other servers and other keys keep their bytes and
//! their order (`splice.rs`), the old file is backed up first and replaced atomically
//! (`write.rs`), an entry of the same name is replaced only with `--force`, and a file that is not
//! plain JSON is refused untouched, with the entry to paste by hand. Where each client keeps its
//! file is `places.rs`.

mod places;
mod splice;
mod write;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

pub use places::Places;

/// The MCP clients whose configuration Quire knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Desktop: claude_desktop_config.json.
    ClaudeDesktop,
    /// Claude Code, user scope: ~/.claude.json.
    ClaudeCode,
    /// Cursor, every project: ~/.cursor/mcp.json.
    Cursor,
    /// Visual Studio Code, user profile: Code/User/mcp.json.
    Vscode,
}

impl Client {
    fn title(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
        }
    }

    /// The top-level key that holds the client's servers.
    fn section(self) -> &'static str {
        match self {
            Client::Vscode => "servers",
            _ => "mcpServers",
        }
    }

    /// The entry as the client's own tools write it (`claude mcp add` adds `type` and `env`).
    fn entry<'a>(self, command: &'a str, args: &'a [String]) -> ServerEntry<'a> {
        let stdio = matches!(self, Client::ClaudeCode | Client::Vscode).then_some("stdio");
        ServerEntry {
            kind: stdio,
            command,
            args,
            env: matches!(self, Client::ClaudeCode).then(BTreeMap::new),
        }
    }
}

/// One server entry, its fields in the order people write them.
#[derive(Debug, Serialize)]
struct ServerEntry<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    command: &'a str,
    args: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    env: Option<BTreeMap<String, String>>,
}

/// What `quire connect` was asked, as the command line gave it.
#[derive(Debug, Clone)]
pub struct Request {
    pub client: Client,
    /// `--vault`: the folder `quire serve` will serve.
    pub vault: Option<PathBuf>,
    /// `--config`: passed on to `quire serve`.
    pub config: Option<PathBuf>,
    /// `--index`: passed on to `quire serve`.
    pub index: Option<PathBuf>,
    /// The entry's key among the client's servers.
    pub name: String,
    pub write: bool,
    pub force: bool,
}

/// Why `quire connect` did nothing; each message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "no vault given: pass --vault DIR (the folder to serve), or --config FILE whose [vault] path names it"
    )]
    NoVault,
    #[error("--name must not be empty: it is the key of Quire's entry among the client's servers")]
    EmptyName,
    #[error("cannot serve {path:?} as the vault: {reason}; pass the vault folder with --vault")]
    VaultNotAFolder { path: PathBuf, reason: String },
    #[error(
        "cannot pass {path:?} on as the configuration file: {reason}; pass an existing file with --config"
    )]
    ConfigNotAFile { path: PathBuf, reason: String },
    #[error(
        "{path:?} is not valid UTF-8, which a client's JSON configuration must hold; use a path without such bytes"
    )]
    NotUtf8 { path: PathBuf },
    #[error("cannot find this program's own path (run quire by its full path)")]
    CurrentExe(#[source] std::io::Error),
    #[error("HOME is not set, so the client's configuration file cannot be found; set HOME")]
    NoHome,
    #[error("{path:?} is not a regular file; move it aside, or add the entry by hand")]
    NotAFile { path: PathBuf },
    #[error(
        "{path:?} {problem}. Nothing was written. {advice}\nTo add Quire by hand, put this entry under \"{section}\":\n{entry}"
    )]
    Unmergeable {
        path: PathBuf,
        problem: String,
        advice: &'static str,
        section: &'static str,
        entry: String,
    },
    #[error(
        "{path:?} already has a server named \"{name}\"; nothing was written. Pass --force to replace it, or --name to add Quire under another name"
    )]
    AlreadyConfigured { path: PathBuf, name: String },
    #[error(
        "{path:?} changed while Quire was writing it (the client may be running); nothing was changed. Run the command again"
    )]
    ChangedMeanwhile { path: PathBuf },
    #[error("cannot {action} {path:?}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ConnectError {
    /// Whether the command line itself was wrong (exit code 2 rather than 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ConnectError::NoVault
                | ConnectError::EmptyName
                | ConnectError::VaultNotAFolder { .. }
                | ConnectError::ConfigNotAFile { .. }
        )
    }
}

/// `quire connect CLIENT`: the entry printed with the file it belongs in, or with `write`
/// merged into that file.
pub fn run(request: &Request, places: &Places) -> Result<String, ConnectError> {
    if request.name.is_empty() {
        return Err(ConnectError::EmptyName);
    }
    let command = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(ConnectError::CurrentExe)?;
    let command = utf8(&command)?;
    let args = serve_args(request)?;
    let client = request.client;
    let entry = client.entry(command, &args);
    let file = places.config_file(client)?;
    if request.write {
        write_entry(request, &file, &entry)
    } else {
        Ok(printed(request, &file, &entry))
    }
}

/// The arguments of `quire serve` for this request, every path absolute.
fn serve_args(request: &Request) -> Result<Vec<String>, ConnectError> {
    let mut args = vec!["serve".to_owned()];
    if request.vault.is_none() && request.config.is_none() {
        return Err(ConnectError::NoVault);
    }
    if let Some(vault) = &request.vault {
        if let Some(reason) = problem(vault, true) {
            let path = vault.clone();
            return Err(ConnectError::VaultNotAFolder { path, reason });
        }
        args.extend(["--vault".to_owned(), utf8(&absolute(vault)?)?.to_owned()]);
    }
    if let Some(config) = &request.config {
        if let Some(reason) = problem(config, false) {
            let path = config.clone();
            return Err(ConnectError::ConfigNotAFile { path, reason });
        }
        args.extend(["--config".to_owned(), utf8(&absolute(config)?)?.to_owned()]);
    }
    if let Some(index) = &request.index {
        args.extend(["--index".to_owned(), utf8(&absolute(index)?)?.to_owned()]);
    }
    Ok(args)
}

/// What keeps `path` from being an existing folder (`folder`) or file, if anything.
fn problem(path: &Path, folder: bool) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() == folder && (folder || metadata.is_file()) => None,
        Ok(_) if folder => Some("it is not a folder".to_owned()),
        Ok(_) => Some("it is not a file".to_owned()),
        Err(error) => Some(error.to_string()),
    }
}

/// `path` made absolute as the user spelled it; canonical when it climbs with `..`, whose
/// meaning only the file system knows (an index file need not exist yet: its folder must).
fn absolute(path: &Path) -> Result<PathBuf, ConnectError> {
    let io_error = |source| ConnectError::Io {
        action: "make absolute",
        path: path.to_path_buf(),
        source,
    };
    let absolute = std::path::absolute(path).map_err(io_error)?;
    if !absolute
        .components()
        .any(|part| part == Component::ParentDir)
    {
        return Ok(absolute);
    }
    match std::fs::canonicalize(&absolute) {
        Ok(canonical) => Ok(canonical),
        Err(error) => match (absolute.parent(), absolute.file_name()) {
            (Some(folder), Some(name)) => {
                Ok(std::fs::canonicalize(folder).map_err(io_error)?.join(name))
            }
            _ => Err(io_error(error)),
        },
    }
}

fn utf8(path: &Path) -> Result<&str, ConnectError> {
    path.to_str().ok_or_else(|| ConnectError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

/// The entry and where it goes, for a person to paste, and how to have Quire write it.
fn printed(request: &Request, file: &Path, entry: &ServerEntry<'_>) -> String {
    let client = request.client;
    let document = BTreeMap::from([(
        client.section(),
        BTreeMap::from([(request.name.as_str(), entry)]),
    )]);
    let json = splice::render(&document, Some("  "), "", "\n").unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} reads its MCP servers from {}\nMerge this into it (or run again with --write to have Quire do so, keeping a backup):\n\n{json}",
        client.title(),
        file.display()
    );
    out
}

/// `--write`: the entry merged into the client's file, and what was done.
fn write_entry(
    request: &Request,
    file: &Path,
    entry: &ServerEntry<'_>,
) -> Result<String, ConnectError> {
    let client = request.client;
    let current = write::read_current(file)?;
    let old_text = match &current.existing {
        None => Ok(String::new()),
        Some(existing) => String::from_utf8(existing.bytes.clone()),
    };
    let merged = old_text
        .map_err(|_| splice::Refusal::NotJson("it is not UTF-8 text".to_owned()))
        .and_then(|text| {
            splice::merge(&text, client.section(), &request.name, entry, request.force)
        });
    let (new_text, outcome) = match merged {
        Ok(merged) => merged,
        Err(refusal) => return Err(refused(request, &current.path, entry, refusal)),
    };
    let backup = write::replace(&current, new_text.as_bytes())?;
    let name = &request.name;
    let path = current.path.display();
    let mut out = match (outcome, &backup) {
        (_, None) => format!("created {path} with the server \"{name}\"\n"),
        (splice::Outcome::Added, Some(_)) => format!("added the server \"{name}\" to {path}\n"),
        (splice::Outcome::Replaced, Some(_)) => {
            format!("replaced the server \"{name}\" in {path}\n")
        }
    };
    if let Some(backup) = backup {
        let _ = writeln!(out, "the previous file is kept as {}", backup.display());
    }
    let _ = writeln!(out, "restart {} to start Quire", client.title());
    Ok(out)
}

/// The error for a file the merge refused, with the entry to add by hand where that helps.
fn refused(
    request: &Request,
    path: &Path,
    entry: &ServerEntry<'_>,
    refusal: splice::Refusal,
) -> ConnectError {
    let client = request.client;
    let path = path.to_path_buf();
    let (problem, advice) = match refusal {
        splice::Refusal::Exists => {
            let name = request.name.clone();
            return ConnectError::AlreadyConfigured { path, name };
        }
        splice::Refusal::NotJson(reason) if client == Client::Vscode => (
            format!("is not plain JSON ({reason})"),
            "VS Code allows comments and trailing commas in this file; Quire does not rewrite them away.",
        ),
        splice::Refusal::NotJson(reason) => (
            format!("is not valid JSON ({reason})"),
            "Fix it, or move it aside and run again.",
        ),
        splice::Refusal::NotAnObject { key: None, found } => (
            format!("holds {found}, not a JSON object"),
            "Fix it, or move it aside and run again.",
        ),
        splice::Refusal::NotAnObject {
            key: Some(key),
            found,
        } => (
            format!("has \"{key}\" as {found}, not an object of servers"),
            "Fix it and run again.",
        ),
        splice::Refusal::DuplicateKey(key) => (
            format!("names \"{key}\" twice, so which one the client reads is unclear"),
            "Remove one and run again.",
        ),
        splice::Refusal::Unverified => (
            "could not be merged safely".to_owned(),
            "This is a bug in Quire; please report it.",
        ),
    };
    let key = serde_json::to_string(&request.name).unwrap_or_default();
    let value = splice::render(entry, Some("  "), "", "\n").unwrap_or_default();
    ConnectError::Unmergeable {
        path,
        problem,
        advice,
        section: client.section(),
        entry: format!("{key}: {value}"),
    }
}
