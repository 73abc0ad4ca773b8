//! `list_files`, `stat_path` and `read_file` on real files: every file of the vault (not only notes),
//! from the file system rather than the index, with counts, paging, subfolders, caps and the
//! caller's rules.

use std::collections::BTreeMap;

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::ops::{Context, FilePart, FileRead, ListFiles, OpsError, PathKind, ReadFile, StatPath};

use crate::support::TestVault;

fn vault() -> TestVault {
    let builder = TestVault::builder().notes(&[
        ("Home.md", "# Home\n"),
        ("Attachments/Photo.JPG", "jpeg"),
        ("Attachments/scan.pdf", "%PDF-1.4"),
        ("Attachments/Deep/diagram.png", "png"),
        ("Boards/plan.canvas", "{}"),
        ("Private/keys.txt", "secret"),
        (".obsidian/app.json", "{}"),
    ]);
    std::fs::create_dir_all(builder.root().join("Empty")).expect("mkdir");
    builder.open()
}

fn paths(list: &quire::ops::FileList) -> Vec<&str> {
    list.files.iter().map(|file| file.path.as_str()).collect()
}

fn reader() -> (Policy, Context) {
    let mut identities = BTreeMap::new();
    identities.insert(
        "reader".to_string(),
        IdentityRules {
            read: vec![Rule::parse("/").expect("rule")],
            write: Vec::new(),
            deny: vec![Rule::parse("Private/").expect("rule")],
        },
    );
    let ctx = Context::new(
        Principal::Identity {
            name: "reader".into(),
            client_id: None,
        },
        "vault_list_files",
    );
    (Policy::new(Vec::new(), identities), ctx)
}

#[test]
fn a_recursive_listing_has_every_visible_file_with_counts() {
    let vault = vault();
    let ops = &vault.ops;
    let ctx = Context::owner();
    let all = ops
        .list_files(
            &ctx,
            ListFiles {
                recursive: true,
                ..ListFiles::default()
            },
        )
        .expect("list");
    assert_eq!(
        paths(&all),
        [
            "Attachments/Deep/diagram.png",
            "Attachments/Photo.JPG",
            "Attachments/scan.pdf",
            "Boards/plan.canvas",
            "Home.md",
            "Private/keys.txt",
        ]
    );
    assert_eq!(all.total, 6);
    assert_eq!(all.folders, None);
    assert_eq!(all.files[4].kind, PathKind::Note);
    assert_eq!(all.files[1].kind, PathKind::File);
    assert_eq!(all.files[1].bytes, 4);
    assert_eq!(all.extensions.get("jpg"), Some(&1));
    assert_eq!(all.extensions.get("md"), Some(&1));

    // Extensions match in any case, with or without the dot; counts cover the filtered set.
    let images = ops
        .list_files(
            &ctx,
            ListFiles {
                recursive: true,
                extensions: vec!["PNG".into(), ".jpg".into()],
                limit: Some(1),
                ..ListFiles::default()
            },
        )
        .expect("list");
    assert_eq!(paths(&images), ["Attachments/Deep/diagram.png"]);
    assert_eq!(images.total, 2);
    assert_eq!(
        images.extensions,
        BTreeMap::from([("jpg".to_string(), 1), ("png".to_string(), 1)])
    );
    let next = ops
        .list_files(
            &ctx,
            ListFiles {
                recursive: true,
                extensions: vec!["png".into(), "jpg".into()],
                limit: Some(1),
                cursor: images.next_cursor.clone(),
                ..ListFiles::default()
            },
        )
        .expect("list");
    assert_eq!(paths(&next), ["Attachments/Photo.JPG"]);
    assert_eq!(next.next_cursor, None);
}

#[test]
fn a_flat_listing_names_the_subfolders() {
    let vault = vault();
    let ops = &vault.ops;
    let list = ops
        .list_files(
            &Context::owner(),
            ListFiles {
                folder: Some("Attachments/".into()),
                ..ListFiles::default()
            },
        )
        .expect("list");
    assert_eq!(
        paths(&list),
        ["Attachments/Photo.JPG", "Attachments/scan.pdf"]
    );
    assert_eq!(list.folders, Some(vec!["Attachments/Deep".to_string()]));
    let top = ops
        .list_files(&Context::owner(), ListFiles::default())
        .expect("list");
    assert_eq!(paths(&top), ["Home.md"]);
    assert_eq!(
        top.folders,
        Some(vec![
            "Attachments".to_string(),
            "Boards".into(),
            "Empty".into(),
            "Private".into()
        ])
    );
}

#[test]
fn a_restricted_caller_sees_nothing_of_what_it_may_not_read() {
    let vault = vault();
    let ops = &vault.ops;
    let (policy, ctx) = reader();
    ops.set_policy(policy);
    let all = ops
        .list_files(
            &ctx,
            ListFiles {
                recursive: true,
                ..ListFiles::default()
            },
        )
        .expect("list");
    assert!(!paths(&all).contains(&"Private/keys.txt"));
    assert_eq!(all.total, 5);
    assert_eq!(all.extensions.get("txt"), None);
    let top = ops.list_files(&ctx, ListFiles::default()).expect("list");
    assert!(!top.folders.unwrap_or_default().contains(&"Private".into()));
    let inside = ops.list_files(
        &ctx,
        ListFiles {
            folder: Some("Private".into()),
            ..ListFiles::default()
        },
    );
    let missing = ops.list_files(
        &ctx,
        ListFiles {
            folder: Some("Nowhere".into()),
            ..ListFiles::default()
        },
    );
    let (inside, missing) = (inside.expect_err("denied"), missing.expect_err("missing"));
    assert_eq!(inside.code(), missing.code());

    // stat: a denied file and folder answer exactly like missing ones.
    for (denied, absent) in [
        ("Private/keys.txt", "Nowhere/keys.txt"),
        ("Private", "Nowhere"),
    ] {
        let denied = ops
            .stat_path(
                &ctx,
                StatPath {
                    path: denied.into(),
                },
            )
            .expect("stat");
        let absent = ops
            .stat_path(
                &ctx,
                StatPath {
                    path: absent.into(),
                },
            )
            .expect("stat");
        assert!(!denied.exists);
        assert_eq!(
            (denied.kind, denied.bytes, denied.revision),
            (absent.kind, absent.bytes, absent.revision)
        );
    }
}

#[test]
fn stat_tells_notes_files_and_folders_apart() {
    let vault = vault();
    let ops = &vault.ops;
    let ctx = Context::owner();
    let stat = |path: &str| {
        ops.stat_path(&ctx, StatPath { path: path.into() })
            .expect("stat")
    };
    let note = stat("Home.md");
    assert_eq!(note.kind, Some(PathKind::Note));
    assert_eq!(note.bytes, Some(7));
    let read = ops
        .read_note(
            &ctx,
            quire::ops::ReadNote {
                path: "Home.md".into(),
                mode: quire::ops::ReadMode::Outline { start_line: None },
            },
        )
        .expect("read");
    assert_eq!(note.revision.as_deref(), Some(read.revision.as_str()));
    let file = stat("Attachments/scan.pdf");
    assert_eq!((file.exists, file.kind), (true, Some(PathKind::File)));
    assert!(file.revision.is_some());
    let folder = stat("Attachments/");
    assert_eq!((folder.exists, folder.kind), (true, Some(PathKind::Folder)));
    assert_eq!((folder.bytes, folder.revision), (None, None));
    let missing = stat("Attachments/none.png");
    assert_eq!((missing.exists, missing.kind), (false, None));
    // Hidden paths are not the vault's: refused as invalid, like every other tool.
    assert!(
        ops.stat_path(
            &ctx,
            StatPath {
                path: ".obsidian/app.json".into()
            }
        )
        .is_err()
    );
}

fn read_file(vault: &TestVault, ctx: &Context, path: &str) -> Result<FileRead, OpsError> {
    vault.ops.read_file(
        ctx,
        ReadFile {
            path: path.into(),
            ..ReadFile::default()
        },
    )
}

#[test]
fn read_file_dispatches_on_the_kind_within_the_configured_caps() {
    let builder = TestVault::builder()
        .notes(&[
            ("Home.md", "# Home\n"),
            ("Data/table.csv", "a,b\r\n1,2\r\n3,4"),
            ("Data/long.log", &"0123456789\n".repeat(10)),
            ("Data/archive.zip", "PK"),
            ("Private/keys.txt", "secret"),
        ])
        .config("[files]\nmax_text_bytes = 50\nmax_read_bytes = 200\n");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/files/hopper.jpg"),
        builder.root().join("hopper.jpg"),
    )
    .expect("copy");
    let vault = builder.open();
    let owner = Context::owner();
    let read = read_file(&vault, &owner, "Data/table.csv").expect("csv");
    assert_eq!(read.parts, [FilePart::Text("a,b\r\n1,2\r\n3,4".into())]);
    assert_eq!(read.bytes, 13);

    let windowed = vault
        .ops
        .read_file(
            &owner,
            ReadFile {
                path: "Data/long.log".into(),
                start_line: Some(2),
                limit: Some(2),
                ..ReadFile::default()
            },
        )
        .expect("window");
    assert_eq!(
        windowed.parts,
        [FilePart::Text(
            "Lines 2-3 of 10; next start_line: 4.\n\n0123456789\n0123456789\n".into()
        )]
    );
    let capped = read_file(&vault, &owner, "Data/long.log").expect_err("110 bytes > 50");
    assert_eq!(capped.code(), "too_large");
    assert!(
        capped.to_string().contains("start_line 1 with limit 4"),
        "{capped}"
    );

    // hopper.jpg is 6,412 bytes, over max_read_bytes: refused before it is read.
    let big = read_file(&vault, &owner, "hopper.jpg").expect_err("over the read cap");
    assert_eq!(big.code(), "too_large");
    assert!(big.to_string().contains("files.max_read_bytes"), "{big}");

    let note = read_file(&vault, &owner, "Home.md").expect_err("a note");
    assert_eq!(note.code(), "unsupported_extension");
    assert!(note.to_string().contains("vault_read_note"), "{note}");
    let zip = read_file(&vault, &owner, "Data/archive.zip").expect_err("unknown kind");
    assert_eq!(zip.code(), "unsupported_extension");
    assert!(
        zip.to_string()
            .contains(&quire::files::readable_kinds_phrase()),
        "{zip}"
    );

    // A denied file answers exactly like a missing one.
    let (policy, reader) = reader();
    vault.ops.set_policy(policy);
    let denied = read_file(&vault, &reader, "Private/keys.txt").expect_err("denied");
    let missing = read_file(&vault, &reader, "Private/none.txt").expect_err("missing");
    assert_eq!(denied.code(), "not_found");
    assert_eq!(
        denied.to_string().replace("keys", "none"),
        missing.to_string()
    );
}

#[test]
fn an_image_is_one_metadata_line_and_one_image_within_the_budget() {
    let builder = TestVault::builder().config("[files]\nimage_budget_bytes = 4096\n");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/files/hopper.jpg"),
        builder.root().join("hopper.jpg"),
    )
    .expect("copy");
    let vault = builder.open();
    let read = read_file(&vault, &Context::owner(), "hopper.jpg").expect("image");
    let [FilePart::Text(line), FilePart::Image { bytes, mime_type }] = read.parts.as_slice() else {
        panic!("{:?}", read.parts.len());
    };
    assert!(
        line.starts_with("Image: JPEG 6.3 KiB, 128x128 px"),
        "{line}"
    );
    assert_eq!(*mime_type, "image/jpeg");
    assert!(bytes.len() <= 4096, "{}", bytes.len());
    assert_eq!(read.kind, quire::files::FileKind::Image);
}
