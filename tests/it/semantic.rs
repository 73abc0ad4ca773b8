//! Semantic and hybrid search through `ops` with the deterministic fake embedder: modes and what
//! responses report, filters and access rules inside the vector leg, content-hash gating, vectors
//! across restarts and model changes, reranking plumbing, paging, and every way of falling back
//! to keyword search.

use std::collections::BTreeMap;

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::embed::{
    EmbedError, EmbedService, Embedder, FakeEmbedder, FakeReranker, ModelInfo, TextKind,
};
use quire::index::IndexOptions;
use quire::ops::{Context, Ops, SearchMode, SearchNotes, SearchResults, SemanticSearch};
use quire::vault::VaultPath;

use crate::support::{self, TestVault, write};

const DIMS: usize = 128;

fn info(identity: &str, reranker: bool) -> ModelInfo {
    ModelInfo {
        name: "fake".into(),
        dimensions: DIMS,
        identity: identity.into(),
        max_tokens: 256,
        reranker: reranker.then(|| "fake-reranker".to_string()),
    }
}

fn fake_service(identity: &str, reranker: bool) -> EmbedService {
    EmbedService::with_models(
        info(identity, reranker),
        Box::new(FakeEmbedder::new(DIMS)),
        reranker.then(|| Box::new(FakeReranker) as Box<dyn quire::embed::Reranker>),
    )
    .expect("fake service")
}

fn fixture(files: &[(&str, &str)]) -> TestVault {
    TestVault::with_notes(files)
}

fn search(ops: &Ops, query: &str, mode: SearchMode) -> SearchResults {
    search_as(ops, &Context::owner(), query, mode, None)
}

fn search_as(
    ops: &Ops,
    ctx: &Context,
    query: &str,
    mode: SearchMode,
    folder: Option<&str>,
) -> SearchResults {
    let mut request = SearchNotes {
        query: query.into(),
        mode,
        limit: Some(10),
        ..SearchNotes::default()
    };
    request.filters.folder = folder.map(str::to_string);
    ops.search(ctx, request).expect("search")
}

fn paths(found: &SearchResults) -> Vec<&str> {
    found.results.iter().map(|hit| hit.path.as_str()).collect()
}

/// Sets a policy with one identity, `agent`, that may read everything but `Private/`, and returns
/// its context.
fn agent_denied_private(ops: &Ops) -> Context {
    let mut identities = BTreeMap::new();
    identities.insert(
        "agent".to_string(),
        IdentityRules {
            read: vec![Rule::parse("/").expect("rule")],
            write: vec![],
            deny: vec![Rule::parse("Private/").expect("rule")],
        },
    );
    ops.set_policy(Policy::new(vec![], identities));
    Context::new(
        Principal::Identity {
            name: "agent".into(),
            client_id: None,
        },
        "test",
    )
}

const NOTES: &[(&str, &str)] = &[
    (
        "Finance/Budgeting.md",
        "# Quarterly budgeting\nThe spreadsheet of expenses and savings.\n",
    ),
    (
        "Pets/Kittens.md",
        "# Kittens\nThey purr and sleep all day.\n",
    ),
    (
        "Garden/Tomatoes.md",
        "# Tomatoes\nWater the tomato plants every morning.\n",
    ),
];

#[test]
fn modes_report_what_answered_and_auto_waits_for_the_vectors() {
    let f = fixture(NOTES);
    // Before any model: keyword, and a mode that needs vectors says why it got none.
    let found = search(&f.ops, "budget", SearchMode::Semantic);
    assert_eq!(found.search_mode, "keyword");
    assert!(
        found.notice.as_deref().unwrap_or("").contains("loading"),
        "{:?}",
        found.notice
    );
    // Auto answers by keyword meanwhile, and says that the model is on its way.
    let auto = search(&f.ops, "budget", SearchMode::Auto);
    assert_eq!(auto.search_mode, "keyword");
    assert!(
        auto.notice.as_deref().unwrap_or("").contains("loading"),
        "{:?}",
        auto.notice
    );
    // "budget" is not a word of any note, so keyword search misses "budgeting".
    assert!(paths(&search(&f.ops, "budget", SearchMode::Keyword)).is_empty());

    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    let auto = search(&f.ops, "budget", SearchMode::Auto);
    assert_eq!(auto.search_mode, "keyword", "auto waits for the first pass");
    assert!(
        auto.notice
            .as_deref()
            .unwrap_or("")
            .contains("being computed")
    );

    let pass = f.ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(pass.counts.pending(), 0);
    assert_eq!(pass.embedded as u64, pass.counts.chunks);

    let semantic = search(&f.ops, "budget", SearchMode::Semantic);
    assert_eq!(semantic.search_mode, "semantic");
    assert!(!semantic.reranked);
    assert_eq!(paths(&semantic)[0], "Finance/Budgeting.md");
    assert!(semantic.notice.is_none(), "{:?}", semantic.notice);

    let auto = search(&f.ops, "budget", SearchMode::Auto);
    assert_eq!(auto.search_mode, "hybrid");
    assert_eq!(paths(&auto)[0], "Finance/Budgeting.md");
    // Keyword mode stays keyword.
    assert_eq!(
        search(&f.ops, "budget", SearchMode::Keyword).search_mode,
        "keyword"
    );
    // An empty query lists notes (keyword), whatever the mode.
    let empty = search(&f.ops, "", SearchMode::Hybrid);
    assert_eq!(empty.search_mode, "keyword");
    assert_eq!(empty.results.len(), 3);
}

#[test]
fn hybrid_fuses_both_legs() {
    let f = fixture(NOTES);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    // "water" is a keyword hit for Tomatoes; "kitten" reaches Kittens only by meaning (trigrams).
    let found = search(&f.ops, "water kitten", SearchMode::Hybrid);
    assert_eq!(found.search_mode, "hybrid");
    let got = paths(&found);
    assert!(got.contains(&"Garden/Tomatoes.md"), "{got:?}");
    assert!(got.contains(&"Pets/Kittens.md"), "{got:?}");
    // Scores are fused scores, best first.
    assert!(found.results.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn filters_and_access_rules_apply_inside_the_vector_leg() {
    let mut files: Vec<(String, String)> = (0..30)
        .map(|i| {
            (
                format!("Crowd/budget {i}.md"),
                format!("budget budget {i}\n"),
            )
        })
        .collect();
    files.push(("Quiet/a.md".into(), "budgeting notes\n".into()));
    files.push(("Quiet/b.md".into(), "a budget review\n".into()));
    files.push(("Private/secret budget.md".into(), "budget secret\n".into()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let f = fixture(&refs);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    // The 30 crowd notes are nearer, yet a folder filter still yields both quiet notes.
    for mode in [SearchMode::Semantic, SearchMode::Hybrid] {
        let found = search_as(&f.ops, &Context::owner(), "budget", mode, Some("Quiet"));
        let mut got = paths(&found);
        got.sort_unstable();
        assert_eq!(got, ["Quiet/a.md", "Quiet/b.md"], "{mode:?}");
    }
    // An identity that may not read Private/ never sees its note, in any mode.
    let agent = agent_denied_private(&f.ops);
    for mode in [
        SearchMode::Semantic,
        SearchMode::Hybrid,
        SearchMode::Keyword,
    ] {
        let found = search_as(&f.ops, &agent, "budget secret", mode, None);
        assert!(
            !paths(&found).iter().any(|p| p.starts_with("Private/")),
            "{mode:?}: {:?}",
            paths(&found)
        );
    }
    let owner = search_as(
        &f.ops,
        &Context::owner(),
        "budget secret",
        SearchMode::Semantic,
        None,
    );
    assert_eq!(paths(&owner)[0], "Private/secret budget.md");
}

#[test]
fn only_changed_chunks_are_embedded_again() {
    let note = "# One\nalpha text\n\n# Two\nbeta text\n\n# Three\ngamma text\n";
    let f = fixture(&[("Notes/Sections.md", note)]);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    let first = f.ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(first.embedded, 3);
    // Edit one section.
    write(
        &f.root,
        "Notes/Sections.md",
        &note.replace("beta text", "beta text, edited"),
    );
    f.ops
        .index()
        .refresh(vec!["Notes/Sections.md".into()])
        .expect("refreshed");
    let second = f.ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(second.embedded, 1, "only the edited chunk");
    assert_eq!(second.pruned, 1, "the old version's vector is dropped");
    // Moving the note to another folder keeps every vector (chunks carry the title, not the folder).
    std::fs::create_dir_all(f.root.join("Moved")).expect("mkdir");
    std::fs::rename(
        f.root.join("Notes/Sections.md"),
        f.root.join("Moved/Sections.md"),
    )
    .expect("move");
    f.ops
        .index()
        .refresh(vec!["Notes/Sections.md".into(), "Moved/Sections.md".into()])
        .expect("refreshed");
    let third = f.ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!((third.embedded, third.pruned), (0, 0));
    assert_eq!(third.counts.pending(), 0);
    let found = search(&f.ops, "gamma", SearchMode::Semantic);
    assert_eq!(paths(&found)[0], "Moved/Sections.md");
}

#[test]
fn vectors_survive_a_restart_and_a_new_model_drops_them() {
    let f = fixture(NOTES);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    let pass = f.ops.embed_pending(&|_| {}).expect("embedded");
    assert!(pass.embedded > 0);
    let TestVault {
        dir: _dir,
        config,
        ops,
        ..
    } = f;
    drop(ops);
    let reopened = support::reopen(&config, IndexOptions::default());
    reopened
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    let again = reopened.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(again.embedded, 0, "the same model reuses stored vectors");
    drop(reopened);
    let other = support::reopen(&config, IndexOptions::default());
    other
        .enable_semantic(SemanticSearch::new(fake_service("fake:2", false), false))
        .expect("enabled");
    assert_eq!(other.index().vector_counts().expect("counts").embedded, 0);
    let fresh = other.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(fresh.embedded, pass.embedded);
}

#[test]
fn a_reranker_reorders_and_is_reported() {
    let f = fixture(NOTES);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", true), true))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    let found = search(&f.ops, "tomato", SearchMode::Hybrid);
    assert!(found.reranked);
    assert_eq!(found.search_mode, "hybrid");
    assert_eq!(paths(&found)[0], "Garden/Tomatoes.md");
    // Configured off: never reranked even with a reranker loaded.
    let g = fixture(NOTES);
    g.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", true), false))
        .expect("enabled");
    g.ops.embed_pending(&|_| {}).expect("embedded");
    assert!(!search(&g.ops, "tomato", SearchMode::Hybrid).reranked);
}

#[test]
fn hybrid_pages_with_its_own_cursor() {
    let files: Vec<(String, String)> = (0..7)
        .map(|i| {
            (
                format!("N/note {i}.md"),
                format!("shared topic words {i}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let f = fixture(&refs);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    let mut seen = Vec::new();
    let mut cursor = None;
    for _ in 0..10 {
        let found = f
            .ops
            .search(
                &Context::owner(),
                SearchNotes {
                    query: "shared topic".into(),
                    mode: SearchMode::Hybrid,
                    limit: Some(3),
                    cursor: cursor.clone(),
                    ..SearchNotes::default()
                },
            )
            .expect("search");
        assert_eq!(found.search_mode, "hybrid");
        seen.extend(found.results.iter().map(|hit| hit.path.clone()));
        cursor = found.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 7, "{seen:?}");
    assert_eq!(seen.len(), 7, "no repeats: {seen:?}");
}

/// Loads fine, then fails every query: search must answer by keyword.
struct BrokenAtQueryTime(FakeEmbedder);

impl Embedder for BrokenAtQueryTime {
    fn dimensions(&self) -> usize {
        self.0.dimensions()
    }
    fn embed(&mut self, texts: &[String], kind: TextKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        match kind {
            TextKind::Query => Err(EmbedError::Inference("simulated failure".into())),
            TextKind::Document => self.0.embed(texts, kind),
        }
    }
}

#[test]
fn every_failure_falls_back_to_keyword_search() {
    let f = fixture(NOTES);
    f.ops.disable_semantic("no model installed");
    let found = search(&f.ops, "tomato", SearchMode::Hybrid);
    assert_eq!(found.search_mode, "keyword");
    assert!(
        found
            .notice
            .as_deref()
            .unwrap_or("")
            .contains("no model installed")
    );
    assert_eq!(search(&f.ops, "tomato", SearchMode::Auto).notice, None);

    let service = EmbedService::with_models(
        info("fake:1", false),
        Box::new(BrokenAtQueryTime(FakeEmbedder::new(DIMS))),
        None,
    )
    .expect("loads");
    f.ops
        .enable_semantic(SemanticSearch::new(service, false))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("documents still embed");
    for mode in [SearchMode::Auto, SearchMode::Semantic, SearchMode::Hybrid] {
        let found = search(&f.ops, "tomato", mode);
        assert_eq!(found.search_mode, "keyword", "{mode:?}");
        assert!(
            found
                .notice
                .as_deref()
                .unwrap_or("")
                .contains("simulated failure"),
            "{:?}",
            found.notice
        );
        assert_eq!(paths(&found), ["Garden/Tomatoes.md"]);
    }
    // A path outside the vault never reaches the index through this route either.
    assert!(VaultPath::parse("../x.md").is_err());
}

#[test]
fn searches_follow_deleted_and_reused_vector_ids() {
    // The unfiltered search scans an in-memory copy of the vectors. Deleting the note with the
    // newest vector and then adding one can give the new vector the freed id; the copy must not
    // keep the old vector under it.
    let f = fixture(&[
        ("A/Kittens.md", "# Kittens\nThey purr and sleep all day.\n"),
        (
            "B/Budget.md",
            "# Budget\nQuarterly revenue spreadsheet of expenses.\n",
        ),
    ]);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", false), false))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    let before = search(&f.ops, "quarterly revenue expenses", SearchMode::Semantic);
    assert_eq!(paths(&before)[0], "B/Budget.md");
    std::fs::remove_file(f.root.join("B/Budget.md")).expect("delete");
    f.ops
        .index()
        .refresh(vec!["B/Budget.md".into()])
        .expect("refreshed");
    assert!(f.ops.embed_pending(&|_| {}).expect("pruned").pruned > 0);
    write(
        &f.root,
        "C/Garden.md",
        "# Garden\nWater the tomato plants every morning.\n",
    );
    f.ops
        .index()
        .refresh(vec!["C/Garden.md".into()])
        .expect("refreshed");
    assert!(f.ops.embed_pending(&|_| {}).expect("embedded").embedded > 0);
    let garden = search(&f.ops, "water tomato plants", SearchMode::Semantic);
    assert_eq!(paths(&garden)[0], "C/Garden.md");
    // The budget's old vector must not answer for the garden note: nothing left is near it.
    let budget = search(&f.ops, "quarterly revenue expenses", SearchMode::Semantic);
    let near = before.results[0].score - 0.2;
    assert!(
        budget.results.iter().all(|hit| hit.score < near),
        "{near} {:?}",
        budget.results
    );
}

/// Files with text (a CSV, a canvas, a PDF) are found by meaning like notes: their chunks are
/// embedded from the text the index extracted, they come back with `kind: "file"` in semantic and
/// hybrid results, the note-only filters and access rules keep them out, and a reranker reads a
/// PDF's extracted text, not its bytes.
#[test]
fn files_are_found_by_meaning_with_their_extracted_text() {
    let pdf = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pdf/generated-known.pdf"),
    )
    .expect("fixture pdf");
    let f = TestVault::builder()
        .notes(NOTES)
        .note("Finance/expenses.csv", "category,amount\nbudgeting,12\nsavings,30\n")
        .note(
            "Boards/Kitten plan.canvas",
            r#"{"nodes":[{"id":"a","type":"text","text":"Adopting two kittens","x":0,"y":0,"width":200,"height":60}],"edges":[]}"#,
        )
        .note("Private/salary.txt", "budgeting my salary\n")
        .open();
    std::fs::write(f.path("Docs/Manual.pdf"), &pdf).unwrap_or_else(|_| {
        std::fs::create_dir_all(f.path("Docs")).expect("folder");
        std::fs::write(f.path("Docs/Manual.pdf"), &pdf).expect("pdf");
    });
    f.ops
        .index()
        .refresh(vec!["Docs/Manual.pdf".into()])
        .expect("refresh");
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service("fake:1", true), true))
        .expect("enabled");
    let pass = f.ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!(pass.counts.pending(), 0, "file chunks are embedded too");
    assert!(
        pass.counts.chunks > NOTES.len() as u64 + 3,
        "{:?}",
        pass.counts
    );

    let semantic = search(&f.ops, "budget", SearchMode::Semantic);
    let csv = semantic
        .results
        .iter()
        .find(|hit| hit.path == "Finance/expenses.csv")
        .unwrap_or_else(|| panic!("{:?}", paths(&semantic)));
    assert_eq!(csv.kind, "file");
    assert_eq!(csv.title, "expenses.csv");
    let kittens = search(&f.ops, "kitten", SearchMode::Hybrid);
    assert!(
        paths(&kittens).contains(&"Boards/Kitten plan.canvas"),
        "{:?}",
        paths(&kittens)
    );
    assert!(paths(&kittens).contains(&"Pets/Kittens.md"));
    // The reranker reads the PDF's extracted text (the fake reranker counts query words in the
    // passage): it lifts the PDF, with three of the words, over the note with two.
    let manual = search(
        &f.ops,
        "water tomato installing tool server",
        SearchMode::Hybrid,
    );
    assert!(manual.reranked);
    assert_eq!(paths(&manual)[0], "Docs/Manual.pdf", "{:?}", paths(&manual));
    // A folder filter applies to files; a tag filter is for notes only.
    assert!(
        !paths(&search_as(
            &f.ops,
            &Context::owner(),
            "budget",
            SearchMode::Semantic,
            Some("Pets")
        ))
        .contains(&"Finance/expenses.csv")
    );
    let mut tagged = SearchNotes {
        query: "budget".into(),
        mode: SearchMode::Semantic,
        ..SearchNotes::default()
    };
    tagged.filters.tags = vec!["nothing".into()];
    assert!(
        f.ops
            .search(&Context::owner(), tagged)
            .expect("search")
            .results
            .is_empty()
    );
    // An identity that may not read Private/ never sees the file there, in any mode.
    assert!(paths(&search(&f.ops, "salary", SearchMode::Semantic)).contains(&"Private/salary.txt"));
    let agent = agent_denied_private(&f.ops);
    for mode in [SearchMode::Semantic, SearchMode::Hybrid] {
        let found = search_as(&f.ops, &agent, "salary budgeting", mode, None);
        assert!(
            !paths(&found).iter().any(|p| p.starts_with("Private/")),
            "{mode:?}: {:?}",
            paths(&found)
        );
    }
}
