//! The text of the vault's other files (text formats) in the index: found by a search, kept in
//! step with edits, renames and deletes the index is told about, and cut to its cap.

use std::path::Path;
use std::sync::Arc;

use quire::index::{Index, IndexOptions, parse_query};
use quire::vault::Vault;

fn open(root: &Path, db: &Path) -> Index {
    let vault = Arc::new(Vault::open(root, 1 << 20).expect("vault"));
    let index = Index::open(db, vault, IndexOptions::default()).expect("index");
    index.wait_ready().expect("reconcile");
    index
}

fn found(index: &Index, query: &str) -> Vec<String> {
    let query = parse_query(query);
    let expression = query.all.clone().unwrap_or_default();
    index
        .search_files(&expression, 0, 50, &|_| true)
        .expect("search")
        .rows
        .into_iter()
        .map(|hit| hit.path)
        .collect()
}

#[test]
fn text_files_are_searchable_and_follow_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vault");
    std::fs::create_dir_all(root.join("Data")).expect("mkdir");
    std::fs::write(root.join("Data/harvest.csv"), "crop,kilos\nquince,12\n").expect("write");
    std::fs::write(root.join("log.txt"), "nothing here\n").expect("write");
    std::fs::write(root.join("photo.png"), b"\x89PNG quince").expect("write");
    std::fs::write(root.join("note.md"), "quince jam\n").expect("write");
    let index = open(&root, &dir.path().join("index.db"));

    // Only the text file's text: not the note (searched elsewhere), not the image's bytes.
    assert_eq!(found(&index, "quince"), ["Data/harvest.csv"]);
    // The file name is searchable too.
    assert_eq!(found(&index, "harvest"), ["Data/harvest.csv"]);

    std::fs::write(root.join("log.txt"), "quince season started\n").expect("write");
    std::fs::rename(root.join("Data/harvest.csv"), root.join("Data/yield.csv")).expect("rename");
    index
        .refresh(vec![
            "log.txt".into(),
            "Data/harvest.csv".into(),
            "Data/yield.csv".into(),
        ])
        .expect("refresh");
    let mut hits = found(&index, "quince");
    hits.sort();
    assert_eq!(hits, ["Data/yield.csv", "log.txt"]);

    std::fs::remove_file(root.join("log.txt")).expect("remove");
    index.refresh(vec!["log.txt".into()]).expect("refresh");
    assert_eq!(found(&index, "quince"), ["Data/yield.csv"]);

    // What the live index holds is what a rebuild holds.
    let rebuilt = open(&root, &dir.path().join("rebuilt.db"));
    assert_eq!(index.dump().expect("dump"), rebuilt.dump().expect("dump"));
}

#[test]
fn long_text_is_indexed_up_to_the_cap_and_never_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vault");
    std::fs::create_dir_all(&root).expect("mkdir");
    let mut text = "early ".repeat(20_000);
    text.push_str("lateword\n");
    std::fs::write(root.join("big.log"), &text).expect("write");
    let index = open(&root, &dir.path().join("index.db"));
    assert_eq!(found(&index, "early"), ["big.log"]);
    assert!(found(&index, "lateword").is_empty());
}

#[test]
fn a_restricted_caller_never_sees_files_it_may_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vault");
    std::fs::create_dir_all(root.join("Private")).expect("mkdir");
    std::fs::write(root.join("Private/secret.txt"), "quince\n").expect("write");
    std::fs::write(root.join("open.txt"), "quince\n").expect("write");
    let index = open(&root, &dir.path().join("index.db"));
    let query = parse_query("quince");
    let expression = query.all.clone().unwrap_or_default();
    let page = index
        .search_files(&expression, 0, 1, &|path| !path.starts_with("Private/"))
        .expect("search");
    let paths: Vec<_> = page.rows.iter().map(|hit| hit.path.as_str()).collect();
    assert_eq!(paths, ["open.txt"]);
    assert_eq!(
        page.next, None,
        "no further page may hint at the hidden file"
    );
}
