//! JSON Canvas 1.0 (`.canvas`, Obsidian's boards) rendered as markdown an agent can follow: the
//! nodes as a nested list in reading order, grouped the way the board shows them, then the edges
//! between them by name. Pure: it takes the file's text and never fails on a malformed entry.
//!
//! Rules (the spec is `../shared/oracles/jsoncanvas/spec-1.0.md`):
//! - A node belongs to the innermost group whose rectangle contains its whole rectangle: the
//!   smallest such group by area, then the smallest id. Of groups with identical rectangles the one
//!   with the smaller id is inside, so nesting is always a tree.
//! - Siblings are in reading order: top to bottom, then left to right, then by id.
//! - A node is named by its kind: a text card by its first line, a file by its path (and
//!   subpath), a link by its URL, a group by its label. Names shared by several nodes get the id.
//! - Unknown fields are ignored. An entry missing a required field, with a wrong type, an unknown
//!   node type, a duplicate id, or an edge to a node that is not there, is skipped and counted.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// A file node's target, for the link graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanvasFileTarget {
    /// The vault path as written in the node.
    pub file: String,
    /// A heading or block (`#Heading`, `#^block`), when the node points into a note.
    pub subpath: Option<String>,
}

/// A canvas as markdown, with what the rendering skipped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedCanvas {
    pub markdown: String,
    /// File nodes' targets in reading order (one per node, repeats kept).
    pub file_targets: Vec<CanvasFileTarget>,
    pub nodes: usize,
    pub edges: usize,
    /// Nodes and edges left out because they were malformed.
    pub skipped: usize,
}

/// A canvas whose text is not a JSON object has nothing to render.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CanvasError {
    #[error("the canvas is not valid JSON (line {line}, column {column}): {message}")]
    NotJson {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the canvas is not a JSON object with `nodes` and `edges`")]
    NotAnObject,
}

impl CanvasError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        "invalid_canvas"
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Text(String),
    File {
        file: String,
        subpath: Option<String>,
    },
    Link(String),
    Group(Option<String>),
}

#[derive(Clone, Debug)]
struct Node {
    id: String,
    kind: Kind,
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    color: Option<String>,
}

impl Node {
    fn contains(&self, other: &Node) -> bool {
        self.x <= other.x
            && self.y <= other.y
            && other.x + other.width <= self.x + self.width
            && other.y + other.height <= self.y + self.height
    }

    fn same_rect(&self, other: &Node) -> bool {
        self.x == other.x
            && self.y == other.y
            && self.width == other.width
            && self.height == other.height
    }

    fn area(&self) -> f64 {
        self.width * self.height
    }

    fn reading_order(&self, other: &Node) -> Ordering {
        self.y
            .total_cmp(&other.y)
            .then(self.x.total_cmp(&other.x))
            .then_with(|| self.id.cmp(&other.id))
    }
}

struct Edge {
    id: String,
    from: usize,
    to: usize,
    from_arrow: bool,
    to_arrow: bool,
    label: Option<String>,
}

/// Renders the canvas `json` as markdown.
pub fn render_canvas(json: &str) -> Result<RenderedCanvas, CanvasError> {
    let value: Value = serde_json::from_str(json).map_err(|error| CanvasError::NotJson {
        line: error.line(),
        column: error.column(),
        message: error.to_string(),
    })?;
    let Value::Object(canvas) = value else {
        return Err(CanvasError::NotAnObject);
    };
    let mut skipped = 0;
    let (nodes, mut edges) = nodes_and_edges(&canvas, &mut skipped);
    let (roots, children) = nesting(&nodes);
    let names = display_names(&nodes);
    let mut markdown = summary(&nodes, edges.len(), skipped);
    let file_targets = render_tree(&mut markdown, &nodes, &roots, &children);
    if !edges.is_empty() {
        render_edges(&mut markdown, &nodes, &mut edges, &names);
    }
    Ok(RenderedCanvas {
        markdown,
        file_targets,
        nodes: nodes.len(),
        edges: edges.len(),
        skipped,
    })
}

/// The canvas's valid nodes (the first of each id) and the edges between them; each entry left
/// out counts in `skipped`.
fn nodes_and_edges(canvas: &Map<String, Value>, skipped: &mut usize) -> (Vec<Node>, Vec<Edge>) {
    let mut nodes: Vec<Node> = Vec::new();
    let mut seen_ids = HashSet::new();
    for entry in array(canvas, "nodes", skipped) {
        match parse_node(entry) {
            Some(node) if seen_ids.insert(node.id.clone()) => nodes.push(node),
            _ => *skipped += 1,
        }
    }
    let index_of: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(index, node)| (node.id.as_str(), index))
        .collect();
    let mut edges = Vec::new();
    for entry in array(canvas, "edges", skipped) {
        match parse_edge(entry, &index_of) {
            Some(edge) => edges.push(edge),
            None => *skipped += 1,
        }
    }
    (nodes, edges)
}

/// The top-level nodes and each node's children (by the groups that contain them), each list
/// in reading order.
fn nesting(nodes: &[Node]) -> (Vec<usize>, Vec<Vec<usize>>) {
    let parents = parents(nodes);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (index, parent) in parents.iter().enumerate() {
        match parent {
            Some(parent) => children[*parent].push(index),
            None => roots.push(index),
        }
    }
    let by_reading_order = |a: &usize, b: &usize| nodes[*a].reading_order(&nodes[*b]);
    roots.sort_by(by_reading_order);
    for list in &mut children {
        list.sort_by(by_reading_order);
    }
    (roots, children)
}

/// Every node as a nested list item, groups before their contents; the file nodes' targets.
fn render_tree(
    markdown: &mut String,
    nodes: &[Node],
    roots: &[usize],
    children: &[Vec<usize>],
) -> Vec<CanvasFileTarget> {
    let mut file_targets = Vec::new();
    // An explicit stack instead of recursion: a hostile canvas may nest thousands of groups.
    let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&index| (index, 0)).collect();
    if !stack.is_empty() {
        markdown.push('\n');
    }
    while let Some((index, depth)) = stack.pop() {
        let node = &nodes[index];
        render_node(markdown, node, depth, children[index].is_empty());
        if let Kind::File { file, subpath } = &node.kind {
            file_targets.push(CanvasFileTarget {
                file: file.clone(),
                subpath: subpath.clone(),
            });
        }
        stack.extend(
            children[index]
                .iter()
                .rev()
                .map(|&child| (child, depth + 1)),
        );
    }
    file_targets
}

/// The `Edges:` list, in the reading order of their ends.
fn render_edges(markdown: &mut String, nodes: &[Node], edges: &mut [Edge], names: &[String]) {
    edges.sort_by(|a, b| {
        nodes[a.from]
            .reading_order(&nodes[b.from])
            .then_with(|| nodes[a.to].reading_order(&nodes[b.to]))
            .then_with(|| a.id.cmp(&b.id))
    });
    markdown.push_str("\nEdges:\n");
    for edge in edges.iter() {
        let arrow = match (edge.from_arrow, edge.to_arrow) {
            (false, true) => "→",
            (true, false) => "←",
            (true, true) => "↔",
            (false, false) => "—",
        };
        markdown.push_str(&format!(
            "- {} {arrow} {}",
            names[edge.from], names[edge.to]
        ));
        if let Some(label) = &edge.label {
            markdown.push_str(&format!(": {}", one_line(label)));
        }
        markdown.push('\n');
    }
}

/// The array under `key`; absent is empty, anything but an array counts as one skipped entry.
fn array<'a>(canvas: &'a Map<String, Value>, key: &str, skipped: &mut usize) -> &'a [Value] {
    match canvas.get(key) {
        None | Some(Value::Null) => &[],
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            *skipped += 1;
            &[]
        }
    }
}

fn parse_node(entry: &Value) -> Option<Node> {
    let object = entry.as_object()?;
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_f64)
            .filter(|n| n.is_finite())
    };
    let kind = match object.get("type")?.as_str()? {
        "text" => Kind::Text(text("text")?),
        "file" => Kind::File {
            file: text("file")?,
            subpath: text("subpath"),
        },
        "link" => Kind::Link(text("url")?),
        "group" => Kind::Group(text("label")),
        _ => return None,
    };
    let (width, height) = (number("width")?, number("height")?);
    if width < 0.0 || height < 0.0 {
        return None;
    }
    Some(Node {
        id: text("id")?,
        kind,
        x: number("x")?,
        y: number("y")?,
        width,
        height,
        color: text("color"),
    })
}

fn parse_edge(entry: &Value, index_of: &HashMap<&str, usize>) -> Option<Edge> {
    let object = entry.as_object()?;
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    let end = |key: &str, default: bool| match text(key) {
        Some("arrow") => true,
        Some("none") => false,
        _ => default,
    };
    Some(Edge {
        id: text("id")?.to_owned(),
        from: *index_of.get(text("fromNode")?)?,
        to: *index_of.get(text("toNode")?)?,
        from_arrow: end("fromEnd", false),
        to_arrow: end("toEnd", true),
        label: text("label")
            .filter(|label| !label.trim().is_empty())
            .map(str::to_owned),
    })
}

/// Each node's innermost containing group, by the rules in the module documentation.
fn parents(nodes: &[Node]) -> Vec<Option<usize>> {
    let groups: Vec<usize> = (0..nodes.len())
        .filter(|&index| matches!(nodes[index].kind, Kind::Group(_)))
        .collect();
    (0..nodes.len())
        .map(|index| {
            let node = &nodes[index];
            groups
                .iter()
                .copied()
                .filter(|&group| {
                    let candidate = &nodes[group];
                    group != index
                        && candidate.contains(node)
                        // Identical rectangles: the smaller id is inside, so a node is never its
                        // own ancestor.
                        && (!candidate.same_rect(node) || candidate.id > node.id)
                })
                .min_by(|&a, &b| {
                    nodes[a]
                        .area()
                        .total_cmp(&nodes[b].area())
                        .then_with(|| nodes[a].id.cmp(&nodes[b].id))
                })
        })
        .collect()
}

/// Names for the edge list; a name several nodes share gets the node's id.
fn display_names(nodes: &[Node]) -> Vec<String> {
    let plain: Vec<String> = nodes.iter().map(plain_name).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for name in &plain {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    plain
        .iter()
        .zip(nodes)
        .map(|(name, node)| {
            if counts.get(name.as_str()).copied().unwrap_or(0) > 1 {
                format!("{name} [{}]", node.id)
            } else {
                name.clone()
            }
        })
        .collect()
}

fn plain_name(node: &Node) -> String {
    match &node.kind {
        Kind::Text(text) => {
            let first = text.lines().map(str::trim).find(|line| !line.is_empty());
            match first {
                Some(line) => {
                    let line = line.trim_start_matches('#').trim();
                    format!("\"{}\"", shorten(line, 60))
                }
                None => "(empty text)".to_owned(),
            }
        }
        Kind::File { file, subpath } => format!("{file}{}", subpath.as_deref().unwrap_or("")),
        Kind::Link(url) => url.clone(),
        Kind::Group(Some(label)) if !label.trim().is_empty() => {
            format!("group \"{}\"", one_line(label))
        }
        Kind::Group(_) => "untitled group".to_owned(),
    }
}

fn summary(nodes: &[Node], edges: usize, skipped: usize) -> String {
    let groups = nodes
        .iter()
        .filter(|node| matches!(node.kind, Kind::Group(_)))
        .count();
    let mut line = format!("Canvas: {}", plural(nodes.len(), "node"));
    if groups > 0 {
        line.push_str(&format!(" ({})", plural(groups, "group")));
    }
    line.push_str(&format!(", {}.", plural(edges, "edge")));
    if skipped > 0 {
        line.push_str(&format!(
            " {} skipped as malformed.",
            plural(skipped, "entry")
        ));
    }
    line.push('\n');
    line
}

fn plural(count: usize, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "entry") => format!("{count} entries"),
        _ => format!("{count} {noun}s"),
    }
}

fn render_node(out: &mut String, node: &Node, depth: usize, empty: bool) {
    let indent = "  ".repeat(depth);
    let color = node
        .color
        .as_deref()
        .map(color_name)
        .map(|color| format!(" ({color})"));
    let color = color.as_deref().unwrap_or("");
    match &node.kind {
        Kind::Text(text) => {
            let lines: Vec<&str> = text
                .trim_end()
                .lines()
                .map(|line| line.trim_end())
                .collect();
            match lines.as_slice() {
                [] => out.push_str(&format!("{indent}- Text{color}: (empty)\n")),
                [line] => out.push_str(&format!("{indent}- Text{color}: {line}\n")),
                _ => {
                    out.push_str(&format!("{indent}- Text{color}:\n"));
                    for line in lines {
                        if line.is_empty() {
                            out.push('\n');
                        } else {
                            out.push_str(&format!("{indent}  {line}\n"));
                        }
                    }
                }
            }
        }
        Kind::File { file, subpath } => {
            let subpath = subpath.as_deref().unwrap_or("");
            out.push_str(&format!("{indent}- File{color}: {file}{subpath}\n"));
        }
        Kind::Link(url) => out.push_str(&format!("{indent}- Link{color}: {url}\n")),
        Kind::Group(label) => {
            let label = label
                .as_deref()
                .map(one_line)
                .filter(|label| !label.is_empty());
            let label = label.unwrap_or_else(|| "(untitled)".to_owned());
            let empty = if empty { " (empty)" } else { "" };
            out.push_str(&format!("{indent}- Group{color}: {label}{empty}\n"));
        }
    }
}

/// The spec's six preset colours by name; any other value (a hex colour) as written.
fn color_name(color: &str) -> &str {
    match color {
        "1" => "red",
        "2" => "orange",
        "3" => "yellow",
        "4" => "green",
        "5" => "cyan",
        "6" => "purple",
        other => other,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(max_chars - 1).collect();
    short.push('…');
    short
}
