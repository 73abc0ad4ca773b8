//! The link graph as stored in the index: each note's and canvas's links as written, and the list
//! of every file they can resolve to.
//!
//! Links are stored unresolved and resolved when asked (`LinkGraph`), with Obsidian's rules from
//! `markdown::links`, against the files the index holds at that moment. So a note created, moved
//! or deleted changes every link's resolution at once, without rewriting any other row.

use rusqlite::{Connection, Row, params_from_iter};

use crate::markdown::links::{LinkForm, Resolver};

/// One stored link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLink {
    /// The note or canvas that holds the link.
    pub source: String,
    pub form: LinkForm,
    pub embed: bool,
    /// Obsidian's `link`: path plus `#subpath`.
    pub link: String,
    pub display: String,
    pub original: String,
    /// 1-based line and 0-based character column.
    pub line: u64,
    pub column: u64,
    /// Byte range of `original` in the source file.
    pub start: usize,
    pub end: usize,
}

impl StoredLink {
    /// The path part of the link (before `#`).
    pub fn path(&self) -> &str {
        crate::markdown::links::link_path(&self.link)
    }
}

/// Every file the index knows (notes and others), with a resolver over them.
#[derive(Debug, Clone, Default)]
pub struct LinkGraph {
    pub paths: Vec<String>,
    pub resolver: Resolver,
}

impl LinkGraph {
    /// The file a link resolves to, if any.
    pub fn resolve(&self, link: &StoredLink) -> Option<&str> {
        self.resolver.resolve(link.path(), &link.source)
    }
}

const COLUMNS: &str =
    "source, form, embed, link, display, original, line, col, start, end FROM links";

fn stored_link(row: &Row<'_>) -> rusqlite::Result<StoredLink> {
    let form: String = row.get(1)?;
    Ok(StoredLink {
        source: row.get(0)?,
        form: match form.as_str() {
            "markdown" => LinkForm::Markdown,
            "property" => LinkForm::Property,
            "canvas" => LinkForm::CanvasFile,
            _ => LinkForm::Wiki,
        },
        embed: row.get(2)?,
        link: row.get(3)?,
        display: row.get(4)?,
        original: row.get(5)?,
        line: row.get::<_, i64>(6)?.max(0) as u64,
        column: row.get::<_, i64>(7)?.max(0) as u64,
        start: row.get::<_, i64>(8)?.max(0) as usize,
        end: row.get::<_, i64>(9)?.max(0) as usize,
    })
}

pub fn link_graph(connection: &Connection) -> rusqlite::Result<LinkGraph> {
    let mut statement =
        connection.prepare_cached("SELECT path FROM notes UNION ALL SELECT path FROM files")?;
    let paths: Vec<String> = statement
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let resolver = Resolver::new(paths.iter().cloned());
    Ok(LinkGraph { paths, resolver })
}

/// The links held by `source`, in document order.
pub fn links_from(connection: &Connection, source: &str) -> rusqlite::Result<Vec<StoredLink>> {
    let mut statement =
        connection.prepare_cached(&format!("SELECT {COLUMNS} WHERE source = ?1 ORDER BY seq"))?;
    statement
        .query_map([source], stored_link)?
        .collect::<Result<_, _>>()
}

/// The links whose last path segment names one of `names` (folded, as `link_lookup_name` gives):
/// every link that could resolve to a file of that name, in source and document order.
pub fn links_named(connection: &Connection, names: &[String]) -> rusqlite::Result<Vec<StoredLink>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders = vec!["?"; names.len()].join(", ");
    let mut statement = connection.prepare(&format!(
        "SELECT {COLUMNS} WHERE target_name IN ({placeholders}) ORDER BY source, seq"
    ))?;
    statement
        .query_map(params_from_iter(names), stored_link)?
        .collect::<Result<_, _>>()
}

/// A link as written, without its place in the source: what Bases reads of a file's links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenLink {
    pub source: String,
    pub embed: bool,
    /// Obsidian's `link`: path plus `#subpath`.
    pub link: String,
    /// The folded name of the file the link can resolve to (`link_lookup_name`).
    pub target_name: String,
}

/// Every stored link as written, in source and document order; lighter than `all_links`, which
/// a query over a large vault would spend most of its time reading.
pub fn written_links(connection: &Connection) -> rusqlite::Result<Vec<WrittenLink>> {
    let mut statement = connection.prepare_cached(
        "SELECT source, embed, link, target_name FROM links ORDER BY source, seq",
    )?;
    statement
        .query_map([], |row| {
            Ok(WrittenLink {
                source: row.get(0)?,
                embed: row.get(1)?,
                link: row.get(2)?,
                target_name: row.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()
}

/// Every stored link, in source and document order.
pub fn all_links(connection: &Connection) -> rusqlite::Result<Vec<StoredLink>> {
    let mut statement = connection.prepare(&format!("SELECT {COLUMNS} ORDER BY source, seq"))?;
    statement
        .query_map([], stored_link)?
        .collect::<Result<_, _>>()
}
