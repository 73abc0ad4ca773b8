//! `query_base`: one view of a base evaluated over every file the caller may read, a page at a
//! time. The base is read and its expressions parsed once per call; rows, links and backlinks are
//! only those of readable files, so counts and summaries cover what the caller may see.

use crate::bases::{Base, View, run_view};
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::paging::{Cursor, check_limit};
use crate::ops::shared::{Context, Ops};

use super::answer::answer;
use super::narrow::Narrowing;
use super::source::parse_base;
use super::types::{BaseAnswer, QueryBase};

impl Ops {
    /// Evaluates the view `request` names and answers one page of its rows.
    pub fn query_base(&self, ctx: &Context, request: QueryBase) -> Result<BaseAnswer, OpsError> {
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
        let world =
            self.bases_world(&visibility, this, mentions_links(&located.yaml), &narrowing)?;
        let result = run_view(&base, view, &world.rows(), &world);
        let answered = answer(result, view_kind(view), offset, limit, &world);
        match world.failure() {
            Some(error) => Err(error),
            None => Ok(answered),
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
