//! What the evaluator asks of the world, as traits the caller implements: a `Row` (the file a
//! filter or formula is evaluated for) and an `Environment` (the clock, the time zone, `this`,
//! link resolution and other files). The index implements them over its tables; tests implement
//! them over an in-memory vault. Nothing here does I/O itself.

use std::sync::Arc;

use jiff::civil::DateTime;
use jiff::tz::TimeZone;

use super::value::Value;

/// What Bases knows of one file. `name`, `basename`, `folder` and `ext` are derived from `path`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFacts {
    /// Vault-relative, with `/` separators: `Projects/Plan.md`.
    pub path: String,
    pub size: u64,
    pub ctime: Option<DateTime>,
    pub mtime: Option<DateTime>,
    /// Tags of the content and the properties, without `#`.
    pub tags: Vec<String>,
    /// Link targets as written in the content and the properties (`Note`, `Folder/Note#Heading`).
    pub links: Vec<String>,
    /// Embed targets as written (`image.png`, `Note`).
    pub embeds: Vec<String>,
    /// The note's properties in the order written, already typed (`Value::from_property`).
    pub properties: Vec<(String, Value)>,
}

impl FileFacts {
    /// `Plan.md`
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// `Plan`
    pub fn basename(&self) -> &str {
        let name = self.name();
        match name.rfind('.') {
            Some(dot) if dot > 0 => &name[..dot],
            _ => name,
        }
    }

    /// `md`
    pub fn ext(&self) -> &str {
        let name = self.name();
        match name.rfind('.') {
            Some(dot) if dot > 0 => &name[dot + 1..],
            _ => "",
        }
    }

    /// `Projects`, or `/` for a file at the vault root (as Obsidian's `file.folder` reads).
    pub fn folder(&self) -> &str {
        match self.path.rfind('/') {
            Some(slash) => &self.path[..slash],
            None => "/",
        }
    }

    pub fn property(&self, key: &str) -> Option<&Value> {
        self.properties
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }
}

/// The file an expression is evaluated for.
pub trait Row {
    fn facts(&self) -> &FileFacts;

    /// A note property by name; `None` when the note does not have it.
    fn property(&self, key: &str) -> Option<Value> {
        self.facts().property(key).cloned()
    }
}

impl Row for FileFacts {
    fn facts(&self) -> &FileFacts {
        self
    }
}

/// Everything outside the row: injected so evaluation is pure and tests are exact.
pub trait Environment {
    /// The current wall-clock time, for `now()`, `today()` and `relative()`.
    fn now(&self) -> DateTime;

    /// The zone wall-clock dates are in, for epoch milliseconds and text with an offset.
    fn time_zone(&self) -> TimeZone {
        TimeZone::UTC
    }

    /// The path `this` stands for: the base file, the embedding note, or the active file.
    fn this_path(&self) -> Option<&str> {
        None
    }

    /// The path of the file `link` (a target without brackets, possibly with a `#subpath`) leads
    /// to when written in `from`; `None` when it leads nowhere.
    fn resolve(&self, link: &str, from: &str) -> Option<String>;

    /// The facts of another file (`file("...")`, `link.asFile()`, `this`), `None` when absent.
    fn file(&self, path: &str) -> Option<Arc<FileFacts>>;

    /// The paths of files linking to `path` (`file.backlinks`); costly, so asked only when used.
    fn backlinks(&self, path: &str) -> Vec<String> {
        let _ = path;
        Vec::new()
    }

    /// A number in [0, 1) for `random()`. The default is fixed so evaluation stays repeatable;
    /// the caller overrides it for a view that should shuffle.
    fn random(&self) -> f64 {
        0.5
    }

    /// Whether the evaluation should stop now (a deadline passed, the request was cancelled).
    /// Asked every few thousand steps and between rows, so it must be cheap.
    fn interrupted(&self) -> bool {
        false
    }
}
