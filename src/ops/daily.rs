//! Daily notes (and Periodic Notes' weekly, monthly, quarterly and yearly notes): find the note for
//! a date, create it from its template, and append timestamped lines to it.
//!
//! Settings come from the vault's `.obsidian/` on every call (`vault::PeriodicSettings`), with
//! `[daily_notes]` from Quire's config winning; "today" comes from the configured time zone
//! (`clock.rs`). Paths are formatted with the pure moment.js formatter and then pass
//! `VaultPath::parse` like any client path, so the ACL applies exactly as for any other note: a
//! daily note the caller may not read is missing, one it may not write is forbidden.
//! Appends share the editors' read-modify-write (`edit.rs`): one write under the note's lock, a
//! conflict (never a lost edit) when someone else wrote the note in between.

use jiff::civil::Date;

use super::edit::{Outcome, apply, edit_error, keep_properties};
use super::error::OpsError;
use super::inputs::{find_heading, parse_revision};
use super::shared::{Context, Ops, rfc3339};
use crate::markdown::moment::{self, ISO_WEEKS, LOCALE_WEEKS, WeekRule};
use crate::markdown::sections::{self, PatchOperation};
use crate::markdown::template::{self, TemplateValues};
use crate::vault::{
    DailyNotesOverrides, Period, PeriodicSettings, VaultError, VaultPath, WeekStart,
};

#[derive(Debug, Clone)]
pub struct GetDailyNote {
    /// `YYYY-MM-DD`, `today`, `yesterday` or `tomorrow`; `None` is today.
    pub date: Option<String>,
    pub period: Period,
    pub create: bool,
}

#[derive(Debug, Clone)]
pub struct AppendDailyNote {
    pub text: String,
    pub heading: Option<String>,
    pub date: Option<String>,
    pub period: Period,
    pub expected_revision: Option<String>,
}

/// The settings a call used, reported so a client can tell where notes go and why.
#[derive(Debug, Clone)]
pub struct PeriodicSettingsUsed {
    pub folder: String,
    pub format: String,
    pub template: Option<String>,
    /// The file (or config) they came from; "Obsidian's defaults" when there was none.
    pub source: String,
}

#[derive(Debug, Clone)]
pub struct DailyNote {
    pub path: String,
    pub period: Period,
    /// The first day of the note's period (the day itself for daily notes), `YYYY-MM-DD`.
    pub date: String,
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    pub content: String,
    /// True when this call created the note.
    pub created: bool,
    pub settings: PeriodicSettingsUsed,
    /// Settings problems worked around (also logged); empty when all was well.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct AppendedDailyNote {
    pub path: String,
    pub period: Period,
    pub date: String,
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    /// True when the note did not exist and was created (from its template) by this append.
    pub created: bool,
    /// True when `heading` was missing and was added at the end of the note.
    pub heading_created: bool,
    /// The lines written, exactly (`- HH:MM text`).
    pub appended: String,
    /// 1-based first and last line of what was appended.
    pub lines: Option<(usize, usize)>,
    pub settings: PeriodicSettingsUsed,
    pub warnings: Vec<String>,
}

/// One resolved periodic note: where it is and how to create it.
struct Target {
    path: VaultPath,
    period: Period,
    start: Date,
    settings: PeriodicSettings,
    warnings: Vec<String>,
}

impl Ops {
    /// `[daily_notes]` from the config: values that win over `.obsidian/daily-notes.json`.
    pub fn with_daily_notes(mut self, overrides: DailyNotesOverrides) -> Ops {
        self.daily_notes = overrides;
        self
    }

    pub fn get_daily_note(
        &self,
        ctx: &Context,
        request: GetDailyNote,
    ) -> Result<DailyNote, OpsError> {
        let mut target = self.periodic_target(request.date.as_deref(), request.period)?;
        let path = target.path.clone();
        let missing = || missing_note(&path, request.period);
        if let Some(readable) = self.readable(ctx, &path) {
            match self.walls.vault(&readable).read(&path) {
                Ok(file) => {
                    let content = String::from_utf8(file.bytes).map_err(|error| {
                        OpsError::invalid_argument(format!(
                            "'{path}' is not valid UTF-8 text (the first invalid byte is at offset {}); Quire reads notes as UTF-8. Convert the file to UTF-8 and retry.",
                            error.utf8_error().valid_up_to()
                        ))
                    })?;
                    return Ok(DailyNote {
                        path: path.to_string(),
                        period: target.period,
                        date: target.start.to_string(),
                        revision: file.revision.to_string(),
                        bytes: content.len() as u64,
                        modified: rfc3339(file.modified),
                        content,
                        created: false,
                        settings: used(&target.settings),
                        warnings: target.warnings,
                    });
                }
                Err(VaultError::NotFound { .. }) if !request.create => return Err(missing()),
                Err(VaultError::NotFound { .. }) => {}
                Err(error) => return Err(OpsError::from_vault(error, None)),
            }
        } else if !request.create {
            // Recorded as a refused read, answered with the very text a missing note gets.
            let _refused = self.require_read(ctx, &path);
            return Err(missing());
        }
        let writable = self.require_write(ctx, &path)?;
        let template_warnings = std::cell::RefCell::new(Vec::new());
        let initial = || self.initial_text(ctx, &target, &mut template_warnings.borrow_mut());
        // Created under the note's lock; if it appeared meanwhile, it is returned as it is.
        let mut content = None;
        let note = self.read_modify_write(ctx, &writable, None, Some(&initial), |_, text| {
            content = Some(text.to_string());
            Ok(unchanged(text))
        })?;
        target.warnings.extend(template_warnings.into_inner());
        Ok(DailyNote {
            path: path.to_string(),
            period: target.period,
            date: target.start.to_string(),
            revision: note.revision,
            bytes: note.bytes,
            modified: note.modified,
            content: content.unwrap_or_default(),
            created: note.created,
            settings: used(&target.settings),
            warnings: target.warnings,
        })
    }

    pub fn append_daily_note(
        &self,
        ctx: &Context,
        request: AppendDailyNote,
    ) -> Result<AppendedDailyNote, OpsError> {
        if request.text.trim().is_empty() {
            return Err(OpsError::invalid_argument(
                "text is empty; pass the words to log, e.g. \"Called the bank\"",
            ));
        }
        let heading = request.heading.as_deref().map(parse_heading).transpose()?;
        let mut target = self.periodic_target(request.date.as_deref(), request.period)?;
        let path = target.path.clone();
        let writable = self.require_write(ctx, &path)?;
        let expected = parse_revision(request.expected_revision.as_deref())?;
        let appended = log_lines(&self.now().strftime("%H:%M").to_string(), &request.text);
        let mut heading_created = false;
        let template_warnings = std::cell::RefCell::new(Vec::new());
        let initial = || self.initial_text(ctx, &target, &mut template_warnings.borrow_mut());
        let edited = self.read_modify_write(
            ctx,
            &writable,
            expected.as_ref(),
            Some(&initial),
            |path, text| {
                let outcome = match &heading {
                    None => apply(
                        sections::patch_body(text, PatchOperation::Append, &appended)
                            .map_err(|error| edit_error(path, error))?,
                        text,
                    )?,
                    Some((name, level)) => match find_heading(path, text, name, *level) {
                        Ok(found) => apply(
                            sections::patch_section(
                                text,
                                &found,
                                true,
                                PatchOperation::Append,
                                &appended,
                            )
                            .map_err(|error| edit_error(path, error))?,
                            text,
                        )?,
                        Err(OpsError::HeadingNotFound { .. }) => {
                            heading_created = true;
                            with_new_heading(text, name, level.unwrap_or(2), &appended)
                        }
                        Err(error) => return Err(error),
                    },
                };
                keep_properties(path, text, outcome)
            },
        )?;
        target.warnings.extend(template_warnings.into_inner());
        if let Some(copy) = &edited.conflict_copy {
            target.warnings.push(format!(
                "another writer changed the note while this append replaced it; the append is in place and their version is kept as '{copy}': read it and merge what it adds"
            ));
        }
        Ok(AppendedDailyNote {
            path: path.to_string(),
            period: target.period,
            date: target.start.to_string(),
            revision: edited.revision,
            bytes: edited.bytes,
            modified: edited.modified,
            created: edited.created,
            heading_created,
            appended,
            lines: edited.lines,
            settings: used(&target.settings),
            warnings: target.warnings,
        })
    }

    /// The settings for `period` (Obsidian's, with the config's `[daily_notes]` winning for daily
    /// notes), the date the caller meant, and the note's path.
    fn periodic_target(&self, date: Option<&str>, period: Period) -> Result<Target, OpsError> {
        let (settings, warnings) = self.periodic_settings(period)?;
        let day = self.parse_day(date)?;
        self.target_on(settings, warnings, day, period)
    }

    /// The settings for `period`, with the problems worked around.
    fn periodic_settings(
        &self,
        period: Period,
    ) -> Result<(PeriodicSettings, Vec<String>), OpsError> {
        Ok(
            if period == Period::Daily && self.daily_notes.is_complete() {
                // Everything is configured: Obsidian's file is not consulted (nor warned about).
                let base = PeriodicSettings {
                    folder: String::new(),
                    format: period.default_format().into(),
                    template: None,
                    source: None,
                };
                (self.daily_notes.apply(base), Vec::new())
            } else {
                let read = PeriodicSettings::read(self.walls.root(), period);
                let settings = match read.settings {
                    Some(settings) if period == Period::Daily => self.daily_notes.apply(settings),
                    Some(settings) => settings,
                    None => {
                        return Err(OpsError::invalid_argument(format!(
                            "{} notes are not set up in this vault: they come from the Periodic Notes plugin's settings (.obsidian/plugins/periodic-notes/data.json), which {}. Enable {} notes in that plugin in Obsidian, or use period \"daily\"",
                            period.name(),
                            if read.warnings.is_empty() {
                                "do not enable them"
                            } else {
                                "could not be read"
                            },
                            period.name()
                        )));
                    }
                };
                (settings, read.warnings)
            },
        )
    }

    /// The note of `period` holding `day` under `settings`.
    fn target_on(
        &self,
        settings: PeriodicSettings,
        warnings: Vec<String>,
        day: Date,
        period: Period,
    ) -> Result<Target, OpsError> {
        let start = period_start(day, period, &settings.format, self.weeks());
        let name = moment::format_in(
            &settings.format,
            start.to_datetime(jiff::civil::Time::midnight()),
            None,
            self.weeks(),
        );
        if name.trim().is_empty() {
            return Err(OpsError::invalid_argument(format!(
                "the {} notes' format \"{}\" gives an empty name; fix it in Obsidian's settings or in [daily_notes] of Quire's config",
                period.name(),
                settings.format
            )));
        }
        let folder = settings.folder.trim().trim_matches('/');
        let relative = if folder.is_empty() {
            format!("{name}.md")
        } else {
            format!("{folder}/{name}.md")
        };
        let path = VaultPath::parse(&relative).map_err(|error| {
            let reason = error.to_string();
            if error.is_forbidden() {
                OpsError::PathForbidden {
                    input: relative.clone(),
                    reason,
                }
            } else {
                OpsError::invalid_argument(format!(
                    "the {} note for {start} would be '{relative}', which is not a valid vault path ({reason}). Fix the folder or format (\"{}\") in Obsidian's settings or in [daily_notes] of Quire's config",
                    period.name(),
                    settings.format
                ))
            }
        })?;
        Ok(Target {
            path,
            period,
            start,
            settings,
            warnings,
        })
    }

    /// Where the daily notes for `days` are (or would be), the settings read once; stops at the
    /// first day whose name is not a valid path.
    pub(super) fn daily_note_paths(&self, days: &[Date]) -> Result<Vec<VaultPath>, OpsError> {
        let (settings, _warnings) = self.periodic_settings(Period::Daily)?;
        let mut paths = Vec::with_capacity(days.len());
        for day in days {
            match self.target_on(settings.clone(), Vec::new(), *day, Period::Daily) {
                Ok(target) => paths.push(target.path),
                Err(_) => break,
            }
        }
        Ok(paths)
    }

    /// How `ww`/`gggg` count weeks: `[daily_notes] week_start`, English weeks by default.
    fn weeks(&self) -> WeekRule {
        match self.daily_notes.week_start {
            Some(WeekStart::Monday) => ISO_WEEKS,
            Some(WeekStart::Sunday) | None => LOCALE_WEEKS,
        }
    }

    /// `None`, `today`, `yesterday`, `tomorrow` (in the configured time zone) or `YYYY-MM-DD`.
    fn parse_day(&self, raw: Option<&str>) -> Result<Date, OpsError> {
        let today = self.today();
        let raw = raw.map(str::trim).unwrap_or("today");
        let invalid = || {
            OpsError::invalid_argument(format!(
                "date {raw:?} is not a date; use YYYY-MM-DD (e.g. {today}), \"today\", \"yesterday\" or \"tomorrow\""
            ))
        };
        match raw.to_ascii_lowercase().as_str() {
            "" | "today" => Ok(today),
            "yesterday" => today.yesterday().map_err(|_| invalid()),
            "tomorrow" => today.tomorrow().map_err(|_| invalid()),
            _ => {
                let shape_ok = raw.len() == 10
                    && raw.char_indices().all(|(at, c)| {
                        if at == 4 || at == 7 {
                            c == '-'
                        } else {
                            c.is_ascii_digit()
                        }
                    });
                if !shape_ok {
                    return Err(invalid());
                }
                raw.parse::<Date>().map_err(|_| invalid())
            }
        }
    }

    /// The text a new periodic note starts with: its template with the variables filled in, or
    /// nothing when there is no template. A template that is missing, unreadable for the caller,
    /// or not UTF-8 gives an empty note and a warning (as Obsidian does), worded the same for
    /// each so a denied template is not revealed; its path is named only when the caller may read
    /// it.
    fn initial_text(
        &self,
        ctx: &Context,
        target: &Target,
        warnings: &mut Vec<String>,
    ) -> Result<String, OpsError> {
        let Some(template) = target.settings.template.as_deref() else {
            return Ok(String::new());
        };
        let relative = if template.to_ascii_lowercase().ends_with(".md") {
            template.to_string()
        } else {
            format!("{template}.md")
        };
        let readable = VaultPath::parse(&relative)
            .ok()
            .and_then(|path| self.readable(ctx, &path));
        let named = readable.is_some();
        let text = readable
            .and_then(|readable| self.walls.vault(&readable).read(readable.path()).ok())
            .and_then(|file| String::from_utf8(file.bytes).ok());
        let Some(text) = text else {
            // The template's path comes from the vault's settings and may lie in a folder the
            // caller may not read: it is named only when the caller could read it.
            let warning = if named {
                format!(
                    "the template '{relative}' was not found; the {} note was created without it",
                    target.period.name()
                )
            } else {
                format!(
                    "the {} note's template does not exist or is not one you may read; the note was created without it",
                    target.period.name()
                )
            };
            tracing::warn!("{warning}");
            warnings.push(warning);
            return Ok(String::new());
        };
        let now = self.now();
        let title = target.path.stem().to_string();
        Ok(template::render(
            &text,
            &TemplateValues {
                date: target.start,
                now: now.datetime(),
                offset_seconds: now.offset().seconds(),
                format: &target.settings.format,
                title: &title,
                weeks: self.weeks(),
            },
        ))
    }
}

/// The first day of the period holding `day`. Weeks start on Monday when the format counts ISO
/// weeks (`W`, `GGGG`), else on the locale's first day (`weeks`).
fn period_start(day: Date, period: Period, format: &str, weeks: WeekRule) -> Date {
    match period {
        Period::Daily => day,
        Period::Weekly => {
            let rule = if moment::uses_iso_weeks(format) {
                ISO_WEEKS
            } else {
                weeks
            };
            moment::start_of_week(day, rule)
        }
        Period::Monthly => day.first_of_month(),
        Period::Quarterly => {
            let month = (day.month() - 1) / 3 * 3 + 1;
            Date::new(day.year(), month, 1).unwrap_or(day)
        }
        Period::Yearly => Date::new(day.year(), 1, 1).unwrap_or(day),
    }
}

fn used(settings: &PeriodicSettings) -> PeriodicSettingsUsed {
    PeriodicSettingsUsed {
        folder: settings.folder.clone(),
        format: settings.format.clone(),
        template: settings.template.clone(),
        source: settings.source.unwrap_or("Obsidian's defaults").to_string(),
    }
}

fn unchanged(text: &str) -> Outcome {
    Outcome {
        text: text.to_string(),
        lines: None,
        replacements: None,
        changed_keys: Vec::new(),
        properties: None,
    }
}

fn missing_note(path: &VaultPath, period: Period) -> OpsError {
    OpsError::NotFound {
        what: format!("the {} note '{path}' does not exist", period.name()),
        hint: "Pass create: true to create it from its template, or vault_append_daily_note to start it with a line.",
    }
}

/// `"## Log"` is level 2 named "Log"; a bare `"Log"` has no level (any level matches, and a new
/// heading is made at level 2).
fn parse_heading(raw: &str) -> Result<(String, Option<u8>), OpsError> {
    let trimmed = raw.trim();
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    let name = trimmed[hashes..].trim();
    if name.is_empty() || name.contains('\n') || hashes > 6 {
        return Err(OpsError::invalid_argument(format!(
            "heading {raw:?} is not a heading name; pass its text, e.g. \"Log\" or \"## Log\""
        )));
    }
    let level = (hashes > 0).then(|| u8::try_from(hashes).unwrap_or(2));
    Ok((name.to_string(), level))
}

/// `- HH:MM text`; further lines of a multi-line text are indented to stay in the list item.
fn log_lines(time: &str, text: &str) -> String {
    let mut lines = text.trim_end().lines();
    let first = lines.next().unwrap_or_default().trim_start();
    let mut out = format!("- {time} {first}");
    for line in lines {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}

/// Appends `## name` and the lines after the note's last content, separated by a blank line.
fn with_new_heading(text: &str, name: &str, level: u8, lines: &str) -> Outcome {
    let body = text.trim_end_matches(['\n', '\r']);
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = body.to_string();
    if !body.is_empty() {
        out.push_str(newline);
        out.push_str(newline);
    }
    let hashes = "#".repeat(usize::from(level.clamp(1, 6)));
    let first_line = out.matches('\n').count() + 2;
    out.push_str(&format!("{hashes} {name}{newline}"));
    out.push_str(&lines.replace('\n', newline));
    out.push_str(newline);
    let last_line = first_line + lines.matches('\n').count();
    Outcome {
        text: out,
        lines: Some((first_line, last_line)),
        replacements: None,
        changed_keys: Vec::new(),
        properties: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn periods_start_where_their_notes_do() {
        let tuesday = date(2025, 6, 17);
        assert_eq!(
            period_start(tuesday, Period::Daily, "YYYY-MM-DD", LOCALE_WEEKS),
            tuesday
        );
        assert_eq!(
            period_start(tuesday, Period::Weekly, "gggg-[W]ww", LOCALE_WEEKS),
            date(2025, 6, 15)
        );
        assert_eq!(
            period_start(tuesday, Period::Weekly, "GGGG-[W]WW", LOCALE_WEEKS),
            date(2025, 6, 16)
        );
        // A Sunday belongs to the ISO week that began the Monday before.
        assert_eq!(
            period_start(
                date(2025, 6, 22),
                Period::Weekly,
                "GGGG-[W]WW",
                LOCALE_WEEKS
            ),
            date(2025, 6, 16)
        );
        assert_eq!(
            period_start(tuesday, Period::Monthly, "YYYY-MM", LOCALE_WEEKS),
            date(2025, 6, 1)
        );
        assert_eq!(
            period_start(tuesday, Period::Quarterly, "YYYY-[Q]Q", LOCALE_WEEKS),
            date(2025, 4, 1)
        );
        assert_eq!(
            period_start(tuesday, Period::Yearly, "YYYY", LOCALE_WEEKS),
            date(2025, 1, 1)
        );
    }

    #[test]
    fn log_lines_and_headings() {
        assert_eq!(log_lines("09:05", "  Called Bob \n"), "- 09:05 Called Bob");
        assert_eq!(
            log_lines("09:05", "Plan:\n- one\n- two"),
            "- 09:05 Plan:\n  - one\n  - two"
        );
        assert_eq!(parse_heading("## Log").ok(), Some(("Log".into(), Some(2))));
        assert_eq!(parse_heading(" Log ").ok(), Some(("Log".into(), None)));
        assert!(parse_heading("##").is_err());
        assert!(parse_heading("####### Deep").is_err());

        let added = with_new_heading("# Day\n\nText\n\n", "Log", 2, "- 09:05 a");
        assert_eq!(added.text, "# Day\n\nText\n\n## Log\n- 09:05 a\n");
        assert_eq!(added.lines, Some((6, 6)));
        let empty = with_new_heading("", "Log", 3, "- 09:05 a\n  b");
        assert_eq!(empty.text, "### Log\n- 09:05 a\n  b\n");
        assert_eq!(empty.lines, Some((2, 3)));
        let crlf = with_new_heading("# Day\r\n", "Log", 2, "- 09:05 a");
        assert_eq!(crlf.text, "# Day\r\n\r\n## Log\r\n- 09:05 a\r\n");
    }
}
