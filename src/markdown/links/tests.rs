//! The link grammar, positions, resolution and rewrites, each against hand-written cases.

use super::*;

fn summary(text: &str) -> Vec<(bool, String, String, usize, usize)> {
    note_links(text)
        .into_iter()
        .map(|link| (link.embed, link.link, link.display, link.line, link.column))
        .collect()
}

#[test]
fn wikilinks_aliases_and_embeds() {
    assert_eq!(
        summary("a [[b|c]] ![[d#e]] [[|x]] [[]] [[ f ]] [[g\\|h]]"),
        vec![
            (false, "b".into(), "c".into(), 1, 2),
            (true, "d#e".into(), "d > e".into(), 1, 10),
            (false, "|x".into(), "|x".into(), 1, 19),
            (false, "f".into(), "f".into(), 1, 31),
            (false, "g".into(), "h".into(), 1, 39),
        ]
    );
}

#[test]
fn markdown_links_skip_urls_and_code() {
    assert_eq!(
        summary(
            "[a](b%20c.md#h) [x](https://e.org) ![i](<p q.png>) `[[no]]`\n\n```\n[[no]]\n```\n$[[no]]$ <!-- [[no]] --> [t](d \"title\")"
        ),
        vec![
            (false, "b c.md#h".into(), "a".into(), 1, 0),
            (true, "p q.png".into(), "i".into(), 1, 35),
            (false, "d".into(), "t".into(), 6, 25),
        ]
    );
}

#[test]
fn a_property_link_not_written_as_read_has_an_empty_span() {
    // Found by fuzzing: a quoted value folded over lines reads as `[[A B]]`, which the block
    // does not hold; its span was 0..len, cutting a character in two and aiming a move's
    // rewrite at the start of the note.
    let text = "---\nüp: \"[[Sam\n  Ortiz]]\"\n---\nbody";
    let links = note_links(text);
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].link, "Sam Ortiz");
    assert_eq!((links[0].start, links[0].end), (0, 0));
}

#[test]
fn a_rewritten_destination_keeps_a_subpath_that_closes_a_parenthesis_of_the_old_path() {
    // Found by fuzzing: `(` in the old path pairs with the `)` that ends the subpath; after
    // the path is replaced that `)` would end the destination early.
    let original = "[x](Note](sec.md#h))";
    let link = &note_links(original)[0];
    assert_eq!(link.subpath(), Some("#h)"));
    let rewritten = with_new_path(LinkForm::Markdown, original, "New.md").expect("rewrite");
    assert_eq!(rewritten, "[x](New.md#h\\))");
    let again = &note_links(&rewritten)[0];
    assert_eq!((again.path(), again.subpath()), ("New.md", Some("#h)")));
    assert_eq!(again.end, rewritten.len());
}

#[test]
fn property_links_have_keys_and_lines() {
    let links = note_links("---\nup: \"[[Home]]\"\nrel:\n  - \"[[A|b]]\"\n---\nbody");
    let keys: Vec<_> = links
        .iter()
        .map(|link| (link.key.clone(), link.link.clone(), link.line))
        .collect();
    assert_eq!(
        keys,
        vec![
            (Some("up".into()), "Home".into(), 2),
            (Some("rel.0".into()), "A".into(), 4)
        ]
    );
}

#[test]
fn canvas_file_nodes_and_text_links() {
    let canvas = r##"{"nodes":[{"id":"1","type":"file","file":"A/B.md","subpath":"#H"},{"id":"2","type":"text","text":"see [[C]]\n"}]}"##;
    let links = canvas_links(canvas);
    assert_eq!(links.len(), 2);
    let twice = r#"{"nodes":[{"id":"x","type":"text","text":"a\n[[C]] b [[C]]"}]}"#;
    let spans: Vec<_> = canvas_links(twice)
        .iter()
        .map(|link| (link.start, &twice[link.start..link.end]))
        .collect();
    assert_eq!(spans, vec![(45, "[[C]]"), (53, "[[C]]")]);
    assert_eq!(links[0].link, "A/B.md#H");
    assert_eq!(&canvas[links[0].start..links[0].end], "A/B.md");
    assert_eq!(&canvas[links[1].start..links[1].end], "[[C]]");
}

#[test]
fn rewriting_keeps_everything_but_the_path() {
    let cases = [
        (
            LinkForm::Wiki,
            "[[Old#H|alias]]",
            "New Name",
            "[[New Name#H|alias]]",
        ),
        (LinkForm::Wiki, "![[ Old ]]", "F/New", "![[F/New]]"),
        (LinkForm::Wiki, "[[Old\\|cell]]", "New", "[[New\\|cell]]"),
        (
            LinkForm::Markdown,
            "[t](Old%20One.md#^b \"T\")",
            "Sub/New One.md",
            "[t](Sub/New%20One.md#^b \"T\")",
        ),
        (
            LinkForm::Markdown,
            "![a](<Old One.png>)",
            "New One.png",
            "![a](<New One.png>)",
        ),
        (
            LinkForm::Markdown,
            "[c](Caf%C3%A9.md)",
            "Thé.md",
            "[c](Th%C3%A9.md)",
        ),
        (LinkForm::Markdown, "[c](Café.md)", "Thé.md", "[c](Thé.md)"),
        // Found by fuzzing (fuzz/ links target): an encoded `#` starts the subpath, as the
        // parser reads it, so the rewrite keeps it.
        (
            LinkForm::Markdown,
            "[d](Old%23Part/x.md)",
            "New.md",
            "[d](New.md%23Part/x.md)",
        ),
    ];
    for (form, original, path, expected) in cases {
        assert_eq!(
            with_new_path(form, original, path).as_deref(),
            Some(expected),
            "{original}"
        );
    }
    // Found by fuzzing: `[[|#h|a]]` is the link `|#h|a` (a leading `|` separates nothing).
    // Behind a new path its `|` would start an alias and the subpath would lose `|a`, so the
    // link is refused rather than rewritten into another link.
    let odd = note_links("[[|#h|a]]");
    assert_eq!(odd[0].subpath(), Some("#h|a"));
    assert_eq!(with_new_path(LinkForm::Wiki, "[[|#h|a]]", "New"), None);
    assert_eq!(
        with_new_path(LinkForm::Wiki, "[[|x]]", "New").as_deref(),
        Some("[[New]]")
    );
    assert_eq!(
        path_text("A/B/N.md", "A/C/x.md", PathStyle::Relative, true),
        "../B/N.md"
    );
    assert_eq!(
        path_text("A/N.md", "A/x.md", PathStyle::Relative, false),
        "N"
    );
    assert_eq!(
        path_text("A/N.png", "x.md", PathStyle::Bare, false),
        "N.png"
    );
    assert_eq!(
        path_style("../B/N.md", "A/x.md", "B/N.md"),
        PathStyle::Relative
    );
    assert_eq!(
        path_style("Sub/N", "A/x.md", "A/Sub/N.md"),
        PathStyle::Relative
    );
    assert_eq!(path_style("B/N", "A/x.md", "B/N.md"), PathStyle::Absolute);
}

#[test]
fn resolution_order() {
    let resolver = Resolver::new([
        "Note.md",
        "dir1/Note.md",
        "dir2/Note.md",
        "dir2/sub/Only.md",
        "img/a.png",
    ]);
    assert_eq!(resolver.resolve("Note", "dir1/x.md"), Some("dir1/Note.md"));
    assert_eq!(resolver.resolve("note", "other/x.md"), Some("Note.md"));
    assert_eq!(resolver.resolve("dir2/Note", "x.md"), Some("dir2/Note.md"));
    assert_eq!(
        resolver.resolve("sub/only", "x.md"),
        Some("dir2/sub/Only.md")
    );
    assert_eq!(resolver.resolve("b/only", "x.md"), None);
    assert_eq!(resolver.resolve("A.PNG", "x.md"), Some("img/a.png"));
    assert_eq!(resolver.resolve("../Note.md", "dir2/x.md"), Some("Note.md"));
    assert_eq!(resolver.resolve("", "dir2/Note.md"), Some("dir2/Note.md"));
    assert_eq!(resolver.resolve("missing", "x.md"), None);
}

/// Units that no closer follows, each repeated 100,000 times on one line (up to 700 KB), then a
/// link that must still be found where it is. Each took seconds to minutes while every opener
/// scanned to the end of its line (issue 47); a regression shows up as these tests hanging,
/// not as a wrong answer.
#[test]
fn r47_openers_without_closers_on_long_lines_find_no_link_and_the_link_after_them() {
    const TIMES: usize = 100_000;
    for unit in [
        "[a](", "[[", "![", "[", "[a", "![[", "[a](<", "[a](b (", "[a](((", "[[a|", "$a ",
    ] {
        let run = unit.repeat(TIMES);
        assert_eq!(note_links(&run), Vec::new(), "{unit:?}");
        for (link, target) in [
            ("[[b]]", "b"),
            ("[c](d.md)", "d.md"),
            ("![e](f.png)", "f.png"),
        ] {
            let text = format!("{run} {link}");
            let found = note_links(&text);
            let column = run.chars().count() + 1;
            let summary: Vec<_> = found
                .iter()
                .map(|link| (link.link.as_str(), link.line, link.column))
                .collect();
            assert_eq!(summary, vec![(target, 1, column)], "{unit:?} then {link}");
            assert_eq!(found[0].original, link);
        }
    }
    // An angle destination whose `>` lies at the end of the line holds every later `<`.
    let angles = format!("{}>", "[a](<b ".repeat(TIMES));
    assert_eq!(note_links(&angles), Vec::new());
}

#[test]
fn r47_a_line_of_many_links_counts_each_column() {
    const TIMES: usize = 100_000;
    for (unit, target, embed) in [
        ("[[a]]", "a", false),
        ("[a](b)", "b", false),
        ("![c](d)", "d", true),
    ] {
        let text = format!("é {}", unit.repeat(TIMES));
        let found = note_links(&text);
        assert_eq!(found.len(), TIMES, "{unit:?}");
        for (index, link) in found.iter().enumerate().step_by(9_999) {
            assert_eq!((link.link.as_str(), link.embed), (target, embed));
            assert_eq!(link.column, 2 + index * unit.len(), "{unit:?} #{index}");
            assert_eq!(&text[link.start..link.end], unit);
        }
    }
}

#[test]
fn r47_a_block_of_many_property_links_places_each_on_its_own_line() {
    const TIMES: usize = 20_000;
    let list = format!("---\nk:\n{}---\nbody", "  - \"[[a]]\"\n".repeat(TIMES));
    let found = note_links(&list);
    assert_eq!(found.len(), TIMES);
    for (index, link) in found.iter().enumerate() {
        assert_eq!((link.line, link.column), (3 + index, 5), "#{index}");
        assert_eq!(link.key.as_deref(), Some(format!("k.{index}").as_str()));
    }
    let flow = format!("---\nk: [{}]\n---\nbody", "\"[[a]]\", ".repeat(TIMES));
    let found = note_links(&flow);
    assert_eq!(found.len(), TIMES);
    for (index, link) in found.iter().enumerate() {
        assert_eq!((link.line, link.column), (2, 5 + 9 * index), "#{index}");
    }
}

#[test]
fn r47_canvas_nodes_and_their_links_are_placed_in_one_pass() {
    // A text node of 40,000 links took 2 s, each link's escaped prefix and column counted from
    // the start; 10,000 nodes the file escapes otherwise took 0.7 s, each searched to the end.
    const LINKS: usize = 40_000;
    let canvas = format!(
        r#"{{"nodes":[{{"id":"1","type":"text","text":"\"{}"}}]}}"#,
        "[[a]]".repeat(LINKS)
    );
    let found = canvas_links(&canvas);
    assert_eq!(found.len(), LINKS);
    let first = canvas.find("[[a]]").expect("a link");
    for (index, link) in found.iter().enumerate().step_by(3_999) {
        assert_eq!(link.start, first + 5 * index);
        assert_eq!((link.line, link.column), (1, first + 5 * index));
        assert_eq!(&canvas[link.start..link.end], "[[a]]");
    }
    const NODES: usize = 10_000;
    let nodes: Vec<String> = (0..NODES)
        .map(|index| format!(r#"{{"id":"{index}","type":"text","text":"\u0041 [[b{index}]]"}}"#))
        .chain(std::iter::once(
            r#"{"id":"f","type":"file","file":"A/B.md"}"#.to_owned(),
        ))
        .collect();
    let canvas = format!("{{\"nodes\":[\n{}\n]}}", nodes.join(",\n"));
    let found = canvas_links(&canvas);
    assert_eq!(found.len(), NODES + 1);
    // Written `\u0041`, not as serde_json writes `A`: no node's string is found, so each link
    // has an empty span, as before; the file node after them still is.
    assert!(
        found[..NODES]
            .iter()
            .all(|link| (link.start, link.end) == (0, 0))
    );
    let file = &found[NODES];
    assert_eq!(&canvas[file.start..file.end], "A/B.md");
    assert_eq!(file.line, NODES + 2);
}
