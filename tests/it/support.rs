//! What the integration tests share: `TestVault`, a vault in a temporary folder opened the way
//! `quire serve` opens it (`Config::load`, then `app::build_ops`), and the rules for data kept
//! beside the repository (`../shared`: oracles and real vaults), which a bare clone lacks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quire::config::{Config, Environment, Overrides};
use quire::index::{Index, IndexOptions};
use quire::ops::{self, Context, Ops};

/// A vault in a temporary folder with `Ops` over it, built from a `Config` by the product's own
/// `build_ops` (audit log, time zone, daily-notes overrides), so a test runs what `serve` runs.
///
/// The folder holds `vault/` (unless the vault is elsewhere, see `vault_at`), `index.db` and
/// `state/`, the state directory with the audit log. No model is configured or installed: semantic
/// search is off until a test enables it.
pub struct TestVault {
    /// Kept so the folder lives as long as the fixture.
    pub dir: tempfile::TempDir,
    /// The vault folder, canonical (as `Vault::root` has it).
    pub root: PathBuf,
    pub config: Config,
    pub ops: Ops,
}

/// Fills the vault before it opens; see `TestVault::builder`.
pub struct TestVaultBuilder {
    dir: tempfile::TempDir,
    root: PathBuf,
    config: String,
}

impl TestVault {
    /// Writes `body` as the owner over the revision `over` (`None`: a new note), through
    /// `vault_write_note`'s operation; the new revision.
    pub fn write_note(&self, path: &str, body: &str, over: Option<String>) -> String {
        self.ops
            .write_note(
                &Context::owner(),
                ops::WriteNote {
                    path: path.into(),
                    body: body.into(),
                    properties: None,
                    overwrite: over.is_some(),
                    expected_revision: over,
                },
            )
            .unwrap_or_else(|error| panic!("writing {path}: {error}"))
            .revision
    }

    /// A new empty vault folder; write into it through the builder, then `open` it.
    pub fn builder() -> TestVaultBuilder {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("vault");
        std::fs::create_dir_all(&root).expect("mkdir vault");
        TestVaultBuilder {
            dir,
            root,
            config: String::new(),
        }
    }

    /// A vault holding these files (vault-relative path, content), opened and reconciled.
    pub fn with_notes(notes: &[(impl AsRef<str>, impl AsRef<str>)]) -> TestVault {
        TestVault::builder().notes(notes).open()
    }

    /// The file at `relative` in the vault.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The text of the file at `relative`, read from disk.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|error| panic!("reading {relative}: {error}"))
    }

    /// A second index over the same vault, built from scratch in its own database and reconciled:
    /// what the live index must equal.
    pub fn rebuilt_index(&self) -> Index {
        let index = Index::open(
            &self.dir.path().join("rebuilt.db"),
            std::sync::Arc::clone(self.ops.index().vault()),
            IndexOptions {
                rebuild: true,
                ..IndexOptions::default()
            },
        )
        .expect("open the rebuilt index");
        index.wait_ready().expect("rebuild");
        index
    }
}

impl TestVaultBuilder {
    /// The vault folder, to write into directly (symlinks, settings, generated trees).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes one file, creating its folders.
    pub fn note(self, relative: &str, text: &str) -> TestVaultBuilder {
        write(&self.root, relative, text);
        self
    }

    /// Writes each (vault-relative path, content) pair.
    pub fn notes(self, notes: &[(impl AsRef<str>, impl AsRef<str>)]) -> TestVaultBuilder {
        for (path, text) in notes {
            write(&self.root, path.as_ref(), text.as_ref());
        }
        self
    }

    /// Adds TOML to the configuration file (`[time]`, `[daily_notes]`, `[limits]`, ...); the
    /// vault and index paths come as flags would.
    pub fn config(mut self, toml: &str) -> TestVaultBuilder {
        self.config.push_str(toml);
        self.config.push('\n');
        self
    }

    /// Serves an existing folder (read, never written by the fixture) instead of the new one; the
    /// index and state stay in the temporary folder.
    pub fn vault_at(mut self, root: &Path) -> TestVaultBuilder {
        self.root = root.to_path_buf();
        self
    }

    /// Opens the vault and waits until the index has reconciled with it.
    pub fn open(self) -> TestVault {
        let vault = self.open_reconciling();
        vault.ops.index().wait_ready().expect("reconcile");
        vault
    }

    /// Opens the vault with the reconcile still running (for tests that attach a watcher first).
    pub fn open_reconciling(self) -> TestVault {
        let config = self.load_config();
        let ops = quire::app::build_ops(&config, IndexOptions::default()).expect("build ops");
        TestVault {
            root: config.vault.clone(),
            dir: self.dir,
            config,
            ops,
        }
    }

    fn load_config(&self) -> Config {
        let dir = self.dir.path();
        let mut overrides = Overrides {
            config: None,
            vault: Some(self.root.clone()),
            index: Some(dir.join("index.db")),
            http_listen: None,
            no_auth: false,
        };
        if !self.config.is_empty() {
            let file = dir.join("quire.toml");
            std::fs::write(&file, &self.config).expect("write the config file");
            overrides.config = Some(file);
        }
        // Nothing from the process: no models in a home folder, no `TZ`, no `ORT_DYLIB_PATH`;
        // the clock's zone is UTC unless `[time] timezone` says otherwise.
        let environment = Environment {
            current_dir: dir.to_path_buf(),
            home: Some(dir.join("home")),
            xdg_state_home: None,
            state_directory: Some(dir.join("state")),
            variables: HashMap::new(),
            system_time_zone: None,
        };
        Config::load(&overrides, &environment, known_tools())
            .unwrap_or_else(|error| panic!("the test configuration is invalid: {error}"))
    }
}

/// The tool names `[features] disabled_tools` may name, computed once: generating every tool's
/// schema for each of a property test's cases would dominate its time.
fn known_tools() -> &'static [String] {
    static TOOLS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(quire::mcp::tool_names)
}

/// `Ops` over `config`'s vault and index as `build_ops` makes them, reconciled: a restart of a
/// `TestVault` (drop its `ops` first, so one writer at a time owns the database).
pub fn reopen(config: &Config, options: IndexOptions) -> Ops {
    let ops = quire::app::build_ops(config, options).expect("build ops");
    ops.index().wait_ready().expect("reconcile");
    ops
}

/// Writes `text` to `relative` under `root`, creating its folders.
pub fn write(root: &Path, relative: &str, text: &str) {
    let file = root.join(relative);
    std::fs::create_dir_all(file.parent().expect("a file has a folder")).expect("mkdir");
    std::fs::write(&file, text).unwrap_or_else(|error| panic!("writing {relative}: {error}"));
}

/// `<repo>/../shared`, or `$QUIRE_SHARED`: oracles and real vaults kept beside the repository.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("QUIRE_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        PathBuf::from,
    )
}

/// Reports that a real vault from `../shared` is missing. A bare clone skips with a visible
/// notice; `.ci/run` sets `QUIRE_REQUIRE_SHARED=1`, so in CI it fails instead.
pub fn skip_without_shared(what: &str, path: &Path) {
    skip_or_fail(what, path, &["QUIRE_REQUIRE_SHARED"]);
}

/// Reports that an oracle (captured output of Obsidian, the Tasks plugin, a test suite) is
/// missing. `.ci/run` sets `QUIRE_REQUIRE_ORACLES=1` (and `QUIRE_REQUIRE_SHARED=1`, which
/// covers oracles too), so there a missing oracle fails instead of passing while checking nothing.
pub fn skip_without_oracle(what: &str, path: &Path) {
    skip_or_fail(what, path, ORACLE_VARIABLES);
}

const ORACLE_VARIABLES: &[&str] = &["QUIRE_REQUIRE_ORACLES", "QUIRE_REQUIRE_SHARED"];

fn skip_or_fail(what: &str, path: &Path, variables: &[&str]) {
    if let Some(variable) = requiring(variables, |name| std::env::var(name).ok()) {
        panic!("{variable}=1 but {what} is missing at {}", path.display());
    }
    eprintln!("SKIP: {what} not found at {}", path.display());
}

/// The first of `variables` set to `1`, which turns a skip into a failure.
fn requiring<'a>(
    variables: &[&'a str],
    lookup: impl Fn(&str) -> Option<String>,
) -> Option<&'a str> {
    variables
        .iter()
        .copied()
        .find(|name| lookup(name).as_deref() == Some("1"))
}

#[test]
fn either_variable_makes_a_missing_oracle_fail_and_only_the_shared_one_a_missing_vault() {
    let set = |names: &'static [&'static str]| {
        move |name: &str| names.contains(&name).then(|| "1".to_string())
    };
    assert_eq!(requiring(ORACLE_VARIABLES, set(&[])), None);
    assert_eq!(
        requiring(ORACLE_VARIABLES, set(&["QUIRE_REQUIRE_ORACLES"])),
        Some("QUIRE_REQUIRE_ORACLES")
    );
    assert_eq!(
        requiring(ORACLE_VARIABLES, set(&["QUIRE_REQUIRE_SHARED"])),
        Some("QUIRE_REQUIRE_SHARED")
    );
    assert_eq!(
        requiring(&["QUIRE_REQUIRE_SHARED"], set(&["QUIRE_REQUIRE_ORACLES"])),
        None
    );
    let zero = |_: &str| Some("0".to_string());
    assert_eq!(requiring(ORACLE_VARIABLES, zero), None);
}

#[test]
fn a_test_vault_is_opened_from_its_configuration_like_the_product() {
    let vault = TestVault::builder()
        .notes(&[("A/One.md", "# One\nword\n"), ("Two.md", "two")])
        .config("[time]\ntimezone = \"Asia/Tokyo\"")
        .open();
    assert_eq!(vault.config.vault, vault.root);
    assert!(!vault.root.starts_with(&vault.config.state_dir));
    assert_eq!(
        vault.ops.time_zone().iana_name(),
        Some("Asia/Tokyo"),
        "[time] applies through build_ops"
    );
    assert!(
        vault.config.state_dir.join("audit.jsonl").is_file(),
        "the audit log is in the state directory"
    );
    assert_eq!(vault.read("A/One.md"), "# One\nword\n");
    let stats = vault.ops.index().wait_ready().expect("ready");
    assert_eq!(stats.notes, 2);
}
