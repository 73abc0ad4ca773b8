//! Where each client keeps its user-wide MCP configuration, on Linux and on macOS (chosen when
//! Quire is compiled), found from `HOME`, `XDG_CONFIG_HOME` and `CLAUDE_CONFIG_DIR`, which are
//! read once so tests can point every client at a temporary home.

use std::path::{Path, PathBuf};

use super::{Client, ConnectError};

/// The environment the configuration files are found from.
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub home: Option<PathBuf>,
    /// Linux only; an empty or relative value is ignored, as the XDG specification says.
    pub xdg_config_home: Option<PathBuf>,
    /// Claude Code's own override of where it keeps `.claude.json`.
    pub claude_config_dir: Option<PathBuf>,
}

impl Places {
    /// From the process environment.
    pub fn from_process() -> Places {
        let non_empty = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Places {
            home: non_empty("HOME"),
            xdg_config_home: non_empty("XDG_CONFIG_HOME"),
            claude_config_dir: non_empty("CLAUDE_CONFIG_DIR"),
        }
    }

    /// The file `client` reads its user-wide MCP servers from on this system.
    pub fn config_file(&self, client: Client) -> Result<PathBuf, ConnectError> {
        self.config_file_on(client, cfg!(target_os = "macos"))
    }

    /// The file `client` reads on macOS (`macos`) or Linux.
    fn config_file_on(&self, client: Client, macos: bool) -> Result<PathBuf, ConnectError> {
        if let (Client::ClaudeCode, Some(dir)) = (client, &self.claude_config_dir) {
            return Ok(dir.join(".claude.json"));
        }
        let home = self.home.as_deref().ok_or(ConnectError::NoHome)?;
        Ok(match client {
            Client::ClaudeDesktop => self
                .application_folder(home, macos)
                .join("Claude/claude_desktop_config.json"),
            Client::ClaudeCode => home.join(".claude.json"),
            Client::Cursor => home.join(".cursor/mcp.json"),
            Client::Vscode => self
                .application_folder(home, macos)
                .join("Code/User/mcp.json"),
        })
    }

    /// Where desktop applications keep their settings: `~/Library/Application Support` on
    /// macOS, `$XDG_CONFIG_HOME` (else `~/.config`) on Linux.
    fn application_folder(&self, home: &Path, macos: bool) -> PathBuf {
        if macos {
            return home.join("Library/Application Support");
        }
        self.xdg_config_home
            .clone()
            .filter(|dir| dir.is_absolute())
            .unwrap_or_else(|| home.join(".config"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places() -> Places {
        Places {
            home: Some(PathBuf::from("/home/ada")),
            xdg_config_home: None,
            claude_config_dir: None,
        }
    }

    fn check(places: &Places, client: Client, macos: bool, expected: &str) {
        let found = places.config_file_on(client, macos).expect("a home");
        assert_eq!(found, PathBuf::from(expected), "{client:?}, macos: {macos}");
    }

    #[test]
    fn each_client_on_linux_and_macos() {
        let linux = [
            "/home/ada/.config/Claude/claude_desktop_config.json",
            "/home/ada/.claude.json",
            "/home/ada/.cursor/mcp.json",
            "/home/ada/.config/Code/User/mcp.json",
        ];
        let macos = [
            "/home/ada/Library/Application Support/Claude/claude_desktop_config.json",
            "/home/ada/.claude.json",
            "/home/ada/.cursor/mcp.json",
            "/home/ada/Library/Application Support/Code/User/mcp.json",
        ];
        let clients = [
            Client::ClaudeDesktop,
            Client::ClaudeCode,
            Client::Cursor,
            Client::Vscode,
        ];
        for ((client, on_linux), on_macos) in clients.into_iter().zip(linux).zip(macos) {
            check(&places(), client, false, on_linux);
            check(&places(), client, true, on_macos);
        }
    }

    #[test]
    fn overrides_apply_where_their_owners_honour_them() {
        let moved = Places {
            xdg_config_home: Some(PathBuf::from("/xdg")),
            claude_config_dir: Some(PathBuf::from("/claude")),
            ..places()
        };
        check(&moved, Client::Vscode, false, "/xdg/Code/User/mcp.json");
        check(&moved, Client::ClaudeCode, false, "/claude/.claude.json");
        check(&moved, Client::Cursor, false, "/home/ada/.cursor/mcp.json");
        // macOS applications do not follow XDG.
        check(
            &moved,
            Client::Vscode,
            true,
            "/home/ada/Library/Application Support/Code/User/mcp.json",
        );
        let relative = Places {
            xdg_config_home: Some(PathBuf::from("relative")),
            ..places()
        };
        check(
            &relative,
            Client::ClaudeDesktop,
            false,
            "/home/ada/.config/Claude/claude_desktop_config.json",
        );
    }

    #[test]
    fn no_home_is_an_error() {
        let homeless = Places::default();
        assert!(matches!(
            homeless.config_file_on(Client::Cursor, false),
            Err(ConnectError::NoHome)
        ));
    }
}
