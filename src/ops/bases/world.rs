//! The vault as one caller sees it, for the Bases evaluator: a row for every file the caller may
//! read (notes and attachments alike, as Obsidian offers every file), and an `Environment` whose
//! link resolution, backlinks and file lookups know only those files.
//!
//! Only the files the index lets through the view's filters and whose path and tags can pass them
//! (`narrow.rs`) become rows up front; the other files are read, and their facts made, only when a
//! formula asks about a file or a link.
//!
//! Hidden files are absent rather than masked, as in `ops::links`: a link to a denied note reads
//! as a link to nothing, `[[Plans]]` resolves as if a denied `Plans.md` did not exist, and a denied
//! note's links never count as backlinks, so no answer tells which denied files exist.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use crate::bases::{Environment, FileFacts, Row, from_typed_property};
use crate::index::{FileRecord, Index, IndexError, WrittenLink};
use crate::markdown::links::{Resolver, link_path, lookup_name};
use crate::ops::access::Visibility;
use crate::ops::error::OpsError;
use crate::ops::shared::Ops;

use super::narrow::Narrowing;

/// Every file the caller may read, with what Bases reads of it.
pub(super) struct World<'a> {
    /// The files the narrowing admits, in path order: the order of a view's rows when it does
    /// not sort.
    rows: Vec<Arc<FileFacts>>,
    /// The files the index let through, rows or not, by path.
    narrowed: HashMap<String, Entry>,
    /// Every other file the caller may read, for `file()`, `this` and links: read from the index
    /// the first time a formula asks about a file or a link (most views never do).
    rest: OnceLock<Option<Rest>>,
    /// Why `rest` could not be read, for the answer to report instead of rows that miss files.
    failure: Mutex<Option<IndexError>>,
    source: Source<'a>,
    /// Over every path the caller may read; built the first time a link is resolved.
    resolver: OnceLock<Resolver>,
    /// Links held by files the caller may read, for backlinks.
    links: Vec<WrittenLink>,
    /// Indexes into `links` by the folded name of the file each can resolve to, so backlinks
    /// resolve only the links that could lead to the file asked about.
    links_by_name: HashMap<String, Vec<usize>>,
    /// The links and embeds each file holds, by source path.
    written: HashMap<String, (Vec<String>, Vec<String>)>,
    now: DateTime,
    zone: TimeZone,
    /// The property types `.obsidian/types.json` declares, by lowercased key.
    types: Arc<BTreeMap<String, String>>,
    this: Option<String>,
    stop: Stop,
}

/// When a query must stop early: at its deadline, or once the client cancels it.
pub(super) struct Stop {
    pub deadline: Instant,
    pub cancelled: Arc<AtomicBool>,
}

/// Where the rest of the files come from, and who is asking.
struct Source<'a> {
    index: &'a Index,
    visibility: &'a Visibility,
}

/// The files the narrowing in SQL left out, and every path the caller may read.
struct Rest {
    files: HashMap<String, Entry>,
    /// Every path the caller may read, in path order.
    paths: Vec<String>,
}

/// One file as the index holds it, its facts made once.
struct Entry {
    record: FileRecord,
    links: Vec<String>,
    embeds: Vec<String>,
    facts: OnceLock<Arc<FileFacts>>,
}

impl Ops {
    /// The files `visibility` shows and the clock, for one query: rows made only for the files
    /// the index lets through `narrowing`'s filter and `narrowing` admits; with their links when
    /// `with_links` (reading every link is most of a large vault's cost, so a base that never
    /// mentions links or embeds goes without).
    pub(super) fn bases_world<'a>(
        &'a self,
        visibility: &'a Visibility,
        this: Option<String>,
        with_links: bool,
        narrowing: &Narrowing<'_>,
        stop: Stop,
    ) -> Result<World<'a>, OpsError> {
        let index = self.walls.index(visibility);
        let records = index.file_records_where(narrowing.filter())?;
        let mut links = if with_links {
            visible_links(index.written_links()?, visibility)
        } else {
            Vec::new()
        };
        let mut links_by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut written: HashMap<String, (Vec<String>, Vec<String>)> = HashMap::new();
        for (at, link) in links.iter_mut().enumerate() {
            links_by_name
                .entry(std::mem::take(&mut link.target_name))
                .or_default()
                .push(at);
            let (plain, embeds) = written.entry(link.source.clone()).or_default();
            if link.embed {
                embeds.push(link.link.clone());
            } else {
                plain.push(link.link.clone());
            }
        }
        let mut world = World {
            rows: Vec::new(),
            narrowed: HashMap::new(),
            rest: OnceLock::new(),
            failure: Mutex::new(None),
            source: Source { index, visibility },
            resolver: OnceLock::new(),
            links,
            links_by_name,
            written,
            now: self.now().datetime(),
            zone: self.time_zone().clone(),
            // The vault's configuration, which reveals no note.
            types: self.walls.vault(visibility).property_types(),
            this,
            stop,
        };
        let entries: Vec<Entry> = world.visible_entries(records).collect();
        for entry in entries {
            if narrowing.admits(&entry.record.path, &entry.record.tags) {
                world
                    .rows
                    .push(Arc::clone(entry.facts(&world.zone, &world.types)));
            }
            world.narrowed.insert(entry.record.path.clone(), entry);
        }
        world.rows.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(world)
    }
}

impl Entry {
    fn facts(&self, zone: &TimeZone, types: &BTreeMap<String, String>) -> &Arc<FileFacts> {
        self.facts
            .get_or_init(|| Arc::new(facts(&self.record, &self.links, &self.embeds, zone, types)))
    }
}

/// The links whose source the caller may read. Links come grouped by source, so each source is
/// judged once.
fn visible_links(links: Vec<WrittenLink>, visibility: &Visibility) -> Vec<WrittenLink> {
    if visibility.unrestricted() {
        return links;
    }
    let mut judged: Option<(String, bool)> = None;
    links
        .into_iter()
        .filter(|link| match &judged {
            Some((source, shown)) if *source == link.source => *shown,
            _ => {
                let shown = visibility.shows(&link.source);
                judged = Some((link.source.clone(), shown));
                shown
            }
        })
        .collect()
}

impl World<'_> {
    /// The rows a view is evaluated over.
    pub(super) fn rows(&self) -> Vec<&dyn Row> {
        self.rows
            .iter()
            .map(|facts| facts.as_ref() as &dyn Row)
            .collect()
    }

    /// Why the files the narrowing left out could not be read, if a formula needed them.
    pub(super) fn failure(&self) -> Option<OpsError> {
        let mut failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        failure.take().map(OpsError::from)
    }

    /// The entries of `records` the caller may read. The index holds what a vault walk found,
    /// which hides nothing from a caller no rule restricts, so only a restricted caller pays for a
    /// check per file.
    fn visible_entries(&self, records: Vec<FileRecord>) -> impl Iterator<Item = Entry> + '_ {
        let unrestricted = self.source.visibility.unrestricted();
        records
            .into_iter()
            .filter(move |record| unrestricted || self.source.visibility.shows(&record.path))
            .map(|record| {
                let (links, embeds) = self.written.get(&record.path).cloned().unwrap_or_default();
                Entry {
                    record,
                    links,
                    embeds,
                    facts: OnceLock::new(),
                }
            })
    }

    /// The files the narrowing left out, read once.
    fn rest(&self) -> Option<&Rest> {
        let rest = self.rest.get_or_init(|| {
            let records = match self.source.index.file_records() {
                Ok(records) => records,
                Err(error) => {
                    let mut failure = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
                    *failure = Some(error);
                    return None;
                }
            };
            let mut files = HashMap::new();
            let mut paths: Vec<String> = self.narrowed.keys().cloned().collect();
            for entry in self.visible_entries(records) {
                if !self.narrowed.contains_key(&entry.record.path) {
                    paths.push(entry.record.path.clone());
                    files.insert(entry.record.path.clone(), entry);
                }
            }
            paths.sort();
            Some(Rest { files, paths })
        });
        rest.as_ref()
    }

    /// Obsidian's resolver over the files the caller may read, as if no other file existed.
    fn resolver(&self) -> &Resolver {
        self.resolver.get_or_init(|| {
            let paths = self
                .rest()
                .map(|rest| rest.paths.clone())
                .unwrap_or_default();
            Resolver::new(paths)
        })
    }
}

impl Environment for World<'_> {
    fn now(&self) -> DateTime {
        self.now
    }

    fn time_zone(&self) -> TimeZone {
        self.zone.clone()
    }

    fn this_path(&self) -> Option<&str> {
        self.this.as_deref()
    }

    fn resolve(&self, link: &str, from: &str) -> Option<String> {
        self.resolver()
            .resolve(link_path(link), from)
            .map(str::to_owned)
    }

    fn file(&self, path: &str) -> Option<Arc<FileFacts>> {
        let entry = match self.narrowed.get(path) {
            Some(entry) => entry,
            None => self.rest()?.files.get(path)?,
        };
        Some(Arc::clone(entry.facts(&self.zone, &self.types)))
    }

    fn interrupted(&self) -> bool {
        self.stop.cancelled.load(Ordering::Relaxed) || Instant::now() >= self.stop.deadline
    }

    /// The files the caller may read that link to `path`, each once, in path order.
    fn backlinks(&self, path: &str) -> Vec<String> {
        let Some(candidates) = self.links_by_name.get(&lookup_name(path)) else {
            return Vec::new();
        };
        let sources: BTreeSet<&str> = candidates
            .iter()
            .filter_map(|at| self.links.get(*at))
            .filter(|link| link.source != path)
            .filter(|link| {
                self.resolver().resolve(link_path(&link.link), &link.source) == Some(path)
            })
            .map(|link| link.source.as_str())
            .collect();
        sources.into_iter().map(str::to_owned).collect()
    }
}

/// One file's facts: times in the vault's zone, properties typed as Bases reads them under the
/// types the vault declares.
fn facts(
    record: &FileRecord,
    links: &[String],
    embeds: &[String],
    zone: &TimeZone,
    types: &BTreeMap<String, String>,
) -> FileFacts {
    let mtime = Timestamp::from_nanosecond(i128::from(record.mtime_ns)).ok();
    // The index keeps no birth time for attachments; their modification time stands in.
    let ctime = match record.created {
        Some(seconds) => Timestamp::from_second(seconds).ok(),
        None => mtime,
    };
    let civil = |at: Timestamp| at.to_zoned_datetime(zone.clone()).datetime();
    let properties = record
        .properties()
        .iter()
        .map(|(key, value)| {
            let declared = types.get(&key.to_lowercase()).map(String::as_str);
            let typed = from_typed_property(value, declared, &record.path, zone);
            (key.clone(), typed)
        })
        .collect();
    FileFacts {
        size: record.size,
        ctime: ctime.map(civil),
        mtime: mtime.map(civil),
        tags: record.tags.clone(),
        links: links.to_vec(),
        embeds: embeds.to_vec(),
        properties,
        path: record.path.clone(),
    }
}
