//! A restricted caller's tag, property-key and property-value counts are summed from the count
//! tables folder by folder (`index/read/judged.rs`). Generated vaults and rules check that they
//! are exactly what counting the notes it may read one by one gives: symbolic links to denied
//! notes, a folder linked to a denied one, names that fold to a slash or a leading dot, rules on
//! single notes, every spelling of a denied folder, and the owner bound by `always_deny`. The
//! orientation's note and folder counts come from the same sums.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::ops::{self, Context};

use crate::support::TestVault;

const FOLDERS: &[&str] = &["", "A", "A/b", "Privé", "Ｂ"];
const NAMES: &[&str] = &[
    "n.md",
    "N.md",
    "x.md",
    "ñ.md",
    "a／b.md",
    "．dot.md",
    "any-note.md",
];
const TARGETS: &[&str] = &[
    "/",
    "A/",
    "a/",
    "A/b/",
    "Privé/",
    "PRIVE/",
    "Ｂ/",
    "b/",
    "A/n.md",
    "A/N.md",
    "a/B/",
    "ñ.md",
    "n.md",
    "Privé/x.md",
    "A/a/",
    "Linked/",
];

/// One generated note: where, and which tag spellings and `status` it carries.
#[derive(Debug, Clone)]
struct Note {
    folder: usize,
    name: usize,
    tags: Vec<&'static str>,
    key: &'static str,
    value: &'static str,
}

fn note() -> impl Strategy<Value = Note> {
    (
        0..FOLDERS.len(),
        0..NAMES.len(),
        prop::sample::subsequence(vec!["t", "u", "w"], 0..3),
        any::<bool>(),
        prop::sample::select(vec!["Status", "status", "kind"]),
        prop::sample::select(vec!["Open", "open", "done"]),
    )
        .prop_map(|(folder, name, tags, upper, key, value)| Note {
            folder,
            name,
            // One spelling per tag in a note: a note counts once per tag, in either case.
            tags: tags
                .into_iter()
                .map(|tag| match (tag, upper) {
                    ("t", true) => "T",
                    ("u", true) => "U",
                    (tag, _) => tag,
                })
                .collect(),
            key,
            value,
        })
}

fn rules() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(TARGETS.to_vec()), 0..3)
        .prop_map(|targets| targets.into_iter().map(str::to_owned).collect())
}

fn parsed(list: &[String]) -> Vec<Rule> {
    list.iter()
        .map(|raw| Rule::parse(raw).expect("generated rules parse"))
        .collect()
}

fn path_of(note: &Note) -> String {
    match FOLDERS[note.folder] {
        "" => NAMES[note.name].to_owned(),
        folder => format!("{folder}/{}", NAMES[note.name]),
    }
}

fn text_of(note: &Note) -> String {
    let tags: Vec<String> = note.tags.iter().map(|tag| format!("#{tag}")).collect();
    format!(
        "---\n{}: {}\n---\nbody {}\n",
        note.key,
        note.value,
        tags.join(" ")
    )
}

/// The vault on disk: the generated notes, a link in `A` to each note of `Privé`, and `Linked`, a
/// folder linked to `Privé`, whose note the index learns through a refresh.
fn build(notes: &[Note]) -> (TestVault, HashMap<String, Note>) {
    let mut by_path = HashMap::new();
    for note in notes {
        by_path.insert(path_of(note), note.clone());
    }
    let mut builder = TestVault::builder();
    for (path, note) in &by_path {
        builder = builder.note(path, &text_of(note));
    }
    let vault = builder
        .note("Privé/deep.md", "#t #w\n")
        .note("A/plain.md", "no tags\n")
        .open();
    let mut linked = HashMap::new();
    for (path, note) in by_path
        .iter()
        .filter(|(path, _)| path.starts_with("Privé/"))
    {
        let name = path.trim_start_matches("Privé/");
        let link = format!("A/link-{}", name.replace('／', "-"));
        std::os::unix::fs::symlink(vault.path(path), vault.path(&link)).expect("note link");
        linked.insert(link, note.clone());
    }
    std::os::unix::fs::symlink(vault.path("Privé"), vault.path("Linked")).expect("folder link");
    let mut refreshed: Vec<String> = linked.keys().cloned().collect();
    refreshed.push("Linked/deep.md".into());
    vault.ops.index().refresh(refreshed).expect("refresh");
    by_path.extend(linked);
    let deep = Note {
        folder: 0,
        name: 0,
        tags: vec!["t", "w"],
        key: "",
        value: "",
    };
    let plain = Note {
        tags: Vec::new(),
        ..deep.clone()
    };
    by_path.insert("A/plain.md".into(), plain);
    by_path.insert("Privé/deep.md".into(), deep.clone());
    by_path.insert("Linked/deep.md".into(), deep);
    (vault, by_path)
}

/// Counts and the shown spelling per lower-cased value, as a listing answers them.
type Listing = BTreeMap<String, (String, u64)>;

fn listing(items: Vec<ops::Counted>) -> Listing {
    items
        .into_iter()
        .map(|item| (item.value.to_lowercase(), (item.value, item.count)))
        .collect()
}

/// What counting the readable notes one by one gives: per lower-cased value, the notes, and the
/// spelling most of them use (the smallest on a tie).
fn expected<'a>(spellings: impl Iterator<Item = &'a str>) -> Listing {
    let mut groups: BTreeMap<String, BTreeMap<&str, u64>> = BTreeMap::new();
    for spelling in spellings {
        *groups
            .entry(spelling.to_lowercase())
            .or_default()
            .entry(spelling)
            .or_default() += 1;
    }
    groups
        .into_iter()
        .map(|(lower, spellings)| {
            let total = spellings.values().sum();
            let (shown, _) = spellings
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .expect("a group has a spelling");
            (lower, (shown.to_string(), total))
        })
        .collect()
}

/// The orientation's note count and top folders are the readable notes counted one by one.
fn check_overview(vault: &TestVault, ctx: &Context, readable: &[(&String, &Note)]) {
    let mut folders: BTreeMap<String, usize> = BTreeMap::new();
    for (path, _) in readable {
        if let Some((top, _)) = path.split_once('/') {
            *folders.entry(top.to_owned()).or_default() += 1;
        }
    }
    let overview = vault.ops.overview(ctx).expect("overview");
    assert_eq!(overview.note_count, readable.len(), "notes for {ctx:?}");
    assert_eq!(
        overview.folders,
        folders.into_iter().collect::<Vec<_>>(),
        "folders for {ctx:?}"
    );
    let vocabulary = vault.ops.vocabulary(ctx).expect("vocabulary");
    assert_eq!(vocabulary.note_count, readable.len() as u64);
}

fn check(vault: &TestVault, notes: &HashMap<String, Note>, ctx: &Context, folder: Option<&str>) {
    let readable: Vec<(&String, &Note)> = notes
        .iter()
        .filter(|(path, _)| folder.is_none_or(|folder| path.starts_with(&format!("{folder}/"))))
        .filter(|(path, _)| {
            vault
                .ops
                .read_note(
                    ctx,
                    ops::ReadNote {
                        path: path.to_string(),
                        mode: ops::ReadMode::Full {
                            start_line: None,
                            limit: None,
                        },
                    },
                )
                .is_ok()
        })
        .collect();
    if folder.is_none() {
        check_overview(vault, ctx, &readable);
    }
    let readable: Vec<&Note> = readable.into_iter().map(|(_, note)| note).collect();
    let request = || ops::CountList {
        folder: folder.map(str::to_owned),
        limit: Some(100),
        cursor: None,
    };
    let tags = match vault.ops.list_tags(ctx, request()) {
        Ok(tags) => tags,
        // A folder the caller may not see answers as a missing one, whatever its notes.
        Err(error) if folder.is_some() => {
            assert_eq!(error.code(), "not_found", "{error:?}");
            return;
        }
        Err(error) => panic!("tags: {error:?}"),
    };
    let want = expected(readable.iter().flat_map(|note| note.tags.iter().copied()));
    assert_eq!(listing(tags.items), want, "tags for {ctx:?} in {folder:?}");
    let keys = vault.ops.list_property_keys(ctx, request()).expect("keys");
    let want = expected(
        readable
            .iter()
            .map(|note| note.key)
            .filter(|key| !key.is_empty()),
    );
    assert_eq!(listing(keys.items), want, "keys for {ctx:?} in {folder:?}");
    let values = vault
        .ops
        .list_property_values(
            ctx,
            ops::ListPropertyValues {
                key: "status".into(),
                folder: folder.map(str::to_owned),
                limit: Some(100),
                cursor: None,
            },
        )
        .expect("values");
    let want = expected(
        readable
            .iter()
            .filter(|note| note.key.eq_ignore_ascii_case("status"))
            .map(|note| note.value),
    );
    assert_eq!(
        listing(values.items),
        want,
        "values for {ctx:?} in {folder:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn restricted_counts_are_the_readable_notes_counted_one_by_one(
        notes in prop::collection::vec(note(), 1..14),
        always in prop::collection::vec(prop::sample::select(TARGETS[1..].to_vec()), 0..2),
        read in rules(),
        write in rules(),
        deny in rules(),
    ) {
        let (vault, notes) = build(&notes);
        let always: Vec<String> = always.into_iter().map(str::to_owned).collect();
        let mut identities = BTreeMap::new();
        identities.insert(
            "agent".to_owned(),
            IdentityRules { read: parsed(&read), write: parsed(&write), deny: parsed(&deny) },
        );
        vault.ops.set_policy(Policy::new(parsed(&always), identities));
        let agent = Context::new(
            Principal::Identity { name: "agent".into(), client_id: None },
            "vault_list_tags",
        );
        let owner = Context::owner();
        // The owner is judged only when `always_deny` binds it (else every note counts, as the
        // vault walk found them).
        let callers = if always.is_empty() { vec![&agent] } else { vec![&agent, &owner] };
        for ctx in callers {
            for folder in [None, Some("A"), Some("Linked")] {
                check(&vault, &notes, ctx, folder);
            }
        }
    }
}

#[test]
fn a_note_that_becomes_a_link_is_judged_where_it_leads() {
    let vault = TestVault::builder()
        .note("Open/plain.md", "#visible\n")
        .note("Open/turns.md", "#visible\n")
        .note("Secret/s.md", "#hidden\n")
        .open();
    let mut identities = BTreeMap::new();
    identities.insert(
        "agent".to_owned(),
        IdentityRules {
            read: vec![Rule::parse("Open/").expect("rule")],
            write: Vec::new(),
            deny: Vec::new(),
        },
    );
    vault.ops.set_policy(Policy::new(Vec::new(), identities));
    let agent = Context::new(
        Principal::Identity {
            name: "agent".into(),
            client_id: None,
        },
        "vault_list_tags",
    );
    // The link keeps the file's bytes and times but leads into a folder the agent may not read.
    std::fs::remove_file(vault.path("Open/turns.md")).expect("remove");
    std::os::unix::fs::symlink(vault.path("Secret/s.md"), vault.path("Open/turns.md"))
        .expect("link");
    vault
        .ops
        .index()
        .refresh(vec!["Open/turns.md".into()])
        .expect("refresh");
    let tags = vault
        .ops
        .list_tags(&agent, ops::CountList::default())
        .expect("tags");
    let counts: Vec<(String, u64)> = tags
        .items
        .into_iter()
        .map(|item| (item.value, item.count))
        .collect();
    assert_eq!(counts, vec![("visible".to_owned(), 1)]);
}
