//! The history for the person at the console: `quire history PATH`, `quire changes`, `quire
//! restore PATH VERSION` and `quire undo CHANGE_ID`, each one `ops` call as the owner, the way
//! the history tools run it, printed as text.

use std::fmt::Write as _;

use crate::acl::Principal;
use crate::app::build_ops;
use crate::config::Config;
use crate::index::IndexOptions;
use crate::ops::{Context, ListChanges, NoteHistory, Ops, RestoreVersion, UndoChange};

fn open(config: &Config) -> anyhow::Result<Ops> {
    let options = IndexOptions {
        without_chunks: !crate::app::semantic_set_up(config),
        ..IndexOptions::default()
    };
    build_ops(config, options)
}

/// A command that writes takes the vault's state for its run, as a server does: beside a running
/// `quire serve` it would change notes under that server's locks and history.
fn own_state(
    config: &Config,
    verb: &str,
    tool: &str,
) -> anyhow::Result<crate::app::StateOwnership> {
    crate::app::create_state_dir(config)?;
    match crate::app::try_own_state(&config.state_dir)? {
        Some(ownership) => Ok(ownership),
        None => anyhow::bail!(
            "a running quire serve ({}) owns this vault's state; ask it instead (the \
             {tool} tool of a connected client), or stop it and run `quire {verb}` again",
            crate::app::state_owner_named(&config.state_dir)
        ),
    }
}

fn owner(verb: &str) -> Context {
    Context::new(Principal::Owner, format!("quire {verb}"))
}

/// `quire history PATH`: the note's versions, newest first.
pub fn history(config: &Config, path: &str, limit: u32) -> anyhow::Result<String> {
    let ops = open(config)?;
    let found = ops.note_history(
        &owner("history"),
        NoteHistory {
            path: path.to_owned(),
            limit: Some(limit),
            cursor: None,
        },
    )?;
    let mut out = String::new();
    if found.versions.is_empty() {
        writeln!(out, "no versions of {} in the history", found.path)?;
    }
    for version in &found.versions {
        writeln!(
            out,
            "{:>8}  {}  {:<8}  {}  {}  {}  {}",
            version.version_id,
            version.time,
            version.kind,
            version.identity,
            version.tool,
            version.path,
            version.change_id,
        )?;
    }
    Ok(out)
}

/// `quire changes [--identity NAME] [--since TIME]`: changes, newest first.
pub fn changes(
    config: &Config,
    identity: Option<String>,
    since: Option<String>,
    limit: u32,
) -> anyhow::Result<String> {
    let ops = open(config)?;
    let found = ops.list_changes(
        &owner("changes"),
        ListChanges {
            identity,
            since,
            limit: Some(limit),
            ..ListChanges::default()
        },
    )?;
    let mut out = String::new();
    for change in &found.changes {
        let undone = change
            .undone_by
            .as_deref()
            .map(|by| format!("  (undone by {by})"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}  {}  {:<8}  {}  {}  {}{undone}",
            change.change_id,
            change.time,
            change.kind,
            change.identity,
            change.tool,
            change.paths.join(", "),
        )?;
    }
    Ok(out)
}

/// `quire restore PATH VERSION`: writes the version back as a new change.
pub fn restore(config: &Config, path: &str, version: i64) -> anyhow::Result<String> {
    let _ownership = own_state(config, "restore", "vault_restore_version")?;
    let ops = open(config)?;
    let ctx = owner("restore");
    let written = ops.restore_version(
        &ctx,
        RestoreVersion {
            path: path.to_owned(),
            version_id: version,
            expected_revision: None,
        },
    )?;
    Ok(format!(
        "restored {} to version {version} (revision {}){}\n",
        written.path,
        written.revision,
        change_line(&ctx)
    ))
}

/// `quire undo CHANGE_ID [--dry-run]`.
pub fn undo(config: &Config, change: &str, dry_run: bool) -> anyhow::Result<String> {
    let _ownership = (!dry_run)
        .then(|| own_state(config, "undo", "vault_undo"))
        .transpose()?;
    let ops = open(config)?;
    let ctx = owner("undo");
    let undone = ops.undo(
        &ctx,
        UndoChange {
            change_id: change.to_owned(),
            dry_run,
        },
    )?;
    let mut out = String::new();
    let verb = if dry_run { "would undo" } else { "undid" };
    writeln!(out, "{verb} {}{}", undone.undone, change_line(&ctx))?;
    for step in &undone.notes {
        match &step.to {
            Some(to) => writeln!(out, "  {}  {} -> {to}", step.action, step.path)?,
            None => writeln!(out, "  {}  {}", step.action, step.path)?,
        }
    }
    Ok(out)
}

fn change_line(ctx: &Context) -> String {
    ctx.change_id()
        .map(|id| format!(" as change {id}"))
        .unwrap_or_default()
}
