//! Memory recall with vectors: entries embedded by the embedding pass keyed by their text's
//! hash, keyword and vector hits fused and cut (by similarity margin, or by the reranker's
//! floor), with the deterministic fake embedder; and, with the real MiniLM model when installed,
//! hybrid recall against keyword-only on the labelled set in tests/data/memory-recall.

#[path = "../../benches/support/memory_recall_set.rs"]
mod memory_recall_set;

use quire::embed::{EmbedService, Embedder, FakeEmbedder, FakeReranker, ModelInfo, TextKind};
use quire::ops::{
    Context, DeleteMemory, MemoryRecall, Ops, Recalled, SemanticSearch, UpdateMemory,
};

use crate::support::TestVault;

const DIMS: usize = 256;

fn fake_service(reranker: bool) -> EmbedService {
    EmbedService::with_models(
        ModelInfo {
            name: "fake".into(),
            dimensions: DIMS,
            identity: "fake:memory".into(),
            max_tokens: 256,
            reranker: reranker.then(|| "fake-reranker".to_string()),
        },
        Box::new(FakeEmbedder::new(DIMS)),
        reranker.then(|| Box::new(FakeReranker) as Box<dyn quire::embed::Reranker>),
    )
    .expect("fake service")
}

const OPINIONS: &str = "> [!info] Scope of this file\n> What the user thinks.\n\n## Travel\n- 2026-01-05 — Keeps a planner for each train journey.\n\n## Food\n- 2026-02-01 — Prefers green tea to coffee.\n- 2026-03-01 — Hates olives on pizza.\n";
const ME: &str = "## Money\n- 2026-05-01 — Keeps a ledger of receipts, invoices, taxes, pensions, mortgages, insurance, subscriptions, gifts, repairs, school fees and pocket money.\n";
const ROUTINES: &str = "## Evenings\n- 2026-04-01 — Reads novels before sleeping.\n";

fn fixture() -> TestVault {
    TestVault::builder()
        .note("About Me/Opinions.md", OPINIONS)
        .note("About Me/Me.md", ME)
        .note("About Me/Routines.md", ROUTINES)
        .note(
            "Notes/Trip.md",
            "# Trip\nThe train to Vienna leaves at nine.\n",
        )
        .open()
}

fn recall(ops: &Ops, query: &str, file: Option<&str>) -> Recalled {
    ops.memory_recall(
        &Context::owner(),
        MemoryRecall {
            query: query.into(),
            file: file.map(str::to_string),
            limit: None,
        },
    )
    .expect("recall")
}

fn texts(recalled: &Recalled) -> Vec<&str> {
    recalled
        .entries
        .iter()
        .map(|entry| entry.text.as_str())
        .collect()
}

fn similarity(query: &str, file: &str, section: &str, text: &str) -> f32 {
    let mut model = FakeEmbedder::new(DIMS);
    let vectors = model
        .embed(
            &[
                query.to_string(),
                quire::index::memory_entry_text(file, section, text),
            ],
            TextKind::Document,
        )
        .expect("embeds");
    quire::embed::cosine(&vectors[0], &vectors[1])
}

const PLANNER: &str = "Keeps a planner for each train journey.";
const LEDGER: &str = "Keeps a ledger of receipts, invoices, taxes, pensions, mortgages, insurance, subscriptions, gifts, repairs, school fees and pocket money.";
/// No entry has all these words, one has "ledger"; one is near in form to the other three.
const QUERY: &str = "planners trains journeys ledger";

#[test]
fn hybrid_recall_fuses_keyword_and_vector_hits_and_cuts_by_margin() {
    let f = fixture();
    // Without a model: keyword only, and of the query's words only "ledger" is in an entry.
    let keyword = recall(&f.ops, QUERY, None);
    assert_eq!(keyword.mode, "keyword");
    assert_eq!(keyword.notice, None);
    assert!(keyword.any_word);
    assert_eq!(texts(&keyword), [LEDGER]);

    f.ops
        .enable_semantic(SemanticSearch::new(fake_service(false), false))
        .expect("enabled");
    // A model but no vectors yet: keyword recall, saying why.
    let waiting = recall(&f.ops, QUERY, None);
    assert_eq!(waiting.mode, "keyword");
    assert!(
        waiting
            .notice
            .as_deref()
            .unwrap_or("")
            .contains("being computed"),
        "{:?}",
        waiting.notice
    );
    f.ops.embed_pending(&|_| {}).expect("embedded");

    // The premises the cut is checked against: the planner entry is the nearest, the keyword
    // hit drowns its one matching word among many, and every other entry is far too.
    let margin = 0.15;
    let best = similarity(QUERY, "Opinions", "Travel", PLANNER);
    for (file, section, text) in [
        ("Me", "Money", LEDGER),
        ("Opinions", "Food", "Hates olives on pizza."),
        ("Opinions", "Food", "Prefers green tea to coffee."),
        ("Routines", "Evenings", "Reads novels before sleeping."),
    ] {
        let other = similarity(QUERY, file, section, text);
        assert!(best - other > margin, "{best} vs {other} for {text:?}");
    }

    let hybrid = recall(&f.ops, QUERY, None);
    assert_eq!(hybrid.mode, "hybrid");
    assert_eq!(hybrid.notice, None);
    // The vector-only planner entry joins; the keyword hit stays although far below the best
    // similarity; the other entries are cut. Presented oldest first.
    assert_eq!(texts(&hybrid), [PLANNER, LEDGER]);

    // `limit` cuts the fused ranking before the oldest-first presentation: the keyword hit,
    // first of its leg and also in the vector leg, fuses highest.
    let one = f
        .ops
        .memory_recall(
            &Context::owner(),
            MemoryRecall {
                query: QUERY.into(),
                file: None,
                limit: Some(1),
            },
        )
        .expect("recall");
    assert_eq!(texts(&one), [LEDGER]);

    // `file` restricts the vector leg too.
    assert_eq!(texts(&recall(&f.ops, QUERY, Some("Me"))), [LEDGER]);
    let in_routines = recall(&f.ops, QUERY, Some("Routines"));
    assert!(
        in_routines
            .entries
            .iter()
            .all(|entry| entry.file == "Routines"),
        "{in_routines:?}"
    );
}

#[test]
fn a_reranker_cuts_at_its_relevance_floor() {
    let f = fixture();
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service(true), true))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    // No entry has the word "plan"; the fake reranker scores a passage by the query words it
    // contains (as substrings), so the planner entry scores 1 and every other entry 0: below
    // the floor, whatever their similarity.
    let reranked = recall(&f.ops, "plan", None);
    assert_eq!(reranked.mode, "hybrid");
    assert_eq!(texts(&reranked), [PLANNER]);
    // Without the reranker the same query keeps more than the one entry (the margin is wider
    // than the floor here), so the floor is what cut them.
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service(false), false))
        .expect("enabled");
    assert!(recall(&f.ops, "plan", None).entries.len() > 1);
    f.ops
        .enable_semantic(SemanticSearch::new(fake_service(true), true))
        .expect("enabled");
    // A keyword hit survives the floor: the fake reranker looks for "olives," (with its comma)
    // and scores the olive entry 0, but the keyword leg found the word "olives" in it.
    let olives = recall(&f.ops, "olives, zebra", None);
    assert!(olives.any_word);
    assert_eq!(texts(&olives), ["Hates olives on pizza."]);
}

#[test]
fn entry_vectors_are_keyed_by_hash_and_survive_pruning() {
    let f = fixture();
    let ops = &f.ops;
    ops.enable_semantic(SemanticSearch::new(fake_service(false), false))
        .expect("enabled");
    let pending = ops.index().pending_memory_vectors(100).expect("pending");
    assert_eq!(pending.len(), 5, "one per entry: {pending:?}");
    assert!(
        pending
            .iter()
            .any(|entry| entry.text == format!("Opinions > Travel\n{PLANNER}"))
    );
    ops.embed_pending(&|_| {}).expect("embedded");
    // Nothing left, and a second pass neither embeds nor prunes: memory vectors are in use.
    let again = ops.embed_pending(&|_| {}).expect("embedded");
    assert_eq!((again.embedded, again.pruned), (0, 0));
    assert!(
        ops.index()
            .pending_memory_vectors(100)
            .expect("pending")
            .is_empty()
    );

    let ctx = Context::owner();
    ops.update_memory(
        &ctx,
        UpdateMemory {
            file: "Opinions".into(),
            section: "Food".into(),
            entry: "Likes figs.".into(),
            date: Some("2026-06-01".into()),
        },
    )
    .expect("added");
    ops.index().wait_ready().expect("indexed");
    // The new entry is the only memory entry without a vector: the others kept theirs though
    // their lines moved.
    let pending = ops.index().pending_memory_vectors(100).expect("pending");
    let pending: Vec<&str> = pending.iter().map(|entry| entry.text.as_str()).collect();
    assert_eq!(pending, ["Opinions > Food\nLikes figs."]);
    ops.embed_pending(&|_| {}).expect("embedded");
    assert!(texts(&recall(ops, "figs", None)).contains(&"Likes figs."));

    ops.delete_memory(
        &ctx,
        DeleteMemory {
            file: "Opinions".into(),
            section: "Food".into(),
            date: "2026-03-01".into(),
            entry: "Hates olives on pizza.".into(),
        },
    )
    .expect("deleted");
    let pass = ops.embed_pending(&|_| {}).expect("embedded");
    assert!(
        pass.pruned >= 1,
        "the deleted entry's vector goes: {pass:?}"
    );
    assert!(!texts(&recall(ops, "olives", None)).contains(&"Hates olives on pizza."));
    assert!(
        ops.index()
            .pending_memory_vectors(100)
            .expect("pending")
            .is_empty()
    );
    // The live index still equals one rebuilt from the files.
    assert_eq!(
        ops.index().dump().expect("dump"),
        f.rebuilt_index().dump().expect("dump")
    );
}

#[test]
fn hybrid_recall_beats_keyword_on_the_labelled_set() {
    let Some(models) = crate::semantic_model::model_data() else {
        return;
    };
    let f = TestVault::builder()
        .vault_at(&memory_recall_set::vault_dir())
        .open();
    let queries = memory_recall_set::queries();
    let entries = f
        .ops
        .get_memory(&Context::owner(), quire::ops::GetMemory::default())
        .expect("entries");
    assert!(entries.len() >= 40 && queries.len() >= 30);
    // Some queries share no word with their entries: only meaning can find those.
    let paraphrases = queries
        .iter()
        .filter(|labelled| memory_recall_set::shares_no_word(labelled, &entries))
        .count();
    assert!(paraphrases >= 10, "{paraphrases} paraphrased queries");
    // Every expected entry names exactly one entry of the set.
    for labelled in &queries {
        for expected in &labelled.expected {
            let named = entries
                .iter()
                .filter(|entry| memory_recall_set::names(entry, expected))
                .count();
            assert_eq!(named, 1, "{expected:?} of {:?}", labelled.query);
        }
    }
    let keyword = memory_recall_set::evaluate(&f.ops, &queries, 5);
    let service = quire::embed::resolve(&quire::embed::ModelSources {
        enabled: true,
        model_dir: None,
        onnxruntime: None,
        reranker_dir: None,
        ort_dylib_path: None,
        data_dir: Some(models),
    })
    .start()
    .expect("the model starts");
    f.ops
        .enable_semantic(SemanticSearch::new(service, false))
        .expect("enabled");
    f.ops.embed_pending(&|_| {}).expect("embedded");
    let hybrid = memory_recall_set::evaluate(&f.ops, &queries, 5);
    assert_eq!(keyword.modes, ["keyword"].into_iter().collect());
    assert_eq!(hybrid.modes, ["hybrid"].into_iter().collect());
    assert!(
        hybrid.recall > keyword.recall,
        "hybrid recall@5 {} (mean {} returned, missed {:?}) should beat keyword-only {} (missed {:?})",
        hybrid.recall,
        hybrid.returned,
        hybrid.missed,
        keyword.recall,
        keyword.missed
    );
}
