//! Links: `note_links` never panics and reports true positions; a link rewritten to a new path
//! (as a move does) reads back with that path and its embed flag and `#subpath` kept, and no other
//! link changes; a move of a file no link names rewrites nothing, so the text stays as it was.

use quire::markdown::links::{
    LinkForm, Resolver, canvas_links, note_links, strip_md, with_new_path,
};

const NEW_PATH: &str = "Moved/New name.md";
const ABSENT: &str = "zz-absent/Qx9 target.md";
/// Rewrites tried per input: enough to cover each form, few enough to stay fast.
const MAX_REWRITES: usize = 8;

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = canvas_links(text);
    let links = note_links(text);
    for link in &links {
        assert!(link.start <= link.end && link.end <= text.len());
        let Some(span) = text.get(link.start..link.end) else {
            panic!(
                "link span {}..{} is not on char boundaries",
                link.start, link.end
            );
        };
        if matches!(link.form, LinkForm::Wiki | LinkForm::Markdown) {
            assert_eq!(span, link.original);
            let before = &text[..link.start];
            assert_eq!(
                link.line,
                1 + before.matches('\n').count(),
                "line of {link:?}"
            );
            let line_start = before.rfind('\n').map_or(0, |at| at + 1);
            assert_eq!(
                link.column,
                before[line_start..].chars().count(),
                "column of {link:?}"
            );
        }
    }

    // A move of a file that no link names: nothing resolves to it, so nothing is rewritten.
    if !text.to_lowercase().contains("qx9") {
        let mut paths: Vec<String> = links
            .iter()
            .filter(|link| !link.path().is_empty())
            .map(|link| format!("{}.md", strip_md(link.path().trim_start_matches('/'))))
            .collect();
        paths.push(ABSENT.to_owned());
        let resolver = Resolver::new(paths.iter().cloned());
        for link in &links {
            assert_ne!(
                resolver.resolve(link.path(), "Notes/source.md"),
                Some(ABSENT),
                "{link:?} resolves to a file it does not name"
            );
        }
    }

    for (index, link) in links.iter().enumerate().take(MAX_REWRITES) {
        if !matches!(link.form, LinkForm::Wiki | LinkForm::Markdown) {
            continue;
        }
        // A destination holding comment, code or math markers is part of the note's structure
        // (`%%` inside it opens a comment for the rest of the note); replacing it changes what
        // else is read, which a move accepts. Those are checked for not panicking only.
        // So is a link whose own brackets do not pair (`![[[Image.png]]`, the target `[Image.png`):
        // the odd one counts toward an enclosing `[text](...)`, and a new path without it changes
        // where that text ends. Obsidian allows no `[` or `]` in a file name, so a move never meets
        // such a link.
        // Nor a target holding a bracket at all (`[[[kalt](<a bilink]]`): such a wikilink may sit
        // inside a markdown destination (`![alt](<x [[[kalt](<a bilink]].png>)`), and rewriting it
        // rewrites that destination too. Nor one holding `<` or `>`, which Obsidian allows in no
        // file name either: they take part in the HTML around a link (in `<span class="x![a](b<)y>`
        // the `<` of the path keeps the span from being a tag; a path without it makes one, which
        // hides the link).
        let unpaired = link.original.matches('[').count() != link.original.matches(']').count();
        if unpaired
            || link.path().contains(['[', ']', '<', '>'])
            || ["%%", "`", "$", "<!--", "-->", "\n"]
                .iter()
                .any(|marker| link.original.contains(marker))
        {
            let _ = with_new_path(link.form, &link.original, NEW_PATH);
            continue;
        }
        let Some(replacement) = with_new_path(link.form, &link.original, NEW_PATH) else {
            // `[[|#h|a]]` is the link `|#h|a`; behind a new path its `|` would start an alias,
            // so such a link is refused (a move then reports it) rather than changed in meaning.
            assert!(
                link.form == LinkForm::Wiki && link.subpath().is_some_and(|s| s.contains('|')),
                "with_new_path refused a link note_links found: {link:?}"
            );
            continue;
        };
        let mut rewritten = String::with_capacity(text.len() + replacement.len());
        rewritten.push_str(&text[..link.start]);
        rewritten.push_str(&replacement);
        rewritten.push_str(&text[link.end..]);
        let after = note_links(&rewritten);
        assert_eq!(
            after.len(),
            links.len(),
            "rewriting {:?} to {replacement:?} changed the number of links",
            link.original
        );
        let moved = &after[index];
        assert_eq!(
            moved.path(),
            NEW_PATH,
            "{:?} became {replacement:?}",
            link.original
        );
        assert_eq!(moved.embed, link.embed);
        assert_eq!(moved.form, link.form);
        assert_eq!(
            moved.subpath().map(str::trim),
            link.subpath().map(str::trim),
            "{:?} became {replacement:?}",
            link.original
        );
        for (other, again) in links.iter().zip(&after) {
            if other.start != link.start {
                assert_eq!(
                    other.original, again.original,
                    "rewriting {:?} changed another link",
                    link.original
                );
            }
        }
    }
}
