//! The vault as one caller sees it, for the Bases evaluator: a row for every file the caller may
//! read (notes and attachments alike, as Obsidian offers every file), and an `Environment` whose
//! link resolution, backlinks and file lookups know only those files.
//!
//! Hidden files are absent rather than masked, as in `ops::links`: a link to a denied note reads
//! as a link to nothing, `[[Plans]]` resolves as if a denied `Plans.md` did not exist, and a denied
//! note's links never count as backlinks, so no answer tells which denied files exist.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use crate::bases::{Environment, FileFacts, Row, from_property};
use crate::index::{FileRecord, WrittenLink};
use crate::markdown::links::{Resolver, link_path, lookup_name};
use crate::ops::access::Visibility;
use crate::ops::error::OpsError;
use crate::ops::shared::Ops;

/// Every file the caller may read, with what Bases reads of it.
pub(super) struct World {
    /// In path order: the order of a view's rows when it does not sort.
    rows: Vec<Arc<FileFacts>>,
    by_path: HashMap<String, Arc<FileFacts>>,
    /// Over the rows' files only; built the first time a link is resolved.
    resolver: OnceLock<Resolver>,
    /// Links held by files the caller may read, for backlinks.
    links: Vec<WrittenLink>,
    /// Indexes into `links` by the folded name of the file each can resolve to, so backlinks
    /// resolve only the links that could lead to the file asked about.
    links_by_name: HashMap<String, Vec<usize>>,
    now: DateTime,
    zone: TimeZone,
    this: Option<String>,
}

impl Ops {
    /// The files `visibility` shows and the clock, for one query; with their links when
    /// `with_links` (reading every link is most of a large vault's cost, so a base that never
    /// mentions links or embeds goes without).
    pub(super) fn bases_world(
        &self,
        visibility: &Visibility,
        this: Option<String>,
        with_links: bool,
    ) -> Result<World, OpsError> {
        let index = self.walls.index(visibility);
        let records = index.file_records()?;
        let links = if with_links {
            visible_links(index.written_links()?, visibility)
        } else {
            Vec::new()
        };
        let zone = self.time_zone().clone();
        let unrestricted = visibility.unrestricted();
        let mut links_by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut links = links;
        for (at, link) in links.iter_mut().enumerate() {
            links_by_name
                .entry(std::mem::take(&mut link.target_name))
                .or_default()
                .push(at);
        }
        let mut written: HashMap<&str, (Vec<String>, Vec<String>)> = HashMap::new();
        for link in &links {
            let (plain, embeds) = written.entry(link.source.as_str()).or_default();
            if link.embed {
                embeds.push(link.link.clone());
            } else {
                plain.push(link.link.clone());
            }
        }
        let mut rows: Vec<Arc<FileFacts>> = records
            .into_iter()
            // The index holds what a vault walk found, which hides nothing from a caller no rule
            // restricts, so only a restricted caller pays for a check per file.
            .filter(|record| unrestricted || visibility.shows(&record.path))
            .map(|record| {
                let (links, embeds) = written.remove(record.path.as_str()).unwrap_or_default();
                Arc::new(facts(record, links, embeds, &zone))
            })
            .collect();
        rows.sort_by(|a, b| a.path.cmp(&b.path));
        let by_path = rows
            .iter()
            .map(|facts| (facts.path.clone(), Arc::clone(facts)))
            .collect();
        Ok(World {
            rows,
            by_path,
            resolver: OnceLock::new(),
            links,
            links_by_name,
            now: self.now().datetime(),
            zone,
            this,
        })
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
            .get_or_init(|| Resolver::new(self.rows.iter().map(|facts| facts.path.clone())))
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
        self.by_path.get(path).cloned()
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

/// One file's facts: times in the vault's zone, properties typed as Bases reads them.
fn facts(
    record: FileRecord,
    links: Vec<String>,
    embeds: Vec<String>,
    zone: &TimeZone,
) -> FileFacts {
    let mtime = Timestamp::from_nanosecond(i128::from(record.mtime_ns)).ok();
    // The index keeps no birth time for attachments; their modification time stands in.
    let ctime = match record.created {
        Some(seconds) => Timestamp::from_second(seconds).ok(),
        None => mtime,
    };
    let civil = |at: Timestamp| at.to_zoned_datetime(zone.clone()).datetime();
    let properties = record
        .properties
        .iter()
        .map(|(key, value)| (key.clone(), from_property(value, &record.path, zone)))
        .collect();
    FileFacts {
        size: record.size,
        ctime: ctime.map(civil),
        mtime: mtime.map(civil),
        tags: record.tags,
        links,
        embeds,
        properties,
        path: record.path,
    }
}
