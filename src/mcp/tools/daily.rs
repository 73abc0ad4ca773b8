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

/// Which periodic note: Obsidian's daily note, or a note of the Periodic Notes plugin.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum PeriodParam {
    #[default]
    Daily,
    Weekly,
    Monthly,
    Quarterly,
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
    /// YYYY-MM-DD, today (default), yesterday or tomorrow, in the server's time zone; for other periods, any day in it.
    #[serde(default)]
    pub date: Option<String>,
    /// Create a missing note from its template (default: not_found).
    #[serde(default)]
    pub create: bool,
    /// Default daily; others need the period enabled in the Periodic Notes plugin.
    #[serde(default)]
    pub period: Option<PeriodParam>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendDailyNoteParams {
    /// The text to log; further lines are indented under it.
    pub text: String,
    /// Append under this heading ("Log" or "## Log"); a missing one is added at level 2 unless written with #s.
    #[serde(default)]
    pub heading: Option<String>,
    /// YYYY-MM-DD, today (default), yesterday or tomorrow.
    #[serde(default)]
    pub date: Option<String>,
    /// Default daily.
    #[serde(default)]
    pub period: Option<PeriodParam>,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
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
    pub start_line: Option<usize>,
    /// 1-based last line of what was appended.
    #[serde(skip_serializing_if = "Option::is_none")]
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
        description = "Get the daily note for a day (today by default), or with `period` the weekly, monthly, quarterly or yearly note: to see what the user planned or logged. Folder, name format and template come from the vault's Obsidian settings (Daily notes, Periodic Notes). `create: true` creates a missing note from its template.",
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
        description = "Log a line in the daily note (today by default) as \"- HH:MM text\", at the end or under `heading` (created when missing): to record what happened, a thought or a to-do in the user's journal. A missing note is created from its template.",
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
