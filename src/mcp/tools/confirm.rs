//! Which calls ask the user first (`[safety]`), and the question they ask: deleting a note,
//! overwriting one (or a base) whole, and a batch, undo or move touching more than
//! `confirm_over` notes (counted by a dry run of the same call). The asking is `mcp::confirm`'s.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::batch::{RenamePropertyParams, RenameTagParams, ReplaceAcrossParams, SetPropertyParams};
use super::notes::MoveNoteParams;
use crate::acl::Principal;
use crate::ops::{self, Context, Ops};

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
            let path = text("path").to_owned();
            let exists = blocking(ops, principal, tool, move |ops, ctx| {
                ops.stat_path(ctx, ops::StatPath { path })
                    .map(|stat| stat.exists)
            })
            .await?;
            exists.then(|| {
                format!(
                    "Replace the whole content of '{}'? Its old content stays in the history.",
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
            let what = format!("Set the property '{}'", request.name);
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.set_property(ctx, request)
            });
            batch_question(plan.await?, over, &what)
        }
        "vault_rename_property" => {
            let mut request: ops::RenameProperty = params::<RenamePropertyParams>(args)?.into();
            request.dry_run = true;
            let what = format!(
                "Rename the property '{}' to '{}'",
                request.old_name, request.new_name
            );
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.rename_property(ctx, request)
            });
            batch_question(plan.await?, over, &what)
        }
        "vault_rename_tag" => {
            let mut request: ops::RenameTag = params::<RenameTagParams>(args)?.into();
            request.dry_run = true;
            let what = format!(
                "Rename the tag '{}' to '{}'",
                request.old_tag, request.new_tag
            );
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.rename_tag(ctx, request)
            });
            batch_question(plan.await?, over, &what)
        }
        "vault_replace_across" => {
            let mut request: ops::ReplaceAcross = params::<ReplaceAcrossParams>(args)?.into();
            request.dry_run = true;
            let what = format!("Replace {:?} with {:?}", request.old_text, request.new_text);
            let plan = blocking(ops, principal, tool, move |ops, ctx| {
                ops.replace_across(ctx, request)
            });
            batch_question(plan.await?, over, &what)
        }
        "vault_undo" => {
            let change = text("change_id").to_owned();
            let request = ops::UndoChange {
                change_id: change.clone(),
                dry_run: true,
            };
            let plan =
                blocking(ops, principal, tool, move |ops, ctx| ops.undo(ctx, request)).await?;
            (plan.notes.len() > over).then(|| {
                format!(
                    "Undo change {change}, putting back {} notes?",
                    plan.notes.len()
                )
            })
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
fn batch_question(plan: ops::BatchResult, over: usize, what: &str) -> Option<String> {
    (plan.total_notes > over).then(|| {
        format!(
            "{what} in {} notes ({} places)?",
            plan.total_notes, plan.total_changes
        )
    })
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
