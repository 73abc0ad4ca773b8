//! `vault_move_note` through `Ops` on real files: a move never breaks a link (every link that
//! resolved before resolves to the same file, moved or not, afterwards), and moving A to B and
//! back leaves every file of the vault byte-identical.
//!
//! Round trips are exact for the link forms a move can restore: bare names, vault paths and
//! canonical relative paths (`../Folder/Note.md`). Three spellings come back as working links in
//! another spelling, and the generator leaves them out: a relative path with `./`; one written from
//! the vault root (where relative and vault paths coincide); and a relative path to a note that the
//! move puts into the linking note's own folder, where it becomes the bare name.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use quire::index::Index;
use quire::ops::{self, Context, Ops};

use crate::support::TestVault;

const SOURCE_FOLDERS: &[&str] = &["", "A/", "A/B/", "C/"];
/// Folders the moved note starts in and moves to (never the root, see the module comment).
const TARGET_FOLDERS: &[&str] = &["A/", "A/B/", "X/", "X/Y/"];
const NEW_NAMES: &[&str] = &["Target Two", "Renamed note", "Café", "T"];

#[derive(Debug, Clone)]
struct Case {
    target_folder: &'static str,
    new_folder: &'static str,
    new_name: &'static str,
    /// (folder, link forms) of each linking note.
    sources: Vec<(&'static str, Vec<usize>)>,
    /// Link forms the moved note holds towards source notes.
    own_links: Vec<(usize, usize)>,
    canvas: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(TARGET_FOLDERS),
        prop::sample::select(TARGET_FOLDERS),
        prop::sample::select(NEW_NAMES),
        prop::collection::vec(
            (
                prop::sample::select(SOURCE_FOLDERS),
                prop::collection::vec(0..FORMS, 1..6),
            ),
            1..5,
        ),
        prop::collection::vec((0..4usize, 0..3usize), 0..4),
        any::<bool>(),
    )
        .prop_map(
            |(target_folder, new_folder, new_name, sources, own_links, canvas)| Case {
                target_folder,
                new_folder,
                new_name,
                sources,
                own_links,
                canvas,
            },
        )
}

const FORMS: usize = 12;

/// A link from a note in `source_folder` to the note at `folder` + `Target.md`, in form `form`.
fn link(form: usize, source_folder: &str, folder: &str) -> String {
    let relative = relative(source_folder, &format!("{folder}Target.md"));
    let encoded = relative.replace(' ', "%20");
    match form {
        0 => "[[Target]]".into(),
        1 => "[[Target|an alias]]".into(),
        2 => "![[Target#Heading]]".into(),
        3 => format!("[[{folder}Target#^block|x]]"),
        4 => "[text](Target.md)".into(),
        5 => format!("[text]({encoded}#Heading)"),
        6 => format!("![img](<{relative}>)"),
        7 => "`[[Target]]` in code".into(),
        8 => "[[Target.md]]".into(),
        9 => format!("[[{folder}Target]]"),
        10 => "%% [[Target]] %%".into(),
        _ => "[[Missing]] stays broken".into(),
    }
}

/// The canonical relative path from `folder` (with trailing `/` or empty) to `target`.
fn relative(folder: &str, target: &str) -> String {
    let from: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
    let to: Vec<&str> = target.split('/').collect();
    let common = from
        .iter()
        .zip(&to)
        .take_while(|(a, b)| a == b)
        .count()
        .min(to.len() - 1);
    let mut parts = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

fn write_vault(root: &Path, case: &Case) -> String {
    let write = |path: &str, text: &str| {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    };
    let target = format!("{}Target.md", case.target_folder);
    let mut source_paths = Vec::new();
    for (number, (folder, forms)) in case.sources.iter().enumerate() {
        let path = format!("{folder}Source {number}.md");
        let mut text = String::from("---\nup: \"[[Target]]\"\n---\n# Source\n\n");
        for form in forms {
            text.push_str(&link(*form, folder, case.target_folder));
            text.push('\n');
        }
        write(&path, &text);
        source_paths.push(path);
    }
    let mut text =
        String::from("# Target\n\n## Heading\n\nSelf: [[#Heading]] [[Target#Heading]]\n");
    for (source, form) in &case.own_links {
        let Some(source_path) = source_paths.get(*source) else {
            continue;
        };
        let name = source_path.rsplit('/').next().unwrap_or(source_path);
        let stem = name.trim_end_matches(".md");
        match form {
            0 => text.push_str(&format!("[[{stem}]]\n")),
            1 => text.push_str(&format!("[[{}]]\n", source_path.trim_end_matches(".md"))),
            _ => text.push_str(&format!(
                "[s]({})\n",
                relative(case.target_folder, source_path).replace(' ', "%20")
            )),
        }
    }
    text.push_str("block ^block\n");
    write(&target, &text);
    if case.canvas {
        write(
            "Board.canvas",
            &format!(
                "{{\n\t\"nodes\":[\n\t\t{{\"id\":\"a\",\"type\":\"file\",\"file\":\"{target}\",\"x\":0,\"y\":0,\"width\":1,\"height\":1}},\n\t\t{{\"id\":\"b\",\"type\":\"text\",\"text\":\"see [[Target]]\\nand again [[Target|x]]\",\"x\":0,\"y\":0,\"width\":1,\"height\":1}}\n\t],\n\t\"edges\":[]\n}}"
            ),
        );
    }
    write("Other/Unrelated.md", "No links here, [[Elsewhere]].\n");
    target
}

fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .expect("inside")
                    .to_string_lossy()
                    .into_owned();
                files.insert(relative, std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}

/// Every (source, target) edge of the graph, with `rename` applied to both ends.
fn edges(index: &Index, rename: &dyn Fn(&str) -> String) -> Vec<(String, Option<String>)> {
    let graph = index.link_graph().expect("graph");
    let mut edges: Vec<(String, Option<String>)> = index
        .all_links()
        .expect("links")
        .iter()
        .map(|link| (rename(&link.source), graph.resolve(link).map(rename)))
        .collect();
    edges.sort();
    edges
}

fn move_note(ops: &Ops, from: &str, to: &str) -> ops::MovedNote {
    ops.move_note(
        &Context::owner(),
        ops::MoveNote {
            old_path: from.into(),
            new_path: to.into(),
            dry_run: false,
            prune_empty_folders: true,
        },
    )
    .unwrap_or_else(|error| panic!("moving {from} to {to}: {error}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_move_breaks_no_link_and_moving_back_restores_every_byte(case in case()) {
        let builder = TestVault::builder();
        let old = write_vault(builder.root(), &case);
        let new = format!("{}{}.md", case.new_folder, case.new_name);
        prop_assume!(old != new);
        // A relative path to a note that lands in the linking note's own folder is just its name,
        // which reads back as a bare name (see the module comment).
        prop_assume!(!case.sources.iter().any(|(folder, forms)| {
            *folder == case.new_folder && forms.iter().any(|form| matches!(form, 5 | 6))
        }));
        prop_assume!(!case.own_links.iter().any(|(source, form)| {
            *form >= 2 && case.sources.get(*source).is_some_and(|(folder, _)| *folder == case.new_folder)
        }));
        let vault = builder.open();
        let (root, ops, index) = (&vault.root, &vault.ops, vault.ops.index());
        let before = snapshot(root);
        let rename = |path: &str| if path == old { new.clone() } else { path.to_owned() };
        let expected = edges(index, &rename);

        let plan = ops
            .move_note(&Context::owner(), ops::MoveNote {
                old_path: old.clone(),
                new_path: new.clone(),
                dry_run: true,
                prune_empty_folders: false,
            })
            .expect("dry run");
        prop_assert_eq!(&snapshot(root), &before, "a dry run changed files");

        let moved = move_note(ops, &old, &new);
        prop_assert_eq!(plan.rewritten.len(), moved.rewritten.len());
        prop_assert_eq!(edges(index, &|path| path.to_owned()), expected, "a link changed its target");
        let fresh = vault.rebuilt_index();
        prop_assert_eq!(index.dump().expect("dump"), fresh.dump().expect("dump"));

        move_note(ops, &new, &old);
        let after = snapshot(root);
        for (path, bytes) in &before {
            prop_assert_eq!(
                after.get(path).map(|b| String::from_utf8_lossy(b).into_owned()),
                Some(String::from_utf8_lossy(bytes).into_owned()),
                "{} differs after moving {} to {} and back", path, old, new
            );
        }
        prop_assert_eq!(after.len(), before.len());
    }
}

#[test]
fn refusals_change_nothing() {
    let builder = TestVault::builder()
        .note("A/Target.md", "# Target\n")
        .note("One.md", "[[Target]]\n")
        .note("Taken.md", "taken\n")
        // A linking note reached through a symbolic link cannot be rewritten (Quire never writes
        // through links), so the move is refused before anything is written.
        .note("Real.md", "[[A/Target]]\n");
    std::os::unix::fs::symlink("Real.md", builder.root().join("Zlink.md")).expect("symlink");
    let vault = builder.open();
    let (root, ops) = (&vault.root, &vault.ops);
    let before = snapshot(root);
    for (to, code) in [
        ("Taken.md", "already_exists"),
        ("B/Moved.md", "path_forbidden"),
        ("A/Target.txt", "invalid_argument"),
    ] {
        let refused = ops.move_note(
            &Context::owner(),
            ops::MoveNote {
                old_path: "A/Target.md".into(),
                new_path: to.into(),
                dry_run: false,
                prune_empty_folders: true,
            },
        );
        assert_eq!(refused.map(|_| ()).map_err(|e| e.code()), Err(code), "{to}");
        assert_eq!(snapshot(root), before, "{to}");
    }
}

/// A move that rewrites many notes refreshes them in one parallel batch; the index must still
/// equal a rebuild afterwards.
#[test]
fn a_move_with_many_backlinks_leaves_the_index_equal_to_a_rebuild() {
    let mut builder = TestVault::builder().note("Hub/Center.md", "# Center\n");
    for number in 0..80 {
        let folder = ["", "A/", "B/C/"][number % 3];
        builder = builder.note(
            &format!("{folder}Note {number}.md"),
            &format!(
                "# Note {number} #tag{number}\n\nSee [[Center]] and [c](<../Hub/Center.md>).\n"
            ),
        );
    }
    let vault = builder.open();
    let (root, ops) = (&vault.root, &vault.ops);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        root.join("Hub/Center.md"),
        std::fs::Permissions::from_mode(0o600),
    )
    .expect("chmod");
    let moved = move_note(ops, "Hub/Center.md", "Elsewhere/Middle.md");
    assert_eq!(moved.rewritten.len(), 80);
    let mode = std::fs::metadata(root.join("Elsewhere/Middle.md"))
        .expect("moved")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the moved note kept its permissions");
    let fresh = vault.rebuilt_index();
    assert_eq!(
        ops.index().dump().expect("dump"),
        fresh.dump().expect("dump")
    );
}

/// A bare name that the move makes ambiguous becomes a path in the vault's `newLinkFormat`; one
/// that stays unique stays bare.
#[test]
fn an_ambiguous_bare_name_follows_the_new_link_format() {
    for (format, expected) in [
        ("relative", "[[../B/Other|alias]]"),
        ("absolute", "[[B/Other|alias]]"),
        ("shortest", "[[B/Other|alias]]"),
    ] {
        let vault = TestVault::builder()
            .note(
                ".obsidian/app.json",
                &format!("{{\"newLinkFormat\": \"{format}\"}}"),
            )
            .note("A/Note.md", "# Note\n")
            .note("C/Other.md", "# Other\n")
            .note("D/X.md", "[[Note|alias]] and [[Other]]\n")
            .note("D/Y.md", "[[Solo]]\n")
            .note("C/Solo.md", "# Solo\n")
            .open();
        let (root, ops) = (&vault.root, &vault.ops);
        move_note(ops, "A/Note.md", "B/Other.md");
        let x = std::fs::read_to_string(root.join("D/X.md")).expect("read");
        // `[[Other]]` kept its target (C/Other.md) although a second Other now exists.
        assert!(x.starts_with(expected), "{format}: {x}");
        assert!(!x.ends_with("[[Other]]\n"), "{format}: {x}");
        // A rename to a unique name keeps a bare name bare.
        move_note(ops, "C/Solo.md", "B/Unique.md");
        let y = std::fs::read_to_string(root.join("D/Y.md")).expect("read");
        assert_eq!(y, "[[Unique]]\n", "{format}");
    }
}
