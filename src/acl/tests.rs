//! Unit and property tests for `Policy::check`, driven by tables of (identity, action, path,
//! expected) and by generated spellings of denied folders.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

fn rules(list: &[&str]) -> Vec<Rule> {
    list.iter()
        .map(|raw| Rule::parse(raw).expect("test rules parse"))
        .collect()
}

fn policy() -> Policy {
    let mut identities = BTreeMap::new();
    identities.insert(
        "reader".to_string(),
        IdentityRules {
            read: rules(&["/"]),
            write: rules(&["Inbox/"]),
            deny: rules(&["Privé/", "Journal/Secret.md"]),
        },
    );
    identities.insert(
        "narrow".to_string(),
        IdentityRules {
            read: rules(&["Projects/Public/", "Notes/One.md"]),
            write: vec![],
            deny: rules(&["Projects/Public/Hidden/"]),
        },
    );
    identities.insert(
        "blocked".to_string(),
        IdentityRules {
            read: rules(&["Archive/Shared/"]),
            write: vec![],
            deny: rules(&["archive/"]),
        },
    );
    Policy::new(rules(&["Vault Secrets/"]), identities)
}

fn who(name: &str) -> Principal {
    Principal::Identity {
        name: name.into(),
        client_id: None,
    }
}

fn check(principal: &Principal, action: Action, path: &str, expected: bool) {
    let decision = policy().check(principal, action, path);
    assert_eq!(
        decision.allowed, expected,
        "{principal:?} {action:?} {path:?}: {decision}"
    );
}

#[test]
fn decisions_table() {
    use Action::*;
    let owner = Principal::Owner;
    let cases: &[(&Principal, Action, &str, bool)] = &[
        (&owner, Read, "Privé/a.md", true),
        (&owner, Write, "Vault Secrets/k.md", false),
        (&owner, Read, "vault secrets/k.md", false),
        (&owner, Read, ".obsidian/app.json", false),
        (&owner, List, "", true),
    ];
    for (principal, action, path, expected) in cases {
        check(principal, *action, path, *expected);
    }
    let reader = who("reader");
    let narrow = who("narrow");
    let blocked = who("blocked");
    let nobody = who("nobody");
    let cases: &[(&Principal, Action, &str, bool)] = &[
        (&reader, Read, "Projects/a.md", true),
        (&reader, Write, "Projects/a.md", false),
        (&reader, Write, "Inbox/new.md", true),
        (&reader, Write, "Inbox/deep/new.md", true),
        (&reader, Write, "Inboxes/new.md", false),
        (&reader, Read, "Privé/a.md", false),
        (&reader, Read, "PRIVE/a.md", false),
        (&reader, List, "privé", false),
        (&reader, List, "", true),
        (&reader, Read, "Journal/Secret.md", false),
        (&reader, Read, "journal/secret.MD", false),
        (&reader, Read, "Journal/Secret.md.bak", true),
        (&reader, Read, "Vault Secrets/x.md", false),
        (&reader, Read, "Inbox/.hidden.md", false),
        (&narrow, List, "", true),
        (&narrow, List, "Projects", true),
        (&narrow, Read, "Projects/other.md", false),
        (&narrow, List, "Projects/Private", false),
        (&narrow, Read, "Projects/Public/a.md", true),
        (&narrow, Read, "projects/public/a.md", false),
        (&narrow, Read, "Projects/Public/Hidden/a.md", false),
        (&narrow, List, "Notes", true),
        (&narrow, Read, "Notes/One.md", true),
        (&narrow, Read, "Notes/Two.md", false),
        (&narrow, Write, "Notes/One.md", false),
        (&blocked, Read, "Archive/Shared/a.md", false),
        (&blocked, List, "", false),
        (&blocked, List, "Archive", false),
        (&nobody, Read, "Projects/a.md", false),
        (&nobody, List, "", false),
    ];
    for (principal, action, path, expected) in cases {
        check(principal, *action, path, *expected);
    }
}

#[test]
fn write_tools_follow_write_rules() {
    let policy = policy();
    assert!(policy.may_write_somewhere(&Principal::Owner));
    assert!(policy.may_write_somewhere(&who("reader")));
    assert!(!policy.may_write_somewhere(&who("narrow")));
    assert!(!policy.may_write_somewhere(&who("nobody")));
}

#[test]
fn explanations_name_the_deciding_rule() {
    let decision = policy().check(&who("reader"), Action::Read, "PRIVÉ/x.md");
    assert_eq!(decision.reason, Reason::Deny("Privé/".into()));
    assert!(decision.to_string().contains("deny rule \"Privé/\""));
    let decision = policy().check(&who("reader"), Action::Write, "Projects/a.md");
    assert_eq!(decision.reason, Reason::ReadOnly("/".into()));
}

#[test]
fn bad_rules_are_refused() {
    for raw in [
        "",
        "/Private/",
        "a\\b/",
        "a//b",
        "../x/",
        ".obsidian/",
        "Notes/*.md",
        "a\0b",
    ] {
        assert!(Rule::parse(raw).is_err(), "{raw:?} should be refused");
    }
    for raw in ["/", "Inbox/", "Inbox/Note.md", "Ünïcode Földer/"] {
        assert!(Rule::parse(raw).is_ok(), "{raw:?} should parse");
    }
}

#[test]
fn folding_covers_the_usual_spellings() {
    let same = [
        ("Privé", "PRIVE"),
        ("Privé", "Prive\u{301}"),
        ("Private", "Ｐｒｉｖａｔｅ"),
        ("Istanbul", "İstanbul"),
        ("istanbul", "ıstanbul"),
        ("Straße", "STRASSE"),
        ("ΣΟΦΙΑ", "σοφια"),
    ];
    for (a, b) in same {
        assert_eq!(fold(a), fold(b), "{a:?} vs {b:?}");
    }
    assert_ne!(fold("Private"), fold("Privat"));
}

/// One way of writing a character that a person, a keyboard or a file system might produce.
fn spell(c: char, variant: u8) -> String {
    use unicode_normalization::UnicodeNormalization;
    let one = c.to_string();
    match variant % 6 {
        0 => one,
        1 => one.to_uppercase(),
        2 => one.to_lowercase(),
        3 => one.nfd().collect(),
        // Full-width forms exist for the ASCII letters and digits.
        4 if c.is_ascii_alphanumeric() => {
            char::from_u32(u32::from(c) - 0x21 + 0xFF01).map_or(one, String::from)
        }
        5 if c == 'i' => "İ".into(),
        5 if c.is_ascii_lowercase() => format!("{c}\u{301}"),
        _ => one,
    }
}

proptest! {
    #[test]
    fn a_denied_folder_is_denied_under_every_spelling(
        variants in proptest::collection::vec(any::<u8>(), 12),
        file in "[a-z]{1,8}",
    ) {
        let policy = policy();
        let reader = who("reader");
        let spelled: String = "Privé"
            .chars()
            .zip(variants.iter().cycle())
            .map(|(c, v)| spell(c, *v))
            .collect();
        let path = format!("{spelled}/{file}.md");
        prop_assert!(!policy.allows(&reader, Action::Read, &path), "{path:?}");
        prop_assert!(!policy.allows(&reader, Action::List, &spelled), "{spelled:?}");
        let nested: String = "Vault Secrets"
            .chars()
            .zip(variants.iter().cycle())
            .map(|(c, v)| spell(c, *v))
            .collect();
        let nested_path = format!("{nested}/{file}.md");
        prop_assert!(!policy.allows(&Principal::Owner, Action::Read, &nested_path));
    }

    #[test]
    fn write_implies_read(path in "(Inbox|Projects|Privé)/[a-z]{1,6}(/[a-z]{1,6})?\\.md") {
        let policy = policy();
        let reader = who("reader");
        if policy.allows(&reader, Action::Write, &path) {
            prop_assert!(policy.allows(&reader, Action::Read, &path));
        }
    }
}

proptest! {
    /// The ASCII shortcuts of `fold` and `nfc` give what the Unicode tables give.
    #[test]
    fn ascii_folds_and_normalises_as_the_tables_do(text in "[\\x00-\\x7f]{0,40}") {
        use unicode_normalization::UnicodeNormalization;
        prop_assert_eq!(fold(&text), fold::fold_unicode(&text));
        prop_assert_eq!(rule::nfc(&text), text.nfc().collect::<String>());
    }
}

/// A random rule over a few names, spelled several ways, as folder or file.
fn random_rule() -> impl Strategy<Value = String> {
    let names = prop::sample::select(vec![
        "A", "b", "Privé", "PRIVE", "Ｂ", "n.md", "N.MD", "ñ.md", "Ｎ.md",
    ]);
    (
        prop::collection::vec(names, 1..4),
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(|(segments, folder, all)| {
            if all % 16 == 0 {
                return "/".to_owned();
            }
            let path = segments.join("/");
            if folder { format!("{path}/") } else { path }
        })
}

proptest! {
    /// Where `folder_reads` answers for a folder, every note in it with a usual name is decided
    /// as the answer says, for the owner and for an identity, whatever the rules.
    #[test]
    fn a_folder_decides_its_notes_as_checking_each_would(
        always in prop::collection::vec(random_rule(), 0..2),
        read in prop::collection::vec(random_rule(), 0..3),
        write in prop::collection::vec(random_rule(), 0..2),
        deny in prop::collection::vec(random_rule(), 0..3),
        folder in prop::sample::select(vec!["", "A", "a", "b", "A/b", "Privé", "prive\u{301}", "Ａ/B"]),
        name in prop::sample::select(vec!["n.md", "N.md", "x.md", "privé.md", "Ｎ.md", "any-note.md", "ñ.md"]),
    ) {
        let parsed = |list: &[String]| list.iter().map(|raw| Rule::parse(raw).expect("rules parse")).collect::<Vec<_>>();
        let mut identities = BTreeMap::new();
        identities.insert("agent".to_owned(), IdentityRules { read: parsed(&read), write: parsed(&write), deny: parsed(&deny) });
        let policy = Policy::new(parsed(&always), identities);
        let path = if folder.is_empty() { name.to_owned() } else { format!("{folder}/{name}") };
        for principal in [Principal::Owner, who("agent"), who("stranger")] {
            if let Some(decided) = policy.folder_reads(&principal, folder) {
                prop_assert_eq!(policy.allows(&principal, Action::Read, &path), decided, "{:?} {}", principal, path);
            }
        }
    }
}

#[test]
fn a_rule_on_a_note_inside_a_folder_leaves_it_to_each_note() {
    let policy = policy();
    let reader = who("reader");
    assert_eq!(policy.folder_reads(&reader, "Journal"), None);
    assert_eq!(
        policy.folder_reads(&reader, "journal"),
        None,
        "deny rules match folded"
    );
    assert_eq!(policy.folder_reads(&reader, "Inbox"), Some(true));
    assert_eq!(policy.folder_reads(&reader, "PRIVE"), Some(false));
    assert_eq!(policy.folder_reads(&who("narrow"), "Notes"), None);
    assert_eq!(policy.folder_reads(&who("narrow"), "Projects"), Some(false));
    assert_eq!(
        policy.folder_reads(&who("narrow"), "Projects/Public/Hidden"),
        Some(false)
    );
    assert_eq!(
        policy.folder_reads(&who("narrow"), "Projects/Public"),
        Some(true),
        "a denied subfolder is not a note of the folder"
    );
    assert_eq!(policy.folder_reads(&Principal::Owner, ""), Some(true));
}
