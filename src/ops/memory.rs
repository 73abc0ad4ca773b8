//! The memory layer: a folder of plain notes (`About Me/` by default) where agents keep dated
//! facts about the user, read and recalled entry by entry.
//!
//! Files are edited with the pure model in `markdown::memory` through the same read-modify-write
//! as every other edit (the file's lock held throughout, written only if unchanged since read),
//! so two appends to one file run one after the other and neither is lost. Guards keep the layer
//! from eating real notes: names cannot leave the folder, a retried append is a no-op, an
//! ambiguous delete is refused, and no edit may remove more than half of a file's bytes.
//!
//! Recall ranks entries from the index: keyword matches, and with a model the entries whose
//! vectors (one per entry text, computed by the embedding pass) are nearest the query, fused by
//! reciprocal rank and cut to the relevant ones before the oldest-first presentation.

use crate::ops::access::Maintenance;
use std::collections::{HashMap, HashSet};

use super::edit::Outcome;
use super::error::OpsError;
use super::shared::{Context, Ops};
use crate::index::MemoryHit;
use crate::markdown::memory::{self, Edited, EntryPolicy, MemoryEditError};
use crate::vault::{VaultError, VaultPath};

/// Files at or under this size are never held back by the shrink guard: a file with no real
/// entries yet (a starter template) may shrink freely.
const SHRINK_GUARD_MIN_BYTES: usize = 1250;

#[derive(Debug, Clone, PartialEq)]
pub struct MemorySectionSummary {
    pub name: String,
    pub entries: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryFileSummary {
    /// The file's name without `.md`: what the memory tools take as `file`.
    pub file: String,
    pub path: String,
    pub scope: Option<String>,
    pub entry_policy: EntryPolicy,
    pub sections: Vec<MemorySectionSummary>,
}

#[derive(Debug, Clone, Default)]
pub struct GetMemory {
    pub file: Option<String>,
    pub section: Option<String>,
    /// `YYYY-MM-DD`: only entries dated on or after it.
    pub on_or_after: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEntry {
    pub file: String,
    pub section: String,
    pub date: String,
    pub text: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct UpdateMemory {
    pub file: String,
    pub section: String,
    pub entry: String,
    /// `YYYY-MM-DD`; today in the configured time zone when absent.
    pub date: Option<String>,
}

#[derive(Debug, Clone)]
pub struct DeleteMemory {
    pub file: String,
    pub section: String,
    pub date: String,
    pub entry: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MemoryWrite {
    pub path: String,
    pub revision: String,
    /// False when the entry was already there (a retried call): nothing was written.
    pub changed: bool,
    pub created: bool,
    pub date: String,
    /// Where another writer's version that reached the file during the write is kept.
    pub conflict_copy: Option<String>,
}

#[derive(Debug, Clone)]
pub struct MemoryRecall {
    pub query: String,
    pub file: Option<String>,
    pub limit: Option<u32>,
}

/// Entries recalled for a query, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    pub entries: Vec<MemoryEntry>,
    /// True when no entry had every word of the query, so the keyword matches have any of them.
    pub any_word: bool,
    /// `hybrid` when keyword matches were fused with the entries nearest in meaning (a model is
    /// installed and entries have vectors), `keyword` otherwise.
    pub mode: &'static str,
    /// Why recall answered by keywords though a model is installed, or that vectors lag behind.
    pub notice: Option<String>,
}

/// Recall's ranked hits (best first), before `limit` and the oldest-first presentation.
struct Ranked {
    hits: Vec<MemoryHit>,
    mode: &'static str,
    notice: Option<String>,
}

/// What `bootstrap_memory` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bootstrap {
    /// The starter files were written (their vault paths).
    Created(Vec<String>),
    /// The memory folder exists already: nothing is touched.
    Exists,
    /// The layer is off or the server is read-only.
    Skipped,
    /// The vault's first sync has not completed: the user's own files may still be arriving.
    WaitingForFirstSync,
}

/// The starter files: name, entry policy and scope text.
const STARTERS: [(&str, Option<&str>, &str); 5] = [
    (
        "Me",
        None,
        "Facts about the user: name, work, family, places, background. One dated entry per fact; a later entry can say what changed.",
    ),
    (
        "Opinions",
        None,
        "What the user thinks and likes: views, tastes, preferences about tools, food, media. Each entry was true on its date; keep old ones, they show how views evolve.",
    ),
    (
        "Principles",
        None,
        "How the user wants to live and decide: values, rules of thumb, commitments.",
    ),
    (
        "Routines",
        Some("living"),
        "How the user's days and weeks run now: habits, schedules, recurring commitments. A living file: when a routine stops, its entry may be removed.",
    ),
    (
        "Agents",
        None,
        "How agents should work with the user: tone, format, what to ask first, what never to do.",
    ),
];

const DEFAULT_RECALL: u32 = 10;
const MAX_RECALL: u32 = 50;
/// Candidates each leg of a recall contributes to the fusion (at least).
const RECALL_DEPTH: usize = 50;
/// Without a reranker, how far below the best similarity an entry found only by its vector may
/// score and still be recalled: the nearest entries of any query are "similar" in absolute terms
/// (MiniLM puts unrelated sentences near 0.1 to 0.2), so only closeness to the best match says
/// an entry is about the same thing.
pub const RECALL_SIMILARITY_MARGIN: f64 = 0.15;
/// A cross-encoder's score (a logit) above which an entry counts as relevant: above 0 the model
/// judges the pair more likely relevant than not.
pub const RECALL_RERANK_FLOOR: f32 = 0.0;

impl Ops {
    /// Every memory file the caller may read, with its scope, policy and sections.
    pub fn list_memory_files(&self, ctx: &Context) -> Result<Vec<MemoryFileSummary>, OpsError> {
        self.require_memory()?;
        let mut files = Vec::new();
        for (file, path, text) in self.memory_files(ctx)? {
            let parsed = memory::parse(&text);
            files.push(MemoryFileSummary {
                file,
                path: path.to_string(),
                scope: parsed.scope,
                entry_policy: parsed.policy,
                sections: parsed
                    .sections
                    .iter()
                    .map(|section| MemorySectionSummary {
                        name: section.name.clone(),
                        entries: section.entries.len(),
                    })
                    .collect(),
            });
        }
        Ok(files)
    }

    /// The entries of one file, one section, or all files, optionally from a date on, in file
    /// order.
    pub fn get_memory(
        &self,
        ctx: &Context,
        request: GetMemory,
    ) -> Result<Vec<MemoryEntry>, OpsError> {
        self.require_memory()?;
        if let Some(date) = &request.on_or_after {
            memory::check_date(date).map_err(edit_error)?;
        }
        let files = match &request.file {
            Some(name) => {
                let path = self.memory_path(name)?;
                let readable = self.require_read(ctx, &path)?;
                let file = self
                    .walls
                    .vault(&readable)
                    .read(&path)
                    .map_err(|error| OpsError::from_vault(error, None))?;
                vec![(
                    stem(name),
                    path,
                    String::from_utf8_lossy(&file.bytes).into_owned(),
                )]
            }
            None => self.memory_files(ctx)?,
        };
        let mut entries = Vec::new();
        let mut section_found = request.section.is_none();
        for (file, _path, text) in files {
            for section in memory::parse(&text).sections {
                if request
                    .section
                    .as_ref()
                    .is_some_and(|wanted| *wanted != section.name)
                {
                    continue;
                }
                section_found = true;
                for entry in section.entries {
                    if request
                        .on_or_after
                        .as_ref()
                        .is_some_and(|from| entry.date < *from)
                    {
                        continue;
                    }
                    entries.push(MemoryEntry {
                        file: file.clone(),
                        section: section.name.clone(),
                        date: entry.date,
                        text: entry.text,
                        line: entry.line,
                    });
                }
            }
        }
        if !section_found && let Some(section) = &request.section {
            return Err(OpsError::invalid_argument(format!(
                "no memory section is named {section:?}; vault_list_memory_files lists the sections of every file"
            )));
        }
        Ok(entries)
    }

    /// Adds a dated entry on top of its section, creating the file or section when needed.
    pub fn update_memory(
        &self,
        ctx: &Context,
        request: UpdateMemory,
    ) -> Result<MemoryWrite, OpsError> {
        self.require_memory()?;
        let path = self.memory_path(&request.file)?;
        let writable = self.require_write(ctx, &path)?;
        let date = match &request.date {
            // A line break is refused, not trimmed away: it is never part of a date.
            Some(date) => {
                memory::check_field("date", date).map_err(edit_error)?;
                date.trim().to_owned()
            }
            None => self.today().to_string(),
        };
        check_calendar_date(&date)?;
        let name = stem(&request.file);
        let create = move || Ok(starter(&name));
        let edited = self.read_modify_write(ctx, &writable, None, Some(&create), |_, text| {
            let text = match memory::add_entry(text, &request.section, &date, &request.entry)
                .map_err(edit_error)?
            {
                Edited::Changed(text) => text,
                Edited::Unchanged => text.to_owned(),
            };
            Ok(plain(text))
        })?;
        Ok(MemoryWrite {
            path: edited.path,
            revision: edited.revision,
            changed: edited.changed,
            created: edited.created,
            date,
            conflict_copy: edited.conflict_copy,
        })
    }

    /// Removes exactly one entry, named by its section, date and text.
    pub fn delete_memory(
        &self,
        ctx: &Context,
        request: DeleteMemory,
    ) -> Result<MemoryWrite, OpsError> {
        self.require_memory()?;
        let path = self.memory_path(&request.file)?;
        let writable = self.require_write(ctx, &path)?;
        let edited = self.read_modify_write(ctx, &writable, None, None, |path, text| {
            let after = memory::delete_entry(text, &request.section, &request.date, &request.entry)
                .map_err(edit_error)?;
            shrink_guard(path, text, &after)?;
            Ok(plain(after))
        })?;
        Ok(MemoryWrite {
            path: edited.path,
            revision: edited.revision,
            changed: edited.changed,
            created: false,
            date: request.date,
            conflict_copy: edited.conflict_copy,
        })
    }

    /// The entries most relevant to `query`, presented oldest to newest. Keyword matches on the
    /// entry, its section and its file name (when no entry has every word, any word); with a
    /// model, fused with the entries nearest in meaning (see `hybrid_recall`).
    pub fn memory_recall(
        &self,
        ctx: &Context,
        request: MemoryRecall,
    ) -> Result<Recalled, OpsError> {
        self.require_memory()?;
        let limit = request.limit.unwrap_or(DEFAULT_RECALL);
        if !(1..=MAX_RECALL).contains(&limit) {
            return Err(OpsError::invalid_argument(format!(
                "limit must be between 1 and {MAX_RECALL}; omit it for {DEFAULT_RECALL}"
            )));
        }
        let limit = limit as usize;
        let file = request
            .file
            .as_deref()
            .map(|name| self.memory_path(name))
            .transpose()?;
        if let Some(file) = &file {
            self.require_read(ctx, file)?;
        }
        let query = crate::index::parse_query(&request.query);
        let Some(all) = &query.all else {
            return Err(OpsError::invalid_argument(
                "query has no words to look for; describe what to recall, such as 'coffee preferences'",
            ));
        };
        let visibility = self.visibility(ctx);
        let keep = |path: &str| visibility.shows(path);
        let file = file.as_ref().map(VaultPath::as_str);
        // The keyword leg goes deeper than `limit` so the fusion has candidates to reorder.
        let depth = limit.max(RECALL_DEPTH);
        let mut any_word = false;
        let mut lexical = self
            .walls
            .index(&visibility)
            .search_memory(all, file, depth, &keep)?;
        if lexical.is_empty()
            && let Some(any) = &query.any
        {
            lexical = self
                .walls
                .index(&visibility)
                .search_memory(any, file, depth, &keep)?;
            any_word = true;
        }
        let Ranked {
            mut hits,
            mode,
            notice,
        } = self.hybrid_recall(&visibility, &request.query, lexical, file, depth, &keep)?;
        hits.truncate(limit);
        let mut entries: Vec<MemoryEntry> = hits
            .into_iter()
            .map(|hit| MemoryEntry {
                file: VaultPath::parse(&hit.path)
                    .map(|path| path.stem().to_owned())
                    .unwrap_or(hit.path),
                section: hit.section,
                date: hit.date,
                text: hit.text,
                line: hit.line,
            })
            .collect();
        entries.sort_by(|a, b| (&a.date, &a.file, a.line).cmp(&(&b.date, &b.file, b.line)));
        Ok(Recalled {
            entries,
            any_word,
            mode,
            notice,
        })
    }

    /// With a model: the keyword hits (`lexical`, best first) and the entries nearest to the
    /// query's vector, fused by reciprocal rank, then cut to the relevant ones: by the
    /// reranker's floor when one is configured, else by a margin below the best similarity.
    /// Keyword hits always survive the cut (they contain the words asked for). Without usable
    /// vectors the keyword hits answer as they are, with a notice when there is something to say
    /// (none when no model is installed: `mode` says it).
    fn hybrid_recall(
        &self,
        granted: &crate::ops::access::Visibility,
        query: &str,
        lexical: Vec<MemoryHit>,
        file: Option<&str>,
        depth: usize,
        keep: &dyn Fn(&str) -> bool,
    ) -> Result<Ranked, OpsError> {
        let keyword = |hits: Vec<MemoryHit>, notice: Option<String>| {
            Ok(Ranked {
                hits,
                mode: "keyword",
                notice,
            })
        };
        let Some(engine) = self.semantic() else {
            return keyword(lexical, None);
        };
        let query_vector = match engine.service().embed_query(query) {
            Ok(vector) => vector,
            Err(error) => {
                tracing::warn!(%error, "embedding a memory query failed; recalling by keywords");
                return keyword(
                    lexical,
                    Some(format!(
                        "the embedding model failed ({error}); these entries matched by keywords only"
                    )),
                );
            }
        };
        let near = self
            .walls
            .index(granted)
            .nearest_memory(&query_vector, file, depth, keep)?;
        let catching_up = !self
            .walls
            .index(granted)
            .pending_memory_vectors(1)?
            .is_empty();
        if near.is_empty() {
            let notice = catching_up.then(|| {
                "memory vectors are still being computed; these entries matched by keywords only"
                    .to_owned()
            });
            return keyword(lexical, notice);
        }
        let key = |hit: &MemoryHit| (hit.path.clone(), hit.line);
        let lexical_keys: Vec<(String, usize)> = lexical.iter().map(key).collect();
        let vector_keys: Vec<(String, usize)> = near.iter().map(key).collect();
        let fused =
            crate::rank_fusion::reciprocal_rank_fusion(&[lexical_keys.clone(), vector_keys]);
        let similarity: HashMap<(String, usize), f64> =
            near.iter().map(|hit| (key(hit), hit.score)).collect();
        let mut found: HashMap<(String, usize), MemoryHit> = HashMap::new();
        for hit in near.into_iter().chain(lexical) {
            found.entry(key(&hit)).or_insert(hit);
        }
        let relevance = if engine.reranks() {
            let head = &fused[..fused.len().min(crate::rank_fusion::RERANK_DEPTH)];
            let passages: Vec<String> = head
                .iter()
                .filter_map(|(key, _)| found.get(key))
                .map(|hit| {
                    let stem = VaultPath::parse(&hit.path)
                        .map(|path| path.stem().to_owned())
                        .unwrap_or_else(|_| hit.path.clone());
                    crate::index::memory_entry_text(&stem, &hit.section, &hit.text)
                })
                .collect();
            match engine.service().rerank(query, passages) {
                Ok(scores) => Some(scores),
                Err(error) => {
                    tracing::warn!(%error, "reranking memory failed; cutting by similarity");
                    None
                }
            }
        } else {
            None
        };
        let lexical_keys: HashSet<(String, usize)> = lexical_keys.into_iter().collect();
        let kept = cut_recall(fused, &lexical_keys, &similarity, relevance.as_deref());
        let hits = kept
            .into_iter()
            .filter_map(|key| found.remove(&key))
            .collect();
        let notice = catching_up.then(|| {
            "some memory entries have no vector yet; they can be recalled by keywords only"
                .to_owned()
        });
        Ok(Ranked {
            hits,
            mode: "hybrid",
            notice,
        })
    }

    /// Creates the starter memory files when the memory folder does not exist yet. Never on a
    /// read-only server, and never before the vault's first sync has completed
    /// (`first_sync_marker` configured but missing): templates written over a vault that is still
    /// arriving could be synced over the user's real files.
    pub fn bootstrap_memory(
        &self,
        read_only: bool,
        first_sync_marker: Option<&std::path::Path>,
    ) -> Result<Bootstrap, OpsError> {
        let Some(folder) = self.walls.memory_folder() else {
            return Ok(Bootstrap::Skipped);
        };
        if read_only {
            return Ok(Bootstrap::Skipped);
        }
        if first_sync_marker.is_some_and(|marker| !marker.exists()) {
            return Ok(Bootstrap::WaitingForFirstSync);
        }
        match self.walls.vault(&Maintenance::new()).resolve(folder) {
            Ok(resolved) if resolved.exists => return Ok(Bootstrap::Exists),
            Ok(_) => {}
            Err(error) => return Err(OpsError::from_vault(error, None)),
        }
        let mut created = Vec::new();
        for (name, policy, scope) in STARTERS {
            // A context per file: each creation is its own change, as a call makes one.
            let ctx = Context::new(crate::acl::Principal::Owner, "memory-bootstrap");
            let path = self.memory_path(name)?;
            let text = match policy {
                Some(policy) => format!(
                    "---\nentry-policy: {policy}\n---\n> [!info] Scope of this file\n> {scope}\n"
                ),
                None => format!("> [!info] Scope of this file\n> {scope}\n"),
            };
            let create = move || Ok(text.clone());
            // Created exclusively: a file that appeared meanwhile (a sync) is kept, not replaced.
            let writable = self.require_write(&ctx, &path)?;
            match self.read_modify_write(&ctx, &writable, None, Some(&create), |_, text| {
                Ok(plain(text.to_owned()))
            }) {
                Ok(edited) if edited.created => created.push(edited.path),
                Ok(_) => {}
                Err(error) if error.code() == "conflict" => {}
                Err(error) => return Err(error),
            }
        }
        Ok(Bootstrap::Created(created))
    }

    /// The memory folder, or an error when the layer is off.
    fn require_memory(&self) -> Result<&VaultPath, OpsError> {
        self.walls.memory_folder().ok_or_else(|| {
            OpsError::invalid_argument(
                "the memory layer is turned off on this server ([memory] enabled = false)",
            )
        })
    }

    /// The vault path of memory file `name` (`Me` or `Me.md`), which must stay directly inside
    /// the memory folder and be visible.
    fn memory_path(&self, name: &str) -> Result<VaultPath, OpsError> {
        let folder = self.require_memory()?;
        let name = name.trim();
        let refuse = |why: &str| {
            Err(OpsError::PathForbidden {
                input: name.to_owned(),
                reason: format!(
                    "{why}; give the name of a file in the memory folder '{}', such as 'Me' or 'Opinions'",
                    folder
                ),
            })
        };
        if name.is_empty() {
            return refuse("the memory file name is empty");
        }
        if name.contains(['/', '\\']) {
            return refuse("a memory file name cannot name a folder");
        }
        if name.starts_with('.') {
            return refuse("a memory file name cannot start with '.' (a hidden file)");
        }
        if name.contains(['\n', '\r']) {
            return refuse("a memory file name must be one line");
        }
        let file = if name.to_lowercase().ends_with(".md") {
            name.to_owned()
        } else {
            format!("{name}.md")
        };
        VaultPath::parse(&format!("{folder}/{file}")).map_err(|error| OpsError::path(name, error))
    }

    /// Every `.md` file directly in the memory folder the caller may read, with its text.
    fn memory_files(&self, ctx: &Context) -> Result<Vec<(String, VaultPath, String)>, OpsError> {
        let folder = self.require_memory()?;
        let visibility = self.visibility(ctx);
        let listing = match self.walls.vault(&visibility).list_folder(Some(folder)) {
            Ok(listing) => listing,
            Err(VaultError::NotFound { .. }) => return Ok(Vec::new()),
            Err(error) => return Err(OpsError::from_vault(error, None)),
        };
        let mut files = Vec::new();
        for file in listing.files {
            if file.path.extension().as_deref() != Some("md")
                || !visibility.shows(file.path.as_str())
            {
                continue;
            }
            // A file that vanished or grew past the cap since the listing is left out.
            let Ok(contents) = self.walls.vault(&visibility).read(&file.path) else {
                continue;
            };
            files.push((
                file.path.stem().to_owned(),
                file.path.clone(),
                String::from_utf8_lossy(&contents.bytes).into_owned(),
            ));
        }
        Ok(files)
    }
}

/// Cuts a fused ranking (best first) of memory entries to the relevant ones, in the same order:
/// keyword hits (`lexical`) always stay; with reranker scores (for the head of `fused`, in its
/// order) an entry found only by its vector stays when it scores above `RECALL_RERANK_FLOOR`,
/// reordered by the position-aware blend; without, when its similarity is within
/// `RECALL_SIMILARITY_MARGIN` of the best one.
pub fn cut_recall<K: Clone + Eq + std::hash::Hash>(
    fused: Vec<(K, f64)>,
    lexical: &HashSet<K>,
    similarity: &HashMap<K, f64>,
    rerank_scores: Option<&[f32]>,
) -> Vec<K> {
    match rerank_scores {
        Some(scores) => {
            let relevant: HashSet<K> = fused
                .iter()
                .zip(scores)
                .filter(|(_, score)| **score > RECALL_RERANK_FLOOR)
                .map(|((key, _), _)| key.clone())
                .collect();
            crate::rank_fusion::blend(&fused, scores)
                .into_iter()
                .map(|(key, _)| key)
                .filter(|key| lexical.contains(key) || relevant.contains(key))
                .collect()
        }
        None => {
            let best = similarity
                .values()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max);
            fused
                .into_iter()
                .map(|(key, _)| key)
                .filter(|key| {
                    lexical.contains(key)
                        || similarity
                            .get(key)
                            .is_some_and(|score| *score >= best - RECALL_SIMILARITY_MARGIN)
                })
                .collect()
        }
    }
}

/// A memory file's name as the tools take it: trimmed, without `.md` (in any case).
pub(super) fn stem(name: &str) -> String {
    let name = name.trim();
    match name.len().checked_sub(3) {
        Some(cut) if name.is_char_boundary(cut) && name[cut..].eq_ignore_ascii_case(".md") => {
            name[..cut].to_owned()
        }
        _ => name.to_owned(),
    }
}

fn check_calendar_date(date: &str) -> Result<(), OpsError> {
    memory::check_date(date).map_err(edit_error)?;
    date.parse::<jiff::civil::Date>().map_err(|_| {
        OpsError::invalid_argument(format!(
            "date {date:?} is not a day of the calendar; give it as YYYY-MM-DD"
        ))
    })?;
    Ok(())
}

/// Refuses an edit that would remove more than half of a file's bytes.
fn shrink_guard(path: &VaultPath, before: &str, after: &str) -> Result<(), OpsError> {
    if before.len() > SHRINK_GUARD_MIN_BYTES && after.len() * 2 < before.len() {
        return Err(OpsError::invalid_argument(format!(
            "this edit would remove {} of the {} bytes of '{path}', more than half of the file; nothing was changed. Memory edits remove one entry at a time: check the file with vault_get_memory",
            before.len() - after.len(),
            before.len()
        )));
    }
    Ok(())
}

fn edit_error(error: MemoryEditError) -> OpsError {
    OpsError::invalid_argument(error.to_string())
}

fn plain(text: String) -> Outcome {
    Outcome {
        text,
        lines: None,
        replacements: None,
        changed_keys: Vec::new(),
        properties: None,
    }
}

/// The text of a memory file created by a write, with a scope callout to fill in.
fn starter(name: &str) -> String {
    format!(
        "> [!info] Scope of this file\n> What {name} holds about the user: describe it here so agents file entries in the right place.\n"
    )
}
