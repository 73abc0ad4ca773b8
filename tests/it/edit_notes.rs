//! The note-editing operations through real files: every edit leaves each byte outside its target
//! identical, a properties update leaves untouched properties byte-identical (comments, quoting, flow
//! and block styles), and an edit followed by its inverse restores the note exactly.

use proptest::prelude::*;
use quire::markdown::{edit, frontmatter, headings, sections};
use quire::ops::{self, AnchorPosition, Context, OpsError, PatchOperation};
use serde_json::{Map, Value, json};

use crate::support::TestVault;

const NOTE: &str = "Note.md";

/// A temporary vault holding one note.
fn fixture(text: &str) -> TestVault {
    TestVault::with_notes(&[(NOTE, text)])
}

fn ctx() -> Context {
    Context::owner()
}

// ---------------------------------------------------------------------------------------------
// Generators

/// One block of a generated body; numbers make every anchor and heading unique.
#[derive(Debug, Clone)]
enum Block {
    Heading(u8),
    Text,
    Blank,
    Item,
    Fence,
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (1u8..=3).prop_map(Block::Heading),
        Just(Block::Text),
        Just(Block::Blank),
        Just(Block::Item),
        Just(Block::Fence),
    ]
}

fn render_body(blocks: &[Block]) -> String {
    let mut out = String::new();
    for (n, block) in blocks.iter().enumerate() {
        match block {
            Block::Heading(level) => {
                out.push_str(&format!("{} H{n}\n", "#".repeat(usize::from(*level))))
            }
            Block::Text => out.push_str(&format!("line-{n} some text\n")),
            Block::Blank => out.push('\n'),
            Block::Item => out.push_str(&format!("- item-{n} [[Link]] #tag\n")),
            Block::Fence => out.push_str(&format!("```\n# not-{n}\n```\n")),
        }
    }
    out
}

/// A property entry written in one of the styles people and plugins use, with its key.
fn entry(key: String) -> impl Strategy<Value = Entry> {
    let styles = prop_oneof![
        Just("{k}: hello world\n"),
        Just("{k}: 'it''s quoted'\n"),
        Just("{k}: \"a: b # not a comment\"\n"),
        Just("{k}: [a, \"b c\", 3]\n"),
        Just("{k}: {x: 1, y: [2]}\n"),
        Just("{k}:\n  - a\n  # inside\n  - b\n"),
        Just("{k}:\n- a\n- b\n"),
        Just("{k}: |\n  line one\n  line two\n"),
        Just("{k}:\n  sub: 1\n  other: two\n"),
        Just("{k}:\n"),
        Just("{k}: 42   # the answer\n"),
        Just("{k}: true\n"),
        Just("{k}: 2024-07-21\n"),
        Just("\"{k}\": quoted key\n"),
    ];
    (
        styles,
        prop::option::of(prop_oneof![Just("# between\n"), Just("\n")]),
    )
        .prop_map(move |(style, filler)| Entry {
            key: key.clone(),
            filler: filler.unwrap_or("").to_owned(),
            text: style.replace("{k}", &key),
        })
}

#[derive(Debug, Clone)]
struct Entry {
    key: String,
    /// A comment or blank line in front of the entry.
    filler: String,
    text: String,
}

/// A properties block (`None`: no block) as its entries.
fn entries() -> impl Strategy<Value = Option<Vec<Entry>>> {
    prop::option::of((0usize..6).prop_flat_map(|count| {
        (0..count)
            .map(|n| entry(format!("k{n}")))
            .collect::<Vec<_>>()
    }))
}

fn render_note(entries: &Option<Vec<Entry>>, body: &str, crlf: bool) -> String {
    let block = entries.as_ref().map(|entries| {
        let inner: String = entries
            .iter()
            .map(|e| format!("{}{}", e.filler, e.text))
            .collect();
        format!("---\n# leading comment\n{inner}---\n")
    });
    let text = format!("{}{body}", block.unwrap_or_default());
    if crlf {
        text.replace('\n', "\r\n")
    } else {
        text
    }
}

fn note() -> impl Strategy<Value = (String, Vec<Block>)> {
    (
        entries(),
        prop::collection::vec(block(), 0..24),
        any::<bool>(),
    )
        .prop_map(|(entries, blocks, crlf)| {
            (render_note(&entries, &render_body(&blocks), crlf), blocks)
        })
}

/// `new` equals `old` outside `old[start..end]`.
fn only_target_changed(old: &str, new: &str, start: usize, end: usize) -> bool {
    new.len() >= start + (old.len() - end)
        && new.as_bytes().starts_with(&old.as_bytes()[..start])
        && new.as_bytes().ends_with(&old.as_bytes()[end..])
}

fn operation() -> impl Strategy<Value = PatchOperation> {
    prop_oneof![
        Just(PatchOperation::Append),
        Just(PatchOperation::Prepend),
        Just(PatchOperation::Replace),
        Just(PatchOperation::InsertBefore),
    ]
}

const CONTENT: &str = "zz new line\nzz second line\n";

// ---------------------------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn patch_changes_only_its_target(
        (text, _blocks) in note(),
        pick in any::<prop::sample::Index>(),
        operation in operation(),
        include_children in any::<bool>(),
        use_heading in any::<bool>(),
    ) {
        let fixture = fixture(&text);
        let all = headings::headings(&text);
        let heading = if use_heading && !all.is_empty() { all.get(pick.index(all.len())).cloned() } else { None };
        let result = fixture.ops.patch_note(&ctx(), ops::PatchNote {
            path: NOTE.into(),
            operation,
            content: CONTENT.into(),
            heading: heading.as_ref().map(|h| h.text.clone()),
            heading_level: None,
            include_children,
            expected_revision: None,
        });
        let after = fixture.read(NOTE);
        match (&heading, operation, result) {
            (None, PatchOperation::InsertBefore, Err(error)) => {
                prop_assert_eq!(error.code(), "invalid_argument");
                prop_assert_eq!(&after, &text);
            }
            (Some(heading), _, Ok(edited)) => {
                // Without children the target stops at the next heading of any level.
                let next = all.iter().map(|h| h.start).find(|start| *start > heading.start);
                let end = match next {
                    Some(next) if !include_children => next.min(heading.section_end),
                    _ => heading.section_end,
                };
                prop_assert!(only_target_changed(&text, &after, heading.start, end), "{text:?} -> {after:?}");
                prop_assert!(after.contains("zz new line"));
                prop_assert_eq!(frontmatter::split(&after).yaml, frontmatter::split(&text).yaml);
                prop_assert!(edited.changed);
                let (first, last) = edited.lines.unwrap_or((0, 0));
                let lines: Vec<&str> = after.lines().collect();
                prop_assert_eq!(lines.get(first - 1).map(|l| l.trim_end_matches('\r')), Some("zz new line"));
                prop_assert_eq!(lines.get(last - 1).map(|l| l.trim_end_matches('\r')), Some("zz second line"));
            }
            (None, _, Ok(_)) => {
                let start = edit::body_start(&text);
                prop_assert!(only_target_changed(&text, &after, start, text.len()));
                prop_assert_eq!(frontmatter::split(&after).yaml, frontmatter::split(&text).yaml);
            }
            (_, _, Err(error)) => prop_assert!(false, "unexpected {error} for {text:?}"),
        }
    }

    #[test]
    fn anchor_and_span_edits_change_only_their_lines(
        (text, blocks) in note(),
        pick in any::<prop::sample::Index>(),
        span in 0usize..4,
        kind in 0u8..4,
    ) {
        let anchors: Vec<String> = blocks.iter().enumerate().filter_map(|(n, block)| match block {
            Block::Text => Some(format!("line-{n} ")),
            Block::Item => Some(format!("item-{n} ")),
            _ => None,
        }).collect();
        prop_assume!(!anchors.is_empty());
        let first = pick.index(anchors.len());
        let last = (first + span).min(anchors.len() - 1);
        let (start_anchor, end_anchor) = (anchors[first].clone(), anchors[last].clone());
        let lines = edit::body_lines(&text);
        let line_of = |anchor: &str| lines.iter().copied().find(|line| text[line.start..line.content_end].contains(anchor));
        let (Some(start_line), Some(end_line)) = (line_of(&start_anchor), line_of(&end_anchor)) else {
            return Err(TestCaseError::fail("anchor not found"));
        };
        let fixture = fixture(&text);
        let result = match kind {
            0 => fixture.ops.insert_at_anchor(&ctx(), ops::InsertAtAnchor {
                path: NOTE.into(), anchor: start_anchor.clone(), position: AnchorPosition::Before,
                content: CONTENT.into(), first_match: false, expected_revision: None,
            }),
            1 => fixture.ops.insert_at_anchor(&ctx(), ops::InsertAtAnchor {
                path: NOTE.into(), anchor: start_anchor.clone(), position: AnchorPosition::After,
                content: CONTENT.into(), first_match: false, expected_revision: None,
            }),
            2 => fixture.ops.edit_span(&ctx(), ops::EditSpan {
                path: NOTE.into(), start_anchor: start_anchor.clone(), end_anchor: Some(end_anchor.clone()),
                content: Some(CONTENT.into()), first_match: false, expected_revision: None,
            }),
            _ => fixture.ops.edit_span(&ctx(), ops::EditSpan {
                path: NOTE.into(), start_anchor: start_anchor.clone(), end_anchor: Some(end_anchor.clone()),
                content: None, first_match: false, expected_revision: None,
            }),
        };
        prop_assert!(result.is_ok(), "{:?}", result.err().map(|e| e.to_string()));
        let after = fixture.read(NOTE);
        let (start, end) = match kind {
            0 => (start_line.start, start_line.start),
            1 => (start_line.end, start_line.end),
            _ => (start_line.start, end_line.end),
        };
        prop_assert!(only_target_changed(&text, &after, start, end), "{text:?} -> {after:?}");
        if kind == 3 {
            prop_assert_eq!(after, format!("{}{}", &text[..start], &text[end..]));
        }
    }

    #[test]
    fn untouched_properties_keep_their_bytes(
        entries in entries().prop_filter("a block", Option::is_some),
        body in prop::collection::vec(block(), 0..6).prop_map(|blocks| render_body(&blocks)),
        pick in any::<prop::sample::Index>(),
        change in 0u8..3,
        crlf in any::<bool>(),
    ) {
        let entries = entries.unwrap_or_default();
        let text = render_note(&Some(entries.clone()), &body, crlf);
        let old_yaml = frontmatter::split(&text).yaml.unwrap_or("").to_owned();
        let old_map = frontmatter::parse_properties(&old_yaml);
        prop_assert!(old_map.is_ok(), "generated block must be valid: {old_yaml:?} {old_map:?}");
        let old_map = old_map.unwrap_or_default();
        let target = if entries.is_empty() || change == 2 { None } else { Some(pick.index(entries.len())) };
        let mut updates = Map::new();
        match target {
            Some(index) if change == 0 => { updates.insert(entries[index].key.clone(), json!(["new", "value"])); }
            Some(index) => { updates.insert(entries[index].key.clone(), Value::Null); }
            None => { updates.insert("added".into(), json!("fresh: value")); }
        }
        let fixture = fixture(&text);
        let result = fixture.ops.update_properties(&ctx(), ops::UpdateProperties {
            path: NOTE.into(), properties: updates.clone(), replace: false, expected_revision: None, strict: false,
        });
        prop_assert!(result.is_ok(), "{:?}", result.err().map(|e| e.to_string()));
        let after = fixture.read(NOTE);
        let mut expected = old_map.clone();
        for (key, value) in &updates {
            if value.is_null() { expected.remove(key); } else { expected.insert(key.clone(), value.clone()); }
        }
        let split = frontmatter::split(&after);
        let new_yaml = split.yaml.unwrap_or("");
        prop_assert_eq!(frontmatter::parse_properties(new_yaml), Ok(expected));
        let body_after = if crlf { body.replace('\n', "\r\n") } else { body.clone() };
        prop_assert!(after.ends_with(&body_after), "body changed");
        let nl = |s: &str| if crlf { s.replace('\n', "\r\n") } else { s.to_owned() };
        match target {
            Some(index) => {
                // The target entry's own lines (after any comment in front of it) are the only change.
                let before: String = entries[..=index].iter().map(|e| format!("{}{}", e.filler, e.text)).collect();
                let before = &before[..before.len() - entries[index].text.len()];
                let prefix = nl(&format!("# leading comment\n{before}"));
                let rest: String = entries[index + 1..].iter().map(|e| format!("{}{}", e.filler, e.text)).collect();
                let suffix = nl(&rest);
                prop_assert!(new_yaml.starts_with(&prefix), "{old_yaml:?} -> {new_yaml:?}");
                prop_assert!(new_yaml.ends_with(&suffix), "{old_yaml:?} -> {new_yaml:?}");
                if change == 1 {
                    prop_assert_eq!(new_yaml.len(), prefix.len() + suffix.len());
                }
            }
            None => prop_assert!(new_yaml.starts_with(&old_yaml), "{old_yaml:?} -> {new_yaml:?}"),
        }
    }

    #[test]
    fn an_edit_and_its_inverse_restore_the_note(
        (text, blocks) in note(),
        pick in any::<prop::sample::Index>(),
        kind in 0u8..3,
    ) {
        let fixture = fixture(&text);
        let all = headings::headings(&text);
        match kind {
            // Replace a section's content, then put the old content back.
            0 => {
                prop_assume!(!all.is_empty());
                let heading = all[pick.index(all.len())].clone();
                prop_assume!(all.iter().filter(|h| h.text == heading.text).count() == 1);
                let section = sections::section(&text, &heading, true);
                let old_content = text[section.content_start..section.content_end].to_owned();
                let patch = |content: &str| fixture.ops.patch_note(&ctx(), ops::PatchNote {
                    path: NOTE.into(), operation: PatchOperation::Replace, content: content.into(),
                    heading: Some(heading.text.clone()), heading_level: None, include_children: true,
                    expected_revision: None,
                });
                prop_assert!(patch(CONTENT).is_ok());
                prop_assert!(patch(&old_content).is_ok());
            }
            // Insert lines after an anchor, then delete exactly those lines.
            1 => {
                let anchors: Vec<String> = blocks.iter().enumerate()
                    .filter(|(_, b)| matches!(b, Block::Text)).map(|(n, _)| format!("line-{n} ")).collect();
                prop_assume!(!anchors.is_empty());
                let anchor = anchors[pick.index(anchors.len())].clone();
                let inserted = fixture.ops.insert_at_anchor(&ctx(), ops::InsertAtAnchor {
                    path: NOTE.into(), anchor, position: AnchorPosition::After,
                    content: CONTENT.into(), first_match: false, expected_revision: None,
                });
                prop_assert!(inserted.is_ok());
                let deleted = fixture.ops.edit_span(&ctx(), ops::EditSpan {
                    path: NOTE.into(), start_anchor: "zz new line".into(), end_anchor: Some("zz second".into()),
                    content: None, first_match: false, expected_revision: None,
                });
                prop_assert!(deleted.is_ok());
            }
            // Add a property, then delete it.
            _ => {
                let add = |value: Value| {
                    let mut updates = Map::new();
                    updates.insert("zz-added".into(), value);
                    fixture.ops.update_properties(&ctx(), ops::UpdateProperties {
                        path: NOTE.into(), properties: updates, replace: false, expected_revision: None,
                        strict: false,
                    })
                };
                let nested = json!({"nested": [1, "two"]});
                prop_assert!(add(nested).is_ok(), "add failed");
                prop_assert!(add(Value::Null).is_ok());
            }
        }
        prop_assert_eq!(fixture.read(NOTE), text);
    }
}

// ---------------------------------------------------------------------------------------------
// Examples

fn code(result: Result<ops::EditedNote, OpsError>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(error) => format!("{}: {error}", error.code()),
    }
}

#[test]
fn stale_revision_is_a_conflict_and_nothing_changes() {
    let text = "# A\nbody\n";
    let fixture = fixture(text);
    let stale = "0".repeat(64);
    let outcome = code(fixture.ops.patch_note(
        &ctx(),
        ops::PatchNote {
            path: NOTE.into(),
            operation: PatchOperation::Append,
            content: "x".into(),
            heading: None,
            heading_level: None,
            include_children: true,
            expected_revision: Some(stale),
        },
    ));
    assert!(outcome.starts_with("conflict: "), "{outcome}");
    assert_eq!(fixture.read(NOTE), text);
}

#[test]
fn duplicate_headings_need_a_level() {
    let text = "# Notes\n## Notes\nx\n";
    let fixture = fixture(text);
    let patch = |level: Option<u8>| {
        code(fixture.ops.patch_note(
            &ctx(),
            ops::PatchNote {
                path: NOTE.into(),
                operation: PatchOperation::Prepend,
                content: "top".into(),
                heading: Some("Notes".into()),
                heading_level: level,
                include_children: true,
                expected_revision: None,
            },
        ))
    };
    let ambiguous = patch(None);
    assert!(
        ambiguous.starts_with("ambiguous_heading: ")
            && ambiguous.contains("level 1, line 1")
            && ambiguous.contains("level 2, line 2"),
        "{ambiguous}"
    );
    assert_eq!(patch(Some(2)), "ok");
    assert_eq!(fixture.read(NOTE), "# Notes\n## Notes\ntop\nx\n");
}

#[test]
fn body_edits_may_not_create_a_properties_block() {
    let text = "---\nunclosed start\nbody\n";
    let fixture = fixture(text);
    let outcome = code(fixture.ops.patch_note(
        &ctx(),
        ops::PatchNote {
            path: NOTE.into(),
            operation: PatchOperation::Append,
            content: "---".into(),
            heading: None,
            heading_level: None,
            include_children: true,
            expected_revision: None,
        },
    ));
    assert!(outcome.starts_with("invalid_argument: "), "{outcome}");
    assert_eq!(fixture.read(NOTE), text);
}

#[test]
fn broken_properties_are_refused_with_their_position() {
    let text = "---\ntitle: x\ntags: [a\n---\nbody\n";
    let fixture = fixture(text);
    let outcome = code(fixture.ops.update_properties(
        &ctx(),
        ops::UpdateProperties {
            path: NOTE.into(),
            properties: Map::from_iter([("status".to_owned(), json!("done"))]),
            replace: true,
            expected_revision: None,
            strict: false,
        },
    ));
    assert!(
        outcome.starts_with("invalid_properties: ") && outcome.contains("line "),
        "{outcome}"
    );
    assert_eq!(fixture.read(NOTE), text);
}
