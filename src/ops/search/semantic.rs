//! Semantic and hybrid search: the background pass that embeds chunks without a vector, and the
//! search modes that use the vectors (`semantic`, `hybrid`: keyword leg + vector leg, both with
//! the caller's filters and access policy, fused by reciprocal rank fusion and optionally
//! reranked by a cross-encoder with position-aware blending).
//!
//! Without a usable model everything degrades to keyword search and the response says why; a
//! model that fails mid-search (or takes too long) gives keyword results, never an error. A query
//! embeds only its own text; chunk texts for reranking are cut from the note on disk.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::notes::{SearchMode, SearchNotes, SearchResults};
use crate::embed::EmbedService;
use crate::index::{self, NoteRow, VectorCounts};
use crate::ops::access::{Granted, Maintenance, SearchVisibility};
use crate::ops::error::OpsError;
use crate::ops::paging::{Cursor, VectorList};
use crate::ops::shared::{Context, Ops};
use crate::vault::VaultPath;

/// Notes read per step of the embedding pass.
const NOTES_PER_STEP: usize = 32;
/// Chunks per model run in the embedding pass: small enough that a search waiting behind a batch
/// waits little, large enough to batch well.
const CHUNKS_PER_RUN: usize = 8;
/// Chunks a pass must have waiting before the model switches to its bulk mode (building that
/// session takes about a second; the lean one embeds 15 to 20 chunks a second).
const BULK_MIN_CHUNKS: u64 = 256;
/// Deepest a hybrid result list goes (pages beyond it are not offered).
const MAX_DEPTH: usize = 1000;
/// Each leg contributes at least this many candidates to the fusion.
const MIN_LEG_DEPTH: usize = 50;

/// Semantic search's state: the model worker, whether the first embedding pass has finished, and
/// whether to rerank.
pub struct SemanticSearch {
    service: EmbedService,
    rerank: bool,
    first_pass_done: AtomicBool,
}

impl std::fmt::Debug for SemanticSearch {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SemanticSearch")
            .field("model", &self.service.info().name)
            .field("rerank", &self.rerank)
            .finish_non_exhaustive()
    }
}

impl SemanticSearch {
    /// `rerank` asks for cross-encoder reranking; it applies only when the service has one.
    pub fn new(service: EmbedService, rerank: bool) -> SemanticSearch {
        let rerank = rerank && service.has_reranker();
        SemanticSearch {
            service,
            rerank,
            first_pass_done: AtomicBool::new(false),
        }
    }

    pub fn service(&self) -> &EmbedService {
        &self.service
    }

    pub fn reranks(&self) -> bool {
        self.rerank
    }

    pub fn first_pass_done(&self) -> bool {
        self.first_pass_done.load(Ordering::Acquire)
    }
}

/// Whether semantic search is available, for responses and `quire doctor`.
#[derive(Debug, Clone, Default)]
pub(in crate::ops) enum SemanticSlot {
    /// Not decided yet (the model is still loading after the keyword index).
    #[default]
    Loading,
    Unavailable(String),
    Ready(Arc<SemanticSearch>),
}

/// What one embedding pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedPass {
    pub embedded: usize,
    pub pruned: usize,
    pub counts: VectorCounts,
}

/// What a vector search may return: notes matching `filter` and, when the filter has a meaning
/// for files (`files`), files; of both only what `shown` shows the caller.
#[derive(Clone, Copy)]
pub(super) struct Scope<'a> {
    pub filter: &'a index::NoteFilter,
    pub files: Option<&'a index::FileFilter>,
    pub shown: &'a SearchVisibility,
}

/// What the legs of a vector search found: the rows behind each path, the chunk of each nearest
/// the query (the reranker reads it), and the vector leg in order.
#[derive(Default)]
struct Legs {
    rows: HashMap<String, NoteRow>,
    file_rows: HashMap<String, index::FileHit>,
    best_chunk: HashMap<String, usize>,
    similarity: HashMap<String, f64>,
    vector: Vec<String>,
}

/// A fused ranking and what produced it.
struct Fused {
    mode: &'static str,
    ranked: Vec<(String, f64)>,
    matched_any_word: bool,
}

impl Ops {
    /// Semantic search from now on, with this model; vectors of another model are dropped.
    pub fn enable_semantic(&self, semantic: SemanticSearch) -> Result<(), OpsError> {
        let upkeep = Maintenance::new();
        let info = semantic.service().info();
        let reset = self
            .walls
            .index(&upkeep)
            .prepare_vectors(&info.identity, info.dimensions)?;
        if reset {
            tracing::info!(model = %info.name, "vector store (re)created for this model");
        }
        *self.semantic_slot_mut() = SemanticSlot::Ready(Arc::new(semantic));
        Ok(())
    }

    /// Keyword search only, for this reason (said in responses that asked for more).
    pub fn disable_semantic(&self, reason: impl Into<String>) {
        *self.semantic_slot_mut() = SemanticSlot::Unavailable(reason.into());
    }

    fn semantic_slot_mut(&self) -> std::sync::RwLockWriteGuard<'_, SemanticSlot> {
        self.semantic.write().unwrap_or_else(|p| p.into_inner())
    }

    fn semantic_slot(&self) -> SemanticSlot {
        self.semantic
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The semantic engine, when one is ready.
    pub fn semantic(&self) -> Option<Arc<SemanticSearch>> {
        match self.semantic_slot() {
            SemanticSlot::Ready(engine) => Some(engine),
            _ => None,
        }
    }

    /// One line on semantic search's state, for `quire doctor` and logs.
    pub fn semantic_status(&self) -> String {
        match self.semantic_slot() {
            SemanticSlot::Loading => "loading the model".into(),
            SemanticSlot::Unavailable(why) => format!("off: {why}"),
            SemanticSlot::Ready(engine) => {
                let counts = self
                    .walls
                    .index(&Maintenance::new())
                    .vector_counts()
                    .unwrap_or_default();
                format!(
                    "{} ({} of {} chunks embedded{})",
                    engine.service().info().name,
                    counts.embedded,
                    counts.chunks,
                    if engine.reranks() {
                        format!(
                            ", reranking with {}",
                            engine.service().info().reranker.as_deref().unwrap_or("?")
                        )
                    } else {
                        String::new()
                    }
                )
            }
        }
    }

    /// Embeds every chunk and memory entry that has no vector yet, then drops vectors nothing
    /// uses. `progress` hears (chunks with a vector, chunks in the index) after every step. Safe
    /// to run while the vault changes: a chunk edited meanwhile is picked up by the next pass.
    pub fn embed_pending(&self, progress: &dyn Fn(VectorCounts)) -> Result<EmbedPass, OpsError> {
        let upkeep = Maintenance::new();
        let Some(engine) = self.semantic() else {
            return Err(OpsError::invalid_argument(
                "semantic search is not available; `quire doctor` says why",
            ));
        };
        let mut pass = EmbedPass::default();
        // With many chunks to embed, the model trades memory for speed until the pass ends (see
        // `Embedder::set_bulk`); for a few edited chunks, switching would cost more than it saves.
        let pending = self.walls.index(&upkeep).vector_counts()?.pending();
        let _bulk = (pending >= BULK_MIN_CHUNKS).then(|| engine.service().bulk_pass());
        // Notes that cannot be read now (vanished, too large) are skipped for this pass.
        let mut skipped: std::collections::HashSet<String> = std::collections::HashSet::new();
        loop {
            let paths: Vec<String> = self
                .walls
                .index(&upkeep)
                .pending_vector_paths(skipped.len() + NOTES_PER_STEP)?
                .into_iter()
                .filter(|path| !skipped.contains(path))
                .collect();
            if paths.is_empty() {
                break;
            }
            let mut texts: Vec<(String, String)> = Vec::new();
            for raw in paths {
                let chunks = match self.note_text(&upkeep, &raw) {
                    Some((stem, text)) => index::note_chunks(&stem, &text),
                    None => Vec::new(),
                };
                let hashes: Vec<String> = chunks.iter().map(|(hash, _)| hash.clone()).collect();
                let missing = self.walls.index(&upkeep).missing_vectors(&hashes)?;
                if missing.is_empty() {
                    // The disk moved on since the index saw it; the watcher will catch up.
                    skipped.insert(raw);
                    continue;
                }
                let mut seen = std::collections::HashSet::new();
                for (hash, chunk) in chunks {
                    if missing.contains(&hash) && seen.insert(hash.clone()) {
                        texts.push((hash, chunk.text));
                    }
                }
            }
            // A run is padded to its longest chunk: runs of similar lengths waste the least.
            texts.sort_by_key(|(_, text)| text.len());
            for run in texts.chunks(CHUNKS_PER_RUN) {
                let vectors = engine
                    .service()
                    .embed_documents(run.iter().map(|(_, text)| text.clone()).collect())
                    .map_err(|error| OpsError::Internal(Box::new(error)))?;
                let items: Vec<(String, Vec<f32>)> = run
                    .iter()
                    .map(|(hash, _)| hash.clone())
                    .zip(vectors)
                    .collect();
                pass.embedded += self.walls.index(&upkeep).store_vectors(items)?;
                progress(self.walls.index(&upkeep).vector_counts()?);
            }
        }
        pass.embedded += self.embed_indexed_texts(&engine, &|limit| {
            self.walls.index(&upkeep).pending_file_vectors(limit)
        })?;
        pass.embedded += self.embed_indexed_texts(&engine, &|limit| {
            self.walls.index(&upkeep).pending_memory_vectors(limit)
        })?;
        pass.pruned = self.walls.index(&upkeep).prune_vectors()?;
        pass.counts = self.walls.index(&upkeep).vector_counts()?;
        progress(pass.counts);
        engine.first_pass_done.store(true, Ordering::Release);
        Ok(pass)
    }

    /// Embeds texts the index keeps with their hashes (memory entries, chunks of files) that have
    /// no vector yet, one vector per distinct text; returns how many were stored. The texts come
    /// from the index, not the files: a hash names exactly the text it was indexed with, so a
    /// file edited meanwhile cannot pair a vector with the wrong hash.
    fn embed_indexed_texts(
        &self,
        engine: &SemanticSearch,
        pending: &dyn Fn(usize) -> Result<Vec<index::PendingMemory>, index::IndexError>,
    ) -> Result<usize, OpsError> {
        let mut embedded = 0;
        loop {
            let mut pending = pending(NOTES_PER_STEP * CHUNKS_PER_RUN)?;
            if pending.is_empty() {
                return Ok(embedded);
            }
            pending.sort_by_key(|entry| entry.text.len());
            let mut stored = 0;
            for run in pending.chunks(CHUNKS_PER_RUN) {
                let vectors = engine
                    .service()
                    .embed_documents(run.iter().map(|entry| entry.text.clone()).collect())
                    .map_err(|error| OpsError::Internal(Box::new(error)))?;
                let items: Vec<(String, Vec<f32>)> = run
                    .iter()
                    .map(|entry| entry.hash.clone())
                    .zip(vectors)
                    .collect();
                stored += self.walls.index(&Maintenance::new()).store_vectors(items)?;
            }
            if stored == 0 {
                // A model that answers with fewer vectors than texts would loop here forever.
                return Ok(embedded);
            }
            embedded += stored;
        }
    }

    /// The note's stem and text from disk (resolved like every read), or `None` when unreadable.
    fn note_text(&self, granted: &impl Granted, raw: &str) -> Option<(String, String)> {
        let path = VaultPath::parse(raw).ok()?;
        let file = self.walls.vault(granted).read(&path).ok()?;
        let text = String::from_utf8(file.bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        Some((path.stem().to_string(), text))
    }

    /// Runs a semantic or hybrid search when `request` asks for one (or `auto` and vectors are
    /// ready, or `cursor` continues one); `Ok(Err(notice))` means keyword search answers instead,
    /// saying `notice` when there is something to say.
    pub(super) fn vector_search(
        &self,
        ctx: &Context,
        request: &SearchNotes,
        cursor: Option<(SearchMode, usize)>,
        scope: &Scope<'_>,
        limit: usize,
    ) -> Result<Result<SearchResults, Option<String>>, OpsError> {
        let (wanted, engine) = match self.vector_mode(request, cursor) {
            Ok(chosen) => chosen,
            Err(notice) => return Ok(Err(notice)),
        };
        let offset = cursor.map_or(0, |(_, offset)| offset);
        let depth = (offset + limit + 1).clamp(MIN_LEG_DEPTH, MAX_DEPTH);
        let query_vector = match engine.service().embed_query(&request.query) {
            Ok(vector) => vector,
            Err(error) => {
                tracing::warn!(%error, "embedding the query failed; answering with keyword search");
                return Ok(Err(Some(format!(
                    "the embedding model failed ({error}); these are keyword (BM25) results"
                ))));
            }
        };
        let mut legs = self.nearest_leg(scope, &query_vector, depth)?;
        let query = index::parse_query(&request.query);
        let fused = self.fuse(ctx, scope, wanted, &mut legs, &query, depth)?;
        let (ranked, reranked) = self.rerank(
            scope.shown,
            &engine,
            &request.query,
            fused.ranked,
            &legs.best_chunk,
        );
        let next_cursor =
            (ranked.len() > offset + limit && offset + limit < MAX_DEPTH).then(|| {
                let list = match wanted {
                    SearchMode::Semantic => VectorList::Semantic,
                    _ => VectorList::Hybrid,
                };
                Cursor::Vector {
                    list,
                    offset: offset + limit,
                }
                .encode()
            });
        let results = ranked
            .into_iter()
            .skip(offset)
            .take(limit)
            .filter_map(|(path, score)| match legs.rows.remove(&path) {
                Some(note) => Some(self.search_result(scope.shown, note, score, &query)),
                None => {
                    let file = legs.file_rows.remove(&path)?;
                    Some(self.file_result(scope.shown, index::FileHit { score, ..file }, &query))
                }
            })
            .collect();
        Ok(Ok(SearchResults {
            results,
            search_mode: fused.mode,
            reranked,
            matched_any_word: fused.matched_any_word,
            next_cursor,
            notice: self.catching_up_notice(),
        }))
    }

    /// The vector leg: the notes and files nearest `query_vector` by their closest chunk, up to
    /// `depth`. A note path ends in `.md` and a file path never does, so one path names one
    /// result in both legs.
    fn nearest_leg(
        &self,
        scope: &Scope<'_>,
        query_vector: &[f32],
        depth: usize,
    ) -> Result<Legs, OpsError> {
        let shown = scope.shown;
        let keep = &|row: &NoteRow| shown.shows(&row.path);
        let keep_file = &|path: &str| shown.shows(path);
        let index = self.walls.index(shown);
        let vector_hits = index.nearest(query_vector, scope.filter, depth, keep)?;
        let file_vector_hits = match scope.files {
            Some(files) => index.nearest_files(query_vector, files, depth, keep_file)?,
            None => Vec::new(),
        };
        let mut legs = Legs::default();
        let mut nearest: Vec<(String, f64)> = Vec::new();
        for hit in vector_hits {
            let path = hit.note.path.clone();
            legs.best_chunk.insert(path.clone(), hit.seq);
            legs.similarity.insert(path.clone(), 1.0 - hit.distance);
            legs.rows.insert(path.clone(), hit.note);
            nearest.push((path, hit.distance));
        }
        for hit in file_vector_hits {
            let path = hit.file.path.clone();
            legs.best_chunk.insert(path.clone(), hit.seq);
            legs.similarity.insert(path.clone(), 1.0 - hit.distance);
            legs.file_rows.insert(path.clone(), hit.file);
            nearest.push((path, hit.distance));
        }
        // Stable: on equal distance the note (listed first) stays ahead.
        nearest.sort_by(|a, b| a.1.total_cmp(&b.1));
        nearest.truncate(depth);
        legs.vector = nearest.into_iter().map(|(path, _)| path).collect();
        Ok(legs)
    }

    /// The ranking the mode asks for: the vector leg by similarity (semantic), or the keyword
    /// ranking of notes and files fused with it by reciprocal rank (hybrid). Rows the keyword
    /// leg finds join `legs`.
    fn fuse(
        &self,
        ctx: &Context,
        scope: &Scope<'_>,
        wanted: SearchMode,
        legs: &mut Legs,
        query: &index::MatchQuery,
        depth: usize,
    ) -> Result<Fused, OpsError> {
        if wanted == SearchMode::Semantic {
            return Ok(Fused {
                mode: "semantic",
                ranked: legs
                    .vector
                    .iter()
                    .map(|path| {
                        let similarity = legs.similarity.get(path).copied().unwrap_or(0.0);
                        (path.clone(), similarity)
                    })
                    .collect(),
                matched_any_word: false,
            });
        }
        let page = self.keyword_search(ctx, scope.shown, query, scope.filter, None, depth)?;
        let matched_any_word = page.any_word;
        let mut scored: Vec<(String, f64)> = page
            .hits
            .into_iter()
            .map(|hit| {
                let path = hit.note.path.clone();
                legs.rows.entry(path.clone()).or_insert(hit.note);
                (path, hit.score)
            })
            .collect();
        let expression = if matched_any_word {
            query.any.as_deref()
        } else {
            query.all.as_deref()
        };
        if let (Some(files), Some(expression)) = (scope.files, expression) {
            let found = self.file_search(ctx, scope.shown, query, expression, files, 0, depth)?;
            for hit in found.rows {
                let path = hit.path.clone();
                scored.push((path.clone(), hit.score));
                legs.file_rows.entry(path).or_insert(hit);
            }
        }
        // Notes and files by one BM25 score scale, as keyword mode merges them.
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(depth);
        let keyword_leg: Vec<String> = scored.into_iter().map(|(path, _)| path).collect();
        Ok(Fused {
            mode: "hybrid",
            ranked: crate::rank_fusion::reciprocal_rank_fusion(&[keyword_leg, legs.vector.clone()]),
            matched_any_word,
        })
    }

    /// The mode that answers and its engine, or (in `Err`) why keyword search answers instead,
    /// with the notice to give, if any.
    fn vector_mode(
        &self,
        request: &SearchNotes,
        cursor: Option<(SearchMode, usize)>,
    ) -> Result<(SearchMode, Arc<SemanticSearch>), Option<String>> {
        let slot = self.semantic_slot();
        let wanted = match (cursor, request.mode) {
            (Some((mode, _)), _) => mode,
            (None, SearchMode::Keyword) => return Err(None),
            (None, SearchMode::Auto) => {
                let ready =
                    matches!(&slot, SemanticSlot::Ready(engine) if engine.first_pass_done());
                if !ready || request.query.trim().is_empty() {
                    // Transient states get a notice (the agent may ask again later); a vault
                    // without a model is keyword-only for good, which `search_mode` already says.
                    return Err(match &slot {
                        _ if request.query.trim().is_empty() => None,
                        SemanticSlot::Ready(_) => Some(
                            "semantic vectors are still being computed; these are keyword results until they are ready".into(),
                        ),
                        SemanticSlot::Loading => Some(
                            "the embedding model is still loading; these are keyword (BM25) results until it is ready".into(),
                        ),
                        SemanticSlot::Unavailable(_) => None,
                    });
                }
                SearchMode::Hybrid
            }
            (None, mode) => mode,
        };
        let engine = match slot {
            SemanticSlot::Ready(engine) => engine,
            SemanticSlot::Loading => {
                return Err(Some(
                    "the embedding model is still loading; these are keyword (BM25) results".into(),
                ));
            }
            SemanticSlot::Unavailable(why) => {
                return Err(Some(format!(
                    "semantic search is not available ({why}); these are keyword (BM25) results"
                )));
            }
        };
        if request.query.trim().is_empty() {
            return Err(Some(
                "an empty query has no meaning to search for; these are the notes matching the filters".into(),
            ));
        }
        Ok((wanted, engine))
    }

    /// The head of `ranked` reordered by the cross-encoder, blended with the fused order, when
    /// the engine reranks; the order as it was when it does not or the reranker fails.
    fn rerank(
        &self,
        shown: &SearchVisibility,
        engine: &SemanticSearch,
        query: &str,
        ranked: Vec<(String, f64)>,
        best_chunk: &HashMap<String, usize>,
    ) -> (Vec<(String, f64)>, bool) {
        if !engine.reranks() || ranked.is_empty() {
            return (ranked, false);
        }
        let depth = ranked.len().min(crate::rank_fusion::RERANK_DEPTH);
        let passages: Vec<String> = ranked[..depth]
            .iter()
            .map(|(path, _)| self.passage(shown, path, best_chunk.get(path).copied().unwrap_or(0)))
            .collect();
        match engine.service().rerank(query, passages) {
            Ok(scores) => (crate::rank_fusion::blend(&ranked, &scores), true),
            Err(error) => {
                tracing::warn!(%error, "reranking failed; keeping the fused order");
                (ranked, false)
            }
        }
    }

    /// Said while vectors lag behind the notes, so recent edits may rank by keywords only.
    fn catching_up_notice(&self) -> Option<String> {
        let counts = self
            .walls
            .index(&Maintenance::new())
            .vector_counts()
            .unwrap_or_default();
        (counts.pending() > 0).then(|| {
            format!(
                "semantic vectors are catching up ({} of {} chunks embedded); recent edits may rank by keywords only",
                counts.embedded, counts.chunks
            )
        })
    }

    /// The text a reranker reads for a note: its chunk `seq` (the one nearest the query, or the
    /// first), cut from the note on disk now. A file's chunk comes from the index, which holds
    /// its text as extracted (a PDF on disk is not text).
    fn passage(&self, shown: &SearchVisibility, raw: &str, seq: usize) -> String {
        if !raw.ends_with(".md") {
            return self
                .walls
                .index(shown)
                .file_chunk_text(raw, seq)
                .ok()
                .flatten()
                .or_else(|| {
                    self.walls
                        .index(shown)
                        .file_chunk_text(raw, 0)
                        .ok()
                        .flatten()
                })
                .unwrap_or_default();
        }
        let Some((stem, text)) = self.note_text(shown, raw) else {
            return String::new();
        };
        let mut chunks = index::note_chunks(&stem, &text);
        if seq < chunks.len() {
            chunks.swap_remove(seq).1.text
        } else {
            chunks
                .into_iter()
                .next()
                .map(|(_, chunk)| chunk.text)
                .unwrap_or_default()
        }
    }
}
