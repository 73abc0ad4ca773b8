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
use crate::index::{FileRecord, LinkGraph, StoredLink};
use crate::markdown::links::{Resolver, link_path};
use crate::ops::access::Visibility;
use crate::ops::error::OpsError;
use crate::ops::shared::{Context, Ops};

/// Every file the caller may read, with what Bases reads of it.
pub(super) struct World {
    /// In path order: the order of a view's rows when it does not sort.
    rows: Vec<Arc<FileFacts>>,
    by_path: HashMap<String, Arc<FileFacts>>,
    /// Over the files the caller may read only.
    resolver: Resolver,
    /// Links held by files the caller may read, for backlinks.
    links: Vec<StoredLink>,
    /// Resolved the first time a formula reads `file.backlinks`.
    backlinks: OnceLock<HashMap<String, Vec<String>>>,
    now: DateTime,
    zone: TimeZone,
    this: Option<String>,
}

impl Ops {
    /// The files `visibility` shows, with their links, and the clock, for one query.
    pub(super) fn bases_world(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        this: Option<String>,
    ) -> Result<World, OpsError> {
        let index = self.walls.index(visibility);
        let records = index.file_records()?;
        let LinkGraph { resolver, .. } = self.graph_for(ctx, visibility)?;
        let links: Vec<StoredLink> = index
            .all_links()?
            .into_iter()
            .filter(|link| visibility.shows(&link.source))
            .collect();
        let zone = self.time_zone().clone();
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
            .filter(|record| visibility.shows(&record.path))
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
            resolver,
            links,
            backlinks: OnceLock::new(),
            now: self.now().datetime(),
            zone,
            this,
        })
    }
}

impl World {
    /// The rows a view is evaluated over.
    pub(super) fn rows(&self) -> Vec<&dyn Row> {
        self.rows
            .iter()
            .map(|facts| facts.as_ref() as &dyn Row)
            .collect()
    }

    /// Sources linking to each file, each source once, in path order.
    fn backlink_map(&self) -> &HashMap<String, Vec<String>> {
        self.backlinks.get_or_init(|| {
            let mut sets: HashMap<String, BTreeSet<String>> = HashMap::new();
            for link in &self.links {
                if let Some(target) = self.resolver.resolve(link.path(), &link.source)
                    && target != link.source
                {
                    sets.entry(target.to_owned())
                        .or_default()
                        .insert(link.source.clone());
                }
            }
            sets.into_iter()
                .map(|(target, sources)| (target, sources.into_iter().collect()))
                .collect()
        })
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
        self.resolver
            .resolve(link_path(link), from)
            .map(str::to_owned)
    }

    fn file(&self, path: &str) -> Option<Arc<FileFacts>> {
        self.by_path.get(path).cloned()
    }

    fn backlinks(&self, path: &str) -> Vec<String> {
        self.backlink_map().get(path).cloned().unwrap_or_default()
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
