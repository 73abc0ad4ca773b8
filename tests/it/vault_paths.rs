//! `VaultPath` and resolution against a real folder tree with symlinks that lead in, out and into
//! hidden folders: no accepted path may ever land outside the vault or in a hidden folder.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use quire::vault::{Vault, VaultPath, WriteMode};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    vault: Vault,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vault");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(root.join("inside/deeper")).expect("mkdir");
    std::fs::create_dir_all(root.join(".obsidian")).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("secret.md"), "secret").expect("write");
    std::fs::write(root.join("inside/a.md"), "a").expect("write");
    std::fs::write(root.join(".obsidian/app.json"), "{}").expect("write");
    symlink(&outside, root.join("out_dir")).expect("symlink");
    symlink(outside.join("secret.md"), root.join("out_file.md")).expect("symlink");
    symlink(root.join("inside"), root.join("in_dir")).expect("symlink");
    symlink(root.join(".obsidian"), root.join("hidden_dir")).expect("symlink");
    symlink("../../outside", root.join("inside/relative_out")).expect("symlink");
    symlink(dir.path().join("missing"), root.join("dangling")).expect("symlink");
    // Names stored decomposed (NFD), as macOS and sync clients write them: a link with such a
    // name, and a plain link inside a folder with such a name, both into `private`.
    std::fs::create_dir_all(root.join("private")).expect("mkdir");
    std::fs::write(root.join("private/p.md"), "p").expect("write");
    symlink("private", root.join("Dossie\u{301}")).expect("symlink");
    std::fs::create_dir_all(root.join("Re\u{301}unions")).expect("mkdir");
    symlink("../private", root.join("Re\u{301}unions/door")).expect("symlink");
    let vault = Vault::open(&root, 1 << 20).expect("open");
    let root = root.canonicalize().expect("canonical");
    Fixture {
        _dir: dir,
        root,
        outside,
        vault,
    }
}

/// Canonicalises the longest existing ancestor, which is where a create would land.
fn landing_place(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return canonical;
        }
        if !existing.pop() {
            return existing;
        }
    }
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("inside".to_string()),
        Just("deeper".to_string()),
        Just("out_dir".to_string()),
        Just("out_file.md".to_string()),
        Just("in_dir".to_string()),
        Just("hidden_dir".to_string()),
        Just("relative_out".to_string()),
        Just("dangling".to_string()),
        Just("secret.md".to_string()),
        Just("..".to_string()),
        Just(".".to_string()),
        Just(String::new()),
        Just(".obsidian".to_string()),
        Just("app.json".to_string()),
        Just("C:".to_string()),
        Just("a\\b".to_string()),
        Just("nul\0".to_string()),
        Just("Cafe\u{301}.md".to_string()),
        Just("Dossi\u{e9}".to_string()),
        Just("Dossie\u{301}".to_string()),
        Just("R\u{e9}unions".to_string()),
        Just("door".to_string()),
        Just("private".to_string()),
        Just("p.md".to_string()),
        "[a-z]{1,6}(\\.md)?",
    ]
}

fn raw_path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(segment(), 1..6)).prop_map(|(absolute, segments)| {
        let joined = segments.join("/");
        if absolute {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

fn is_visible_inside(root: &Path, place: &Path) -> bool {
    place.strip_prefix(root).is_ok_and(|inside| {
        inside
            .components()
            .all(|c| !c.as_os_str().to_string_lossy().starts_with('.'))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn resolution_never_leaves_the_vault(raw in raw_path()) {
        let fx = fixture();
        if let Ok(path) = VaultPath::parse(&raw)
            && let Ok(resolved) = fx.vault.resolve(&path)
        {
            let place = landing_place(&resolved.fs_path);
            prop_assert!(
                is_visible_inside(&fx.root, &place),
                "{raw:?} resolved to {}", place.display()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Issue 47, F1: the place the access check judges is the place a read or write opens, however
    /// the names on the way are normalised on disk.
    #[test]
    fn the_judged_place_is_the_opened_place(raw in raw_path()) {
        let fx = fixture();
        if let Ok(path) = VaultPath::parse(&raw)
            && let Ok(resolved) = fx.vault.resolve(&path)
        {
            let judged = fx.vault.real_location(&path);
            let opened = landing_place(&resolved.fs_path);
            let opens_private = opened.starts_with(fx.root.join("private"));
            prop_assert!(judged.is_some(), "{raw:?} resolved but has no real location");
            let judged = judged.unwrap_or_default();
            // Judging by the parent folder's real place, found once per folder, agrees.
            if let Some(folder) = fx.vault.real_folder(path.parent().as_ref()) {
                let by_folder = fx.vault.real_child(&folder, path.file_name());
                prop_assert_eq!(
                    by_folder.as_deref(),
                    Some(judged.as_str()),
                    "{:?} by its folder", raw
                );
            }
            prop_assert_eq!(
                judged == "private" || judged.starts_with("private/"),
                opens_private,
                "{:?} is judged as {:?} but opens {}", raw, judged, opened.display()
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn writes_never_touch_anything_outside(raw in raw_path()) {
        let fx = fixture();
        if let Ok(path) = VaultPath::parse(&raw)
            && let Ok(resolved) = fx.vault.resolve(&path)
        {
            let _ = fx.vault.write(&resolved, b"payload", WriteMode::CreateNew);
        }
        let entries: Vec<_> = std::fs::read_dir(&fx.outside).expect("outside").collect();
        prop_assert_eq!(entries.len(), 1, "a file appeared outside the vault for {:?}", raw);
        prop_assert_eq!(std::fs::read(fx.outside.join("secret.md")).expect("secret"), b"secret".to_vec());
        prop_assert_eq!(std::fs::read(fx.root.join(".obsidian/app.json")).expect("app.json"), b"{}".to_vec());
    }
}

#[test]
fn named_escapes_are_refused() {
    let fx = fixture();
    for raw in [
        "out_file.md",
        "out_dir/secret.md",
        "inside/relative_out/secret.md",
        "hidden_dir/app.json",
        "dangling",
    ] {
        let path = VaultPath::parse(raw).expect("syntactically fine");
        assert!(fx.vault.resolve(&path).is_err(), "{raw} must not resolve");
    }
    let through_inner_link = VaultPath::parse("in_dir/a.md").expect("valid");
    let resolved = fx
        .vault
        .resolve(&through_inner_link)
        .expect("in-vault link is fine");
    assert!(resolved.exists);
}

#[test]
fn nfd_names_on_disk_resolve_from_nfc_input() {
    let fx = fixture();
    std::fs::write(fx.root.join("Cafe\u{301}.md"), "x").expect("write");
    let path = VaultPath::parse("Caf\u{e9}.md").expect("valid");
    let resolved = fx.vault.resolve(&path).expect("resolves");
    assert!(resolved.exists, "the NFD file is found under its NFC name");
    assert_eq!(std::fs::read(&resolved.fs_path).expect("read"), b"x");
}

/// A scan large enough to `stat` its files on several threads still gives each file its own size,
/// and a link its target's, whichever thread looked.
#[test]
fn a_large_scan_gives_every_file_its_own_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vault");
    let count = 6000;
    for i in 0..count {
        let folder = root.join(format!("f{}", i % 7));
        std::fs::create_dir_all(&folder).expect("mkdir");
        std::fs::write(folder.join(format!("n{i:05}.md")), vec![b'x'; i % 1000 + 1])
            .expect("write");
    }
    symlink(root.join("f0/n00000.md"), root.join("link.md")).expect("symlink");
    let vault = Vault::open(&root, 1 << 20).expect("open");
    let scanned = vault.scan(None).expect("scan");
    assert_eq!(scanned.len(), count + 1);
    for file in &scanned {
        let name = file.path.as_str();
        if name == "link.md" {
            assert!(file.linked);
            assert_eq!(file.bytes, 1);
            continue;
        }
        let i: usize = name[4..9].parse().expect("number");
        assert_eq!(file.bytes, (i % 1000 + 1) as u64, "{name}");
        assert!(!file.linked && file.modified > std::time::SystemTime::UNIX_EPOCH);
    }
}
