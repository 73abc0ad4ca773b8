//! JSON Canvas rendered as markdown: the spec's sample against a hand-checked golden file, and
//! small canvases for nesting, ties, reading order, edges and malformed entries.

use std::path::PathBuf;

use quire::markdown::canvas::{CanvasError, CanvasFileTarget, render_canvas};

/// Renders `json` and compares the markdown with `expected`, printing both on a mismatch.
fn check(json: &str, expected: &str) {
    let rendered = render_canvas(json).unwrap_or_else(|error| panic!("{error}\n{json}"));
    assert_eq!(
        rendered.markdown, expected,
        "\n--- got ---\n{}",
        rendered.markdown
    );
}

#[test]
fn the_spec_sample_renders_as_the_hand_checked_golden_file() {
    let path = crate::support::shared_dir().join("oracles/jsoncanvas/sample.canvas");
    let Ok(json) = std::fs::read_to_string(&path) else {
        crate::support::skip_without_oracle("the JSON Canvas sample", &path);
        return;
    };
    let golden =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/files/canvas/sample.md");
    let expected = std::fs::read_to_string(golden).expect("the golden file");
    check(&json, &expected);
    let rendered = render_canvas(&json).expect("valid");
    assert_eq!(
        (rendered.nodes, rendered.edges, rendered.skipped),
        (5, 1, 0)
    );
    // File nodes in reading order: the group's logo first, then the two outside.
    let files: Vec<_> = rendered
        .file_targets
        .iter()
        .map(|target| target.file.as_str())
        .collect();
    assert_eq!(files, ["_site/logo.svg", "spec/1.0.md", "readme.md"]);
}

#[test]
fn nodes_belong_to_the_innermost_group_that_contains_them_whole() {
    let json = r#"{"nodes":[
        {"id":"outer","type":"group","label":"Outer","x":0,"y":0,"width":1000,"height":1000},
        {"id":"inner","type":"group","label":"Inner","x":100,"y":100,"width":400,"height":400},
        {"id":"deep","type":"text","text":"deep card","x":150,"y":150,"width":100,"height":50},
        {"id":"straddle","type":"text","text":"crosses Inner's edge","x":450,"y":120,"width":100,"height":50},
        {"id":"free","type":"text","text":"outside everything","x":-500,"y":2000,"width":100,"height":50},
        {"id":"late","type":"link","url":"https://example.com","x":600,"y":700,"width":100,"height":50}
    ]}"#;
    check(
        json,
        "Canvas: 6 nodes (2 groups), 0 edges.\n\
         \n\
         - Group: Outer\n\
         \x20 - Group: Inner\n\
         \x20   - Text: deep card\n\
         \x20 - Text: crosses Inner's edge\n\
         \x20 - Link: https://example.com\n\
         - Text: outside everything\n",
    );
}

#[test]
fn ties_are_broken_by_id() {
    // Two groups with the same rectangle: the smaller id is inside. A card in both is in "a".
    // Two cards at the same place are listed by id.
    let json = r#"{"nodes":[
        {"id":"b","type":"group","label":"B","x":0,"y":0,"width":100,"height":100},
        {"id":"a","type":"group","label":"A","x":0,"y":0,"width":100,"height":100},
        {"id":"z","type":"text","text":"z card","x":10,"y":10,"width":10,"height":10},
        {"id":"y","type":"text","text":"y card","x":10,"y":10,"width":10,"height":10},
        {"id":"w","type":"group","label":"W","x":200,"y":0,"width":100,"height":100},
        {"id":"v","type":"group","label":"V","x":150,"y":50,"width":100,"height":100},
        {"id":"u","type":"text","text":"in both V and W","x":210,"y":60,"width":10,"height":10}
    ]}"#;
    check(
        json,
        "Canvas: 7 nodes (4 groups), 0 edges.\n\
         \n\
         - Group: B\n\
         \x20 - Group: A\n\
         \x20   - Text: y card\n\
         \x20   - Text: z card\n\
         - Group: W (empty)\n\
         - Group: V\n\
         \x20 - Text: in both V and W\n",
    );
}

#[test]
fn reading_order_is_top_to_bottom_then_left_to_right() {
    let json = r#"{"nodes":[
        {"id":"4","type":"text","text":"fourth","x":0,"y":300,"width":10,"height":10},
        {"id":"2","type":"text","text":"second","x":50,"y":-10,"width":10,"height":10},
        {"id":"3","type":"text","text":"third","x":-50,"y":0,"width":10,"height":10},
        {"id":"1","type":"text","text":"first","x":0,"y":-10,"width":10,"height":10}
    ]}"#;
    check(
        json,
        "Canvas: 4 nodes, 0 edges.\n\n- Text: first\n- Text: second\n- Text: third\n- Text: fourth\n",
    );
}

#[test]
fn edges_name_their_nodes_and_show_direction_and_label() {
    let json = r##"{"nodes":[
        {"id":"n1","type":"text","text":"# Plan\nmore lines","x":0,"y":0,"width":10,"height":10},
        {"id":"n2","type":"file","file":"Notes/Goal.md","subpath":"#Why","x":100,"y":0,"width":10,"height":10},
        {"id":"n3","type":"group","x":0,"y":100,"width":10,"height":10},
        {"id":"n4","type":"text","text":"same","x":0,"y":200,"width":10,"height":10},
        {"id":"n5","type":"text","text":"same","x":100,"y":200,"width":10,"height":10},
        {"id":"n6","type":"text","text":"","x":0,"y":300,"width":10,"height":10}
    ],"edges":[
        {"id":"e1","fromNode":"n1","toNode":"n2","label":"leads to"},
        {"id":"e2","fromNode":"n2","toNode":"n3","fromEnd":"arrow"},
        {"id":"e3","fromNode":"n4","toNode":"n5","toEnd":"none"},
        {"id":"e4","fromNode":"n5","toNode":"n6","fromEnd":"arrow","toEnd":"none","color":"2"}
    ]}"##;
    check(
        json,
        "Canvas: 6 nodes (1 group), 4 edges.\n\
         \n\
         - Text:\n\
         \x20 # Plan\n\
         \x20 more lines\n\
         - File: Notes/Goal.md#Why\n\
         - Group: (untitled) (empty)\n\
         - Text: same\n\
         - Text: same\n\
         - Text: (empty)\n\
         \n\
         Edges:\n\
         - \"Plan\" → Notes/Goal.md#Why: leads to\n\
         - Notes/Goal.md#Why ↔ untitled group\n\
         - \"same\" [n4] — \"same\" [n5]\n\
         - \"same\" [n5] ← (empty text)\n",
    );
    let rendered = render_canvas(json).expect("valid");
    assert_eq!(
        rendered.file_targets,
        [CanvasFileTarget {
            file: "Notes/Goal.md".to_owned(),
            subpath: Some("#Why".to_owned())
        }]
    );
}

#[test]
fn malformed_entries_are_skipped_and_counted() {
    let json = r##"{"nodes":[
        {"id":"ok","type":"text","text":"kept","x":0,"y":0,"width":10,"height":10,"futureField":{"a":1}},
        {"type":"text","text":"no id","x":0,"y":0,"width":10,"height":10},
        {"id":"bad-x","type":"text","text":"x is a string","x":"0","y":0,"width":10,"height":10},
        {"id":"kind","type":"sticker","x":0,"y":0,"width":10,"height":10},
        {"id":"ok","type":"text","text":"duplicate id","x":0,"y":0,"width":10,"height":10},
        {"id":"no-file","type":"file","x":0,"y":0,"width":10,"height":10},
        {"id":"negative","type":"text","text":"negative width","x":0,"y":0,"width":-1,"height":10},
        42,
        {"id":"f","type":"file","file":"a.png","x":0,"y":50,"width":10,"height":10,"color":"#ff0000"}
    ],"edges":[
        {"id":"e1","fromNode":"ok","toNode":"f"},
        {"id":"e2","fromNode":"ok","toNode":"bad-x"},
        {"fromNode":"ok","toNode":"f"},
        "edge"
    ]}"##;
    check(
        json,
        "Canvas: 2 nodes, 1 edge. 10 entries skipped as malformed.\n\
         \n\
         - Text: kept\n\
         - File (#ff0000): a.png\n\
         \n\
         Edges:\n\
         - \"kept\" → a.png\n",
    );
    let rendered = render_canvas(json).expect("lenient");
    assert_eq!(
        (rendered.nodes, rendered.edges, rendered.skipped),
        (2, 1, 10)
    );
    check(
        r#"{"nodes":{"id":"x"},"edges":null}"#,
        "Canvas: 0 nodes, 0 edges. 1 entry skipped as malformed.\n",
    );
    check("{}", "Canvas: 0 nodes, 0 edges.\n");
}

#[test]
fn text_that_is_not_a_canvas_is_an_error() {
    let error = render_canvas("{\"nodes\": [").expect_err("truncated");
    assert_eq!(error.code(), "invalid_canvas");
    assert!(
        matches!(error, CanvasError::NotJson { line: 1, .. }),
        "{error}"
    );
    assert_eq!(render_canvas("[1, 2]"), Err(CanvasError::NotAnObject));
}

#[test]
fn deeply_nested_groups_render_without_recursion() {
    let depth = 2000;
    let nodes: Vec<String> = (0..depth)
        .map(|level| {
            let inset = level * 5;
            let size = 100_000 - 2 * inset;
            format!(
                r#"{{"id":"g{level:05}","type":"group","label":"L{level}","x":{inset},"y":{inset},"width":{size},"height":{size}}}"#
            )
        })
        .collect();
    let json = format!(r#"{{"nodes":[{}]}}"#, nodes.join(","));
    let rendered = render_canvas(&json).expect("valid");
    let last = rendered.markdown.lines().last().expect("lines");
    assert_eq!(
        last,
        format!("{}- Group: L{} (empty)", "  ".repeat(depth - 1), depth - 1)
    );
}
