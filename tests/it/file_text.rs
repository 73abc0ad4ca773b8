//! The text of the vault's other files (text formats) in the index: found by a search, kept in
//! step with edits, renames and deletes the index is told about, and cut to its cap.

use quire::index::{Index, parse_query};

use crate::support::TestVault;

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
    let vault = TestVault::builder()
        .notes(&[
            ("Data/harvest.csv", "crop,kilos\nquince,12\n"),
            ("log.txt", "nothing here\n"),
            ("photo.png", "\u{89}PNG quince"),
            ("note.md", "quince jam\n"),
        ])
        .open();
    let (root, index) = (&vault.root, vault.ops.index());

    // Only the text file's text: not the note (searched elsewhere), not the image's bytes.
    assert_eq!(found(index, "quince"), ["Data/harvest.csv"]);
    // The file name is searchable too.
    assert_eq!(found(index, "harvest"), ["Data/harvest.csv"]);

    std::fs::write(root.join("log.txt"), "quince season started\n").expect("write");
    std::fs::rename(root.join("Data/harvest.csv"), root.join("Data/yield.csv")).expect("rename");
    index
        .refresh(vec![
            "log.txt".into(),
            "Data/harvest.csv".into(),
            "Data/yield.csv".into(),
        ])
        .expect("refresh");
    let mut hits = found(index, "quince");
    hits.sort();
    assert_eq!(hits, ["Data/yield.csv", "log.txt"]);

    std::fs::remove_file(root.join("log.txt")).expect("remove");
    index.refresh(vec!["log.txt".into()]).expect("refresh");
    assert_eq!(found(index, "quince"), ["Data/yield.csv"]);

    // What the live index holds is what a rebuild holds.
    let rebuilt = vault.rebuilt_index();
    assert_eq!(index.dump().expect("dump"), rebuilt.dump().expect("dump"));
}

#[test]
fn long_text_is_indexed_up_to_the_cap_and_never_refused() {
    let mut text = "early ".repeat(20_000);
    text.push_str("lateword\n");
    let vault = TestVault::builder().note("big.log", &text).open();
    let index = vault.ops.index();
    assert_eq!(found(index, "early"), ["big.log"]);
    assert!(found(index, "lateword").is_empty());
}

#[test]
fn a_restricted_caller_never_sees_files_it_may_not_read() {
    let vault = TestVault::builder()
        .notes(&[("Private/secret.txt", "quince\n"), ("open.txt", "quince\n")])
        .open();
    let index = vault.ops.index();
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

#[test]
fn canvases_and_pdfs_are_searchable_by_their_text() {
    let canvas = r#"{"nodes":[{"id":"a","type":"text","text":"Plant the quince trees","x":0,"y":0,"width":100,"height":50}],"edges":[]}"#;
    let pdf = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pdf/generated-known.pdf"),
    )
    .expect("the generated PDF");
    let builder = TestVault::builder().note("Boards/orchard.canvas", canvas);
    std::fs::write(builder.root().join("paper.pdf"), &pdf).expect("write");
    let vault = builder.open();
    let index = vault.ops.index();
    assert_eq!(found(index, "quince trees"), ["Boards/orchard.canvas"]);
    // The generated PDF's known text (tests/data/pdf/generate.py).
    let pdf_text =
        quire::files::pdf::pdf_to_markdown(&pdf, &quire::files::pdf::PdfLimits::STANDARD)
            .expect("pdf");
    let word = pdf_text
        .markdown
        .split_whitespace()
        .find(|word| word.len() > 8 && word.chars().all(char::is_alphabetic))
        .expect("a long word in the PDF");
    assert_eq!(found(index, word), ["paper.pdf"]);
}
