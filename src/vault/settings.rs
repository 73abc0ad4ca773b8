//! Readers for the Obsidian settings in the vault's `.obsidian/` folder that Quire honours.
//!
//! Settings are read on use, so a change made in Obsidian applies without a restart. A missing or
//! malformed settings file means Obsidian's defaults; reading settings never fails a request.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use regex::Regex;

/// Obsidian's "Excluded files" (`userIgnoreFilters` in `.obsidian/app.json`): paths kept out of
/// search results. A filter written `/…/` is a regular expression tested against the path; any
/// other filter excludes the paths that start with it (`Archive/` excludes that folder).
#[derive(Debug, Clone, Default)]
pub struct ExcludedFiles {
    prefixes: Vec<String>,
    patterns: Vec<Regex>,
}

impl ExcludedFiles {
    pub fn read(root: &Path) -> ExcludedFiles {
        let settings = read_settings(root, "app.json");
        let filters = settings
            .get("userIgnoreFilters")
            .and_then(serde_json::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut excluded = ExcludedFiles::default();
        for filter in filters.iter().filter_map(serde_json::Value::as_str) {
            match filter
                .strip_prefix('/')
                .and_then(|rest| rest.strip_suffix('/'))
            {
                Some(pattern) if !pattern.is_empty() => match Regex::new(pattern) {
                    Ok(regex) => excluded.patterns.push(regex),
                    Err(error) => {
                        tracing::warn!(filter, %error, "ignoring an excluded-files pattern that is not a valid regular expression");
                    }
                },
                _ if !filter.is_empty() => excluded.prefixes.push(filter.to_string()),
                _ => {}
            }
        }
        excluded
    }

    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty() && self.patterns.is_empty()
    }

    /// Whether the vault-relative `path` is excluded from search results.
    pub fn excludes(&self, path: &str) -> bool {
        self.prefixes
            .iter()
            .any(|prefix| path.starts_with(prefix.as_str()))
            || self.patterns.iter().any(|pattern| pattern.is_match(path))
    }
}

/// A kind of periodic note: Obsidian's daily notes, and the Periodic Notes plugin's others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Daily,
    Weekly,
    Monthly,
    Quarterly,
    Yearly,
}

impl Period {
    pub fn name(self) -> &'static str {
        match self {
            Period::Daily => "daily",
            Period::Weekly => "weekly",
            Period::Monthly => "monthly",
            Period::Quarterly => "quarterly",
            Period::Yearly => "yearly",
        }
    }

    /// The format Obsidian and Periodic Notes use when none is set.
    pub fn default_format(self) -> &'static str {
        match self {
            Period::Daily => "YYYY-MM-DD",
            Period::Weekly => "gggg-[W]ww",
            Period::Monthly => "YYYY-MM",
            Period::Quarterly => "YYYY-[Q]Q",
            Period::Yearly => "YYYY",
        }
    }

    /// The section of Periodic Notes' settings: (`data.json` up to 0.0.x, 1.x calendar sets).
    fn plugin_keys(self) -> (&'static str, &'static str) {
        match self {
            Period::Daily => ("daily", "day"),
            Period::Weekly => ("weekly", "week"),
            Period::Monthly => ("monthly", "month"),
            Period::Quarterly => ("quarterly", "quarter"),
            Period::Yearly => ("yearly", "year"),
        }
    }
}

pub const DAILY_NOTES_SETTINGS: &str = ".obsidian/daily-notes.json";
pub const PERIODIC_NOTES_SETTINGS: &str = ".obsidian/plugins/periodic-notes/data.json";

/// Where periodic notes of one kind live and what a new one starts from, as Obsidian has them.
/// `folder` and `template` are as written in the settings (vault-relative, not yet validated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodicSettings {
    pub folder: String,
    pub format: String,
    pub template: Option<String>,
    /// The settings file they came from, or `None` for Obsidian's defaults.
    pub source: Option<&'static str>,
}

/// `[daily_notes]` in Quire's config: each value set there wins over Obsidian's setting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DailyNotesOverrides {
    pub folder: Option<String>,
    pub format: Option<String>,
    pub template: Option<String>,
    /// How Obsidian's language numbers weeks (`ww`, `gggg`); the vault does not record it.
    pub week_start: Option<WeekStart>,
}

/// The first day of the week in Obsidian's language, which decides moment's `w`/`gggg` weeks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeekStart {
    /// English (the default): Sunday first, week 1 holds January 1st.
    Sunday,
    /// Most European languages (German, French, British English...): Monday first, week 1
    /// holds January 4th, as ISO weeks.
    Monday,
}

impl DailyNotesOverrides {
    /// Whether every value Obsidian's file could give is set, so it need not be read at all.
    pub fn is_complete(&self) -> bool {
        self.folder.is_some() && self.format.is_some() && self.template.is_some()
    }

    /// `settings` with the configured values in place of Obsidian's.
    pub fn apply(&self, mut settings: PeriodicSettings) -> PeriodicSettings {
        let mut changed = false;
        if let Some(folder) = &self.folder {
            settings.folder = folder.clone();
            changed = true;
        }
        if let Some(format) = &self.format {
            settings.format = format.clone();
            changed = true;
        }
        if let Some(template) = &self.template {
            // An empty template in the config means "no template", whatever Obsidian says.
            settings.template = Some(template.clone()).filter(|t| !t.is_empty());
            changed = true;
        }
        if changed {
            settings.source = Some(match settings.source {
                Some(_) if !self.is_complete() => {
                    "Quire's [daily_notes] config over Obsidian's settings"
                }
                _ => "Quire's [daily_notes] config",
            });
        }
        settings
    }
}

/// Settings plus what went wrong reading them (each also logged as a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsRead {
    /// `None` when this kind of note is not set up in the vault (weekly notes without Periodic
    /// Notes, or with that kind switched off).
    pub settings: Option<PeriodicSettings>,
    pub warnings: Vec<String>,
}

impl PeriodicSettings {
    /// Reads the settings for `period` from the vault's `.obsidian/` folder, on every call.
    ///
    /// Daily notes come from Obsidian's `daily-notes.json`, or from Periodic Notes' daily section
    /// when that file is missing and the section is enabled, else Obsidian's defaults. Other
    /// periods come from Periodic Notes (its 0.x `data.json` layout or its 1.x calendar sets)
    /// when that kind is enabled there. A missing or malformed file never fails: it yields the
    /// defaults (or "not set up") and a warning.
    pub fn read(root: &Path, period: Period) -> SettingsRead {
        let mut warnings = Vec::new();
        let settings = if period == Period::Daily {
            match read_json(root, DAILY_NOTES_SETTINGS) {
                Json::Object(object) => Some(from_object(
                    &object,
                    period,
                    DAILY_NOTES_SETTINGS,
                    "template",
                    &mut warnings,
                )),
                Json::Missing => match periodic_section(root, period, &mut warnings) {
                    Some(settings) => Some(settings),
                    None => {
                        warnings.push(format!(
                                "{DAILY_NOTES_SETTINGS} does not exist; using Obsidian's defaults (daily notes named YYYY-MM-DD in the vault's root folder, no template)"
                            ));
                        Some(defaults(period))
                    }
                },
                Json::Invalid(why) => {
                    warnings.push(format!(
                        "{DAILY_NOTES_SETTINGS} {why}; using Obsidian's defaults (daily notes named YYYY-MM-DD in the vault's root folder, no template)"
                    ));
                    Some(defaults(period))
                }
            }
        } else {
            periodic_section(root, period, &mut warnings)
        };
        for warning in &warnings {
            tracing::warn!(period = period.name(), "{warning}");
        }
        SettingsRead { settings, warnings }
    }
}

fn defaults(period: Period) -> PeriodicSettings {
    PeriodicSettings {
        folder: String::new(),
        format: period.default_format().to_string(),
        template: None,
        source: None,
    }
}

enum Json {
    Object(serde_json::Map<String, serde_json::Value>),
    Missing,
    Invalid(String),
}

/// The largest settings file Quire reads: Obsidian's own are a few KiB, and one of tens of MB
/// would cost every call that reads it its parse and its memory.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

fn read_json(root: &Path, relative: &str) -> Json {
    let text = match read_capped(&root.join(relative)) {
        Ok(Some(text)) => text,
        Ok(None) => {
            return Json::Invalid(format!(
                "is over {MAX_SETTINGS_BYTES} bytes, more than Quire reads of a settings file"
            ));
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Json::Missing,
        Err(error) => return Json::Invalid(format!("cannot be read ({error})")),
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(object)) => Json::Object(object),
        Ok(_) => Json::Invalid("is not a JSON object".into()),
        Err(error) => Json::Invalid(format!(
            "is not valid JSON (line {}, column {})",
            error.line(),
            error.column()
        )),
    }
}

/// The text of the settings file at `path`, `None` when it is over `MAX_SETTINGS_BYTES` (judged
/// by the opened file's own size, and read no further than the cap should it grow meanwhile).
fn read_capped(path: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let Some((file, metadata)) = super::open_regular(path)? else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    };
    if metadata.len() > MAX_SETTINGS_BYTES {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Ok(None);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
}

/// One period's settings from an object with `folder`, `format` and a template key; a field of
/// the wrong type is ignored with a warning, an empty one means the default.
fn from_object(
    object: &serde_json::Map<String, serde_json::Value>,
    period: Period,
    source: &'static str,
    template_key: &str,
    warnings: &mut Vec<String>,
) -> PeriodicSettings {
    let mut text = |key: &str| match object.get(key) {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(value)) => {
            Some(value.trim().to_string()).filter(|value| !value.is_empty())
        }
        Some(other) => {
            warnings.push(format!(
                "{source}: {key} should be a string but is {other}; using the default"
            ));
            None
        }
    };
    PeriodicSettings {
        folder: text("folder").unwrap_or_default(),
        format: text("format").unwrap_or_else(|| period.default_format().to_string()),
        template: text(template_key),
        source: Some(source),
    }
}

/// The Periodic Notes plugin's section for `period`, when the plugin's settings exist and that
/// kind of note is enabled.
fn periodic_section(
    root: &Path,
    period: Period,
    warnings: &mut Vec<String>,
) -> Option<PeriodicSettings> {
    let object = match read_json(root, PERIODIC_NOTES_SETTINGS) {
        Json::Object(object) => object,
        Json::Missing => return None,
        Json::Invalid(why) => {
            warnings.push(format!(
                "{PERIODIC_NOTES_SETTINGS} {why}; {} notes are not available until it is fixed",
                period.name()
            ));
            return None;
        }
    };
    let (legacy_key, set_key) = period.plugin_keys();
    // 1.x keeps sections in named calendar sets; the active one applies.
    if let Some(sets) = object.get("calendarSets").and_then(|sets| sets.as_array()) {
        let active = object.get("activeCalendarSet").and_then(|id| id.as_str());
        let set = sets
            .iter()
            .find(|set| active.is_some() && set.get("id").and_then(|id| id.as_str()) == active)
            .or_else(|| sets.first())?;
        let section = set.get(set_key)?.as_object()?;
        return enabled(section).then(|| {
            from_object(
                section,
                period,
                PERIODIC_NOTES_SETTINGS,
                "templatePath",
                warnings,
            )
        });
    }
    let section = object.get(legacy_key)?.as_object()?;
    enabled(section).then(|| {
        from_object(
            section,
            period,
            PERIODIC_NOTES_SETTINGS,
            "template",
            warnings,
        )
    })
}

fn enabled(section: &serde_json::Map<String, serde_json::Value>) -> bool {
    section.get("enabled").and_then(serde_json::Value::as_bool) == Some(true)
}

/// Reads one of Obsidian's JSON settings files (`file` inside `.obsidian/`) through `read_json`;
/// missing or malformed means Obsidian's defaults (`Null`), the latter with a warning.
fn read_settings(root: &Path, file: &str) -> serde_json::Value {
    match read_json(root, &format!(".obsidian/{file}")) {
        Json::Object(object) => serde_json::Value::Object(object),
        Json::Missing => serde_json::Value::Null,
        Json::Invalid(why) => {
            tracing::warn!(
                file,
                "an Obsidian settings file {why}; using Obsidian's defaults"
            );
            serde_json::Value::Null
        }
    }
}

/// Obsidian's "New link format" (`newLinkFormat` in `.obsidian/app.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewLinkFormat {
    /// The bare name when it is unique in the vault, else the vault path (Obsidian's default).
    #[default]
    Shortest,
    /// The path relative to the linking note.
    Relative,
    /// The vault path.
    Absolute,
}

/// How Obsidian writes new links: the form a move uses where it must write a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkSettings {
    pub new_link_format: NewLinkFormat,
    /// `useMarkdownLinks`: `[text](path.md)` instead of `[[path]]` (Obsidian's default is wikilinks).
    pub use_markdown_links: bool,
}

impl LinkSettings {
    pub fn read(root: &Path) -> LinkSettings {
        let settings = read_settings(root, "app.json");
        LinkSettings {
            new_link_format: match settings
                .get("newLinkFormat")
                .and_then(serde_json::Value::as_str)
            {
                Some("relative") => NewLinkFormat::Relative,
                Some("absolute") => NewLinkFormat::Absolute,
                _ => NewLinkFormat::Shortest,
            },
            use_markdown_links: settings
                .get("useMarkdownLinks")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }
}

/// The property types the vault declares in `.obsidian/types.json` (`{"types": {"key": "number"}}`),
/// as Obsidian's Properties view sets them: key (lowercased: Obsidian gives a name one type
/// whatever its case) to type name (`text`, `multitext`, `number`, `checkbox`, `date`,
/// `datetime`, `aliases`, `tags`). Missing, invalid or over `MAX_SETTINGS_BYTES` means none
/// declared.
pub fn property_types(root: &Path) -> BTreeMap<String, String> {
    types_from(&read_settings(root, "types.json"))
}

fn types_from(settings: &serde_json::Value) -> BTreeMap<String, String> {
    let Some(types) = settings.get("types").and_then(serde_json::Value::as_object) else {
        return BTreeMap::new();
    };
    types
        .iter()
        .filter_map(|(key, kind)| Some((key.to_lowercase(), kind.as_str()?.to_owned())))
        .collect()
}

/// `.obsidian/types.json` parsed once and kept until the file changes: every base query, property
/// listing and property edit reads it, and re-reading and parsing it each time made a large file
/// cost every such call (a 70 MB one 0.7 to 1.2 s and 400 MB per query). A `stat` per call tells
/// whether it changed: device, inode, size, modification and change times.
#[derive(Debug, Default)]
pub struct PropertyTypesCache {
    kept: Mutex<Option<(FileStamp, PropertyTypes)>>,
}

/// Declared types by lowercased key, shared by every call reading the same version of the file.
pub type PropertyTypes = Arc<BTreeMap<String, String>>;

/// What tells one version of a file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    device: u64,
    inode: u64,
    size: u64,
    modified_ns: i128,
    changed_ns: i128,
}

impl FileStamp {
    fn of(metadata: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified_ns: i128::from(metadata.mtime()) * 1_000_000_000
                + i128::from(metadata.mtime_nsec()),
            changed_ns: i128::from(metadata.ctime()) * 1_000_000_000
                + i128::from(metadata.ctime_nsec()),
        }
    }
}

impl PropertyTypesCache {
    /// The types `root`'s `.obsidian/types.json` declares now.
    pub fn current(&self, root: &Path) -> PropertyTypes {
        let path = root.join(".obsidian/types.json");
        let Ok(metadata) = std::fs::metadata(&path) else {
            return Arc::default();
        };
        let stamp = FileStamp::of(&metadata);
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((kept_stamp, types)) = kept.as_ref()
            && *kept_stamp == stamp
        {
            return Arc::clone(types);
        }
        let types = Arc::new(property_types(root));
        *kept = Some((stamp, Arc::clone(&types)));
        types
    }
}

/// The daily-notes folder as the daily-note tools find it (`daily-notes.json`, else the Periodic
/// Notes plugin's daily section), without leading or trailing `/`; `""` is the vault root. Read
/// quietly, on every call: a missing file is Obsidian's default (the root). `Err` says why a
/// `daily-notes.json` that exists cannot be used, so a caller guarding that folder can refuse
/// rather than guess.
pub fn daily_notes_folder(root: &Path) -> Result<String, String> {
    let folder = match read_json(root, DAILY_NOTES_SETTINGS) {
        Json::Object(object) => object
            .get("folder")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Json::Missing => periodic_section(root, Period::Daily, &mut Vec::new())
            .map(|settings| settings.folder)
            .unwrap_or_default(),
        Json::Invalid(why) => return Err(format!("{DAILY_NOTES_SETTINGS} {why}")),
    };
    Ok(folder.trim().trim_matches('/').to_owned())
}

/// The folders Obsidian fills with notes nobody links to by design: the daily notes folder
/// (`.obsidian/daily-notes.json` `folder`) and the templates folder (`.obsidian/templates.json`
/// `folder`), without leading or trailing `/`. Unset folders are left out.
pub fn generated_note_folders(root: &Path) -> Vec<String> {
    ["daily-notes.json", "templates.json"]
        .into_iter()
        .filter_map(|file| {
            read_settings(root, file)
                .get("folder")
                .and_then(serde_json::Value::as_str)
                .map(|folder| folder.trim_matches('/').to_owned())
        })
        .filter(|folder| !folder.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r63_property_types_are_parsed_once_per_version_of_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = PropertyTypesCache::default();
        assert!(cache.current(dir.path()).is_empty());
        std::fs::create_dir(dir.path().join(".obsidian")).expect("mkdir");
        let file = dir.path().join(".obsidian/types.json");
        std::fs::write(&file, r#"{"types": {"Rating": "number"}}"#).expect("write");
        let first = cache.current(dir.path());
        assert_eq!(first.get("rating").map(String::as_str), Some("number"));
        assert!(
            Arc::ptr_eq(&first, &cache.current(dir.path())),
            "kept while unchanged"
        );
        std::fs::write(&file, r#"{"types": {"rating": "text"}}"#).expect("write");
        let changed = cache.current(dir.path());
        assert_eq!(changed.get("rating").map(String::as_str), Some("text"));
        // Over the cap: not read, as if no types were declared.
        let padded = format!(
            r#"{{"types": {{"rating": "number"}}}}{}"#,
            " ".repeat(2 << 20)
        );
        std::fs::write(&file, padded).expect("write");
        assert!(cache.current(dir.path()).is_empty());
    }

    #[test]
    fn link_settings_and_generated_folders() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(LinkSettings::read(dir.path()), LinkSettings::default());
        std::fs::create_dir(dir.path().join(".obsidian")).expect("mkdir");
        std::fs::write(
            dir.path().join(".obsidian/app.json"),
            r#"{"newLinkFormat": "relative", "useMarkdownLinks": true}"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join(".obsidian/daily-notes.json"),
            r#"{"folder": "/Daily/"}"#,
        )
        .expect("write");
        std::fs::write(
            dir.path().join(".obsidian/templates.json"),
            r#"{"folder": ""}"#,
        )
        .expect("write");
        let settings = LinkSettings::read(dir.path());
        assert_eq!(settings.new_link_format, NewLinkFormat::Relative);
        assert!(settings.use_markdown_links);
        assert_eq!(generated_note_folders(dir.path()), vec!["Daily".to_owned()]);
    }

    #[test]
    fn prefixes_and_patterns() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join(".obsidian")).expect("mkdir");
        std::fs::write(
            dir.path().join(".obsidian/app.json"),
            r#"{"userIgnoreFilters": ["Archive/", "/\\.draft\\.md$/", "/[/", ""]}"#,
        )
        .expect("write");
        let excluded = ExcludedFiles::read(dir.path());
        assert!(excluded.excludes("Archive/2025.md"));
        assert!(excluded.excludes("Inbox/idea.draft.md"));
        assert!(!excluded.excludes("Archived.md"));
        assert!(!excluded.excludes("Inbox/idea.md"));
        assert!(ExcludedFiles::read(&dir.path().join("missing")).is_empty());
    }

    fn vault_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        dir
    }

    #[test]
    fn daily_notes_settings_and_their_fallbacks() {
        let vault = vault_with(&[(
            DAILY_NOTES_SETTINGS,
            r#"{"folder": "Journal/", "format": "YYYY/MM/YYYY-MM-DD", "template": "Templates/Day"}"#,
        )]);
        let read = PeriodicSettings::read(vault.path(), Period::Daily);
        assert!(read.warnings.is_empty(), "{:?}", read.warnings);
        assert_eq!(
            read.settings,
            Some(PeriodicSettings {
                folder: "Journal/".into(),
                format: "YYYY/MM/YYYY-MM-DD".into(),
                template: Some("Templates/Day".into()),
                source: Some(DAILY_NOTES_SETTINGS),
            })
        );

        // Empty values are Obsidian's defaults, silently; wrong types are defaults with a warning.
        let vault = vault_with(&[(
            DAILY_NOTES_SETTINGS,
            r#"{"folder": "", "format": "  ", "template": 7, "autorun": true}"#,
        )]);
        let read = PeriodicSettings::read(vault.path(), Period::Daily);
        let settings = read.settings.expect("settings");
        assert_eq!(
            (settings.folder.as_str(), settings.format.as_str()),
            ("", "YYYY-MM-DD")
        );
        assert_eq!(settings.template, None);
        assert_eq!(read.warnings.len(), 1);
        assert!(read.warnings[0].contains("template"), "{:?}", read.warnings);

        for (broken, why) in [
            ("{\"folder\": ", "not valid JSON"),
            ("[1, 2]", "not a JSON object"),
            ("", "not valid JSON"),
        ] {
            let vault = vault_with(&[(DAILY_NOTES_SETTINGS, broken)]);
            let read = PeriodicSettings::read(vault.path(), Period::Daily);
            assert_eq!(read.settings, Some(defaults(Period::Daily)), "{broken:?}");
            assert!(read.warnings[0].contains(why), "{:?}", read.warnings);
            assert!(read.warnings[0].contains("defaults"), "{:?}", read.warnings);
        }

        let empty = vault_with(&[]);
        let read = PeriodicSettings::read(empty.path(), Period::Daily);
        assert_eq!(read.settings, Some(defaults(Period::Daily)));
        assert!(read.warnings[0].contains("does not exist"));
        // Without the plugin there are no weekly notes, and nothing to warn about.
        let read = PeriodicSettings::read(empty.path(), Period::Weekly);
        assert_eq!((read.settings, read.warnings.len()), (None, 0));
    }

    #[test]
    fn periodic_notes_plugin_settings_in_both_layouts() {
        let legacy = r#"{
            "daily": {"enabled": true, "folder": "Days", "format": "", "template": ""},
            "weekly": {"enabled": true, "folder": "Weeks", "format": "GGGG-[W]WW", "template": "T/Week"},
            "monthly": {"enabled": false, "folder": "Months"}
        }"#;
        let vault = vault_with(&[(PERIODIC_NOTES_SETTINGS, legacy)]);
        let weekly = PeriodicSettings::read(vault.path(), Period::Weekly)
            .settings
            .expect("weekly enabled");
        assert_eq!(weekly.folder, "Weeks");
        assert_eq!(weekly.format, "GGGG-[W]WW");
        assert_eq!(weekly.template.as_deref(), Some("T/Week"));
        assert_eq!(
            PeriodicSettings::read(vault.path(), Period::Monthly).settings,
            None
        );
        assert_eq!(
            PeriodicSettings::read(vault.path(), Period::Yearly).settings,
            None
        );
        // daily-notes.json is missing, so the plugin's enabled daily section applies.
        let daily = PeriodicSettings::read(vault.path(), Period::Daily);
        assert!(daily.warnings.is_empty());
        let daily = daily.settings.expect("daily");
        assert_eq!(
            (daily.folder.as_str(), daily.format.as_str()),
            ("Days", "YYYY-MM-DD")
        );

        let sets = r#"{
            "activeCalendarSet": "Work",
            "calendarSets": [
                {"id": "Home", "month": {"enabled": true, "folder": "Home", "format": "YYYY-MM"}},
                {"id": "Work", "month": {"enabled": true, "folder": "Work/Months", "format": "MMMM YYYY", "templatePath": "T/Month.md"},
                 "week": {"enabled": false}}
            ]
        }"#;
        let vault = vault_with(&[(PERIODIC_NOTES_SETTINGS, sets)]);
        let monthly = PeriodicSettings::read(vault.path(), Period::Monthly)
            .settings
            .expect("monthly");
        assert_eq!(monthly.folder, "Work/Months");
        assert_eq!(monthly.format, "MMMM YYYY");
        assert_eq!(monthly.template.as_deref(), Some("T/Month.md"));
        assert_eq!(
            PeriodicSettings::read(vault.path(), Period::Weekly).settings,
            None
        );

        let vault = vault_with(&[(PERIODIC_NOTES_SETTINGS, "{oops")]);
        let read = PeriodicSettings::read(vault.path(), Period::Weekly);
        assert_eq!(read.settings, None);
        assert!(
            read.warnings[0].contains("not valid JSON"),
            "{:?}",
            read.warnings
        );
    }
}
