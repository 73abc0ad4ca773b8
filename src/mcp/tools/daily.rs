//! The daily-notes tools: `vault_get_daily_note` and `vault_append_daily_note`, with their wire
//! types. Each runs one `ops` call; the `period` parameter reaches the Periodic Notes plugin's
//! weekly, monthly, quarterly and yearly notes through the same two tools.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

/// Which periodic note: Obsidian's daily note, or a Periodic Notes plugin note.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PeriodParam {
    /// The daily note (`.obsidian/daily-notes.json`).
    #[default]
    Daily,
    /// The week's note (Periodic Notes plugin, when weekly notes are enabled there).
    Weekly,
    /// The month's note (Periodic Notes plugin).
    Monthly,
    /// The quarter's note (Periodic Notes plugin).
    Quarterly,
    /// The year's note (Periodic Notes plugin).
    Yearly,
}

impl From<PeriodParam> for ops::Period {
    fn from(period: PeriodParam) -> Self {
        match period {
            PeriodParam::Daily => ops::Period::Daily,
            PeriodParam::Weekly => ops::Period::Weekly,
            PeriodParam::Monthly => ops::Period::Monthly,
            PeriodParam::Quarterly => ops::Period::Quarterly,
            PeriodParam::Yearly => ops::Period::Yearly,
        }
    }
}

impl From<ops::Period> for PeriodParam {
    fn from(period: ops::Period) -> Self {
        match period {
            ops::Period::Daily => PeriodParam::Daily,
            ops::Period::Weekly => PeriodParam::Weekly,
            ops::Period::Monthly => PeriodParam::Monthly,
            ops::Period::Quarterly => PeriodParam::Quarterly,
            ops::Period::Yearly => PeriodParam::Yearly,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetDailyNoteParams {
    /// The day: "YYYY-MM-DD", "today" (the default), "yesterday" or "tomorrow", in the server's configured time zone. For weekly and monthly notes, any day of the period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub date: Option<String>,
    /// Create the note from its template when it does not exist yet (default false: a missing note is not_found).
    #[serde(default)]
    pub create: bool,
    /// daily (default), weekly, monthly, quarterly or yearly. Periods other than daily need the Periodic Notes plugin with that period enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "PeriodParam")]
    pub period: Option<PeriodParam>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendDailyNoteParams {
    /// The text to log; it becomes "- HH:MM text" (the current time in the server's time zone). Further lines are indented under it.
    pub text: String,
    /// Append under this heading (e.g. "Log" or "## Log"), after its last line; created at the end of the note when missing (at level 2 unless written with #s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub heading: Option<String>,
    /// The day: "YYYY-MM-DD", "today" (the default), "yesterday" or "tomorrow".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub date: Option<String>,
    /// daily (default), weekly, monthly, quarterly or yearly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "PeriodParam")]
    pub period: Option<PeriodParam>,
    /// The revision you last read; when the note changed since, nothing is written and the error is conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expected_revision: Option<String>,
}

/// The settings a call used.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PeriodicSettingsResult {
    /// The folder notes of this period go in ("" is the vault root).
    pub folder: String,
    /// The moment.js format that names them (folders may be part of it).
    pub format: String,
    /// The template new notes start from, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub template: Option<String>,
    /// Where the settings came from: a settings file in .obsidian/, Quire's config, or Obsidian's defaults.
    pub source: String,
}

impl From<ops::PeriodicSettingsUsed> for PeriodicSettingsResult {
    fn from(settings: ops::PeriodicSettingsUsed) -> Self {
        PeriodicSettingsResult {
            folder: settings.folder,
            format: settings.format,
            template: settings.template,
            source: settings.source,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DailyNoteResult {
    pub path: String,
    pub period: PeriodParam,
    /// The first day of the note's period (the day itself for daily notes), YYYY-MM-DD.
    pub date: String,
    /// sha256 of the file's bytes; pass it as `expected_revision` when changing the note.
    pub revision: String,
    pub bytes: u64,
    /// Last modification time, RFC 3339.
    pub modified: String,
    pub content: String,
    /// True when this call created the note.
    pub created: bool,
    pub settings: PeriodicSettingsResult,
    /// Problems with the vault's settings that were worked around (defaults used, template missing).
    pub warnings: Vec<String>,
}

impl From<ops::DailyNote> for DailyNoteResult {
    fn from(note: ops::DailyNote) -> Self {
        DailyNoteResult {
            path: note.path,
            period: note.period.into(),
            date: note.date,
            revision: note.revision,
            bytes: note.bytes,
            modified: note.modified,
            content: note.content,
            created: note.created,
            settings: note.settings.into(),
            warnings: note.warnings,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AppendDailyNoteResult {
    pub path: String,
    pub period: PeriodParam,
    /// The first day of the note's period, YYYY-MM-DD.
    pub date: String,
    /// The note's new revision.
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    /// True when the note did not exist and this call created it (from its template).
    pub created: bool,
    /// True when the heading was missing and was added.
    pub heading_created: bool,
    /// The lines written.
    pub appended: String,
    /// 1-based first line of what was appended.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub start_line: Option<usize>,
    /// 1-based last line of what was appended.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub end_line: Option<usize>,
    pub settings: PeriodicSettingsResult,
    pub warnings: Vec<String>,
}

impl From<ops::AppendedDailyNote> for AppendDailyNoteResult {
    fn from(note: ops::AppendedDailyNote) -> Self {
        AppendDailyNoteResult {
            path: note.path,
            period: note.period.into(),
            date: note.date,
            revision: note.revision,
            bytes: note.bytes,
            modified: note.modified,
            created: note.created,
            heading_created: note.heading_created,
            appended: note.appended,
            start_line: note.lines.map(|(start, _)| start),
            end_line: note.lines.map(|(_, end)| end),
            settings: note.settings.into(),
            warnings: note.warnings,
        }
    }
}

// Parameters into `ops` requests.

impl From<GetDailyNoteParams> for ops::GetDailyNote {
    fn from(params: GetDailyNoteParams) -> Self {
        ops::GetDailyNote {
            date: params.date,
            period: params.period.unwrap_or_default().into(),
            create: params.create,
        }
    }
}

impl From<AppendDailyNoteParams> for ops::AppendDailyNote {
    fn from(params: AppendDailyNoteParams) -> Self {
        ops::AppendDailyNote {
            text: params.text,
            heading: params.heading,
            date: params.date,
            period: params.period.unwrap_or_default().into(),
            expected_revision: params.expected_revision,
        }
    }
}

#[tool_router(router = daily_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "Get the daily note for a day (today by default), or with `period` the weekly, monthly, quarterly or yearly note. \
Use to see what the user planned or logged for a day, or to open today's note before adding to it. \
The note's folder, name format and template come from the vault's Obsidian settings (daily notes; the Periodic Notes plugin for other periods), read on every call; \
`date` is YYYY-MM-DD, today, yesterday or tomorrow in the server's time zone. \
With `create: true` a missing note is created from its template ({{date}}, {{title}}, {{time}} and {{date:FORMAT}} filled in). \
Returns `path`, `content`, `revision`, `created`, the `settings` used and any `warnings`. \
Errors: not_found (no such note and create is false), invalid_argument (bad date, or the period is not set up in the vault), path_forbidden, invalid_path.",
        annotations(
            title = "Get daily note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_get_daily_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<GetDailyNoteParams>,
    ) -> Result<Json<DailyNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::get_daily_note).await
    }

    #[tool(
        description = "Log a line in the daily note (today by default): appends \"- HH:MM text\" with the current time, at the end of the note or under `heading` (created when missing). \
Use to record what happened, a thought or a to-do in the user's journal. Creates the note from its template if it does not exist yet. \
One atomic write under the note's lock; pass `expected_revision` to refuse the append if the note changed since you read it. \
Returns the new `revision`, the `appended` lines with their line numbers, `created` and `heading_created`. \
Errors: conflict (the note changed since your read, or was written by someone else during the append: re-read and retry), invalid_argument (empty text, bad date or heading, period not set up), \
ambiguous_heading (pass the heading with its #s), path_forbidden, invalid_path, too_large.",
        annotations(
            title = "Append to daily note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_append_daily_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<AppendDailyNoteParams>,
    ) -> Result<Json<AppendDailyNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::append_daily_note)
            .await
    }
}
