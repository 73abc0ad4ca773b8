//! The pure, Obsidian-flavoured model of a note's text: its properties block, headings and tags, and
//! the edits that change a note without damaging its structure or properties.
//! It owns parsing only: no I/O, no clock, no knowledge of the vault, the index or MCP, and it must
//! never panic on any input, because every note in a vault is untrusted text.

mod blocks;
pub mod bulk;
pub mod canvas;
pub mod chunks;
pub mod edit;
pub mod frontmatter;
pub mod headings;
pub mod links;
pub mod memory;
pub mod moment;
pub mod note;
pub mod properties_edit;
pub mod property_types;
pub mod sections;
pub mod tags;
pub mod tasks;
pub mod template;

#[cfg(test)]
mod tests {
    use super::{canvas, frontmatter, headings, links, tags, tasks};
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    /// Text built from the fragments the parsers branch on, so random notes hit the tricky paths.
    fn markdownish() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            Just("---".to_owned()),
            Just("\r\n".to_owned()),
            Just("\n".to_owned()),
            Just("\r".to_owned()),
            Just("#".to_owned()),
            Just("## ".to_owned()),
            Just("```".to_owned()),
            Just("~~~".to_owned()),
            Just("%%".to_owned()),
            Just("$$".to_owned()),
            Just("$".to_owned()),
            Just("<!--".to_owned()),
            Just("-->".to_owned()),
            Just("<div>".to_owned()),
            Just("> ".to_owned()),
            Just("- ".to_owned()),
            Just("1. ".to_owned()),
            Just("\t".to_owned()),
            Just("    ".to_owned()),
            Just("[[".to_owned()),
            Just("]]".to_owned()),
            Just("](".to_owned()),
            Just(")".to_owned()),
            Just("`".to_owned()),
            Just("===".to_owned()),
            Just("&#".to_owned()),
            Just("\\".to_owned()),
            Just("https://".to_owned()),
            Just("tags: ".to_owned()),
            Just("é日🎉\u{feff}\u{200b}".to_owned()),
            any::<char>().prop_map(String::from),
            "[a-z0-9#/:_ -]{0,6}",
        ];
        prop::collection::vec(fragment, 0..80).prop_map(|parts| parts.concat())
    }

    /// Task lines built from the grammar's signifiers, fields and separators.
    fn tasky() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            Just("- [ ] ".to_owned()),
            Just("\n    - [x] ".to_owned()),
            Just("\n> * [/] ".to_owned()),
            Just("\n1) [-] ".to_owned()),
            Just("#task ".to_owned()),
            Just("📅 2025-02-30 ".to_owned()),
            Just("⏳2025-06-01".to_owned()),
            Just("🔁 every month on the last when done ".to_owned()),
            Just("🔁 every 3 weeks on Monday, Friday".to_owned()),
            Just("🔁 every April and May on the 2nd last Sunday".to_owned()),
            Just("[due:: 2025-01-01] ".to_owned()),
            Just("(repeat:: every day) ".to_owned()),
            Just("🏁 delete ".to_owned()),
            Just("⛔ a, b ".to_owned()),
            Just("🆔 x_1 ".to_owned()),
            Just("⏫\u{fe0f} ".to_owned()),
            Just(" ^block-1".to_owned()),
            Just("\n```\n".to_owned()),
            "[a-z #:,]{0,8}",
        ];
        prop::collection::vec(fragment, 0..16).prop_map(|parts| parts.concat())
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("JSON numbers are finite", |number| number.is_finite())
                .prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            markdownish().prop_map(Value::String),
            "(yes|no|~|null|True|0x1F|0o17|1_000|\\.inf|-\\.nan|2024-07-21|12:30|<<|- a|a: b|#x|\\[\\[x\\]\\])"
                .prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..6)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn parsers_never_panic(text in prop_oneof![any::<String>(), markdownish()]) {
            let split = frontmatter::split(&text);
            prop_assert_eq!(split.block_len + split.body.len(), text.len());
            if let Some(yaml) = split.yaml {
                let _ = frontmatter::parse_properties(yaml);
            }
            let _ = frontmatter::parse_properties(&text);
            for heading in headings::headings(&text) {
                prop_assert!(heading.start <= heading.section_end && heading.section_end <= text.len());
                prop_assert!((1..=6).contains(&heading.level));
            }
            for link in links::note_links(&text) {
                prop_assert!(link.start <= link.end && link.end <= text.len());
                prop_assert_eq!(&text[link.start..link.end], link.original.as_str());
            }
            let _ = links::canvas_links(&text);
            let _ = canvas::render_canvas(&text);
            for tag in tags::note_tags(&text) {
                prop_assert!(tags::is_valid_tag_name(&tag));
            }
        }

        #[test]
        fn task_grammar_never_panics_and_writes_what_it_reads(text in prop_oneof![any::<String>(), tasky()]) {
            let settings = tasks::TaskSettings { format: tasks::TaskFormat::Both, ..tasks::TaskSettings::default() };
            let today = jiff::civil::Date::constant(2025, 6, 15);
            for found in tasks::note_tasks(&text, &settings) {
                // What Quire writes reads back as a task. Which fields it reads back is the
                // plugin's own rule, with its known ways of reading a written line differently
                // (a tag holding a field's signifier, for one): `fuzz/checks/tasks.rs` states
                // that property whole and `tests/it/fuzz_replay.rs` replays it on every input.
                let line = found.task.to_line(tasks::InvalidDates::AsWritten);
                prop_assert!(tasks::parse_task_line(&line, &settings).is_some(), "{:?}", line);
                for toggled in found.task.toggle(&settings, today) {
                    let _ = toggled.to_line(tasks::InvalidDates::AsPlugin);
                }
            }
            let _ = tasks::edit::insert_lines(&text, &["- [ ] x".to_owned()], tasks::edit::Placement::Parent { line: 2 });
            let _ = tasks::edit::cut_block(&text, 1);
        }

        #[test]
        fn rendered_properties_round_trip(
            map in prop::collection::btree_map(any::<String>(), json_value(), 0..8)
        ) {
            let map: Map<String, Value> = map.into_iter().collect();
            let rendered = frontmatter::render_properties(&map);
            let split = frontmatter::split(&rendered);
            if map.is_empty() {
                prop_assert_eq!(rendered, "");
            } else {
                prop_assert_eq!(split.block_len, rendered.len());
                prop_assert_eq!(split.yaml.map(frontmatter::parse_properties), Some(Ok(map)));
            }
        }
    }
}
