//! The landlock sandbox, in a child process of this test binary (landlock cannot be undone, so it
//! must never confine the process running the other tests).

use std::path::Path;
use std::process::Command;

use quire::ops::{Context, Ops, ReadMode, ReadNote};
use quire::systemd::{SandboxMode, SandboxPlan, SandboxReport, apply_sandbox};
use quire::vault::Vault;

const CHILD_ENV: &str = "QUIRE_SANDBOX_CHILD";
const TEST_NAME: &str = "sandbox::landlock_confines_the_process_to_its_plan";

#[test]
fn landlock_confines_the_process_to_its_plan() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    if stdout.contains("SKIP:") {
        eprintln!(
            "{}",
            stdout
                .lines()
                .find(|l| l.contains("SKIP:"))
                .unwrap_or_default()
        );
        return;
    }
    assert!(
        stdout.contains("CHILD-OK"),
        "the child did not run its checks:\n{stdout}\n{stderr}"
    );
}

fn child(dir: &Path) {
    let vault = dir.join("vault");
    let state = dir.join("state");
    let elsewhere = dir.join("elsewhere");
    for folder in [&vault, &state, &elsewhere] {
        std::fs::create_dir_all(folder).expect("mkdir");
    }
    std::fs::write(vault.join("inside.md"), "inside\n").expect("write");
    std::fs::write(elsewhere.join("outside.md"), "outside\n").expect("write");
    // Opened before the sandbox, as a component configured with a path the plan leaves out.
    let stray_vault = std::sync::Arc::new(Vault::open(&elsewhere, 1 << 20).expect("vault"));
    let stray_index = quire::index::Index::open(
        &state.join("stray-index.db"),
        std::sync::Arc::clone(&stray_vault),
        quire::index::IndexOptions::default(),
    )
    .expect("index");
    stray_index.wait_ready().expect("reconcile");
    let stray = Ops::new(stray_vault, stray_index);

    // Two listeners made before the sandbox: the plan lets Quire connect to one port only (as it
    // allows 443 for Client ID Metadata Documents).
    let allowed = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let refused = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = |listener: &std::net::TcpListener| listener.local_addr().expect("addr").port();
    let report = apply_sandbox(&SandboxPlan {
        mode: SandboxMode::BestEffort,
        read_write: vec![vault.clone(), state.clone()],
        read_only: Vec::new(),
        bind_port: None,
        connect_ports: vec![port(&allowed)],
    })
    .expect("best effort never fails");
    if report != SandboxReport::FullyEnforced {
        println!("SKIP: landlock is not fully available here ({report})");
        return;
    }

    assert_eq!(
        std::fs::read_to_string(vault.join("inside.md")).expect("inside"),
        "inside\n"
    );
    std::fs::write(vault.join("new.md"), "new\n").expect("the vault stays writable");
    std::fs::write(state.join("index.db"), "x").expect("the state dir stays writable");
    let denied = std::fs::read(elsewhere.join("outside.md")).expect_err("outside is denied");
    assert_eq!(denied.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(
        std::fs::write(dir.join("escape.md"), "x").is_err(),
        "no writes outside"
    );
    assert!(std::fs::read("/etc/hostname").is_err() || !Path::new("/etc/hostname").exists());
    std::net::TcpStream::connect(("127.0.0.1", port(&allowed))).expect("the planned port");
    let denied = std::net::TcpStream::connect(("127.0.0.1", port(&refused)))
        .expect_err("any other port is refused");
    assert_eq!(denied.kind(), std::io::ErrorKind::PermissionDenied);

    // The time zone database stays readable: the system's zone and zone lookups after the
    // sandbox (a config reload resolves `[time] timezone` again) read the system's zoneinfo.
    if Path::new("/usr/share/zoneinfo/Europe/Berlin").exists() {
        let system = jiff::tz::TimeZoneDatabase::from_dir("/usr/share/zoneinfo")
            .expect("the zoneinfo folder is readable under landlock");
        system
            .get("Europe/Berlin")
            .expect("a zone file is readable under landlock");
    } else {
        println!("note: no /usr/share/zoneinfo here; zones come from Quire's built-in copy");
    }
    if Path::new("/etc/localtime").exists() {
        jiff::tz::TimeZone::try_system().expect("/etc/localtime is readable under landlock");
    }
    assert_eq!(
        quire::config::resolve_time_zone("Europe/Berlin")
            .and_then(|zone| zone.iana_name().map(str::to_owned))
            .as_deref(),
        Some("Europe/Berlin")
    );

    // Through Quire: a tool error with the stable code, not a crash.
    let error = stray
        .read_note(
            &Context::owner(),
            ReadNote {
                path: "outside.md".into(),
                mode: ReadMode::Full {
                    start_line: None,
                    limit: None,
                },
            },
        )
        .expect_err("denied by the sandbox");
    // The file system's refusal, named (not an internal error): the operator can act on it.
    assert_eq!(error.code(), "permission_denied");
    println!("CHILD-OK");
}
