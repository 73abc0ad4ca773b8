//! The pure, Obsidian-flavoured model of a note's text: its properties block, headings and tags, and
//! the edits that change a note without damaging its structure or properties.
//! It owns parsing only: no I/O, no clock, no knowledge of the vault, the index or MCP, and it must
//! never panic on any input, because every note in a vault is untrusted text.

mod blocks;
pub mod chunks;
pub mod edit;
pub mod frontmatter;
pub mod headings;
pub mod properties_edit;
pub mod sections;
pub mod tags;

#[cfg(test)]
mod tests {
    use super::{frontmatter, headings, tags};
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
            for tag in tags::note_tags(&text) {
                prop_assert!(tags::is_valid_tag_name(&tag));
            }
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
