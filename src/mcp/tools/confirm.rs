//! Which calls ask the user first (`[safety]`), and the question they ask: deleting a note
//! (an undo that removes one too), overwriting one (or a base) whole (a restore too), and a
//! batch, undo or move touching more than `confirm_over` notes (counted by a dry run of the same
//! call). A question names what will happen, values included, each cut to `MAX_SHOWN` characters.
//! The asking is `mcp::confirm`'s.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::batch::{RenamePropertyParams, RenameTagParams, ReplaceAcrossParams, SetPropertyParams};
use super::notes::MoveNoteParams;
use crate::acl::Principal;
use crate::ops::{self, Context, Ops};

/// The most characters of one value (a property value, a text to replace) a question shows.
const MAX_SHOWN: usize = 200;

/// The most notes an undo's question names one by one.
const MAX_NAMED: usize = 5;

/// The question a call must have answered yes before it runs, or `None`.
pub async fn question(
    ops: &Arc<Ops>,
    principal: &Principal,
    tool: &str,
    args: &JsonObject,
    over: usize,
) -> Option<String> {
    if args.get("dry_run").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    match tool {
        "vault_delete_note" => Some(format!(
            "Delete the note '{}'? It goes to the vault's .trash/ folder and can be undone.",
            text("path")
        )),
        "vault_write_note" if args.get("overwrite").and_then(Value::as_bool) == Some(true) => {
            exists(ops, principal, tool, text("path")).await?.then(|| {
                format!(
                    "Replace the whole content of '{}'? Its old content stays in the history.",
                    text("path")
                )
            })
        }
        // A restore over an existing note replaces it whole, as an overwrite does.
        "vault_restore_version" => {
            let version = args.get("version_id").and_then(Value::as_i64)?;
            exists(ops, principal, tool, text("path")).await?.then(|| {
                format!(
                    "Replace the whole content of '{}' with its version {version}? Its current content stays in the history.",
                    text("path")
                )
            })
        }
        // Replacing a base needs its revision, so one given means the file is replaced whole.
        "vault_write_base" if args.get("expected_revision").is_some_and(Value::is_string) => {
            Some(format!(
                "Replace the whole base '{}'? Its old content stays in the history.",
                text("path")
            ))
        }
        _ => counted_question(ops, principal, tool, args, over).await,
    }
}

/// The question of a call touching many notes: asked only over `over` notes, counted by a dry
/// run of the same call.
async fn counted_question(
    ops: &Arc<Ops>,
    principal: &Principal,
    tool: &str,
    args: &JsonObject,
    over: usize,
) -> Option<String> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    match tool {
        "vault_set_property" => {
            let mut request: ops::SetProperty = params::<SetPropertyParams>(args)?.into();
            request.dry_run = true;
            let (what, from) = if request.value.is_null() {
                (
                    format!("Remove the property {}", shown(&request.name)),
                    "from",
                )
            } else {
                let value = shown_value(&request.value);
                (
                    format!("Set the property {} to {value}", shown(&request.name)),
                    "in",
                )
            };
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.set_property(ctx, request)
            });
            batch_question(plan.await?, over, &what, from)
        }
        "vault_rename_property" => {
            let mut request: ops::RenameProperty = params::<RenamePropertyParams>(args)?.into();
            request.dry_run = true;
            let what = format!(
                "Rename the property {} to {}",
                shown(&request.old_name),
                shown(&request.new_name)
            );
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.rename_property(ctx, request)
            });
            batch_question(plan.await?, over, &what, "in")
        }
        "vault_rename_tag" => {
            let mut request: ops::RenameTag = params::<RenameTagParams>(args)?.into();
            request.dry_run = true;
            let what = format!(
                "Rename the tag {} to {}",
                shown(&request.old_tag),
                shown(&request.new_tag)
            );
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.rename_tag(ctx, request)
            });
            batch_question(plan.await?, over, &what, "in")
        }
        "vault_replace_across" => {
            let mut request: ops::ReplaceAcross = params::<ReplaceAcrossParams>(args)?.into();
            request.dry_run = true;
            let what = format!(
                "Replace {} with {}",
                shown(&request.old_text),
                shown(&request.new_text)
            );
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.replace_across(ctx, request)
            });
            batch_question(plan.await?, over, &what, "in")
        }
        "vault_undo" => {
            let change = text("change_id").to_owned();
            let request = ops::UndoChange {
                change_id: change.clone(),
                dry_run: true,
            };
            let plan =
                blocking(ops, principal, tool, move |ops, ctx| ops.undo(ctx, request)).await?;
            undo_question(&change, &plan, over)
        }
        "vault_move_note" => {
            let mut request: ops::MoveNote = params::<MoveNoteParams>(args)?.into();
            request.dry_run = true;
            let (from, to) = (request.old_path.clone(), request.new_path.clone());
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.move_note(ctx, request)
            })
            .await?;
            (plan.rewritten.len() > over).then(|| {
                format!(
                    "Move '{from}' to '{to}', rewriting links in {} notes?",
                    plan.rewritten.len()
                )
            })
        }
        _ => None,
    }
}

/// A batch's question, from its dry run: asked only over `over` notes.
fn batch_question(plan: ops::BatchResult, over: usize, what: &str, from: &str) -> Option<String> {
    (plan.total_notes > over).then(|| {
        format!(
            "{what} {from} {} notes ({} places)?",
            plan.total_notes, plan.total_changes
        )
    })
}

/// An undo's question, from its dry run: asked when it removes a note (as a delete asks), or
/// touches more than `over` notes. An undo that only puts content back writes exactly what the
/// change replaced (it refuses a note changed since), so alone it is not a whole overwrite.
fn undo_question(change: &str, plan: &ops::Undone, over: usize) -> Option<String> {
    let removed: Vec<&str> = plan
        .notes
        .iter()
        .filter(|step| step.action == "remove")
        .map(|step| step.path.as_str())
        .collect();
    if removed.is_empty() {
        return (plan.notes.len() > over).then(|| {
            format!(
                "Undo change {change}, putting back {} notes?",
                plan.notes.len()
            )
        });
    }
    let named: Vec<String> = removed
        .iter()
        .take(MAX_NAMED)
        .map(|path| format!("'{path}'"))
        .collect();
    let more = removed.len().saturating_sub(MAX_NAMED);
    Some(format!(
        "Undo change {change}, deleting {} note(s) it created ({}{}) to the vault's .trash/{}? It can be undone.",
        removed.len(),
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        match plan.notes.len() - removed.len() {
            0 => String::new(),
            others => format!(" and putting back {others} other note(s)"),
        }
    ))
}

/// A text as a question shows it: quoted, and cut after `MAX_SHOWN` characters (saying how many
/// more there are), so a long value neither hides the question nor floods it.
fn shown(text: &str) -> String {
    let (kept, more) = cut(text);
    format!("{kept:?}{more}")
}

/// A property value as a question shows it: as JSON (a text quoted, a list bracketed), cut.
fn shown_value(value: &Value) -> String {
    let (kept, more) = cut(&value.to_string());
    format!("{kept}{more}")
}

/// The first `MAX_SHOWN` characters of `text`, and what says how many more there are.
fn cut(text: &str) -> (String, String) {
    let total = text.chars().count();
    if total <= MAX_SHOWN {
        return (text.to_owned(), String::new());
    }
    let kept = text.chars().take(MAX_SHOWN).collect();
    (kept, format!("… ({} more characters)", total - MAX_SHOWN))
}

/// Whether the note at `path` exists, for the caller; `None` when it cannot tell (the call then
/// reports why).
async fn exists(ops: &Arc<Ops>, principal: &Principal, tool: &str, path: &str) -> Option<bool> {
    let path = path.to_owned();
    blocking(ops, principal, tool, move |ops, ctx| {
        ops.stat_path(ctx, ops::StatPath { path })
            .map(|stat| stat.exists)
    })
    .await
}

/// Arguments the tool itself would refuse give no question: the call then fails as usual.
fn params<T: DeserializeOwned>(args: &JsonObject) -> Option<T> {
    serde_json::from_value(Value::Object(args.clone())).ok()
}

/// A dry run for the caller, off the executor; a failure gives no question (the call itself
/// then reports it).
async fn blocking<T: Send + 'static>(
    ops: &Arc<Ops>,
    principal: &Principal,
    tool: &str,
    run: impl FnOnce(&Ops, &Context) -> Result<T, ops::OpsError> + Send + 'static,
) -> Option<T> {
    let ops = Arc::clone(ops);
    let ctx = Context::new(principal.clone(), format!("{tool} (dry run)"));
    tokio::task::spawn_blocking(move || run(&ops, &ctx).ok())
        .await
        .ok()
        .flatten()
}
