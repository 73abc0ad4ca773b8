//! The vault as one caller sees it, for the Bases evaluator: a row for every file the caller may
//! read (notes and attachments alike, as Obsidian offers every file), and an `Environment` whose
//! link resolution, backlinks and file lookups know only those files.
//!
//! Only the files whose path and tags can pass the view's filters (`narrow.rs`) become rows up
//! front; any other file's facts are made when a formula asks for it.
//!
//! Hidden files are absent rather than masked, as in `ops::links`: a link to a denied note reads
//! as a link to nothing, `[[Plans]]` resolves as if a denied `Plans.md` did not exist, and a denied
//! note's links never count as backlinks, so no answer tells which denied files exist.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use crate::bases::{Environment, FileFacts, Row, from_typed_property};
use crate::index::{FileRecord, WrittenLink};
use crate::markdown::links::{Resolver, link_path, lookup_name};
use crate::ops::access::Visibility;
use crate::ops::error::OpsError;
use crate::ops::shared::Ops;

use super::narrow::Narrowing;

/// Every file the caller may read, with what Bases reads of it.
pub(super) struct World {
    /// The files the narrowing admits, in path order: the order of a view's rows when it does
    /// not sort.
    rows: Vec<Arc<FileFacts>>,
    /// Every file the caller may read, for `file()`, `this` and links; the facts of one the
    /// narrowing left out are made when first asked for.
    files: HashMap<String, Entry>,
    /// The paths of `files`, in path order.
    paths: Vec<String>,
    /// Over `paths` only; built the first time a link is resolved.
    resolver: OnceLock<Resolver>,
    /// Links held by files the caller may read, for backlinks.
    links: Vec<WrittenLink>,
    /// Indexes into `links` by the folded name of the file each can resolve to, so backlinks
    /// resolve only the links that could lead to the file asked about.
    links_by_name: HashMap<String, Vec<usize>>,
    now: DateTime,
    zone: TimeZone,
    /// The property types `.obsidian/types.json` declares, by lowercased key.
    types: BTreeMap<String, String>,
    this: Option<String>,
}

/// One file as the index holds it, its facts made once.
struct Entry {
    record: FileRecord,
    links: Vec<String>,
    embeds: Vec<String>,
    facts: OnceLock<Arc<FileFacts>>,
}

impl Ops {
    /// The files `visibility` shows and the clock, for one query, rows made only for the files
    /// `narrowing` admits; with their links when `with_links` (reading every link is most of a
    /// large vault's cost, so a base that never mentions links or embeds goes without).
    pub(super) fn bases_world(
        &self,
        visibility: &Visibility,
        this: Option<String>,
        with_links: bool,
        narrowing: &Narrowing<'_>,
    ) -> Result<World, OpsError> {
        let index = self.walls.index(visibility);
        let records = index.file_records()?;
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
        let zone = self.time_zone().clone();
        // The vault's configuration, which reveals no note.
        let types = self.walls.vault(visibility).property_types();
        // The index holds what a vault walk found, which hides nothing from a caller no rule
        // restricts, so only a restricted caller pays for a check per file.
        let unrestricted = visibility.unrestricted();
        let mut files = HashMap::new();
        let mut rows = Vec::new();
        for record in records {
            if !(unrestricted || visibility.shows(&record.path)) {
                continue;
            }
            let (links, embeds) = written.remove(&record.path).unwrap_or_default();
            let entry = Entry {
                record,
                links,
                embeds,
                facts: OnceLock::new(),
            };
            if narrowing.admits(&entry.record.path, &entry.record.tags) {
                rows.push(Arc::clone(entry.facts(&zone, &types)));
            }
            files.insert(entry.record.path.clone(), entry);
        }
        rows.sort_by(|a, b| a.path.cmp(&b.path));
        let mut paths: Vec<String> = files.keys().cloned().collect();
        paths.sort();
        Ok(World {
            rows,
            files,
            paths,
            resolver: OnceLock::new(),
            links,
            links_by_name,
            now: self.now().datetime(),
            zone,
            types,
            this,
        })
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

impl World {
    /// The rows a view is evaluated over.
    pub(super) fn rows(&self) -> Vec<&dyn Row> {
        self.rows
            .iter()
            .map(|facts| facts.as_ref() as &dyn Row)
            .collect()
    }

    /// Obsidian's resolver over the files the caller may read, as if no other file existed.
    fn resolver(&self) -> &Resolver {
        self.resolver
            .get_or_init(|| Resolver::new(self.paths.iter().cloned()))
    }
}

impl Environment for World {
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
        self.files
            .get(path)
            .map(|entry| Arc::clone(entry.facts(&self.zone, &self.types)))
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
