//! Notes too large for one full-text row (issue 47, F2), stored as several rows written in turns:
//! search still judges them whole (words in different parts, phrases, exclusions, restricted
//! callers), a write is searchable whole when it returns, and rewriting or deleting such a note
//! leaves the index exactly as a fresh rebuild would be.

use std::collections::BTreeMap;

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::ops::{self, Context};

use crate::support::{self, TestVault};

/// About 640 KB: five or more rows. `first` opens the note, `last` closes it.
fn large_note(first: &str, last: &str) -> String {
    let mut text = format!("# Log\n{first} begins here\n");
    for line in 0..16_000 {
        text.push_str(&format!("line {line} of ordinary filler words\n"));
    }
    text.push_str(&format!("and {last} ends it\n"));
    text
}

fn search_as(vault: &TestVault, ctx: &Context, query: &str) -> Vec<String> {
    vault
        .ops
        .search(
            ctx,
            ops::SearchNotes {
                query: query.into(),
                limit: Some(50),
                ..ops::SearchNotes::default()
            },
        )
        .expect("search")
        .results
        .into_iter()
        .map(|result| result.path)
        .collect()
}

fn reader(vault: &TestVault) -> Context {
    let mut identities = BTreeMap::new();
    identities.insert(
        "reader".to_string(),
        IdentityRules {
            read: vec![Rule::parse("Logs/").expect("rule")],
            write: Vec::new(),
            deny: Vec::new(),
        },
    );
    vault.ops.set_policy(Policy::new(Vec::new(), identities));
    Context::new(
        Principal::Identity {
            name: "reader".into(),
            client_id: None,
        },
        "vault_search",
    )
}

#[test]
fn a_large_note_is_found_by_words_that_sit_in_different_parts() {
    let vault = TestVault::with_notes(&[
        ("Logs/Big.md", large_note("aardvark", "zygote").as_str()),
        ("Logs/Small.md", "aardvark only\n"),
        ("Other/Elsewhere.md", "aardvark and zygote together\n"),
    ]);
    let dump = vault.ops.index().dump().expect("dump");
    assert!(
        dump.iter()
            .any(|line| line.starts_with("part Logs/Big.md 5")),
        "the note is stored as five parts or more"
    );
    let owner = Context::owner();
    let reader = reader(&vault);
    for ctx in [&owner, &reader] {
        let both = search_as(&vault, ctx, "aardvark zygote");
        assert!(both.contains(&"Logs/Big.md".to_string()), "{both:?}");
        assert!(!both.contains(&"Logs/Small.md".to_string()), "{both:?}");
        assert_eq!(
            search_as(&vault, ctx, "\"zygote ends\""),
            ["Logs/Big.md"],
            "a phrase inside the last part"
        );
        let excluded = search_as(&vault, ctx, "aardvark -zygote");
        assert!(
            !excluded.contains(&"Logs/Big.md".to_string()),
            "{excluded:?}"
        );
        assert!(
            excluded.contains(&"Logs/Small.md".to_string()),
            "{excluded:?}"
        );
        // Title and headings live in the first part; a body word in a later one.
        assert!(search_as(&vault, ctx, "big filler").contains(&"Logs/Big.md".to_string()));
    }
    assert!(
        !search_as(&vault, &reader, "zygote").contains(&"Other/Elsewhere.md".to_string()),
        "the reader sees only Logs/"
    );
    // A filter applies to such a note as to any other.
    let in_folder = |folder: &str| -> Vec<String> {
        vault
            .ops
            .search(
                &owner,
                ops::SearchNotes {
                    query: "aardvark zygote".into(),
                    filters: ops::SearchFilters {
                        folder: Some(folder.into()),
                        ..ops::SearchFilters::default()
                    },
                    ..ops::SearchNotes::default()
                },
            )
            .expect("search")
            .results
            .into_iter()
            .map(|result| result.path)
            .collect()
    };
    assert_eq!(in_folder("Logs"), ["Logs/Big.md"]);
    assert_eq!(in_folder("Other"), ["Other/Elsewhere.md"]);
}

#[test]
fn a_large_note_written_through_ops_is_searchable_whole_when_the_write_returns() {
    let vault = TestVault::with_notes(&[("Start.md", "nothing yet\n")]);
    let first = vault.write_note("Logs/Big.md", &large_note("aardvark", "quetzal"), None);
    assert_eq!(
        search_as(&vault, &Context::owner(), "quetzal"),
        ["Logs/Big.md"]
    );
    let second = vault.write_note(
        "Logs/Big.md",
        &large_note("aardvark", "wombat"),
        Some(first),
    );
    assert!(search_as(&vault, &Context::owner(), "quetzal").is_empty());
    assert_eq!(
        search_as(&vault, &Context::owner(), "wombat aardvark"),
        ["Logs/Big.md"]
    );
    assert_eq!(
        vault.ops.index().dump().expect("dump"),
        vault.rebuilt_index().dump().expect("dump"),
        "a rewritten large note leaves the index as a rebuild makes it"
    );
    let dump = vault.ops.index().dump().expect("dump");
    assert!(
        dump.iter()
            .any(|line| line.starts_with("part Logs/Big.md 5"))
    );
    vault.write_note("Logs/Big.md", "small again\n", Some(second));
    vault
        .ops
        .index()
        .refresh(vec!["Start.md".into()])
        .expect("refresh");
    let dump = vault.ops.index().dump().expect("dump");
    assert!(
        !dump
            .iter()
            .any(|line| line.starts_with("part") || line.starts_with("orphan")),
        "no part or orphan row is left: {:?}",
        dump.iter()
            .filter(|l| l.starts_with("part") || l.starts_with("orphan"))
            .collect::<Vec<_>>()
    );
    assert_eq!(dump, vault.rebuilt_index().dump().expect("dump"));
}

/// A stop between a large note's first part and its last leaves the note marked (`parts N` for
/// its hash) with only some rows: the next start reads it again and finds every word.
#[test]
fn a_large_note_whose_later_parts_were_lost_in_a_stop_is_read_again_at_the_next_start() {
    let vault =
        TestVault::with_notes(&[("Logs/Big.md", large_note("aardvark", "zygote").as_str())]);
    let TestVault {
        dir, config, ops, ..
    } = vault;
    drop(ops);
    {
        let db = rusqlite::Connection::open(dir.path().join("index.db")).expect("open");
        let id: i64 = db
            .query_row(
                "SELECT id FROM notes WHERE path = 'Logs/Big.md'",
                [],
                |row| row.get(0),
            )
            .expect("the note");
        let later: Vec<i64> = db
            .prepare("SELECT part FROM note_parts WHERE note_id = ?1 AND part > 1")
            .expect("prepare")
            .query_map([id], |row| row.get(0))
            .expect("parts")
            .collect::<Result<_, _>>()
            .expect("parts");
        assert!(later.len() >= 4, "{later:?}");
        for part in later {
            db.execute(
                "DELETE FROM notes_fts WHERE rowid = ?1",
                [(part << 40) | id],
            )
            .expect("delete a part");
            db.execute(
                "DELETE FROM note_parts WHERE note_id = ?1 AND part = ?2",
                [id, part],
            )
            .expect("forget the part");
        }
        db.execute("UPDATE notes SET hash = 'parts 3' WHERE id = ?1", [id])
            .expect("mark");
    }
    let ops = support::reopen(&config, quire::index::IndexOptions::default());
    let found = ops
        .search(
            &Context::owner(),
            ops::SearchNotes {
                query: "zygote aardvark".into(),
                ..ops::SearchNotes::default()
            },
        )
        .expect("search");
    assert_eq!(
        found.results.len(),
        1,
        "the last part is back after the restart"
    );
    assert!(
        ops.index()
            .dump()
            .expect("dump")
            .iter()
            .all(|line| !line.contains("parts 3"))
    );
}
