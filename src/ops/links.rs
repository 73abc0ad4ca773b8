//! The link graph tools: backlinks, outgoing links, orphans and broken links, from the index's
//! link rows resolved with Obsidian's rules.
//!
//! Access control: a note the caller may not read never appears as a source, a target or an
//! orphan. A link from a visible note to a note the caller may not read is reported exactly like a
//! link to a file that does not exist (broken, no resolved path, no size), so the answer never
//! tells whether the denied file exists. For the same reason, links held by notes the caller may
//! not read never count: a visible note linked only from denied notes is an orphan for that caller.
//!
//! A caller some rule restricts resolves links among the files it may read only (`graph_for`), as
//! if the others did not exist: otherwise `[[Plans]]` resolving to a visible decoy, or coming back
//! broken because a hidden `Plans.md` wins Obsidian's tie-break, would tell which names exist in
//! denied folders.

use std::collections::{HashMap, HashSet};

use super::access::Visibility;
use super::error::OpsError;
use super::inputs::parse_path;
use super::notes::{NoteList, summary};
use super::paging::{Cursor, check_limit, page_of};
use super::shared::{Context, Ops};
use crate::index::{LinkGraph, NoteFilter, NoteRow, StoredLink};
use crate::markdown::links::{LinkForm, lookup_name};
use crate::vault::{VaultError, VaultPath};

/// The most characters of a linking line a backlink shows as context.
const CONTEXT_CHARS: usize = 300;

/// A link pointing at the asked-for file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlink {
    pub source: String,
    pub line: u64,
    pub column: u64,
    /// The linking line (trimmed, at most 300 characters); for a canvas, the link itself.
    pub context: String,
    /// The link as written.
    pub link: String,
    pub embed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlinks {
    pub path: String,
    pub backlinks: Vec<Backlink>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetLinks {
    pub path: String,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// Whether a link points at a note or at another file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Note,
    File,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingLink {
    /// Obsidian's `link`: the target as written, with its `#heading` or `#^block` part.
    pub target: String,
    pub kind: TargetKind,
    pub resolved_path: Option<String>,
    pub broken: bool,
    pub line: u64,
    pub column: u64,
    pub embed: bool,
    pub display: String,
    /// `wikilink`, `markdown`, `property` or `canvas`.
    pub form: &'static str,
    /// Size of the resolved file.
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingLinks {
    pub path: String,
    pub links: Vec<OutgoingLink>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindOrphans {
    /// Folders (and everything below) whose notes are never orphans.
    pub exclude_folders: Vec<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindBrokenLinks {
    /// Only links held by notes in this folder and below.
    pub folder: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenLink {
    pub source: String,
    pub line: u64,
    pub column: u64,
    /// The link as written.
    pub link: String,
    /// The path it names (before `#`).
    pub target: String,
    pub embed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenLinks {
    pub broken: Vec<BrokenLink>,
    pub next_cursor: Option<String>,
}

pub(super) fn form_label(form: LinkForm) -> &'static str {
    match form {
        LinkForm::Wiki => "wikilink",
        LinkForm::Markdown => "markdown",
        LinkForm::Property => "property",
        LinkForm::CanvasFile => "canvas",
    }
}

/// What a caller may learn a link resolves to: nothing when the target is hidden from them.
/// With a graph from `graph_for` hidden files are not in it at all; the filter stays as a second
/// line of defence.
fn visible_target<'g>(
    graph: &'g LinkGraph,
    visibility: &Visibility,
    link: &StoredLink,
) -> Option<&'g str> {
    graph
        .resolve(link)
        .filter(|target| visibility.shows(target))
}

impl Ops {
    /// The link graph as the caller may see it: for a caller some rule restricts, only the files
    /// it may read exist, so every resolution (including Obsidian's tie-breaks between same-named
    /// files) is the one it would get in a vault holding only those files.
    pub(super) fn graph_for(
        &self,
        ctx: &Context,
        visibility: &Visibility,
    ) -> Result<LinkGraph, OpsError> {
        let graph = self.walls.index(visibility).link_graph()?;
        if !self.policy().has_rules_for(&ctx.principal) {
            return Ok(graph);
        }
        let paths: Vec<String> = graph
            .paths
            .into_iter()
            .filter(|path| visibility.shows(path))
            .collect();
        Ok(LinkGraph {
            resolver: crate::markdown::links::Resolver::new(paths.iter().cloned()),
            paths,
        })
    }

    /// The file at `raw`, which the caller may read and the index holds, or `not_found`.
    fn graph_file(
        &self,
        ctx: &Context,
        raw: &str,
        graph: &LinkGraph,
    ) -> Result<VaultPath, OpsError> {
        let path = parse_path(raw)?;
        self.require_read(ctx, &path)?;
        if !graph.paths.iter().any(|known| known == path.as_str()) {
            return Err(OpsError::from_vault(
                VaultError::NotFound {
                    path: path.to_string(),
                },
                None,
            ));
        }
        Ok(path)
    }

    /// Every link from another file the caller may read that resolves to `path`.
    pub(super) fn links_to(
        &self,
        graph: &LinkGraph,
        path: &str,
        visibility: &Visibility,
    ) -> Result<Vec<StoredLink>, OpsError> {
        let candidates = self
            .walls
            .index(visibility)
            .links_named(&[lookup_name(path)])?;
        Ok(candidates
            .into_iter()
            .filter(|link| link.source != path)
            .filter(|link| visibility.shows(&link.source))
            .filter(|link| graph.resolve(link) == Some(path))
            .collect())
    }

    pub fn get_backlinks(&self, ctx: &Context, request: GetLinks) -> Result<Backlinks, OpsError> {
        let limit = check_limit(request.limit)?;
        let offset = Cursor::offset(request.cursor.as_deref())?;
        let visibility = self.visibility(ctx);
        let graph = self.graph_for(ctx, &visibility)?;
        let path = self.graph_file(ctx, &request.path, &graph)?;
        let links = self.links_to(&graph, path.as_str(), &visibility)?;
        let (links, next_cursor) = page_of(links, offset, limit);
        let mut texts: HashMap<String, Option<String>> = HashMap::new();
        let backlinks = links
            .into_iter()
            .map(|link| {
                let context = if link.source.ends_with(".md") {
                    let text = texts
                        .entry(link.source.clone())
                        .or_insert_with(|| self.read_text(&visibility, &link.source));
                    text.as_deref()
                        .and_then(|text| text.lines().nth((link.line as usize).saturating_sub(1)))
                        .map(|line| clip(line.trim()))
                        .unwrap_or_else(|| link.original.clone())
                } else {
                    link.original.clone()
                };
                Backlink {
                    source: link.source,
                    line: link.line,
                    column: link.column,
                    context,
                    link: link.original,
                    embed: link.embed,
                }
            })
            .collect();
        Ok(Backlinks {
            path: path.to_string(),
            backlinks,
            next_cursor,
        })
    }

    /// The current text of a vault file, if it can be read.
    fn read_text(&self, visibility: &Visibility, path: &str) -> Option<String> {
        let path = VaultPath::parse(path).ok()?;
        self.read_note_text(visibility, &path).ok()
    }

    pub fn get_outgoing_links(
        &self,
        ctx: &Context,
        request: GetLinks,
    ) -> Result<OutgoingLinks, OpsError> {
        let limit = check_limit(request.limit)?;
        let offset = Cursor::offset(request.cursor.as_deref())?;
        let visibility = self.visibility(ctx);
        let graph = self.graph_for(ctx, &visibility)?;
        let path = self.graph_file(ctx, &request.path, &graph)?;
        let links = self.walls.index(&visibility).links_from(path.as_str())?;
        let (links, next_cursor) = page_of(links, offset, limit);
        let links = links
            .into_iter()
            .map(|link| {
                let resolved = visible_target(&graph, &visibility, &link).map(str::to_owned);
                let named = resolved.as_deref().unwrap_or_else(|| link.path());
                let kind = if named.is_empty() || has_note_extension(named) {
                    TargetKind::Note
                } else {
                    TargetKind::File
                };
                let bytes = resolved.as_deref().and_then(|target| {
                    let target = VaultPath::parse(target).ok()?;
                    let resolved = self.walls.vault(&visibility).resolve(&target).ok()?;
                    std::fs::metadata(resolved.fs_path).ok().map(|m| m.len())
                });
                OutgoingLink {
                    target: link.link,
                    kind,
                    broken: resolved.is_none(),
                    resolved_path: resolved,
                    line: link.line,
                    column: link.column,
                    embed: link.embed,
                    display: link.display,
                    form: form_label(link.form),
                    bytes,
                }
            })
            .collect();
        Ok(OutgoingLinks {
            path: path.to_string(),
            links,
            next_cursor,
        })
    }

    pub fn find_broken_links(
        &self,
        ctx: &Context,
        request: FindBrokenLinks,
    ) -> Result<BrokenLinks, OpsError> {
        let limit = check_limit(request.limit)?;
        let offset = Cursor::offset(request.cursor.as_deref())?;
        let folder = match request
            .folder
            .as_deref()
            .filter(|folder| !folder.is_empty())
        {
            Some(raw) => {
                let folder = parse_path(raw.trim_end_matches('/'))?;
                if self.may_list(ctx, Some(&folder)).is_none() {
                    return Err(OpsError::from_vault(
                        VaultError::NotFound {
                            path: folder.to_string(),
                        },
                        None,
                    ));
                }
                Some(format!("{folder}/"))
            }
            None => None,
        };
        let visibility = self.visibility(ctx);
        let graph = self.graph_for(ctx, &visibility)?;
        let excluded_files = self.walls.vault(&visibility).excluded_files();
        let broken: Vec<BrokenLink> = self
            .walls
            .index(&visibility)
            .all_links()?
            .into_iter()
            .filter(|link| {
                folder
                    .as_deref()
                    .is_none_or(|folder| link.source.starts_with(folder))
            })
            .filter(|link| !excluded_files.excludes(&link.source))
            .filter(|link| visibility.shows(&link.source))
            .filter(|link| visible_target(&graph, &visibility, link).is_none())
            .map(|link| BrokenLink {
                target: link.path().to_owned(),
                source: link.source,
                line: link.line,
                column: link.column,
                link: link.original,
                embed: link.embed,
            })
            .collect();
        let (broken, next_cursor) = page_of(broken, offset, limit);
        Ok(BrokenLinks {
            broken,
            next_cursor,
        })
    }

    /// Notes no other visible file links to (embeds and canvas cards count as links), outside the
    /// daily-notes, templates and memory folders, `exclude_folders` and Obsidian's excluded files, in path
    /// order.
    pub fn find_orphans(&self, ctx: &Context, request: FindOrphans) -> Result<NoteList, OpsError> {
        let limit = check_limit(request.limit)?;
        let after = Cursor::after(request.cursor.as_deref())?;
        let mut excluded: Vec<String> = Vec::new();
        for raw in &request.exclude_folders {
            let trimmed = raw.trim_matches('/');
            if trimmed.is_empty() {
                return Err(OpsError::invalid_argument(
                    "exclude_folders holds an empty folder, which would exclude the whole vault; name folders like \"Archive\"",
                ));
            }
            excluded.push(format!("{}/", parse_path(trimmed)?));
        }
        let visibility = self.visibility(ctx);
        excluded.extend(
            self.walls
                .vault(&visibility)
                .generated_note_folders()
                .into_iter()
                .chain(
                    self.walls
                        .vault(&visibility)
                        .memory_folder()
                        .map(VaultPath::to_string),
                )
                .map(|folder| format!("{folder}/")),
        );
        let graph = self.graph_for(ctx, &visibility)?;
        let mut linked: HashSet<String> = HashSet::new();
        for link in self.walls.index(&visibility).all_links()? {
            if !visibility.shows(&link.source) {
                continue;
            }
            if let Some(target) = graph.resolve(&link)
                && target != link.source
            {
                linked.insert(target.to_owned());
            }
        }
        let excluded_files = self.walls.vault(&visibility).excluded_files();
        let keep = |row: &NoteRow| {
            !linked.contains(&row.path)
                && !excluded_files.excludes(&row.path)
                && !excluded
                    .iter()
                    .any(|folder| row.path.starts_with(folder.as_str()))
                && visibility.shows(&row.path)
        };
        let page = self.walls.index(&visibility).list_by_path(
            &NoteFilter::default(),
            after.as_deref(),
            limit,
            &keep,
        )?;
        Ok(NoteList {
            notes: page.rows.into_iter().map(summary).collect(),
            next_cursor: page.next.map(|path| Cursor::After(path).encode()),
        })
    }
}

/// Whether a path names a note: it ends in `.md` or has no file extension (`v1.2 notes` has none:
/// an extension is one to five letters or digits).
fn has_note_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((_, extension))
            if (1..=5).contains(&extension.len())
                && extension.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            extension.eq_ignore_ascii_case("md")
        }
        _ => true,
    }
}

fn clip(line: &str) -> String {
    if line.chars().count() <= CONTEXT_CHARS {
        return line.to_owned();
    }
    let mut clipped: String = line.chars().take(CONTEXT_CHARS).collect();
    clipped.push('…');
    clipped
}
