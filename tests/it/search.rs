//! The search tools through `ops` against a vault written in code: keyword search over any input,
//! filters, paging, tags, properties, Obsidian's excluded files, grep and its time budget, and the
//! index's startup reconcile.

use std::collections::BTreeSet;
use std::path::PathBuf;

use quire::index::IndexOptions;
use quire::ops::{self, Context, OpsError};
use serde_json::{Map, Value, json};

use crate::support::{self, TestVault};

const NOTES: &[(&str, &str)] = &[
    (
        "Projects/Garden.md",
        "---\ntags: [Project/Active]\ntype: project\nstatus: Active\nrating: 5\ncreated: 2025-03-04\naliases: [Backyard]\n---\n# Garden plan\nPlant tomatoes and basil near the fence. #outdoor\n",
    ),
    (
        "Projects/Launch.md",
        "---\ntags: project\nstatus: done\nrating: \"5\"\n---\n# Launch\nThe sync client ships in May. NEAR AND OR words.\n日本語のテキスト\n",
    ),
    (
        "Daily/2025-03-05.md",
        "Met Sam at the café. #project/active #Outdoor\n",
    ),
    ("Archive/Old garden.md", "garden tomatoes archived\n"),
    (
        "Notes/emoji.md",
        "Party 🎉 time with (parentheses), \"quotes\" and - dashes.\n",
    ),
    (
        ".obsidian/app.json",
        "{\"userIgnoreFilters\": [\"Archive/\"]}",
    ),
];

fn fixture() -> TestVault {
    let mut files: Vec<(String, String)> = NOTES
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect();
    for number in 0..30 {
        files.push((
            format!("Notes/Bulk/n{number:02}.md"),
            format!("bulk common word {number}\n"),
        ));
    }
    fixture_with(&files)
}

fn fixture_with(files: &[(String, String)]) -> TestVault {
    TestVault::with_notes(files)
}

fn ctx() -> Context {
    Context::owner()
}

fn search(fixture: &TestVault, query: &str) -> ops::SearchResults {
    fixture
        .ops
        .search(
            &ctx(),
            ops::SearchNotes {
                query: query.into(),
                ..ops::SearchNotes::default()
            },
        )
        .expect("search succeeds")
}

fn paths_of(results: &ops::SearchResults) -> Vec<&str> {
    results.results.iter().map(|r| r.path.as_str()).collect()
}

fn filtered(fixture: &TestVault, query: &str, filters: ops::SearchFilters) -> BTreeSet<String> {
    fixture
        .ops
        .search(
            &ctx(),
            ops::SearchNotes {
                query: query.into(),
                filters,
                ..ops::SearchNotes::default()
            },
        )
        .expect("search succeeds")
        .results
        .into_iter()
        .map(|r| r.path)
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| p.to_string()).collect()
}

/// Text people and models type into search boxes, including everything FTS5 would choke on.
const WEIRD_QUERIES: &[&str] = &[
    "",
    " ",
    "\t\n\r",
    "\"",
    "\"\"",
    "\"unterminated phrase",
    "\"a\" \"b",
    "*",
    "**",
    "a*",
    "*a",
    "bulk*",
    "NEAR",
    "NEAR(a b)",
    "NEAR(\"sync\" client, 3)",
    "NEAR/3",
    "AND",
    "OR",
    "NOT",
    "NOT NOT",
    "a AND",
    "AND a",
    "garden OR",
    "OR garden",
    "a OR OR b",
    "(",
    ")",
    "((garden)",
    "(garden OR (tomatoes)) AND -basil",
    "-",
    "--",
    "-garden",
    "- garden",
    "garden -",
    "-\"sync client\"",
    "tomatoes -basil",
    "🎉",
    "🎉 party",
    "日本語",
    "日本語のテキスト",
    "col:val",
    "title:garden",
    "body : x",
    "^garden",
    "garden^",
    "{title body}: garden",
    "a + b",
    "'single quotes'",
    "\\",
    "\\\"",
    "a\u{0}b",
    "%",
    "_",
    "@",
    "#project",
    "..",
    "é",
    "\u{feff}",
    "\u{200b}garden",
    "a:b:c",
    "[a]",
    "rank MATCH 'x'",
    "'); DROP TABLE notes; --",
];

#[test]
fn any_query_text_is_an_answer_never_an_error() {
    let fixture = fixture();
    let long_word = "x".repeat(10_000);
    let many_words = "word ".repeat(500);
    let queries = WEIRD_QUERIES
        .iter()
        .copied()
        .chain([long_word.as_str(), many_words.as_str()]);
    for query in queries {
        for limit in [1, 50] {
            let outcome = fixture.ops.search(
                &ctx(),
                ops::SearchNotes {
                    query: query.into(),
                    limit: Some(limit),
                    ..ops::SearchNotes::default()
                },
            );
            let found = match outcome {
                Ok(found) => found,
                Err(error) => panic!("{query:?} failed: {error}"),
            };
            assert_eq!(found.search_mode, "keyword");
            if let Some(cursor) = found.next_cursor {
                let next = fixture.ops.search(
                    &ctx(),
                    ops::SearchNotes {
                        query: query.into(),
                        limit: Some(limit),
                        cursor: Some(cursor),
                        ..ops::SearchNotes::default()
                    },
                );
                assert!(next.is_ok(), "{query:?} page 2 failed");
            }
        }
        if !query.is_empty() {
            for regex in [false, true] {
                match fixture.ops.grep(
                    &ctx(),
                    ops::Grep {
                        pattern: query.into(),
                        regex,
                        ..ops::Grep::default()
                    },
                ) {
                    Ok(_) => {}
                    Err(error) => assert_eq!(error.code(), "invalid_argument", "{query:?}"),
                }
            }
        }
    }
}

#[test]
fn ranks_phrases_prefixes_aliases_accents_and_exclusions() {
    let fixture = fixture();
    let found = search(&fixture, "tomatoes basil");
    assert_eq!(paths_of(&found), ["Projects/Garden.md"]);
    assert!(found.results[0].snippet.contains("**tomatoes**"));
    assert!(found.results[0].score > 0.0);
    assert_eq!(found.results[0].title, "Garden");
    assert_eq!(found.results[0].tags, ["Project/Active", "outdoor"]);
    assert!(!found.matched_any_word);

    assert_eq!(
        paths_of(&search(&fixture, "\"sync client\"")),
        ["Projects/Launch.md"]
    );
    assert!(paths_of(&search(&fixture, "\"client sync\"")).is_empty());
    assert_eq!(
        paths_of(&search(&fixture, "tomat*")),
        ["Projects/Garden.md"]
    );
    assert_eq!(
        paths_of(&search(&fixture, "backyard")),
        ["Projects/Garden.md"]
    );
    assert_eq!(paths_of(&search(&fixture, "CAFE")), ["Daily/2025-03-05.md"]);
    assert_eq!(
        paths_of(&search(&fixture, "日本語のテキスト")),
        ["Projects/Launch.md"]
    );
    assert!(paths_of(&search(&fixture, "garden -basil")).is_empty());
    assert_eq!(
        paths_of(&search(&fixture, "tomatoes OR café")).len(),
        2,
        "OR joins alternatives"
    );

    // No note has both words: notes with either are returned, and the response says so.
    let fallback = search(&fixture, "tomatoes zzzzunknown");
    assert_eq!(paths_of(&fallback), ["Projects/Garden.md"]);
    assert!(fallback.matched_any_word);

    // Title matches outrank body matches.
    let ranked = search(&fixture, "garden");
    assert_eq!(paths_of(&ranked)[0], "Projects/Garden.md");
}

#[test]
fn filters_narrow_results() {
    let fixture = fixture();
    let all_three = set(&[
        "Daily/2025-03-05.md",
        "Projects/Garden.md",
        "Projects/Launch.md",
    ]);
    let tags = |tags: &[&str]| ops::SearchFilters {
        tags: tags.iter().map(|t| t.to_string()).collect(),
        ..ops::SearchFilters::default()
    };
    assert_eq!(filtered(&fixture, "", tags(&["project"])), all_three);
    assert_eq!(
        filtered(&fixture, "", tags(&["#PROJECT/active"])),
        set(&["Daily/2025-03-05.md", "Projects/Garden.md"])
    );
    assert_eq!(
        filtered(&fixture, "", tags(&["project/active", "outdoor"])),
        set(&["Daily/2025-03-05.md", "Projects/Garden.md"])
    );
    assert_eq!(
        filtered(
            &fixture,
            "",
            ops::SearchFilters {
                folder: Some("Projects".into()),
                ..tags(&["project"])
            }
        ),
        set(&["Projects/Garden.md", "Projects/Launch.md"])
    );
    assert_eq!(
        filtered(
            &fixture,
            "",
            ops::SearchFilters {
                note_type: Some("PROJECT".into()),
                ..ops::SearchFilters::default()
            }
        ),
        set(&["Projects/Garden.md"])
    );
    let properties = |value: Value| {
        let mut map = Map::new();
        map.insert("rating".into(), value);
        ops::SearchFilters {
            properties: map,
            ..ops::SearchFilters::default()
        }
    };
    let rated = set(&["Projects/Garden.md", "Projects/Launch.md"]);
    assert_eq!(filtered(&fixture, "", properties(json!(5))), rated);
    assert_eq!(filtered(&fixture, "", properties(json!("5.0"))), rated);
    assert_eq!(filtered(&fixture, "", properties(json!(null))), rated);
    assert!(filtered(&fixture, "", properties(json!(4))).is_empty());
    assert_eq!(
        filtered(&fixture, "client", properties(json!(5))),
        set(&["Projects/Launch.md"])
    );
    let created = |filter: ops::DateFilter| ops::SearchFilters {
        created: Some(filter),
        ..ops::SearchFilters::default()
    };
    assert_eq!(
        filtered(
            &fixture,
            "",
            created(ops::DateFilter {
                on: Some("2025-03-04".into()),
                ..ops::DateFilter::default()
            })
        ),
        set(&["Projects/Garden.md"])
    );
    let modified = |filter: ops::DateFilter| ops::SearchFilters {
        modified: Some(filter),
        ..ops::SearchFilters::default()
    };
    assert!(
        filtered(
            &fixture,
            "",
            modified(ops::DateFilter {
                before: Some("2000-01-01".into()),
                ..ops::DateFilter::default()
            })
        )
        .is_empty()
    );
    assert!(
        filtered(
            &fixture,
            "bulk",
            modified(ops::DateFilter {
                after: Some("2000-01-01".into()),
                ..ops::DateFilter::default()
            })
        )
        .contains("Notes/Bulk/n00.md")
    );

    let error = fixture
        .ops
        .search(
            &ctx(),
            ops::SearchNotes {
                filters: ops::SearchFilters {
                    folder: Some("Nowhere".into()),
                    ..ops::SearchFilters::default()
                },
                ..ops::SearchNotes::default()
            },
        )
        .expect_err("missing folder");
    assert_eq!(error.code(), "not_found");
    let error = fixture
        .ops
        .search(
            &ctx(),
            ops::SearchNotes {
                filters: modified(ops::DateFilter {
                    on: Some("yesterday".into()),
                    ..ops::DateFilter::default()
                }),
                ..ops::SearchNotes::default()
            },
        )
        .expect_err("bad date");
    assert_eq!(error.code(), "invalid_argument");
}

#[test]
fn every_listing_pages_without_skips_or_repeats() {
    let fixture = fixture();
    let expected: BTreeSet<String> = (0..30).map(|n| format!("Notes/Bulk/n{n:02}.md")).collect();

    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = fixture
            .ops
            .search(
                &ctx(),
                ops::SearchNotes {
                    query: "bulk".into(),
                    limit: Some(7),
                    cursor: cursor.take(),
                    ..ops::SearchNotes::default()
                },
            )
            .expect("page");
        assert!(page.results.len() <= 7);
        seen.extend(page.results.into_iter().map(|r| r.path));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen.len(), 30);
    assert_eq!(seen.iter().cloned().collect::<BTreeSet<_>>(), expected);

    let mut listed = Vec::new();
    let mut cursor = None;
    loop {
        let page = fixture
            .ops
            .list_notes(
                &ctx(),
                ops::ListNotes {
                    folder: Some("Notes/Bulk".into()),
                    limit: Some(7),
                    cursor: cursor.take(),
                    ..ops::ListNotes::default()
                },
            )
            .expect("page");
        listed.extend(page.notes.into_iter().map(|n| n.path));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(listed, expected.iter().cloned().collect::<Vec<_>>());

    let mut recent = Vec::new();
    let mut cursor = None;
    loop {
        let page = fixture
            .ops
            .recent_notes(
                &ctx(),
                ops::RecentNotes {
                    limit: Some(4),
                    cursor: cursor.take(),
                    ..ops::RecentNotes::default()
                },
            )
            .expect("page");
        recent.extend(page.notes.into_iter().map(|n| n.path));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    // Every note but the excluded one, once each.
    assert_eq!(recent.len(), 34);
    assert_eq!(recent.iter().collect::<BTreeSet<_>>().len(), 34);
    assert!(!recent.iter().any(|p| p.starts_with("Archive/")));

    let error = fixture
        .ops
        .search(
            &ctx(),
            ops::SearchNotes {
                query: "bulk".into(),
                cursor: Some("not-a-cursor".into()),
                ..ops::SearchNotes::default()
            },
        )
        .expect_err("foreign cursor");
    assert_eq!(error.code(), "invalid_argument");
}

#[test]
fn tags_merge_case_variants_and_match_nested_tags() {
    let fixture = fixture();
    let tags = fixture
        .ops
        .list_tags(&ctx(), ops::CountList::default())
        .expect("tags");
    let counts: Vec<(String, u64)> = tags
        .items
        .iter()
        .map(|item| (item.value.to_lowercase(), item.count))
        .collect();
    assert!(counts.contains(&("project/active".into(), 2)), "{counts:?}");
    assert!(counts.contains(&("outdoor".into(), 2)), "{counts:?}");
    assert!(counts.contains(&("project".into(), 1)), "{counts:?}");
    assert_eq!(counts[0].1, 2, "most used first");
    // The orientation prompt's vocabulary comes from the same counts.
    let vocabulary = fixture.ops.vocabulary(&ctx()).expect("vocabulary");
    assert_eq!(vocabulary.note_count, 35);
    assert_eq!(vocabulary.tags.len(), tags.items.len().min(15));
    assert!(
        vocabulary
            .property_keys
            .contains(&("status".to_string(), 2))
    );

    let by_tag = |tag: &str, exact: bool| -> Vec<String> {
        fixture
            .ops
            .search_by_tag(
                &ctx(),
                ops::SearchByTag {
                    tag: tag.into(),
                    exact,
                    ..ops::SearchByTag::default()
                },
            )
            .expect("by tag")
            .notes
            .into_iter()
            .map(|n| n.path)
            .collect()
    };
    assert_eq!(
        by_tag("#Project", false),
        [
            "Daily/2025-03-05.md",
            "Projects/Garden.md",
            "Projects/Launch.md"
        ]
    );
    assert_eq!(by_tag("project", true), ["Projects/Launch.md"]);
    assert_eq!(
        by_tag("OUTDOOR", false),
        ["Daily/2025-03-05.md", "Projects/Garden.md"]
    );
    assert!(by_tag("proj", false).is_empty(), "no partial-name matches");
    let error = fixture
        .ops
        .search_by_tag(
            &ctx(),
            ops::SearchByTag {
                tag: "#".into(),
                ..ops::SearchByTag::default()
            },
        )
        .expect_err("empty tag");
    assert_eq!(error.code(), "invalid_argument");
}

#[test]
fn properties_are_listed_and_searched_with_lists_unpacked() {
    let fixture = fixture();
    let keys = fixture
        .ops
        .list_property_keys(&ctx(), ops::CountList::default())
        .expect("keys");
    let keys: Vec<(String, u64)> = keys
        .items
        .into_iter()
        .map(|item| (item.value, item.count))
        .collect();
    for expected in [("tags", 2), ("status", 2), ("rating", 2), ("type", 1)] {
        assert!(
            keys.contains(&(expected.0.to_string(), expected.1)),
            "{keys:?}"
        );
    }
    let values = fixture
        .ops
        .list_property_values(
            &ctx(),
            ops::ListPropertyValues {
                key: "STATUS".into(),
                ..ops::ListPropertyValues::default()
            },
        )
        .expect("values");
    let values: BTreeSet<(String, u64)> = values
        .items
        .into_iter()
        .map(|item| (item.value, item.count))
        .collect();
    assert_eq!(
        values,
        [("Active".to_string(), 1), ("done".to_string(), 1)].into()
    );
    let by_property = |key: &str, value: Value| -> Vec<String> {
        fixture
            .ops
            .search_by_property(
                &ctx(),
                ops::SearchByProperty {
                    key: key.into(),
                    value,
                    ..ops::SearchByProperty::default()
                },
            )
            .expect("by property")
            .notes
            .into_iter()
            .map(|n| n.path)
            .collect()
    };
    assert_eq!(
        by_property("rating", json!(5)),
        ["Projects/Garden.md", "Projects/Launch.md"]
    );
    assert_eq!(
        by_property("rating", json!("5")),
        ["Projects/Garden.md", "Projects/Launch.md"]
    );
    assert_eq!(
        by_property("Status", json!("ACTIVE")),
        ["Projects/Garden.md"]
    );
    assert_eq!(
        by_property("aliases", json!("backyard")),
        ["Projects/Garden.md"]
    );
    assert_eq!(
        by_property("tags", json!(null)),
        ["Projects/Garden.md", "Projects/Launch.md"]
    );
    let error = fixture
        .ops
        .search_by_property(
            &ctx(),
            ops::SearchByProperty {
                key: "status".into(),
                value: json!({"nested": true}),
                ..ops::SearchByProperty::default()
            },
        )
        .expect_err("object value");
    assert_eq!(error.code(), "invalid_argument");
}

#[test]
fn excluded_files_stay_out_of_search_but_remain_listable() {
    let fixture = fixture();
    assert!(paths_of(&search(&fixture, "archived")).is_empty());
    let grep = fixture
        .ops
        .grep(
            &ctx(),
            ops::Grep {
                pattern: "archived".into(),
                ..ops::Grep::default()
            },
        )
        .expect("grep");
    assert!(grep.hits.is_empty());
    let listed = fixture
        .ops
        .search_by_folder(
            &ctx(),
            ops::SearchByFolder {
                folder: "Archive".into(),
                recursive: true,
                ..ops::SearchByFolder::default()
            },
        )
        .expect("by folder");
    assert_eq!(listed.notes.len(), 1);
    // The setting is read on use: removing the filter makes the note searchable at once.
    std::fs::write(fixture.root.join(".obsidian/app.json"), "{}").expect("write");
    assert_eq!(
        paths_of(&search(&fixture, "archived")),
        ["Archive/Old garden.md"]
    );
}

#[test]
fn folder_listings_can_stay_at_one_level() {
    let fixture = fixture();
    let list = |recursive: bool| -> usize {
        fixture
            .ops
            .search_by_folder(
                &ctx(),
                ops::SearchByFolder {
                    folder: "Notes".into(),
                    recursive,
                    limit: Some(1000),
                    ..ops::SearchByFolder::default()
                },
            )
            .expect("by folder")
            .notes
            .len()
    };
    assert_eq!(list(true), 31);
    assert_eq!(list(false), 1);
}

#[test]
fn writes_through_ops_are_searchable_before_the_call_returns() {
    let fixture = fixture();
    let written = fixture
        .ops
        .write_note(
            &ctx(),
            ops::WriteNote {
                path: "Inbox/Fresh.md".into(),
                body: "A quokkaesque idea #fresh\n".into(),
                properties: None,
                overwrite: false,
                expected_revision: None,
            },
        )
        .expect("write");
    assert_eq!(
        paths_of(&search(&fixture, "quokkaesque")),
        ["Inbox/Fresh.md"]
    );
    fixture
        .ops
        .write_note(
            &ctx(),
            ops::WriteNote {
                path: "Inbox/Fresh.md".into(),
                body: "Now about wombats\n".into(),
                properties: None,
                overwrite: true,
                expected_revision: Some(written.revision),
            },
        )
        .expect("overwrite");
    assert!(paths_of(&search(&fixture, "quokkaesque")).is_empty());
    assert_eq!(paths_of(&search(&fixture, "wombats")), ["Inbox/Fresh.md"]);
    fixture
        .ops
        .delete_note(
            &ctx(),
            ops::DeleteNote {
                path: "Inbox/Fresh.md".into(),
                expected_revision: None,
                prune_empty_folders: true,
            },
        )
        .expect("delete");
    assert!(paths_of(&search(&fixture, "wombats")).is_empty());
}

#[test]
fn grep_finds_lines_by_text_or_regex() {
    let fixture = fixture();
    let grep = |pattern: &str, regex: bool, case_sensitive: bool, folder: Option<&str>| {
        fixture.ops.grep(
            &ctx(),
            ops::Grep {
                pattern: pattern.into(),
                regex,
                case_sensitive,
                folder: folder.map(str::to_string),
                ..ops::Grep::default()
            },
        )
    };
    let found = grep("TOMATOES", false, false, None).expect("grep");
    assert_eq!(found.hits.len(), 1);
    let hit = &found.hits[0];
    assert_eq!(
        (hit.path.as_str(), hit.line, hit.column),
        ("Projects/Garden.md", 10, 6)
    );
    assert!(!found.truncated && !found.timed_out);
    assert!(
        grep("TOMATOES", false, true, None)
            .expect("grep")
            .hits
            .is_empty()
    );
    assert_eq!(
        grep(r"t[o]mat\w+ and", true, false, None)
            .expect("grep")
            .hits
            .len(),
        1
    );
    // Anchors match at the start and end of every line, not only of the note.
    assert_eq!(
        grep("^plant tomatoes", true, false, None)
            .expect("grep")
            .hits
            .len(),
        1
    );
    assert_eq!(
        grep(r"fence\. #outdoor$", true, false, None)
            .expect("grep")
            .hits
            .len(),
        1
    );
    assert_eq!(
        grep("(parentheses)", false, false, None)
            .expect("grep")
            .hits
            .len(),
        1
    );
    assert!(
        grep("bulk", false, false, Some("Projects"))
            .expect("grep")
            .hits
            .is_empty()
    );
    let limited = fixture
        .ops
        .grep(
            &ctx(),
            ops::Grep {
                pattern: "bulk".into(),
                limit: Some(5),
                ..ops::Grep::default()
            },
        )
        .expect("grep");
    assert_eq!(limited.hits.len(), 5);
    assert!(limited.truncated);
    let error = grep("(unclosed", true, false, None).expect_err("bad regex");
    assert_eq!(error.code(), "invalid_argument");
    assert!(error.to_string().contains("regex: false"), "{error}");
}

#[test]
fn grep_stops_at_its_time_budget_with_the_hits_so_far() {
    let filler = "lorem ipsum dolor sit amet consectetur ".repeat(300);
    let files: Vec<(String, String)> = (0..200)
        .map(|n| {
            (
                format!("Big/n{n:03}.md"),
                format!("alpha beta gamma delta zq\n{filler}\n{filler}\n"),
            )
        })
        .collect();
    let fixture = fixture_with(&files);
    // Unicode word classes repeated many times make the regex engines work hard on every byte.
    let pathological = r"(?:\w+\s+){12}\w*zq(?:\p{L}|\p{N}){3,}";
    let budgeted = fixture
        .ops
        .grep(
            &ctx(),
            ops::Grep {
                pattern: pathological.into(),
                regex: true,
                timeout_ms: Some(1),
                limit: Some(1000),
                ..ops::Grep::default()
            },
        )
        .expect("a timeout is a result, not an error");
    assert!(budgeted.timed_out);
    let full = fixture
        .ops
        .grep(
            &ctx(),
            ops::Grep {
                pattern: "alpha beta".into(),
                limit: Some(1000),
                ..ops::Grep::default()
            },
        )
        .expect("grep");
    assert!(!full.timed_out);
    assert_eq!(full.hits.len(), 200);
    let partial = fixture
        .ops
        .grep(
            &ctx(),
            ops::Grep {
                pattern: "alpha beta".into(),
                limit: Some(1000),
                timeout_ms: Some(1),
                ..ops::Grep::default()
            },
        )
        .expect("grep");
    assert!(partial.timed_out && partial.hits.len() < 200);
}

#[test]
fn greps_take_turns_and_one_that_gets_none_in_time_answers_busy() {
    let filler = "lorem ipsum dolor sit amet consectetur ".repeat(300);
    let files: Vec<(String, String)> = (0..200)
        .map(|n| (format!("Big/n{n:03}.md"), format!("alpha zq\n{filler}\n")))
        .collect();
    let TestVault { dir: _dir, ops, .. } = fixture_with(&files);
    let ops = ops.with_scan_turns(1, std::time::Duration::from_millis(50));
    let grep = |pattern: &str, regex: bool, timeout_ms: u64| {
        ops.grep(
            &ctx(),
            ops::Grep {
                pattern: pattern.into(),
                regex,
                timeout_ms: Some(timeout_ms),
                limit: Some(1000),
                ..ops::Grep::default()
            },
        )
    };
    std::thread::scope(|scope| {
        // A slow grep holds the one turn (for at most its 1.5 s budget).
        let slow = scope.spawn(|| grep(r"(?:\w+\s+){12}\w*zq(?:\p{L}|\p{N}){3,}", true, 1500));
        let mut busy = None;
        while busy.is_none() && !slow.is_finished() {
            // An answer means the slow grep had not taken the turn yet.
            if let Err(error) = grep("alpha", false, 50) {
                busy = Some(error);
            }
        }
        let busy = busy.expect("a grep behind a running one, out of patience, answers busy");
        assert_eq!(busy.code(), "busy");
        assert!(
            busy.to_string().contains("1 are running") && busy.to_string().contains("waited 50 ms"),
            "{busy}"
        );
        slow.join()
            .expect("no panic")
            .expect("the slow grep answers");
    });
    // The turn is free again, and a grep waiting for it runs with its whole budget.
    let after = grep("alpha", false, 3000).expect("a free turn");
    assert_eq!(after.hits.len(), 200);
    assert!(!after.timed_out);
}

#[test]
fn restart_reads_only_what_changed_and_a_schema_change_rebuilds() {
    let fixture = fixture();
    let total = 35;
    drop(fixture.ops);
    let reopen = |rebuild: bool| {
        let ops = support::reopen(
            &fixture.config,
            IndexOptions {
                rebuild,
                ..IndexOptions::default()
            },
        );
        ops.index().wait_ready().expect("ready")
    };
    let stats = reopen(false);
    assert_eq!(
        (stats.notes, stats.parsed, stats.unchanged),
        (total, 0, total)
    );

    std::fs::write(fixture.root.join("Notes/emoji.md"), "changed and longer\n").expect("write");
    std::fs::remove_file(fixture.root.join("Notes/Bulk/n00.md")).expect("remove");
    let stats = reopen(false);
    assert_eq!((stats.parsed, stats.removed), (1, 1));

    let stats = reopen(true);
    assert_eq!(stats.parsed, total - 1);

    let db = &fixture.config.index;
    let connection = rusqlite::Connection::open(db).expect("open");
    connection
        .pragma_update(None, "user_version", 999)
        .expect("set version");
    drop(connection);
    let stats = reopen(false);
    assert_eq!(stats.parsed, total - 1, "another schema version rebuilds");
}

#[test]
fn list_notes_keeps_its_contract() {
    let fixture = fixture();
    let list = |request: ops::ListNotes| fixture.ops.list_notes(&ctx(), request);
    let all = list(ops::ListNotes {
        limit: Some(1000),
        ..ops::ListNotes::default()
    })
    .expect("list");
    assert_eq!(all.notes.len(), 35, "excluded files are still listed");
    let garden = all
        .notes
        .iter()
        .find(|n| n.path == "Projects/Garden.md")
        .expect("listed");
    assert_eq!(garden.tags, ["Project/Active", "outdoor"]);
    let globbed = list(ops::ListNotes {
        glob: Some("n0*.md".into()),
        ..ops::ListNotes::default()
    })
    .expect("glob");
    assert_eq!(globbed.notes.len(), 10);
    let error: OpsError = list(ops::ListNotes {
        folder: Some("Nowhere".into()),
        ..ops::ListNotes::default()
    })
    .expect_err("missing folder");
    assert_eq!(error.code(), "not_found");
    let error = list(ops::ListNotes {
        folder: Some("Projects/Garden.md".into()),
        ..ops::ListNotes::default()
    })
    .expect_err("a file is not a folder");
    assert_eq!(error.code(), "invalid_argument");
}

/// Snippets over a real vault's links (../shared/vaults/tasks-docs, beside the repository): for
/// words that occur inside wikilinks, every snippet keeps each `[[…]]` whole and undecorated.
#[test]
fn snippets_keep_the_links_of_a_real_vault_whole() {
    let vault = support::shared_dir().join("vaults/tasks-docs");
    if !vault.is_dir() {
        support::skip_without_shared("the tasks-docs vault", &vault);
        return;
    }
    let fixture = TestVault::builder().vault_at(&vault).open();
    let ops = &fixture.ops;
    let mut words = BTreeSet::new();
    for entry in walk(&vault) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        for link in text
            .split("[[")
            .skip(1)
            .filter_map(|rest| rest.split_once("]]"))
        {
            if let Some(word) = link
                .0
                .split(|c: char| !c.is_alphanumeric())
                .find(|word| word.len() >= 5)
            {
                words.insert(word.to_lowercase());
            }
        }
    }
    assert!(words.len() >= 20, "too few link words found: {words:?}");
    let mut checked = 0;
    for word in words.iter().take(80) {
        let found = ops
            .search(
                &ctx(),
                ops::SearchNotes {
                    query: word.clone(),
                    ..ops::SearchNotes::default()
                },
            )
            .expect("search succeeds");
        for hit in &found.results {
            let snippet = &hit.snippet;
            assert_eq!(
                snippet.matches("[[").count(),
                snippet.matches("]]").count(),
                "a link cut in half for {word:?} in {}: {snippet}",
                hit.path
            );
            for link in snippet.split("[[").skip(1) {
                let inside = link.split("]]").next().unwrap_or_default();
                assert!(
                    !inside.contains("**"),
                    "a decorated link for {word:?} in {}: {snippet}",
                    hit.path
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} snippets checked");
}

fn walk(root: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// Issue 18, item 1: a restricted caller's scores are BM25 over the notes it may see. When it may
/// see every note, they must be FTS5's own `bm25()` scores, to the last digits, in the same order:
/// the frequencies recovered from one-phrase `bm25()` calls are exact.
#[test]
fn r18_scoped_ranking_equals_fts5_bm25_when_everything_is_visible() {
    use std::collections::BTreeMap;

    use quire::acl::{IdentityRules, Policy, Principal, Rule};
    let mut files: Vec<(String, String)> = NOTES
        .iter()
        .filter(|(path, _)| !path.starts_with(".obsidian"))
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect();
    for number in 0..30 {
        files.push((
            format!("Notes/Bulk/n{number:02}.md"),
            format!(
                "bulk common word {number} {}\n",
                "garden ".repeat(number % 4)
            ),
        ));
    }
    let fixture = fixture_with(&files);
    let mut identities = BTreeMap::new();
    identities.insert(
        "reader".to_string(),
        IdentityRules {
            read: vec![Rule::parse("/").expect("rule")],
            write: Vec::new(),
            deny: Vec::new(),
        },
    );
    fixture.ops.set_policy(Policy::new(Vec::new(), identities));
    let reader = Context::new(
        Principal::Identity {
            name: "reader".into(),
            client_id: None,
        },
        "vault_search",
    );
    for query in [
        "garden",
        "garden tomatoes",
        "bulk OR garden",
        "\"common word\"",
        "gard*",
        "garden -archived",
        "plan fence",
        "backyard",
    ] {
        let request = ops::SearchNotes {
            query: query.into(),
            limit: Some(100),
            ..ops::SearchNotes::default()
        };
        let owner = fixture.ops.search(&ctx(), request.clone()).expect("owner");
        let scoped = fixture.ops.search(&reader, request).expect("reader");
        let pairs = |results: &ops::SearchResults| -> Vec<(String, f64)> {
            results
                .results
                .iter()
                .map(|r| (r.path.clone(), r.score))
                .collect()
        };
        let (owner, scoped) = (pairs(&owner), pairs(&scoped));
        assert!(!owner.is_empty(), "{query} finds notes");
        assert_eq!(owner.len(), scoped.len(), "{query}");
        for ((owner_path, owner_score), (path, score)) in owner.iter().zip(&scoped) {
            assert!(
                (owner_score - score).abs() < 1e-9 * owner_score.abs().max(1.0),
                "{query}: {owner:?} vs {scoped:?}"
            );
            // Equal scores may come in another order; the scores at each place must agree.
            let _ = (owner_path, path);
        }
    }
}

/// Issue 20, item 4: a vault where notes and other files (a CSV, a canvas, a PDF, a text file)
/// share the word "quince", plus the PDF's own long word in one note.
fn files_fixture(extra: &[(&str, &str)]) -> (TestVault, String) {
    let pdf = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pdf/generated-known.pdf"),
    )
    .expect("the generated PDF");
    let pdf_text =
        quire::files::pdf::pdf_to_markdown(&pdf, &quire::files::pdf::PdfLimits::STANDARD)
            .expect("pdf");
    let word = pdf_text
        .markdown
        .split_whitespace()
        .find(|word| word.len() > 8 && word.chars().all(char::is_alphabetic))
        .expect("a long word in the PDF")
        .to_lowercase();
    let canvas = r#"{"nodes":[{"id":"a","type":"text","text":"Plant the quince trees by the quince hedge","x":0,"y":0,"width":100,"height":50}],"edges":[]}"#;
    let mut builder = TestVault::builder()
        .notes(&[
            (
                "Garden/Quince.md",
                "---\ntags: [fruit]\ntype: plant\n---\n# Quince\nquince quince jelly\n",
            ),
            ("Garden/Orchard.md", "An orchard with one quince tree.\n"),
            (
                "Notes/Long.md",
                &format!("{} quince\n", "filler ".repeat(200)),
            ),
            ("Notes/Paper.md", &format!("About the {word} paper.\n")),
            ("Data/harvest.csv", "crop,kilos\nquince,12\nquince,14\n"),
            ("Boards/orchard.canvas", canvas),
            ("Garden/log.txt", "picked quince today\n"),
        ])
        .notes(extra);
    std::fs::write(builder.root().join("paper.pdf"), &pdf).expect("write");
    builder = builder.note("Notes/unrelated.md", "nothing to see\n");
    (builder.open(), word)
}

fn search_with(
    fixture: &TestVault,
    context: &Context,
    request: ops::SearchNotes,
) -> ops::SearchResults {
    fixture
        .ops
        .search(context, request)
        .expect("search succeeds")
}

fn kinds(results: &ops::SearchResults) -> Vec<(&str, &str)> {
    results
        .results
        .iter()
        .map(|r| (r.kind, r.path.as_str()))
        .collect()
}

/// Every page of `request`, limit `limit`, from the first to the last.
fn all_pages(
    fixture: &TestVault,
    context: &Context,
    request: &ops::SearchNotes,
    limit: u32,
) -> Vec<Vec<ops::SearchResult>> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = search_with(
            fixture,
            context,
            ops::SearchNotes {
                limit: Some(limit),
                cursor: cursor.clone(),
                ..request.clone()
            },
        );
        cursor = page.next_cursor.clone();
        pages.push(page.results);
        if cursor.is_none() {
            return pages;
        }
        assert!(pages.len() < 100, "paging ends");
    }
}

#[test]
fn r20_keyword_search_finds_files_beside_notes_by_score() {
    let (fixture, word) = files_fixture(&[]);
    let found = search(&fixture, "quince");
    assert_eq!(found.search_mode, "keyword");
    assert!(!found.matched_any_word);
    let hits = kinds(&found);
    for expected in [
        ("note", "Garden/Quince.md"),
        ("note", "Garden/Orchard.md"),
        ("note", "Notes/Long.md"),
        ("file", "Data/harvest.csv"),
        ("file", "Boards/orchard.canvas"),
        ("file", "Garden/log.txt"),
    ] {
        assert!(hits.contains(&expected), "{expected:?} in {hits:?}");
    }
    assert_eq!(hits.len(), 6, "{hits:?}");
    // One ranking: best first, whatever the kind, and notes and files interleave.
    let scores: Vec<f64> = found.results.iter().map(|r| r.score).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let first_file = hits.iter().position(|(kind, _)| *kind == "file");
    let last_note = hits.iter().rposition(|(kind, _)| *kind == "note");
    assert!(first_file < last_note, "interleaved by score: {hits:?}");
    for result in &found.results {
        assert!(result.snippet.contains("**quince**"), "{result:?}");
        assert!(result.bytes > 0);
        assert!(result.modified.contains('T'));
        if result.kind == "file" {
            assert!(result.tags.is_empty());
            assert_eq!(Some(result.title.as_str()), result.path.rsplit('/').next());
        }
    }
    // The PDF's text is found, and the note that shares its word.
    let pdf = search(&fixture, &word);
    let mut hits = kinds(&pdf);
    hits.sort();
    assert_eq!(hits, [("file", "paper.pdf"), ("note", "Notes/Paper.md")]);
}

#[test]
fn r20_paging_through_notes_and_files_yields_every_hit_once() {
    let (fixture, _) = files_fixture(&[]);
    let request = ops::SearchNotes {
        query: "quince".into(),
        ..ops::SearchNotes::default()
    };
    let whole = search_with(&fixture, &ctx(), request.clone());
    let whole: Vec<(String, String)> = whole
        .results
        .iter()
        .map(|r| (r.kind.to_string(), r.path.clone()))
        .collect();
    for limit in [1, 2, 4, 5] {
        let pages = all_pages(&fixture, &ctx(), &request, limit);
        assert!(pages.iter().all(|page| page.len() <= limit as usize));
        let paged: Vec<(String, String)> = pages
            .iter()
            .flatten()
            .map(|r| (r.kind.to_string(), r.path.clone()))
            .collect();
        let unique: BTreeSet<_> = paged.iter().cloned().collect();
        assert_eq!(
            unique.len(),
            paged.len(),
            "limit {limit}: no repeats: {paged:?}"
        );
        assert_eq!(
            unique,
            whole.iter().cloned().collect::<BTreeSet<_>>(),
            "limit {limit}"
        );
        let scores: Vec<f64> = pages.iter().flatten().map(|r| r.score).collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "limit {limit}: {scores:?}"
        );
    }
}

#[test]
fn r20_every_word_or_any_word_is_one_decision_for_notes_and_files() {
    let (fixture, _) = files_fixture(&[("Data/pairs.txt", "quince and medlar\n")]);
    // Only a file has both words: no note comes in through any-word.
    let both = search(&fixture, "quince medlar");
    assert!(!both.matched_any_word);
    assert_eq!(kinds(&both), [("file", "Data/pairs.txt")]);
    // Nothing has both: notes and files match any word, and later pages stay on any word.
    let request = ops::SearchNotes {
        query: "quince zebrawood".into(),
        ..ops::SearchNotes::default()
    };
    let any = search_with(&fixture, &ctx(), request.clone());
    assert!(any.matched_any_word);
    assert!(kinds(&any).iter().any(|(kind, _)| *kind == "note"));
    assert!(kinds(&any).iter().any(|(kind, _)| *kind == "file"));
    let pages = all_pages(&fixture, &ctx(), &request, 2);
    assert_eq!(pages.iter().flatten().count(), any.results.len());
}

#[test]
fn r20_note_only_filters_leave_files_out_and_folder_applies_to_both() {
    let (fixture, _) = files_fixture(&[]);
    let with = |filters: ops::SearchFilters, query: &str| {
        let found = search_with(
            &fixture,
            &ctx(),
            ops::SearchNotes {
                query: query.into(),
                filters,
                ..ops::SearchNotes::default()
            },
        );
        let mut hits: Vec<(String, String)> = kinds(&found)
            .into_iter()
            .map(|(kind, path)| (kind.to_string(), path.to_string()))
            .collect();
        hits.sort();
        hits
    };
    let note_only = |hits: &[(String, String)]| hits.iter().all(|(kind, _)| kind == "note");
    let tagged = with(
        ops::SearchFilters {
            tags: vec!["fruit".into()],
            ..ops::SearchFilters::default()
        },
        "quince",
    );
    assert_eq!(
        tagged,
        [("note".to_string(), "Garden/Quince.md".to_string())]
    );
    let typed = with(
        ops::SearchFilters {
            note_type: Some("plant".into()),
            ..ops::SearchFilters::default()
        },
        "quince",
    );
    assert!(note_only(&typed) && !typed.is_empty());
    let mut properties = Map::new();
    properties.insert("type".into(), Value::Null);
    let property = with(
        ops::SearchFilters {
            properties,
            ..ops::SearchFilters::default()
        },
        "quince",
    );
    assert!(note_only(&property) && !property.is_empty());
    let created = with(
        ops::SearchFilters {
            created: Some(ops::DateFilter {
                after: Some("1990-01-01".into()),
                ..ops::DateFilter::default()
            }),
            ..ops::SearchFilters::default()
        },
        "quince",
    );
    assert!(note_only(&created) && !created.is_empty());
    // A folder holds files as well as notes.
    let garden = with(
        ops::SearchFilters {
            folder: Some("Garden".into()),
            ..ops::SearchFilters::default()
        },
        "quince",
    );
    assert_eq!(
        garden,
        [
            ("file".to_string(), "Garden/log.txt".to_string()),
            ("note".to_string(), "Garden/Orchard.md".to_string()),
            ("note".to_string(), "Garden/Quince.md".to_string()),
        ]
    );
    // Files have a modification time.
    let modified = |after: &str| {
        with(
            ops::SearchFilters {
                modified: Some(ops::DateFilter {
                    after: Some(after.into()),
                    ..ops::DateFilter::default()
                }),
                ..ops::SearchFilters::default()
            },
            "quince",
        )
    };
    assert!(
        modified("2000-01-01")
            .iter()
            .any(|(kind, _)| kind == "file")
    );
    assert!(modified("2999-01-01").is_empty());
    // An empty query lists notes only, newest first.
    let listed = with(ops::SearchFilters::default(), "");
    assert!(note_only(&listed) && !listed.is_empty());
}

#[test]
fn r20_a_restricted_caller_never_sees_or_senses_a_denied_file() {
    use std::collections::BTreeMap;

    use quire::acl::{IdentityRules, Policy, Principal, Rule};
    let reader = Context::new(
        Principal::Identity {
            name: "reader".into(),
            client_id: None,
        },
        "vault_search",
    );
    let restrict = |fixture: &TestVault| {
        let mut identities = BTreeMap::new();
        identities.insert(
            "reader".to_string(),
            IdentityRules {
                read: vec![Rule::parse("/").expect("rule")],
                write: Vec::new(),
                deny: vec![Rule::parse("Private/").expect("rule")],
            },
        );
        fixture.ops.set_policy(Policy::new(Vec::new(), identities));
    };
    let secret = [
        ("Private/quince.csv", "quince,quince,quince\nquince\n"),
        ("Private/more.txt", "quince quince\n"),
    ];
    let (with_secret, _) = files_fixture(&secret);
    let (without, _) = files_fixture(&[]);
    restrict(&with_secret);
    restrict(&without);
    let request = ops::SearchNotes {
        query: "quince".into(),
        ..ops::SearchNotes::default()
    };
    // The owner sees the private files.
    let owner = search_with(&with_secret, &ctx(), request.clone());
    assert!(kinds(&owner).contains(&("file", "Private/quince.csv")));
    for limit in [1, 3, 50] {
        let seen = all_pages(&with_secret, &reader, &request, limit);
        let clean = all_pages(&without, &reader, &request, limit);
        let view = |pages: &[Vec<ops::SearchResult>]| -> Vec<(String, String, String)> {
            pages
                .iter()
                .flatten()
                .map(|r| {
                    (
                        r.kind.to_string(),
                        r.path.clone(),
                        format!("{:.9}", r.score),
                    )
                })
                .collect()
        };
        assert!(
            view(&seen)
                .iter()
                .all(|(_, path, _)| !path.starts_with("Private/")),
            "{:?}",
            view(&seen)
        );
        // Same hits, same scores, same number of pages: nothing depends on the hidden files.
        assert_eq!(view(&seen), view(&clean), "limit {limit}");
        assert_eq!(seen.len(), clean.len(), "limit {limit}");
    }
    // Cursors are the same text in both vaults.
    let first = |fixture: &TestVault| {
        search_with(
            fixture,
            &reader,
            ops::SearchNotes {
                limit: Some(2),
                ..request.clone()
            },
        )
        .next_cursor
    };
    assert_eq!(first(&with_secret), first(&without));
}

#[test]
fn r20_scoped_file_scores_equal_fts5_bm25_when_everything_is_visible() {
    use std::collections::BTreeMap;

    use quire::acl::{IdentityRules, Policy, Principal, Rule};
    let (fixture, _) = files_fixture(&[]);
    let mut identities = BTreeMap::new();
    identities.insert(
        "reader".to_string(),
        IdentityRules {
            read: vec![Rule::parse("/").expect("rule")],
            write: Vec::new(),
            deny: Vec::new(),
        },
    );
    fixture.ops.set_policy(Policy::new(Vec::new(), identities));
    let reader = Context::new(
        Principal::Identity {
            name: "reader".into(),
            client_id: None,
        },
        "vault_search",
    );
    for query in ["quince", "quince trees", "quin*", "harvest"] {
        let request = ops::SearchNotes {
            query: query.into(),
            ..ops::SearchNotes::default()
        };
        let files = |results: ops::SearchResults| -> Vec<f64> {
            results
                .results
                .into_iter()
                .filter(|r| r.kind == "file")
                .map(|r| r.score)
                .collect()
        };
        let owner = files(search_with(&fixture, &ctx(), request.clone()));
        let scoped = files(search_with(&fixture, &reader, request));
        assert!(!owner.is_empty(), "{query}");
        assert_eq!(owner.len(), scoped.len(), "{query}");
        for (a, b) in owner.iter().zip(&scoped) {
            assert!(
                (a - b).abs() < 1e-9 * a.abs().max(1.0),
                "{query}: {owner:?} vs {scoped:?}"
            );
        }
    }
}
