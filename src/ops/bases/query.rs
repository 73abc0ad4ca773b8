//! `query_base`: one view of a base evaluated over every file the caller may read, a page at a
//! time. The base is read and its expressions parsed once per call; rows, links and backlinks are
//! only those of readable files, so counts and summaries cover what the caller may see.
//!
//! One query spends one `Budget` (steps and bytes held, shared by every cell) and stops at
//! `QUERY_DEADLINE` or when the client cancels, so neither a slow base nor a large one can hold a
//! thread or the server's memory; it then answers `over_budget` (or `cancelled`) saying which bound
//! it passed and what to change.

use std::time::{Duration, Instant};

use crate::bases::{Base, Budget, Overrun, View, run_view};
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::paging::{Cursor, check_limit};
use crate::ops::shared::{Context, Ops};

use super::answer::answer;
use super::narrow::Narrowing;
use super::source::parse_base;
use super::types::{BaseAnswer, QueryBase};
use super::world::Stop;

/// How long one query may run, from the call to its answer. Longer than a grep's 3 s, since a
/// query evaluates formulas for every row, yet short enough that a costly base gives its thread
/// back soon.
pub(super) const QUERY_DEADLINE: Duration = Duration::from_secs(10);

impl Ops {
    /// Evaluates the view `request` names and answers one page of its rows.
    pub fn query_base(&self, ctx: &Context, request: QueryBase) -> Result<BaseAnswer, OpsError> {
        let stop = Stop {
            deadline: Instant::now() + QUERY_DEADLINE,
            cancelled: ctx.cancellation(),
        };
        let limit = check_limit(request.limit)?;
        let offset = Cursor::offset(request.cursor.as_deref())?;
        let source = match &request.path {
            Some(path) => format!("'{path}'"),
            None => "the base given".to_owned(),
        };
        let located =
            self.locate_base(ctx, request.path.as_deref(), request.block, request.base)?;
        let base = parse_base(&located.yaml, &source)?;
        let view = pick_view(&base, request.view.as_deref(), &source)?;
        let this = match request.this {
            Some(raw) => {
                let path = parse_path(&raw)?;
                self.require_read(ctx, &path)?;
                Some(path.to_string())
            }
            None => located.this,
        };
        let visibility = self.visibility(ctx);
        let narrowing = Narrowing::new(&base, view, self.now().datetime());
        let world = self.bases_world(
            &visibility,
            this,
            mentions_links(&located.yaml),
            &narrowing,
            stop,
        )?;
        let budget = Budget::for_query();
        let window = offset..offset.saturating_add(limit);
        let result = run_view(&base, view, &world.rows(), &world, window, &budget);
        if let Some(error) = world.failure() {
            return Err(error);
        }
        let result = result.map_err(|overrun| over_budget(overrun, ctx))?;
        Ok(answer(result, view_kind(view), offset, limit, &world))
    }
}

/// What to change when a query passes a bound: fewer rows, or cheaper formulas.
const NARROW_HINT: &str = "Narrow the filters (file.inFolder(\"...\"), file.hasTag(\"...\")) so fewer rows are evaluated, lower the view's `limit`, or simplify the costliest formulas (map, filter or reduce over long lists, repeat, long texts).";
const HOLD_HINT: &str = "Make that value smaller (slice() a long text, keep fewer list items), or narrow the filters or lower the view's `limit` so fewer rows are kept: the formulas that sorting, grouping and summaries read are held for every kept row, the others only for the rows of the page.";

/// The error a query that passed one of its bounds answers.
fn over_budget(overrun: Overrun, ctx: &Context) -> OpsError {
    match overrun {
        Overrun::Interrupted if ctx.is_cancelled() => OpsError::Cancelled,
        Overrun::Interrupted => OpsError::OverBudget {
            what: format!(
                "ran for more than {} s, the limit for one query",
                QUERY_DEADLINE.as_secs()
            ),
            hint: NARROW_HINT,
        },
        Overrun::Steps { limit } => OpsError::OverBudget {
            what: format!(
                "took more than {limit} evaluation steps over all its rows and formulas, the limit for one query"
            ),
            hint: NARROW_HINT,
        },
        Overrun::Bytes { limit, what, path } => {
            let place = if path.is_empty() {
                format!("`{what}`")
            } else {
                format!("`{what}` of '{path}'")
            };
            OpsError::OverBudget {
                what: format!(
                    "would hold more than {limit} bytes of values at once, the limit for one query; {place} passed it"
                ),
                hint: HOLD_HINT,
            }
        }
    }
}

/// Whether the base may read links: every way to (`file.links`, `file.embeds`,
/// `file.backlinks`, `hasLink`, `linksTo`, `file["links"]`) names them, so a base whose text says
/// neither "link" nor "embed" in any case needs none.
fn mentions_links(yaml: &str) -> bool {
    let lower = yaml.to_lowercase();
    lower.contains("link") || lower.contains("embed")
}

/// The view named, or at the 0-based index written, or the first.
fn pick_view<'a>(base: &'a Base, wanted: Option<&str>, source: &str) -> Result<&'a View, OpsError> {
    let found = match wanted {
        None => base.views.first(),
        Some(name) => base.view(Some(name)).or_else(|| {
            name.trim()
                .parse::<usize>()
                .ok()
                .and_then(|at| base.views.get(at))
        }),
    };
    found.ok_or_else(|| {
        let names: Vec<String> = base
            .views
            .iter()
            .map(|view| format!("{:?}", view.name))
            .collect();
        match (wanted, names.is_empty()) {
            (_, true) => OpsError::invalid_argument(format!(
                "{source} has no views; add one under `views` (for example `- type: table`)"
            )),
            (Some(name), false) => OpsError::invalid_argument(format!(
                "{source} has no view {name:?}; its views are {} (name or 0-based index)",
                names.join(", ")
            )),
            (None, false) => OpsError::invalid_argument(format!("{source} has no views")),
        }
    })
}

/// The layout, `table` when the view names none.
fn view_kind(view: &View) -> String {
    if view.kind.is_empty() {
        "table".to_owned()
    } else {
        view.kind.clone()
    }
}
