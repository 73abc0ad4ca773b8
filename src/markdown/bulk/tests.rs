//! Tests of the batch edit transforms: each asserts the whole output text, so anything an edit
//! disturbs besides its target shows up.

use super::*;

fn key(text: &str, old: &str, new: &str) -> Result<Option<String>, BulkEditError> {
    rename_property_key(text, old, new)
}

fn tag(text: &str, old: &str, new: &str) -> Option<(String, usize)> {
    rename_tag(text, old, new)
        .unwrap_or_else(|error| panic!("{text:?}: {error}"))
        .map(|renamed| (renamed.text, renamed.count))
}

fn literal(text: &str, find: &str, with: &str, scope: Scope) -> Option<(String, usize)> {
    replace_across(
        text,
        &Pattern::Literal(find.to_owned()),
        with,
        &scope,
        usize::MAX,
    )
    .unwrap_or_else(|error| panic!("{text:?}: {error}"))
    .map(|replaced| (replaced.text, replaced.count))
}

const BODY: Scope = Scope {
    code: false,
    properties: false,
};

#[test]
fn property_key_renamed_keeping_everything_else() {
    let text = "---\ntitle: Hello # the title\nstatus: draft\nlist:\n  - a\n  - 1\n---\n# Body\nstatus: draft\n";
    assert_eq!(
        key(text, "status", "state"),
        Ok(Some(
            "---\ntitle: Hello # the title\nstate: draft\nlist:\n  - a\n  - 1\n---\n# Body\nstatus: draft\n"
                .to_owned()
        ))
    );
    assert_eq!(
        key(text, "list", "items"),
        Ok(Some(
            "---\ntitle: Hello # the title\nstatus: draft\nitems:\n  - a\n  - 1\n---\n# Body\nstatus: draft\n"
                .to_owned()
        ))
    );
}

#[test]
fn property_key_absent_or_no_block_is_none() {
    assert_eq!(key("no block\nstatus: x\n", "status", "s"), Ok(None));
    assert_eq!(key("---\na: 1\n---\n", "b", "c"), Ok(None));
    assert_eq!(key("---\na: 1\n---\n", "a", "a"), Ok(None));
    // Keys are case-sensitive: `Status` is not `status`.
    assert_eq!(key("---\nStatus: 1\n---\n", "status", "s"), Ok(None));
}

#[test]
fn property_key_refuses_a_taken_name() {
    let text = "---\na: 1\nb: 2\n---\n";
    assert_eq!(
        key(text, "a", "b"),
        Err(BulkEditError::KeyExists("b".to_owned()))
    );
    // Obsidian folds property names' case for their type, so `B` would clash with `b`.
    assert_eq!(
        key(text, "a", "B"),
        Err(BulkEditError::KeyExists("b".to_owned()))
    );
    // Changing only the case of the key itself is a rename.
    assert_eq!(
        key(text, "a", "A"),
        Ok(Some("---\nA: 1\nb: 2\n---\n".to_owned()))
    );
}

#[test]
fn property_key_quoted_keys_and_new_key_quoting() {
    let text = "---\n\"my key\": x\n'it''s': y\n---\n";
    assert_eq!(
        key(text, "my key", "other key"),
        Ok(Some("---\nother key: x\n'it''s': y\n---\n".to_owned()))
    );
    assert_eq!(
        key(text, "it's", "its"),
        Ok(Some("---\n\"my key\": x\nits: y\n---\n".to_owned()))
    );
    for (new, written) in [
        ("a: b", "\"a: b\""),
        ("true", "\"true\""),
        ("1e3", "\"1e3\""),
        ("#x", "\"#x\""),
        ("say \"hi\"", "\"say \\\"hi\\\"\""),
        ("", ""),
    ] {
        let expected = if new.is_empty() {
            Err(BulkEditError::NotEditable(
                "the new property name is empty".to_owned(),
            ))
        } else {
            Ok(Some(format!("---\n{written}: 1\n---\n")))
        };
        assert_eq!(key("---\nk: 1\n---\n", "k", new), expected, "{new:?}");
    }
}

#[test]
fn property_key_keeps_value_bytes_and_line_endings() {
    let text = "\u{feff}---\r\nnote: |\r\n  line one\r\n  line two\r\nn: 0x1F\r\nq: \"007\"\r\n---\r\nbody\r\n";
    assert_eq!(
        key(text, "note", "text"),
        Ok(Some(
            "\u{feff}---\r\ntext: |\r\n  line one\r\n  line two\r\nn: 0x1F\r\nq: \"007\"\r\n---\r\nbody\r\n"
                .to_owned()
        ))
    );
    assert_eq!(
        key(text, "q", "code"),
        Ok(Some(
            "\u{feff}---\r\nnote: |\r\n  line one\r\n  line two\r\nn: 0x1F\r\ncode: \"007\"\r\n---\r\nbody\r\n"
                .to_owned()
        ))
    );
}

#[test]
fn property_key_refuses_what_it_cannot_change_safely() {
    assert!(matches!(
        key("---\na: [1\n---\n", "a", "b"),
        Err(BulkEditError::InvalidProperties(_))
    ));
    assert!(matches!(
        key("---\n&anchor a: 1\nb: 2\n---\n", "a", "c"),
        Err(BulkEditError::NotEditable(_))
    ));
    assert!(matches!(
        key("---\n? a\n: 1\n---\n", "a", "c"),
        Err(BulkEditError::NotEditable(_))
    ));
}

#[test]
fn tag_renamed_inline_with_nested_and_case() {
    let text =
        "# Title #old\nSee #old, #Old/child and #OLD/a/b.\nNot #older, #oldx or #x/old or a#old.\n";
    assert_eq!(
        tag(text, "old", "new"),
        Some((
            "# Title #new\nSee #new, #new/child and #new/a/b.\nNot #older, #oldx or #x/old or a#old.\n"
                .to_owned(),
            4
        ))
    );
    // A nested old name renames only below it.
    assert_eq!(
        tag("#a/b #a/b/c #a #a/bc\n", "A/B", "z"),
        Some(("#z #z/c #a #a/bc\n".to_owned(), 2))
    );
    assert_eq!(tag("nothing here #other\n", "old", "new"), None);
}

#[test]
fn tag_left_alone_where_obsidian_reads_none() {
    let text = concat!(
        "`#old` and ``a #old``\n",
        "```\n#old\n```\n",
        "\n    #old indented code\n\n",
        "$#old$ and\n\n$$\n#old\n$$\n",
        "<!-- #old --> [[#old]] [x](#old) https://x.org/#old\n",
        "&#old; is a tag, \\#old is not\n",
    );
    let renamed = tag(text, "old", "new");
    let expected = text.replacen("&#old;", "&#new;", 1);
    assert_eq!(renamed, Some((expected, 1)));
}

#[test]
fn tag_renamed_in_the_tags_property() {
    let block = "---\ntags:\n  - old\n  - \"#old/x\"\n  - 'Old'\n  - other # old\n---\n#old\n";
    assert_eq!(
        tag(block, "old", "new"),
        Some((
            "---\ntags:\n  - new\n  - \"#new/x\"\n  - 'new'\n  - other # old\n---\n#new\n"
                .to_owned(),
            4
        ))
    );
    let flow = "---\nTAGS: [old, \"#old\", other, 'old/y']\ntitle: old\n---\n";
    assert_eq!(
        tag(flow, "old", "new"),
        Some((
            "---\nTAGS: [new, \"#new\", other, 'new/y']\ntitle: old\n---\n".to_owned(),
            3
        ))
    );
    assert_eq!(
        tag("---\ntags: old\n---\n", "old", "new"),
        Some(("---\ntags: new\n---\n".to_owned(), 1))
    );
    assert_eq!(
        tag("---\ntags: \"#old\"\n---\n", "old", "new"),
        Some(("---\ntags: \"#new\"\n---\n".to_owned(), 1))
    );
    // Obsidian does not split `a, b` or read the singular `tag` key.
    assert_eq!(
        tag("---\ntags: old, x\ntag: old\n---\n", "old", "new"),
        None
    );
}

#[test]
fn tag_rename_quotes_a_plain_value_that_would_change_type() {
    assert_eq!(
        tag("---\ntags: [old, b]\n---\n", "old", "true"),
        Some(("---\ntags: [\"true\", b]\n---\n".to_owned(), 1))
    );
}

#[test]
fn tag_rename_refuses_what_it_cannot_rewrite() {
    assert!(matches!(
        rename_tag("---\ntags: &a [old]\n---\n", "old", "new"),
        Err(BulkEditError::NotEditable(_))
    ));
    assert!(matches!(
        rename_tag("---\ntags: \"\\u006Fld\"\n---\n", "old", "new"),
        Err(BulkEditError::NotEditable(_))
    ));
    assert!(matches!(
        rename_tag("#old\n", "old", "new tag"),
        Err(BulkEditError::NotEditable(_))
    ));
    assert_eq!(rename_tag("#old\n", "not valid", "new"), Ok(None));
    // `&#x26;` would be a character reference, no longer a tag.
    assert!(matches!(
        rename_tag("a &#old; b\n", "old", "x26"),
        Err(BulkEditError::NotEditable(_))
    ));
    // An unreadable block is left alone; the body's tags are still Obsidian's tags.
    assert_eq!(
        tag("---\ntags: [old\n---\n#old\n", "old", "new"),
        Some(("---\ntags: [old\n---\n#new\n".to_owned(), 1))
    );
}

#[test]
fn tag_rename_keeps_crlf_and_bom() {
    let text = "\u{feff}---\r\ntags:\r\n  - old\r\n---\r\nText #old/a\r\n";
    assert_eq!(
        tag(text, "old", "new"),
        Some((
            "\u{feff}---\r\ntags:\r\n  - new\r\n---\r\nText #new/a\r\n".to_owned(),
            2
        ))
    );
}

#[test]
fn replace_literal_outside_code_and_properties() {
    let text =
        "---\ntitle: cat\n---\nA cat `cat` here.\n```\ncat\n```\n    cat indented\n\nLast cat\n";
    assert_eq!(
        literal(text, "cat", "dog", BODY),
        Some((
            "---\ntitle: cat\n---\nA dog `cat` here.\n```\ncat\n```\n    cat indented\n\nLast dog\n"
                .to_owned(),
            2
        ))
    );
    let everywhere = Scope {
        code: true,
        properties: true,
    };
    assert_eq!(
        literal(text, "cat", "dog", everywhere),
        Some((text.replace("cat", "dog"), 6))
    );
    assert_eq!(literal(text, "cow", "dog", everywhere), None);
    assert_eq!(literal(text, "", "dog", everywhere), None);
}

#[test]
fn replace_never_spans_a_region_boundary() {
    // `a`b`c` holds a code span; `a` + `b` across it must not match `ab`.
    assert_eq!(literal("xa`b`c\n", "a`b", "Q", BODY), None);
    assert_eq!(
        literal("ab `ab` ab\n", "ab", "Q", BODY),
        Some(("Q `ab` Q\n".to_owned(), 2))
    );
}

#[test]
fn replace_regex_with_capture_groups() {
    let pattern =
        Pattern::Regex(regex::Regex::new(r"(\w+)@(\w+)").unwrap_or_else(|e| panic!("{e}")));
    let text = "mail bob@home and `eve@work`\n";
    let replaced = replace_across(text, &pattern, "$2:$1", &BODY, usize::MAX);
    assert_eq!(
        replaced,
        Ok(Some(Replaced {
            text: "mail home:bob and `eve@work`\n".to_owned(),
            count: 1
        }))
    );
}

#[test]
fn replace_in_properties_must_keep_a_mapping() {
    let props = Scope {
        code: false,
        properties: true,
    };
    let text = "---\nstatus: done\n---\nbody\n";
    assert_eq!(
        literal(text, "done", "open", props),
        Some(("---\nstatus: open\n---\nbody\n".to_owned(), 1))
    );
    assert!(matches!(
        replace_across(
            text,
            &Pattern::Literal(": done".to_owned()),
            ": [done",
            &props,
            usize::MAX
        ),
        Err(BulkEditError::InvalidProperties(_))
    ));
    assert!(matches!(
        replace_across(
            text,
            &Pattern::Literal("status: done\n".to_owned()),
            "status: done\n---\n",
            &props,
            usize::MAX
        ),
        Err(BulkEditError::InvalidProperties(_))
    ));
    // A body edit may not open a properties block either.
    assert!(matches!(
        replace_across(
            "--\na: 1\n---\n",
            &Pattern::Literal("--\na".to_owned()),
            "---\na",
            &BODY,
            usize::MAX
        ),
        Err(BulkEditError::InvalidProperties(_))
    ));
}

#[test]
fn replace_keeps_crlf() {
    let text = "\u{feff}---\r\na: 1\r\n---\r\none\r\ntwo\r\n";
    assert_eq!(
        literal(text, "one", "uno\ndos", BODY),
        Some((
            "\u{feff}---\r\na: 1\r\n---\r\nuno\r\ndos\r\ntwo\r\n".to_owned(),
            1
        ))
    );
    // A matched line break is the whole CRLF, so doubling it writes no stray `\r`.
    assert_eq!(
        literal("one\r\ntwo\r\n", "\n", "\n\n", BODY),
        Some(("one\r\n\r\ntwo\r\n\r\n".to_owned(), 2))
    );
    // A note with bare LF line breaks is taken as written.
    assert_eq!(
        literal("a\r\nb\nc", "\n", "|", BODY),
        Some(("a\r|b|c".to_owned(), 2))
    );
}

mod properties {
    use super::super::*;
    use proptest::prelude::*;

    /// Notes made of fragments the tag grammar and the YAML reader branch on, with the tag `old`.
    fn noteish() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![
            Just("#old".to_owned()),
            Just("#old/x".to_owned()),
            Just("#older".to_owned()),
            Just("`".to_owned()),
            Just("```\n".to_owned()),
            Just("$".to_owned()),
            Just("[[".to_owned()),
            Just("]]".to_owned()),
            Just("](".to_owned()),
            Just("<!--".to_owned()),
            Just("-->".to_owned()),
            Just("&".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("    ".to_owned()),
            Just("> ".to_owned()),
            Just("- ".to_owned()),
            Just("https://".to_owned()),
            "[a-m #/:_,-]{0,6}",
        ];
        let block = prop_oneof![
            Just(String::new()),
            Just("---\ntags: old\n---\n".to_owned()),
            Just("---\ntags: [old, \"#old/a\", b]\n---\n".to_owned()),
            Just("---\ntags:\n  - old\n  - 'old'\nTags: x\n---\n".to_owned()),
            Just("---\ntags: [old\n---\n".to_owned()),
        ];
        (block, prop::collection::vec(fragment, 0..40))
            .prop_map(|(block, parts)| format!("{block}{}", parts.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn tag_rename_round_trips(text in noteish()) {
            // `zq` occurs in no fragment, so renaming back finds exactly what was renamed.
            if let Ok(Some(there)) = rename_tag(&text, "old", "zq") {
                let back = rename_tag(&there.text, "zq", "old");
                prop_assert_eq!(
                    back.map(|renamed| renamed.map(|renamed| (renamed.text, renamed.count))),
                    Ok(Some((text.clone(), there.count)))
                );
            }
        }

        #[test]
        fn replacing_a_literal_with_itself_changes_nothing(
            text in prop_oneof![any::<String>(), noteish()],
            word in "[a-z#`/ -]{1,3}",
            code in any::<bool>(),
            properties in any::<bool>(),
        ) {
            let scope = Scope { code, properties };
            let replaced = replace_across(&text, &Pattern::Literal(word.clone()), &word, &scope, usize::MAX);
            prop_assert!(
                matches!(&replaced, Ok(None)) || matches!(&replaced, Ok(Some(same)) if same.text == text),
                "{:?}", replaced
            );
        }

        #[test]
        fn transforms_never_panic(
            text in prop_oneof![any::<String>(), noteish()],
            word in "[a-z#: \"'/]{0,4}",
            code in any::<bool>(),
            properties in any::<bool>(),
        ) {
            let _ = rename_tag(&text, "old", &word);
            let _ = rename_tag(&text, &word, "new");
            let _ = rename_property_key(&text, "tags", &word);
            let _ = rename_property_key(&text, &word, "x");
            let scope = Scope { code, properties };
            let _ = replace_across(&text, &Pattern::Literal(word.clone()), "\n", &scope, usize::MAX);
            if let Ok(regex) = regex::Regex::new(&word) {
                let _ = replace_across(&text, &Pattern::Regex(regex), "$0$0", &scope, usize::MAX);
            }
        }
    }
}

#[test]
fn tag_rename_in_containers_and_unindented_lists() {
    let text = "---\ntags:\n- old\n- b\nTags: [Old]\n---\n> quote #old\n- [ ] task #old\n";
    assert_eq!(
        tag(text, "old", "new"),
        Some((
            "---\ntags:\n- new\n- b\nTags: [new]\n---\n> quote #new\n- [ ] task #new\n".to_owned(),
            4
        ))
    );
}

#[test]
fn replace_edge_cases() {
    // A literal's replacement is used as written: no `$` expansion.
    assert_eq!(
        literal("a b\n", "b", "$1", BODY),
        Some(("a $1\n".to_owned(), 1))
    );
    // Code inside a block quote stays code.
    assert_eq!(
        literal("> cat\n> ```\n> cat\n> ```\n", "cat", "dog", BODY),
        Some(("> dog\n> ```\n> cat\n> ```\n".to_owned(), 1))
    );
    // No empty match next to the fence; the one after the last newline is `replace_all`'s too.
    let pattern = Pattern::Regex(regex::Regex::new("(?m)^").unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        replace_across("a\n```\nb\n```\nc\n", &pattern, "> ", &BODY, usize::MAX),
        Ok(Some(Replaced {
            text: "> a\n```\nb\n```\n> c\n> ".to_owned(),
            count: 3
        }))
    );
}

/// Issue 63 (F2): a short pattern with a long replacement stops as soon as the note passes the
/// limit, for literals, empty regex matches and `$0` repeated, CRLF notes included; under the
/// limit the expansion is `Captures::expand`'s, named groups and `$$` included.
#[test]
fn r63_replace_stops_at_the_size_limit() {
    let text = "e".repeat(2_000) + "\n";
    let long = "E".repeat(1_000);
    let regex = |pattern: &str| {
        Pattern::Regex(regex::Regex::new(pattern).unwrap_or_else(|e| panic!("{e}")))
    };
    let too_large = Err(BulkEditError::TooLarge { max_bytes: 100_000 });
    for (pattern, with) in [
        (Pattern::Literal("e".to_owned()), long.as_str()),
        (regex("x*"), long.as_str()),
        (regex("(?s).+"), &"$0".repeat(100)),
    ] {
        assert_eq!(
            replace_across(&text, &pattern, with, &BODY, 100_000),
            too_large
        );
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(
            replace_across(&crlf, &pattern, with, &BODY, 100_000),
            too_large
        );
    }
    // Exactly at the limit is allowed.
    let at_limit = replace_across("ab\n", &Pattern::Literal("b".to_owned()), "bc", &BODY, 4);
    assert_eq!(
        at_limit.map(|r| r.map(|r| r.text)),
        Ok(Some("abc\n".to_owned()))
    );
    let plain = regex::Regex::new(r"(?<user>\w+)@(\w+)").unwrap_or_else(|e| panic!("{e}"));
    let named = Pattern::Regex(plain.clone());
    let text = "bob@home\n";
    let template = "${user} $2 $$ $9 $user_ $ ${x";
    let mut expected = String::new();
    if let Some(captures) = plain.captures(text) {
        captures.expand(template, &mut expected);
    }
    let replaced = replace_across(text, &named, template, &BODY, usize::MAX);
    assert_eq!(
        replaced.map(|r| r.map(|r| r.text)),
        Ok(Some(format!("{expected}\n")))
    );
}
