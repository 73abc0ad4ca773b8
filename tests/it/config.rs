//! Configuration loading: precedence of flags over the file, validation messages that name the
//! key, and where state goes.

use std::path::{Path, PathBuf};

use quire::config::{Config, ConfigError, Environment, Overrides};
use quire::mcp::ToolGroup;

fn tools() -> Vec<String> {
    quire::mcp::tool_names()
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("Notes")).expect("mkdir");
        Setup { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn env(&self) -> Environment {
        Environment {
            current_dir: self.dir.path().to_path_buf(),
            home: Some(self.path("home")),
            xdg_state_home: None,
            state_directory: None,
            variables: Default::default(),
            system_time_zone: None,
        }
    }

    fn load_file(&self, toml: &str) -> Result<Config, ConfigError> {
        std::fs::write(self.path("quire.toml"), toml).expect("write config");
        Config::load(
            &Overrides {
                config: Some(PathBuf::from("quire.toml")),
                ..Overrides::default()
            },
            &self.env(),
            &tools(),
        )
    }
}

fn check_error(toml: &str, needles: &[&str]) {
    let setup = Setup::new();
    let error = setup
        .load_file(toml)
        .expect_err("must be refused")
        .to_string();
    for needle in needles {
        assert!(
            error.contains(needle),
            "{error:?} should mention {needle:?}"
        );
    }
}

#[test]
fn unknown_keys_and_bad_values_name_the_key() {
    check_error("[vault]\npath = \"Notes\"\nfolder = \"x\"\n", &["folder"]);
    check_error("[vault]\npath = \"Notes\"\n[serach]\n", &["serach"]);
    check_error("[vault]\npath = 5\n", &["path"]);
    check_error(
        "[vault]\npath = \"Notes\"\n[limits]\nmax_note_bytes = 0\n",
        &["limits.max_note_bytes"],
    );
    check_error("[vault]\npath = \"Missing\"\n", &["vault.path", "Missing"]);
    check_error("[index]\npath = \"/tmp/x.db\"\n", &["--vault"]);
}

#[test]
fn file_paths_are_relative_to_the_file_and_flags_win() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.path("Other")).expect("mkdir");
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[index]\npath = \"state/i.db\"\n")
        .expect("valid");
    assert_eq!(config.vault, setup.path("Notes").canonicalize().expect("c"));
    assert_eq!(config.index, setup.path("state/i.db"));
    let flagged = Config::load(
        &Overrides {
            config: Some(setup.path("quire.toml")),
            vault: Some(PathBuf::from("Other")),
            ..Overrides::default()
        },
        &setup.env(),
        &tools(),
    )
    .expect("valid");
    assert_eq!(
        flagged.vault,
        setup.path("Other").canonicalize().expect("c")
    );
}

#[test]
fn state_lives_outside_the_vault_and_apart_per_vault() {
    let setup = Setup::new();
    std::fs::create_dir_all(setup.path("elsewhere/Notes")).expect("mkdir");
    let load = |vault: &Path| {
        Config::load(
            &Overrides {
                vault: Some(vault.to_path_buf()),
                ..Overrides::default()
            },
            &setup.env(),
            &tools(),
        )
        .expect("valid")
    };
    let first = load(&setup.path("Notes"));
    let second = load(&setup.path("elsewhere/Notes"));
    assert!(
        first
            .state_dir
            .starts_with(setup.path("home/.local/state/quire"))
    );
    assert!(
        first
            .state_dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("Notes-"))
    );
    assert_ne!(
        first.state_dir, second.state_dir,
        "two vaults called Notes share no state"
    );
    assert_eq!(first.index, first.state_dir.join("index.db"));

    let error = setup
        .load_file("[vault]\npath = \"Notes\"\n[index]\npath = \"Notes/.quire/index.db\"\n")
        .expect_err("inside the vault");
    assert!(matches!(
        error,
        ConfigError::StateInsideVault {
            key: "index.path",
            ..
        }
    ));
}

#[test]
fn systemd_state_directory_wins() {
    let setup = Setup::new();
    let mut env = setup.env();
    env.state_directory = Some(setup.path("var/lib/quire"));
    let config = Config::load(
        &Overrides {
            vault: Some(setup.path("Notes")),
            ..Overrides::default()
        },
        &env,
        &tools(),
    )
    .expect("valid");
    assert_eq!(config.state_dir, setup.path("var/lib/quire"));
}

#[test]
fn no_auth_only_on_loopback_and_only_with_http() {
    let setup = Setup::new();
    let load = |listen: Option<&str>, no_auth: bool| {
        Config::load(
            &Overrides {
                vault: Some(setup.path("Notes")),
                http_listen: listen.map(str::to_string),
                no_auth,
                ..Overrides::default()
            },
            &setup.env(),
            &tools(),
        )
    };
    assert!(load(Some("127.0.0.1:8787"), true).is_ok());
    assert!(load(Some("[::1]:8787"), true).is_ok());
    let error = load(Some("0.0.0.0:8787"), true)
        .expect_err("refused")
        .to_string();
    assert!(
        error.contains("--no-auth") && error.contains("0.0.0.0"),
        "{error}"
    );
    let with_token = load(Some("0.0.0.0:8787"), false).expect("token auth may bind anywhere");
    assert!(with_token.http.is_some_and(|http| http.auth));
    assert!(
        load(None, true).is_err(),
        "--no-auth without HTTP is a mistake"
    );
    let error = load(Some("localhost"), false)
        .expect_err("not an address")
        .to_string();
    assert!(error.contains("http.listen"), "{error}");
}

#[test]
fn unknown_tool_names_fail_startup() {
    check_error(
        "[vault]\npath = \"Notes\"\n[features]\ndisabled_tools = [\"vault_delete_notes\"]\n",
        &[
            "features.disabled_tools",
            "vault_delete_notes",
            "vault_delete_note",
        ],
    );
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[features]\nread_only = true\ndisabled_tools = [\"vault_delete_note\"]\n")
        .expect("valid");
    assert!(config.read_only);
    assert_eq!(config.disabled_tools, vec!["vault_delete_note".to_string()]);
}

#[test]
fn the_documented_example_configuration_is_valid() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md"),
    )
    .expect("docs/configuration.md");
    // The first TOML block of the page is the example of every section.
    let start = page
        .find("```toml\n")
        .expect("docs/configuration.md has a TOML example")
        + "```toml\n".len();
    let end = start + page[start..].find("```").expect("closed");
    let setup = Setup::new();
    // Point the example's absolute paths into the test's folder; every key stays as written.
    let toml = page[start..end]
        .replace("/home/me/Notes", &setup.path("Notes").display().to_string())
        .replace(
            "/home/me/.local/state",
            &setup.path("state").display().to_string(),
        );
    let config = setup
        .load_file(&toml)
        .expect("the configuration of docs/configuration.md loads");
    assert!(config.http.is_some());
}

const LONG_TOKEN: &str = "0123456789abcdef0123456789abcdef-a";

#[test]
fn identities_and_acl_rules_are_validated_naming_the_key() {
    let base = "[vault]\npath = \"Notes\"\n";
    let identity = |extra: &str| {
        format!("{base}[[identity]]\nname = \"claude\"\ntoken_env = \"T\"\nread = [\"/\"]\n{extra}")
    };
    check_error(&identity("colour = 1\n"), &["colour"]);
    check_error(
        &identity("write = [\"../Inbox/\"]\n"),
        &["identity[0].write[0]", "'..'"],
    );
    check_error(
        &identity("deny = [\"/Private/\"]\n"),
        &["identity[0].deny[0]"],
    );
    check_error(
        &identity("deny = [\"Notes/*.md\"]\n"),
        &["identity[0].deny[0]", "glob"],
    );
    check_error(&identity("deny = [\".obsidian/\"]\n"), &["hidden"]);
    check_error(
        &format!("{base}[acl]\nalways_deny = [\"\"]\n"),
        &["acl.always_deny[0]"],
    );
    check_error(&format!("{base}[acl]\nnever = []\n"), &["never"]);
    check_error(
        &format!("{base}[[identity]]\nname = \"a b\"\ntoken_env = \"T\"\n"),
        &["identity[0].name"],
    );
    check_error(
        &format!("{base}[[identity]]\nname = \"a\"\n"),
        &["identity[0]", "token_file"],
    );
}

#[test]
fn identity_tokens_are_long_unique_and_a_missing_one_disables_its_identity() {
    let setup = Setup::new();
    write_secret(&setup.path("a.token"), &format!("{LONG_TOKEN}\n"));
    write_secret(&setup.path("short.token"), "short\n");
    let mut env = setup.env();
    env.variables.insert("B_TOKEN".into(), LONG_TOKEN.into());
    let load = |toml: &str| {
        std::fs::write(setup.path("quire.toml"), toml).expect("write config");
        Config::load(
            &Overrides {
                config: Some(PathBuf::from("quire.toml")),
                ..Overrides::default()
            },
            &env,
            &tools(),
        )
    };
    let base = "[vault]\npath = \"Notes\"\n";
    let config = load(&format!(
        "{base}[[identity]]\nname = \"a\"\ntoken_file = \"a.token\"\nread = [\"/\"]\n\
         [[identity]]\nname = \"gone\"\ntoken_file = \"missing.token\"\nread = [\"/\"]\n"
    ))
    .expect("loads");
    assert_eq!(
        config.access.tokens,
        vec![("a".to_string(), LONG_TOKEN.to_string())]
    );
    assert_eq!(config.access.disabled.len(), 1);
    assert_eq!(config.access.disabled[0].0, "gone");
    assert!(!format!("{:?}", config.access).contains(LONG_TOKEN));

    let error = load(&format!(
        "{base}[[identity]]\nname = \"s\"\ntoken_file = \"short.token\"\n"
    ))
    .expect_err("short token")
    .to_string();
    assert!(
        error.contains("identity[0].token") && error.contains("32"),
        "{error}"
    );

    let error = load(&format!(
        "{base}[[identity]]\nname = \"a\"\ntoken_file = \"a.token\"\n\
         [[identity]]\nname = \"b\"\ntoken_env = \"B_TOKEN\"\n"
    ))
    .expect_err("shared token")
    .to_string();
    assert!(
        error.contains("identity[1].token") && error.contains("same token"),
        "{error}"
    );
    assert!(!error.contains(LONG_TOKEN));

    let error = load(&format!(
        "{base}[[identity]]\nname = \"a\"\ntoken_file = \"a.token\"\n\
         [[identity]]\nname = \"a\"\ntoken_env = \"B_TOKEN\"\n"
    ))
    .expect_err("twice")
    .to_string();
    assert!(error.contains("identity[1].name"), "{error}");
}

/// Writes a token file as `quire token new` does, readable by its owner only.
fn write_secret(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("token");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

/// Issue 18, item 9: an identity's token file that other users may read is refused exactly as an
/// exposed owner token is, naming the key, the mode and the fix; the token never appears.
#[test]
fn r18_identity_token_files_readable_by_others_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let setup = Setup::new();
    let toml = "[vault]\npath = \"Notes\"\n[[identity]]\nname = \"a\"\ntoken_file = \"a.token\"\nread = [\"/\"]\n";
    for mode in [0o644, 0o604, 0o640, 0o660] {
        write_secret(&setup.path("a.token"), &format!("{LONG_TOKEN}\n"));
        std::fs::set_permissions(setup.path("a.token"), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
        let error = setup
            .load_file(toml)
            .expect_err("a token others may read is refused")
            .to_string();
        assert!(
            error.contains("identity[0].token_file")
                && error.contains(&format!("mode {mode:o}"))
                && error.contains("chmod 600"),
            "{error}"
        );
        assert!(!error.contains(LONG_TOKEN));
    }
    for mode in [0o600, 0o400] {
        std::fs::set_permissions(setup.path("a.token"), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
        let config = setup.load_file(toml).expect("a private token file loads");
        assert_eq!(config.access.tokens.len(), 1);
    }
}

#[test]
fn client_id_metadata_documents_are_on_by_default_and_open_port_443_only_then() {
    let setup = Setup::new();
    let mut env = setup.env();
    env.variables.insert("A_TOKEN".into(), LONG_TOKEN.into());
    let load = |extra: &str, env: &Environment| {
        std::fs::write(
            setup.path("quire.toml"),
            format!(
                "[vault]\npath = \"Notes\"\n[http]\nlisten = \"127.0.0.1:8787\"\n[[identity]]\nname = \"a\"\ntoken_env = \"A_TOKEN\"\n{extra}"
            ),
        )
        .expect("write config");
        Config::load(
            &Overrides {
                config: Some(PathBuf::from("quire.toml")),
                ..Overrides::default()
            },
            env,
            &tools(),
        )
    };
    let on = load("", &env).expect("default");
    assert!(on.oauth.client_id_metadata_documents);
    assert_eq!(on.oauth.test_loopback_port, None);
    let plan = quire::app::sandbox_plan(&on, true);
    assert_eq!(plan.connect_ports, vec![443, 53]);
    assert!(
        plan.read_only
            .iter()
            .any(|p| p == Path::new("/etc/resolv.conf") || p == Path::new("/etc/hosts"))
            || !Path::new("/etc/hosts").exists(),
        "name resolution files are readable: {:?}",
        plan.read_only
    );

    assert!(
        quire::cli::check_config::describe(&on)
            .contains("oauth:          on; Client ID Metadata Documents accepted"),
        "{}",
        quire::cli::check_config::describe(&on)
    );
    let off = load("[oauth]\nclient_id_metadata_documents = false\n", &env).expect("off");
    assert!(
        quire::cli::check_config::describe(&off).contains("Client ID Metadata Documents refused"),
        "{}",
        quire::cli::check_config::describe(&off)
    );
    assert!(!off.oauth.client_id_metadata_documents);
    let plan = quire::app::sandbox_plan(&off, true);
    assert!(plan.connect_ports.is_empty(), "{:?}", plan.connect_ports);
    assert!(!plan.read_only.iter().any(|p| p.starts_with("/etc")));

    // Without identities there is no OAuth server, so nothing is fetched either.
    let plain = setup.load_file("[vault]\npath = \"Notes\"\n[http]\nlisten = \"127.0.0.1:8787\"\n");
    let plain = plain.expect("plain");
    assert!(quire::cli::check_config::describe(&plain).contains("oauth:          off"));
    let plan = quire::app::sandbox_plan(&plain, true);
    assert!(plan.connect_ports.is_empty());

    // The test-only escape hatch adds exactly its port.
    env.variables
        .insert("QUIRE_TEST_CIMD_LOOPBACK_PORT".into(), "8443".into());
    let hatch = load("", &env).expect("hatch");
    assert_eq!(hatch.oauth.test_loopback_port, Some(8443));
    assert_eq!(
        quire::app::sandbox_plan(&hatch, true).connect_ports,
        vec![443, 53, 8443]
    );
    env.variables
        .insert("QUIRE_TEST_CIMD_LOOPBACK_PORT".into(), "https".into());
    let error = load("", &env).expect_err("not a port").to_string();
    assert!(error.contains("QUIRE_TEST_CIMD_LOOPBACK_PORT"), "{error}");

    check_error(
        "[vault]\npath = \"Notes\"\n[oauth]\nclient_id_metadata_document = true\n",
        &["client_id_metadata_document"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[oauth]\nclient_id_metadata_documents = \"yes\"\n",
        &["client_id_metadata_documents"],
    );
}

#[test]
fn the_time_zone_is_an_iana_name_or_the_system_zone() {
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[time]\ntimezone = \"Europe/Berlin\"\n")
        .expect("valid");
    assert_eq!(config.time_zone.iana_name(), Some("Europe/Berlin"));
    assert!(config.time_zone_description().contains("time.timezone"));
    // Names are looked up without regard to ASCII case, as the tz database does.
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[time]\ntimezone = \"asia/tokyo\"\n")
        .expect("valid");
    assert_eq!(config.time_zone.iana_name(), Some("Asia/Tokyo"));

    for bad in [
        "Europe/Berln",
        "",
        "Etc/Unknown",
        "+01:00",
        "../../etc/passwd",
    ] {
        check_error(
            &format!("[vault]\npath = \"Notes\"\n[time]\ntimezone = {bad:?}\n"),
            &["time.timezone", bad, "IANA"],
        );
    }
    check_error(
        "[vault]\npath = \"Notes\"\n[time]\nzone = \"UTC\"\n",
        &["zone"],
    );

    // Without the key: the system's zone, else UTC (said so, not silently).
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    assert_eq!(config.time_zone, jiff::tz::TimeZone::UTC);
    assert!(
        config
            .time_zone_description()
            .contains("could not be determined")
    );
    let mut env = setup.env();
    env.system_time_zone = quire::config::resolve_time_zone("America/New_York");
    let config = Config::load(
        &Overrides {
            vault: Some(PathBuf::from("Notes")),
            ..Overrides::default()
        },
        &env,
        &tools(),
    )
    .expect("valid");
    assert_eq!(config.time_zone.iana_name(), Some("America/New_York"));
    assert!(config.time_zone_description().contains("the system's"));
}

#[test]
fn every_zone_resolves_without_a_system_database() {
    // The copy built into Quire knows the zones people configure, so a machine without
    // /usr/share/zoneinfo (a minimal container, a NixOS service without TZDIR) still starts.
    let bundled = jiff::tz::TimeZoneDatabase::bundled();
    for name in [
        "Europe/Berlin",
        "America/New_York",
        "Asia/Kolkata",
        "Pacific/Kiritimati",
        "UTC",
    ] {
        assert!(bundled.get(name).is_ok(), "{name} is not bundled");
    }
}

#[test]
fn daily_notes_overrides_are_checked_naming_the_key() {
    let setup = Setup::new();
    let config = setup
        .load_file(
            "[vault]\npath = \"Notes\"\n[daily_notes]\nfolder = \"Journal/\"\nformat = \"YYYY/MM/YYYY-MM-DD\"\ntemplate = \"\"\n",
        )
        .expect("valid");
    assert_eq!(config.daily_notes.folder.as_deref(), Some("Journal/"));
    assert_eq!(
        config.daily_notes.format.as_deref(),
        Some("YYYY/MM/YYYY-MM-DD")
    );
    // An empty template means "none", whatever Obsidian's settings say.
    assert_eq!(config.daily_notes.template.as_deref(), Some(""));
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[daily_notes]\nweek_start = \"Monday\"\n")
        .expect("valid");
    assert_eq!(
        config.daily_notes.week_start,
        Some(quire::vault::WeekStart::Monday)
    );
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    assert_eq!(config.daily_notes, Default::default());

    for (toml, needles) in [
        (
            "folder = \"../elsewhere\"",
            &["daily_notes.folder", "elsewhere"][..],
        ),
        ("folder = \".hidden\"", &["daily_notes.folder"][..]),
        ("format = \"  \"", &["daily_notes.format", "moment.js"][..]),
        ("template = \"/etc/passwd\"", &["daily_notes.template"][..]),
        ("templates = \"T\"", &["templates"][..]),
        (
            "week_start = \"friday\"",
            &["daily_notes.week_start", "monday"][..],
        ),
    ] {
        check_error(
            &format!("[vault]\npath = \"Notes\"\n[daily_notes]\n{toml}\n"),
            needles,
        );
    }
}

/// Runs `script` with `sh` in a private mount namespace; `None` when this machine cannot make one
/// (not root, no `unshare`), which the caller reports as a skip.
fn in_private_mounts(script: &str, state: &Path) -> Option<std::process::Output> {
    let output = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", script])
        .env("XDG_STATE_HOME", state)
        .env_remove("TZDIR")
        .env_remove("TZ")
        .output()
        .ok()?;
    Some(output)
}

#[test]
fn zones_resolve_on_a_machine_without_zoneinfo() {
    // A minimal container or a NixOS service may have no /usr/share/zoneinfo: hide it behind an
    // empty folder (in a mount namespace of the child only) and check that Quire still knows
    // every zone, from the copy built into it.
    let setup = Setup::new();
    let empty = setup.path("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let hide = format!("mount --bind '{}' /usr/share/zoneinfo", empty.display());
    let state = setup.path("state");
    let probe = in_private_mounts(
        &format!("{hide} && ls -A /usr/share/zoneinfo | wc -l"),
        &state,
    );
    match &probe {
        Some(output)
            if output.status.success() && String::from_utf8_lossy(&output.stdout).trim() == "0" => {
        }
        _ => {
            eprintln!(
                "SKIP: cannot hide /usr/share/zoneinfo in a private mount namespace here (needs root and unshare)"
            );
            return;
        }
    }
    std::fs::write(
        setup.path("quire.toml"),
        "[time]\ntimezone = \"America/Sao_Paulo\"\n",
    )
    .expect("config");
    let quire = env!("CARGO_BIN_EXE_quire");
    let output = in_private_mounts(
        &format!(
            "{hide} && '{quire}' doctor --vault '{}' --config '{}'",
            setup.path("Notes").display(),
            setup.path("quire.toml").display()
        ),
        &state,
    )
    .expect("ran before");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("America/Sao_Paulo (time.timezone); no system tz database found"),
        "{stdout}"
    );
}

#[test]
fn search_section_paths_modes_and_the_data_directory() {
    let setup = Setup::new();
    let config = setup
        .load_file(
            "[vault]\npath = \"Notes\"\n[search]\nmodel_dir = \"models/bge\"\nonnxruntime = \"/opt/ort/libonnxruntime.so\"\nreranker_dir = \"models/ce\"\nrerank = \"blended\"\n",
        )
        .expect("valid");
    assert!(config.search.models.enabled);
    assert_eq!(
        config.search.models.model_dir,
        Some(setup.path("models/bge"))
    );
    assert_eq!(
        config.search.models.onnxruntime,
        Some(PathBuf::from("/opt/ort/libonnxruntime.so"))
    );
    assert_eq!(
        config.search.models.reranker_dir,
        Some(setup.path("models/ce"))
    );
    assert_eq!(config.search.rerank, quire::config::RerankMode::Blended);
    assert_eq!(
        config.search.models.data_dir,
        Some(setup.path("home/.local/share/quire"))
    );
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[search]\nembeddings = false\n")
        .expect("valid");
    assert!(!config.search.models.enabled);
    assert_eq!(config.search.rerank, quire::config::RerankMode::Off);
    check_error(
        "[vault]\npath = \"Notes\"\n[search]\nrerank = \"always\"\n",
        &["search.rerank", "blended"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[search]\nrerank = \"blended\"\n",
        &["search.rerank", "search.reranker_dir"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[search]\nmodel = \"x\"\n",
        &["model"],
    );
}

#[test]
fn a_syntax_error_keeps_tomls_caret_on_its_own_line() {
    let setup = Setup::new();
    let error = setup
        .load_file("[vault\npath = \"Notes\"\n")
        .expect_err("must be refused")
        .to_string();
    let caret_line = error
        .lines()
        .find(|line| line.trim_start().starts_with('|') && line.contains('^'))
        .unwrap_or_else(|| panic!("no line with the caret in {error:?}"));
    assert!(!caret_line.contains("TOML parse error"), "{error:?}");
}

#[test]
fn the_sync_section_is_read_and_must_stay_outside_the_vault() {
    let setup = Setup::new();
    let config = setup
        .load_file(
            "[vault]\npath = \"Notes\"\n[sync]\nlock_file = \"sync/write.lock\"\nfirst_sync_marker = \"/var/lib/s/done\"\n",
        )
        .expect("valid");
    assert_eq!(config.sync.lock_file, Some(setup.path("sync/write.lock")));
    assert_eq!(
        config.sync.first_sync_marker,
        Some(PathBuf::from("/var/lib/s/done"))
    );
    assert_eq!(config.sync.status_file, None);
    check_error(
        "[vault]\npath = \"Notes\"\n[sync]\nstatus_file = \"Notes/status.json\"\n",
        &["sync.status_file", "inside the vault"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[sync]\nlockfile = \"x\"\n",
        &["lockfile"],
    );
}

#[test]
fn check_config_says_installed_only_for_what_is_on_disk() {
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    let described = quire::cli::check_config::describe(&config);
    assert!(!described.contains("(installed"), "{described}");
    assert!(described.contains("no model"), "{described}");
    assert!(described.contains("quire model install"), "{described}");
}

#[test]
fn tool_groups_are_checked_and_default_to_all() {
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    assert_eq!(config.tool_groups, ToolGroup::ALL.to_vec());
    let config = setup
        .load_file(
            "[vault]\npath = \"Notes\"\n[tools]\ngroups = [\"tasks\", \"notes\", \"tasks\"]\n",
        )
        .expect("valid");
    assert_eq!(config.tool_groups, vec![ToolGroup::Tasks, ToolGroup::Notes]);
    check_error(
        "[vault]\npath = \"Notes\"\n[tools]\ngroups = [\"notes\", \"graph\"]\n",
        &[
            "tools.groups",
            "\"graph\"",
            "notes, search, links, tasks, daily, files",
        ],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[tools]\ngroups = []\n",
        &["tools.groups", "notes, search, links, tasks, daily, files"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[tools]\ngroup = [\"notes\"]\n",
        &["group"],
    );
}

#[test]
fn protected_folders_and_the_memory_toggle() {
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    assert_eq!(config.protected_folders, None, "the default set");
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\nprotected_folders = [\"/Private/\", \"Private\", \"A/B\"]\n")
        .expect("valid");
    let folders: Vec<String> = config
        .protected_folders
        .expect("configured")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(folders, ["Private", "A/B"]);
    check_error(
        "[vault]\npath = \"Notes\"\nprotected_folders = [\"/\"]\n",
        &["vault.protected_folders", "vault root"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\nprotected_folders = [\"../x\"]\n",
        &["vault.protected_folders", "\"../x\""],
    );
    // Turning the memory layer off takes its tool group with it.
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n[memory]\nenabled = false\n")
        .expect("valid");
    assert_eq!(config.memory_folder, None);
    assert!(!config.tool_groups.contains(&ToolGroup::Memory));
    assert!(config.tool_groups.contains(&ToolGroup::Notes));
}

/// Issue 47, F3: the session caps default to 1,024 in all and 64 per identity, hold without
/// `http.listen` (a socket systemd passes), and are checked naming the key.
#[test]
fn session_caps_have_defaults_and_are_checked_naming_the_key() {
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    assert_eq!(
        (
            config.http_limits.max_sessions,
            config.http_limits.max_sessions_per_identity
        ),
        (1024, 64)
    );
    let config = setup
        .load_file(
            "[vault]\npath = \"Notes\"\n[http]\nmax_sessions = 16\nmax_sessions_per_identity = 8\n",
        )
        .expect("valid");
    assert!(config.http.is_none());
    assert_eq!(
        (
            config.http_limits.max_sessions,
            config.http_limits.max_sessions_per_identity
        ),
        (16, 8)
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[http]\nmax_sessions = 0\n",
        &["http.max_sessions", "out of range"],
    );
    check_error(
        "[vault]\npath = \"Notes\"\n[http]\nmax_sessions_per_identity = 1000000\n",
        &["http.max_sessions_per_identity", "100000"],
    );
}

/// Issue 47, F5: `[http] trusted_proxies` takes addresses and prefixes (none by default) and names
/// the entry it refuses.
#[test]
fn trusted_proxies_are_addresses_or_prefixes() {
    let setup = Setup::new();
    let config = setup
        .load_file("[vault]\npath = \"Notes\"\n")
        .expect("valid");
    assert!(config.http_limits.trusted_proxies.is_empty());
    let config = setup
        .load_file(
            "[vault]\npath = \"Notes\"\n[http]\ntrusted_proxies = [\"127.0.0.1\", \"10.1.2.3/8\", \"::1\"]\n",
        )
        .expect("valid");
    let proxies: Vec<String> = config
        .http_limits
        .trusted_proxies
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(proxies, ["127.0.0.1/32", "10.0.0.0/8", "::1/128"]);
    check_error(
        "[vault]\npath = \"Notes\"\n[http]\ntrusted_proxies = [\"127.0.0.1\", \"proxy.local\"]\n",
        &["http.trusted_proxies[1]", "proxy.local"],
    );
}
