//! `quire connect CLIENT` run as the real binary against real files in a temporary home: what
//! it prints, what `--write` makes of a missing file, a file with other servers and keys, an
//! existing entry, and a file it must not touch.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

/// A temporary home (`HOME` and `XDG_CONFIG_HOME` point into it) beside a vault folder.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        for folder in ["home", "xdg", "Notes"] {
            std::fs::create_dir(dir.path().join(folder)).expect("mkdir");
        }
        Home { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The temporary folder as `quire` sees it from inside (`getcwd` resolves links).
    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("the temporary folder")
    }

    fn vault(&self) -> String {
        let vault = self.root().join("Notes");
        vault.to_str().expect("a UTF-8 temp path").to_owned()
    }

    /// Where `client` keeps its servers in this home.
    fn file(&self, client: &str) -> PathBuf {
        let application = if cfg!(target_os = "macos") {
            self.home().join("Library/Application Support")
        } else {
            self.dir.path().join("xdg")
        };
        match client {
            "claude-desktop" => application.join("Claude/claude_desktop_config.json"),
            "claude-code" => self.home().join(".claude.json"),
            "cursor" => self.home().join(".cursor/mcp.json"),
            "vscode" => application.join("Code/User/mcp.json"),
            other => panic!("no client {other}"),
        }
    }

    /// `quire connect ARGS` from the temporary folder, with only this home to find.
    fn connect(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_quire"))
            .arg("connect")
            .args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.dir.path().join("xdg"))
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("QUIRE_CONFIG")
            .output()
            .expect("quire runs")
    }

    /// Writes `text` as `client`'s file.
    fn put(&self, client: &str, text: &str) -> PathBuf {
        let file = self.file(client);
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
        std::fs::write(&file, text).expect("write");
        file
    }

    /// Every file under the temporary folder, sorted.
    fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(self.dir.path())
            .into_iter()
            .map(|entry| entry.expect("walk").into_path())
            .filter(|path| !path.is_dir())
            .collect();
        files.sort();
        files
    }
}

fn binary() -> String {
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_quire")).expect("the binary");
    binary.to_str().expect("UTF-8").to_owned()
}

/// The entry `client` gets for `args` of `quire serve`.
fn entry(client: &str, args: &[&str]) -> Value {
    let (command, args) = (binary(), json!(args));
    match client {
        "claude-code" => json!({"type": "stdio", "command": command, "args": args, "env": {}}),
        "vscode" => json!({"type": "stdio", "command": command, "args": args}),
        _ => json!({"command": command, "args": args}),
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

/// Asserts the run succeeded and returns its standard output.
fn succeeded(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    stdout
}

/// Asserts the run failed with `code` and returns its standard error.
fn failed(output: &Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    stderr
}

fn backups(file: &Path) -> Vec<PathBuf> {
    let name = file.file_name().expect("a name").to_string_lossy();
    let prefix = format!("{name}.quire-backup-");
    let mut found: Vec<PathBuf> = std::fs::read_dir(file.parent().expect("a folder"))
        .expect("list")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(&prefix))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn printing_shows_the_entry_and_its_file_and_writes_nothing() {
    let home = Home::new();
    for client in ["claude-desktop", "claude-code", "cursor", "vscode"] {
        let stdout = succeeded(&home.connect(&[client, "--vault", "Notes"]));
        let file = home.file(client);
        assert!(stdout.contains(&file.display().to_string()), "{stdout}");
        let json_start = stdout.find("\n{").expect("a JSON document");
        let printed: Value = serde_json::from_str(&stdout[json_start..]).expect("JSON");
        let section = if client == "vscode" {
            "servers"
        } else {
            "mcpServers"
        };
        let vault = home.vault();
        let expected = json!({section: {"quire": entry(client, &["serve", "--vault", &vault])}});
        assert_eq!(printed, expected, "{client}");
    }
    assert_eq!(home.files(), Vec::<PathBuf>::new());
}

#[test]
fn writing_creates_a_missing_file_and_its_folders() {
    let home = Home::new();
    let stdout = succeeded(&home.connect(&["cursor", "--vault", "Notes", "--write"]));
    let file = home.file("cursor");
    assert!(stdout.contains("created"), "{stdout}");
    let vault = home.vault();
    assert_eq!(
        read_json(&file),
        json!({"mcpServers": {"quire": entry("cursor", &["serve", "--vault", &vault])}})
    );
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(home.files(), vec![file]);
}

#[test]
fn merging_keeps_other_servers_and_keys_and_backs_the_old_file_up() {
    let home = Home::new();
    let old = "{\n  \"globalShortcut\": \"Ctrl+Space\",\n  \"mcpServers\": {\n    \"files\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"files\"],\n      \"env\": {\"KEY\": \"v\"}\n    }\n  },\n  \"telemetry\": {\"enabled\": false}\n}\n";
    let file = home.put("claude-desktop", old);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let stdout = succeeded(&home.connect(&["claude-desktop", "--vault", "Notes", "--write"]));
    assert!(stdout.contains("added the server \"quire\""), "{stdout}");

    let mut expected: Value = serde_json::from_str(old).expect("JSON");
    let vault = home.vault();
    expected["mcpServers"]["quire"] = entry("claude-desktop", &["serve", "--vault", &vault]);
    assert_eq!(read_json(&file), expected);
    let new = std::fs::read_to_string(&file).expect("read");
    assert!(new.starts_with(&old[..old.find("\n  },").expect("end of servers")]));
    assert!(
        new.ends_with("  },\n  \"telemetry\": {\"enabled\": false}\n}\n"),
        "{new}"
    );
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o640);

    let backups = backups(&file);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(std::fs::read_to_string(&backups[0]).expect("backup"), old);
    assert!(
        stdout.contains(&backups[0].display().to_string()),
        "{stdout}"
    );
}

#[test]
fn an_existing_entry_is_replaced_only_with_force() {
    let home = Home::new();
    let old =
        "{\"mcpServers\": {\"quire\": {\"command\": \"/old/quire\", \"args\": []}, \"x\": {}}}";
    let file = home.put("cursor", old);
    let stderr = failed(&home.connect(&["cursor", "--vault", "Notes", "--write"]), 1);
    assert!(
        stderr.contains("already has a server named \"quire\""),
        "{stderr}"
    );
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), old);
    assert_eq!(home.files(), vec![file.clone()]);

    let args = ["cursor", "--vault", "Notes", "--write", "--force"];
    let stdout = succeeded(&home.connect(&args));
    assert!(stdout.contains("replaced the server \"quire\""), "{stdout}");
    let vault = home.vault();
    let expected = json!({"mcpServers": {
        "quire": entry("cursor", &["serve", "--vault", &vault]),
        "x": {},
    }});
    assert_eq!(read_json(&file), expected);
    let backups = backups(&file);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(std::fs::read_to_string(&backups[0]).expect("backup"), old);
}

#[test]
fn a_file_that_is_not_json_is_refused_and_left_as_it_was() {
    let home = Home::new();
    let broken = "{\"mcpServers\": {\"a\": {}}\n";
    let desktop = home.put("claude-desktop", broken);
    let jsonc = "{\n  // my servers\n  \"servers\": {},\n}\n";
    let vscode = home.put("vscode", jsonc);
    let before = home.files();

    let stderr = failed(
        &home.connect(&["claude-desktop", "--vault", "Notes", "--write"]),
        1,
    );
    assert!(stderr.contains("is not valid JSON"), "{stderr}");
    assert!(stderr.contains("Nothing was written"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&desktop).expect("read"), broken);

    let stderr = failed(&home.connect(&["vscode", "--vault", "Notes", "--write"]), 1);
    assert!(stderr.contains("comments and trailing commas"), "{stderr}");
    // The entry to paste by hand, in VS Code's shape.
    let pasted = &stderr[stderr.find("\"quire\": ").expect("the entry") + 9..];
    let pasted: Value = serde_json::from_str(pasted.trim_end()).expect("JSON");
    assert_eq!(
        pasted,
        entry("vscode", &["serve", "--vault", &home.vault()])
    );
    assert_eq!(std::fs::read_to_string(&vscode).expect("read"), jsonc);

    assert_eq!(home.files(), before, "no backup or temp file is left");
}

#[test]
fn vscode_uses_servers_and_a_type() {
    let home = Home::new();
    home.put("vscode", "{\n\t\"inputs\": [],\n\t\"servers\": {}\n}\n");
    succeeded(&home.connect(&["vscode", "--vault", "Notes", "--write"]));
    let file = home.file("vscode");
    let vault = home.vault();
    assert_eq!(
        read_json(&file),
        json!({"inputs": [], "servers": {"quire": entry("vscode", &["serve", "--vault", &vault])}})
    );
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(
        text.contains("\n\t\t\"quire\": {\n\t\t\t\"type\": \"stdio\",\n"),
        "{text}"
    );
}

#[test]
fn claude_code_keeps_every_other_top_level_key_in_its_order() {
    let home = Home::new();
    let old = "{\n  \"numStartups\": 41,\n  \"projects\": {\n    \"/src/app\": {\"mcpServers\": {}, \"allowedTools\": []}\n  },\n  \"userID\": \"abc\",\n  \"cachedGrowthBookFeatures\": {\"z\": 1, \"a\": 2.50}\n}";
    let file = home.put("claude-code", old);
    succeeded(&home.connect(&["claude-code", "--vault", "Notes", "--write"]));
    let new = std::fs::read_to_string(&file).expect("read");
    let mut expected: Value = serde_json::from_str(old).expect("JSON");
    let vault = home.vault();
    expected["mcpServers"] = json!({"quire": entry("claude-code", &["serve", "--vault", &vault])});
    assert_eq!(read_json(&file), expected);
    // Everything before the new section is the old text, byte for byte.
    let kept = &old[..old.rfind("\n}").expect("the last brace")];
    assert!(new.starts_with(kept), "{new}");
    assert!(
        new[kept.len()..].starts_with(",\n  \"mcpServers\": {\n    \"quire\": {"),
        "{new}"
    );
}

#[test]
fn name_config_and_a_symbolic_link_are_honoured() {
    let home = Home::new();
    let config = home.root().join("quire.toml");
    std::fs::write(&config, "").expect("config");
    // A dotfiles manager's link: the file it points to changes, the link stays.
    let real = home.dir.path().join("dotfiles/claude.json");
    std::fs::create_dir_all(real.parent().expect("folder")).expect("mkdir");
    std::fs::write(&real, "{}\n").expect("write");
    let link = home.file("claude-code");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");

    let args = [
        "claude-code",
        "--config",
        "quire.toml",
        "--name",
        "notes",
        "--write",
    ];
    succeeded(&home.connect(&args));
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("lstat")
            .is_symlink()
    );
    let config = config.to_str().expect("UTF-8");
    let expected =
        json!({"mcpServers": {"notes": entry("claude-code", &["serve", "--config", config])}});
    assert_eq!(read_json(&real), expected);
    assert_eq!(backups(&real).len(), 1);
}

#[test]
fn usage_errors_exit_with_two() {
    let home = Home::new();
    let stderr = failed(&home.connect(&["cursor"]), 2);
    assert!(stderr.contains("--vault DIR"), "{stderr}");
    let stderr = failed(&home.connect(&["cursor", "--vault", "Missing"]), 2);
    assert!(stderr.contains("cannot serve"), "{stderr}");
    let stderr = failed(&home.connect(&["emacs", "--vault", "Notes"]), 2);
    assert!(
        stderr.contains("claude-desktop, claude-code, cursor, vscode"),
        "{stderr}"
    );
    failed(&home.connect(&["cursor", "--vault", "Notes", "--force"]), 2);
    assert_eq!(home.files(), Vec::<PathBuf>::new());
}
