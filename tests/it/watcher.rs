//! The live index with real file operations: the vault watcher (inotify) reports changes, the
//! index applies them, and search sees them. Each check polls with a deadline instead of sleeping.

use std::path::Path;
use std::time::{Duration, Instant};

use quire::index::{Reach, VaultWatcher, WatchGuard};
use quire::ops::{self, Context};
use tokio::sync::broadcast;

use crate::support::{TestVault, write};

const DEADLINE: Duration = Duration::from_secs(10);

struct Live {
    vault: TestVault,
    _watcher: VaultWatcher,
    _changes: broadcast::Sender<quire::index::VaultChange>,
}

fn live(files: &[(&str, &str)]) -> Live {
    live_with(|root| {
        for (path, text) in files {
            write(root, path, text);
        }
    })
}

/// A live index over a vault that `prepare` fills before the index opens: the index follows the
/// changes before the watcher starts, as `serve` has it, so no change is missed.
fn live_with(prepare: impl FnOnce(&Path)) -> Live {
    let builder = TestVault::builder();
    prepare(builder.root());
    let vault = builder.open_reconciling();
    let (changes, _) = broadcast::channel(1024);
    vault
        .ops
        .index()
        .follow(changes.subscribe())
        .expect("follow");
    let watcher = VaultWatcher::start(&vault.root, changes.clone()).expect("watch");
    vault.ops.index().wait_ready().expect("ready");
    Live {
        vault,
        _watcher: watcher,
        _changes: changes,
    }
}

impl Live {
    fn found(&self, query: &str) -> Vec<String> {
        self.vault
            .ops
            .search(
                &Context::owner(),
                ops::SearchNotes {
                    query: query.into(),
                    ..ops::SearchNotes::default()
                },
            )
            .expect("search")
            .results
            .into_iter()
            .map(|r| r.path)
            .collect()
    }

    /// Polls until `query` finds exactly `expected`; returns how long that took.
    fn wait_for(&self, query: &str, expected: &[&str]) -> Duration {
        let started = Instant::now();
        loop {
            let mut found = self.found(query);
            found.sort();
            if found == expected {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < DEADLINE,
                "{query:?} still finds {found:?}, expected {expected:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[test]
fn creates_edits_and_deletes_are_searchable_quickly() {
    let live = live(&[("Old.md", "ancient text\n")]);
    assert_eq!(live.found("ancient"), ["Old.md"]);
    write(&live.vault.root, "Inbox/New.md", "a platypus appears\n");
    let lag = live.wait_for("platypus", &["Inbox/New.md"]);
    assert!(lag < Duration::from_millis(1000), "took {lag:?}");
    write(&live.vault.root, "Inbox/New.md", "now an echidna\n");
    live.wait_for("echidna", &["Inbox/New.md"]);
    live.wait_for("platypus", &[]);
    std::fs::remove_file(live.vault.root.join("Old.md")).expect("remove");
    live.wait_for("ancient", &[]);
}

#[test]
fn attribute_changes_alone_reach_the_index() {
    // Only IN_ATTRIB, as when a note's permissions are fixed or a sync client restores its time.
    let live = live(&[("Dated.md", "a wombat note\n")]);
    live.wait_for("wombat", &["Dated.md"]);
    let file = std::fs::File::options()
        .write(true)
        .open(live.vault.root.join("Dated.md"))
        .expect("open");
    // 2001-06-15T12:00:00Z: the same calendar day in every time zone.
    file.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(992_606_400))
        .expect("set the modification time");
    drop(file);
    let started = Instant::now();
    loop {
        let modified = live
            .vault
            .ops
            .search(
                &Context::owner(),
                ops::SearchNotes {
                    query: "wombat".into(),
                    ..ops::SearchNotes::default()
                },
            )
            .expect("search")
            .results
            .first()
            .map(|r| r.modified.clone())
            .unwrap_or_default();
        if modified.starts_with("2001-06-15") {
            break;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the index still has modified = {modified:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn files_created_right_after_their_new_folders_are_seen() {
    let live = live(&[]);
    let deep = live.vault.root.join("Fresh/Deeper/Deepest");
    std::fs::create_dir_all(&deep).expect("mkdir");
    std::fs::write(deep.join("a.md"), "kiwifruit one\n").expect("write");
    std::fs::write(live.vault.root.join("Fresh/b.md"), "kiwifruit two\n").expect("write");
    live.wait_for("kiwifruit", &["Fresh/Deeper/Deepest/a.md", "Fresh/b.md"]);
    // And files added later in those folders, once they are watched.
    std::fs::write(deep.join("c.md"), "kiwifruit three\n").expect("write");
    live.wait_for(
        "kiwifruit",
        &[
            "Fresh/Deeper/Deepest/a.md",
            "Fresh/Deeper/Deepest/c.md",
            "Fresh/b.md",
        ],
    );
}

#[test]
fn folder_renames_move_every_note_inside() {
    let live = live(&[
        ("Projects/one.md", "marmalade one\n"),
        ("Projects/Sub/two.md", "marmalade two\n"),
    ]);
    assert_eq!(live.found("marmalade").len(), 2);
    std::fs::rename(
        live.vault.root.join("Projects"),
        live.vault.root.join("Done"),
    )
    .expect("rename");
    live.wait_for("marmalade", &["Done/Sub/two.md", "Done/one.md"]);
    // Edits inside the renamed folder are reported under its new name.
    write(&live.vault.root, "Done/Sub/two.md", "quince now\n");
    live.wait_for("quince", &["Done/Sub/two.md"]);
    // A folder moved out of the vault's view (into a hidden folder) takes its notes along.
    std::fs::create_dir_all(live.vault.root.join(".hidden")).expect("mkdir");
    std::fs::rename(
        live.vault.root.join("Done"),
        live.vault.root.join(".hidden/Done"),
    )
    .expect("rename");
    live.wait_for("marmalade", &[]);
    live.wait_for("quince", &[]);
}

#[test]
fn atomic_saves_replace_the_note() {
    let live = live(&[("Note.md", "version lemon\n")]);
    assert_eq!(live.found("lemon"), ["Note.md"]);
    // An editor's atomic save: write a temp file next to the note, then rename it over the note.
    for (temp, word) in [(".Note.md.swp", "lime"), ("Note.md.tmp~", "orange")] {
        std::fs::write(live.vault.root.join(temp), format!("version {word}\n")).expect("write");
        std::fs::rename(live.vault.root.join(temp), live.vault.root.join("Note.md"))
            .expect("rename");
        live.wait_for(word, &["Note.md"]);
        live.wait_for("lemon", &[]);
    }
    // A rename from outside the vault's view into it is a creation.
    std::fs::write(live.vault.root.join(".draft"), "version grape\n").expect("write");
    std::fs::rename(
        live.vault.root.join(".draft"),
        live.vault.root.join("Grape.md"),
    )
    .expect("rename");
    live.wait_for("grape", &["Grape.md"]);
}

/// Makes a FIFO (and, as root, a character device like /dev/null) at `path`.
fn special_file(path: &Path, kind: &str) -> bool {
    let mut command = std::process::Command::new(if kind == "fifo" { "mkfifo" } else { "mknod" });
    command.arg(path);
    if kind != "fifo" {
        command.args(["c", "1", "3"]);
    }
    command.status().is_ok_and(|status| status.success())
}

/// Issue 18, item 6: a FIFO (or a device node) named like a note or a canvas is never opened for
/// reading by the index, so neither the startup reconcile nor a later refresh waits for a writer
/// that never comes, and every later write still returns.
#[test]
fn r18_fifos_and_device_nodes_never_block_the_index() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let devices = std::sync::atomic::AtomicBool::new(false);
        let live = live_with(|root| {
            write(root, "Welcome.md", "hello kiwifruit");
            assert!(special_file(&root.join("Blocked.md"), "fifo"), "mkfifo");
            assert!(special_file(&root.join("Board.canvas"), "fifo"), "mkfifo");
            // Device nodes need root; without it the FIFOs carry the test.
            let made = special_file(&root.join("Null.md"), "device")
                && special_file(&root.join("Null.canvas"), "device");
            devices.store(made, std::sync::atomic::Ordering::Relaxed);
        });
        // A FIFO appearing while the server runs reaches the writer through the watcher.
        assert!(
            special_file(&live.vault.root.join("Later.md"), "fifo"),
            "mkfifo"
        );
        assert!(
            special_file(&live.vault.root.join("Later.canvas"), "fifo"),
            "mkfifo"
        );
        std::thread::sleep(Duration::from_millis(400));
        live.vault
            .ops
            .write_note(
                &Context::owner(),
                ops::WriteNote {
                    path: "Inbox/After.md".into(),
                    body: "written after the fifos: pomegranate".into(),
                    properties: None,
                    overwrite: false,
                    expected_revision: None,
                },
            )
            .expect("a write returns");
        live.wait_for("pomegranate", &["Inbox/After.md"]);
        assert_eq!(live.found("kiwifruit"), vec!["Welcome.md".to_string()]);
        done.send(devices.load(std::sync::atomic::Ordering::Relaxed))
            .expect("send");
    });
    match finished.recv_timeout(Duration::from_secs(20)) {
        Ok(devices) => {
            if !devices {
                eprintln!("device nodes not tested: mknod needs root");
            }
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the check failed; its panic is printed above")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the index blocked on a FIFO or device node named like a note")
        }
    }
}

/// A vault folder deleted and made again while a watch guard (checking every 50 ms) runs.
struct Guarded {
    live: Live,
    runtime: tokio::runtime::Runtime,
    restart: tokio_util::sync::CancellationToken,
}

fn guarded(reach: Reach) -> Guarded {
    let live = live(&[("Old.md", "an ancient aardvark\n")]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let restart = tokio_util::sync::CancellationToken::new();
    let guard = WatchGuard::start(
        live.vault.ops.vault().root(),
        live._changes.clone(),
        live.vault.ops.index().clone(),
        reach,
    );
    let heartbeat = quire::health::Health::default().register("vault watcher");
    runtime.spawn(guard.run(Duration::from_millis(50), heartbeat, restart.clone()));
    Guarded {
        live,
        runtime,
        restart,
    }
}

/// Deletes the vault folder and makes it again with `Restored.md` inside.
fn replace_vault_folder(root: &Path) {
    std::fs::remove_dir_all(root).expect("delete the vault folder");
    std::thread::sleep(Duration::from_millis(200));
    std::fs::create_dir(root).expect("make the vault folder again");
    write(root, "Restored.md", "a restored narwhal\n");
}

#[test]
fn a_vault_folder_made_again_is_followed_without_a_restart() {
    let guarded = guarded(Reach {
        confined: false,
        supervised: false,
    });
    let live = &guarded.live;
    replace_vault_folder(&live.vault.root);
    // The guard watched the new folder and caught the index up with what it already held.
    live.wait_for("narwhal", &["Restored.md"]);
    live.wait_for("aardvark", &[]);
    // And the new watch reports later changes.
    write(&live.vault.root, "Later.md", "a later okapi\n");
    live.wait_for("okapi", &["Later.md"]);
    assert!(!guarded.restart.is_cancelled());
    drop(guarded.runtime);
}

#[test]
fn a_vault_folder_made_again_under_systemd_asks_for_a_restart() {
    let guarded = guarded(Reach {
        confined: true,
        supervised: true,
    });
    // Renamed away and back is the same folder: no restart.
    let root = guarded.live.vault.root.clone();
    let away = root.with_extension("away");
    std::fs::rename(&root, &away).expect("rename away");
    std::thread::sleep(Duration::from_millis(200));
    std::fs::rename(&away, &root).expect("rename back");
    write(&root, "Back.md", "a returning quokka\n");
    guarded.live.wait_for("quokka", &["Back.md"]);
    assert!(!guarded.restart.is_cancelled());
    replace_vault_folder(&root);
    let started = Instant::now();
    while !guarded.restart.is_cancelled() {
        assert!(started.elapsed() < DEADLINE, "no restart was asked for");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(guarded.runtime);
}
