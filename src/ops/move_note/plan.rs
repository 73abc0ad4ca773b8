//! Planning a move under its locks, writing nothing: the destination must be free, the moved
//! file and every linking file are read, and each link is rewritten as Obsidian would write it.

use super::check::{LinkChange, MovePlan, MoveWorld, PlannedFile, on_threads};
use std::collections::BTreeSet;

use crate::markdown::links::{
    self, Link, LinkForm, PathStyle, Resolver, json_string_body, lookup_name, path_style,
    path_text, spells_md, with_new_path,
};
use crate::ops::access::Visibility;
use crate::ops::audit::Event;
use crate::ops::error::OpsError;
use crate::ops::shared::{Context, Ops};
use crate::vault::{LinkSettings, NewLinkFormat, Resolved, Revision, VaultError, VaultPath};

impl Ops {
    /// Plans the whole move under its locks, writing nothing: the destination must be free, the
    /// moved file and every linking file are read and their rewrites planned, and a linking file
    /// the caller may not change refuses the move.
    pub(super) fn plan_move(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        world: &MoveWorld,
        old: VaultPath,
        new: VaultPath,
        resolved_old: Resolved,
    ) -> Result<MovePlan, OpsError> {
        let resolved_new = self
            .walls
            .vault(visibility)
            .resolve(&new)
            .map_err(|e| OpsError::from_vault(e, None))?;
        if resolved_new.exists {
            return Err(OpsError::AlreadyExists {
                what: format!("'{new}' already exists"),
                hint: "A move never replaces a file: choose another new_path, or delete or move the existing file first.",
            });
        }
        let planner = Planner {
            granted: visibility,
            old: old.as_str(),
            new: new.as_str(),
            before: world.before(),
            after: &world.after,
            settings: self.walls.vault(visibility).link_settings(),
            restricted: world.restricted,
        };
        // The moved file first, then every other linking file.
        let current = self
            .walls
            .vault(visibility)
            .read_resolved(&resolved_old)
            .map_err(|e| OpsError::from_vault(e, None))?;
        let moved = planner.plan_file(&old, new.clone(), current.bytes, current.revision)?;
        let planned = self.plan_sources(&planner, &world.sources, &old);
        let planned = self.refuse_unwritable(ctx, visibility, &old, planned)?;
        Ok(MovePlan {
            old,
            new,
            resolved_old,
            resolved_new,
            moved,
            planned,
        })
    }

    /// Reads and plans every linking file; reading and parsing is independent per file, so it is
    /// spread over threads.
    pub(super) fn plan_sources(
        &self,
        planner: &Planner<'_>,
        sources: &BTreeSet<String>,
        old: &VaultPath,
    ) -> Vec<Result<Option<PlannedFile>, OpsError>> {
        let sources: Vec<&String> = sources.iter().collect();
        on_threads(&sources, "planning a move", |source| {
            self.plan_source(planner, source, old)
        })
    }

    /// The files to rewrite, or the first planning error, or a refusal naming the files the
    /// caller can read but not change: it may learn which they are (it can read their links
    /// itself), and a move must not break what it can see.
    pub(super) fn refuse_unwritable(
        &self,
        ctx: &Context,
        visibility: &Visibility,
        old: &VaultPath,
        plans: Vec<Result<Option<PlannedFile>, OpsError>>,
    ) -> Result<Vec<PlannedFile>, OpsError> {
        let mut planned: Vec<PlannedFile> = Vec::new();
        let mut unwritable: Vec<String> = Vec::new();
        for plan in plans {
            let Some(file) = plan? else { continue };
            if !visibility.may_write(file.path.as_str()) {
                unwritable.push(file.path.to_string());
                continue;
            }
            planned.push(file);
        }
        if unwritable.is_empty() {
            return Ok(planned);
        }
        self.audit.record(ctx, Event::denied(old.as_str()));
        unwritable.sort();
        const NAMED: usize = 5;
        let more = unwritable.len().saturating_sub(NAMED);
        let mut named = unwritable
            .iter()
            .take(NAMED)
            .map(|path| format!("'{path}'"))
            .collect::<Vec<_>>()
            .join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more"));
        }
        Err(OpsError::PathForbidden {
            input: old.to_string(),
            reason: format!(
                "files outside your write rules link to it ({named}), and a move must update their links; ask the vault's owner to move it"
            ),
        })
    }

    /// Reads one linking file and plans its rewrites; `None` when it needs none (or is gone).
    /// Everything a write would refuse is refused here, before anything is written.
    pub(super) fn plan_source(
        &self,
        planner: &Planner<'_>,
        source: &str,
        old: &VaultPath,
    ) -> Result<Option<PlannedFile>, OpsError> {
        let Ok(path) = VaultPath::parse(source) else {
            return Ok(None);
        };
        let resolved = self
            .walls
            .vault(planner.granted)
            .resolve(&path)
            .map_err(|e| OpsError::from_vault(e, None))?;
        let contents = match self.walls.vault(planner.granted).read_resolved(&resolved) {
            Ok(contents) => contents,
            // Gone since it was indexed: nothing there to rewrite.
            Err(VaultError::NotFound { .. }) => return Ok(None),
            Err(error) => return Err(OpsError::from_vault(error, None)),
        };
        let file = planner.plan_file(&path, path.clone(), contents.bytes, contents.revision)?;
        if file.changes.is_empty() {
            return Ok(None);
        }
        if resolved.is_symlink {
            return Err(OpsError::PathForbidden {
                input: old.to_string(),
                reason: format!(
                    "'{source}' links to it through a symbolic link, and Quire never writes through links; change that link by hand, then move"
                ),
            });
        }
        if file.new_bytes.len() as u64 > self.walls.vault(planner.granted).max_file_bytes() {
            return Err(OpsError::from_vault(
                VaultError::TooLarge {
                    path: source.to_owned(),
                    bytes: file.new_bytes.len() as u64,
                    limit: self.walls.vault(planner.granted).max_file_bytes(),
                },
                None,
            ));
        }
        Ok(Some(file))
    }
}

/// Decides the new text of every link a move affects.
pub(super) struct Planner<'a> {
    /// The caller's visibility, which lets the planner read the linking files.
    pub(super) granted: &'a Visibility,
    pub(super) old: &'a str,
    pub(super) new: &'a str,
    /// Resolution over the vault before and after the move.
    pub(super) before: &'a Resolver,
    pub(super) after: &'a Resolver,
    pub(super) settings: LinkSettings,
    /// The resolvers see only what the caller may read, so a bare name unique among those files
    /// may still be shared with a hidden one: rewritten links then always carry a path.
    pub(super) restricted: bool,
}

impl Planner<'_> {
    /// Plans the rewrites of one file, read from `path` and living at `path_after` after the move.
    pub(super) fn plan_file(
        &self,
        path: &VaultPath,
        path_after: VaultPath,
        bytes: Vec<u8>,
        revision: Revision,
    ) -> Result<PlannedFile, OpsError> {
        let source = path.as_str();
        let is_canvas = path.extension().as_deref() == Some("canvas");
        let is_note = path.extension().as_deref() == Some("md");
        let mut edits: Vec<(usize, usize, String, LinkChange)> = Vec::new();
        if is_note || is_canvas {
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Err(OpsError::invalid_argument(format!(
                    "'{source}' is not valid UTF-8, so its links cannot be rewritten safely; fix its encoding first"
                )));
            };
            let found = if is_canvas {
                links::canvas_links(text)
            } else {
                links::note_links(text)
            };
            for link in &found {
                if let Some((start, end, replacement, change)) =
                    self.rewrite(text, source, path_after.as_str(), link, is_canvas)?
                {
                    edits.push((start, end, replacement, change));
                }
            }
        }
        let new_bytes = if edits.is_empty() {
            bytes.clone()
        } else {
            let mut out = bytes.clone();
            edits.sort_by_key(|(start, ..)| *start);
            for (start, end, replacement, _) in edits.iter().rev() {
                out.splice(*start..*end, replacement.bytes());
            }
            out
        };
        Ok(PlannedFile {
            path: path_after,
            revision,
            old_bytes: bytes,
            new_bytes,
            changes: edits.into_iter().map(|(.., change)| change).collect(),
        })
    }

    /// The replacement for one link, when the move changes what it resolves to.
    pub(super) fn rewrite(
        &self,
        text: &str,
        source: &str,
        source_after: &str,
        link: &Link,
        in_canvas: bool,
    ) -> Result<Option<(usize, usize, String, LinkChange)>, OpsError> {
        let Some(before) = self.before.resolve(link.path(), source) else {
            return Ok(None);
        };
        let want = if before == self.old { self.new } else { before };
        if self.after.resolve(link.path(), source_after) == Some(want)
            && !self.keeps_relative_canonical(link, source, before)
        {
            return Ok(None);
        }
        let plain = self.new_link(link, source, source_after, before, want)?;
        let written = text.get(link.start..link.end).unwrap_or_default();
        let (expected_span, replacement) = if in_canvas {
            (json_string_body(&link.original), json_string_body(&plain))
        } else if link.form == LinkForm::Property {
            let quote = text
                .get(..link.start)
                .and_then(|before| before.chars().next_back());
            (link.original.clone(), yaml_escape(&plain, quote))
        } else {
            (link.original.clone(), plain.clone())
        };
        if written != expected_span {
            return Err(OpsError::invalid_argument(format!(
                "the link {} in '{source}' (line {}) is written with escaped characters Quire cannot rewrite safely; edit it by hand and retry the move",
                link.original, link.line
            )));
        }
        Ok(Some((
            link.start,
            link.end,
            replacement,
            LinkChange {
                line: link.line as u64,
                before: link.original.clone(),
                after: plain,
            },
        )))
    }

    /// Whether `link`, held by the moved file and written relative to its folder, must be
    /// rewritten although it still resolves: a relative path stays the canonical one from the
    /// file's new folder, so that moving the file back restores it byte for byte.
    pub(super) fn keeps_relative_canonical(&self, link: &Link, source: &str, before: &str) -> bool {
        let folder = |path: &str| path.rsplit_once('/').map(|(folder, _)| folder.to_owned());
        if source != self.old
            || folder(self.old) == folder(self.new)
            || link.form == LinkForm::CanvasFile
            || path_style(link.path(), source, before) != PathStyle::Relative
        {
            return false;
        }
        let want = if before == self.old { self.new } else { before };
        path_text(want, self.new, PathStyle::Relative, spells_md(link.path())) != link.path()
    }

    /// New text for `link` so that it resolves to `want` from `source_after`, in the link's own
    /// form and path style; a bare name that would be ambiguous becomes a path in the vault's
    /// `newLinkFormat`.
    pub(super) fn new_link(
        &self,
        link: &Link,
        source: &str,
        source_after: &str,
        before: &str,
        want: &str,
    ) -> Result<String, OpsError> {
        if link.form == LinkForm::CanvasFile {
            return Ok(want.to_owned());
        }
        let written = link.path();
        let keep_md = spells_md(written);
        let style = path_style(written, source, before);
        let fallback = match self.settings.new_link_format {
            NewLinkFormat::Shortest => PathStyle::Absolute,
            NewLinkFormat::Relative => PathStyle::Relative,
            NewLinkFormat::Absolute => PathStyle::Absolute,
        };
        let mut tried: Vec<String> = Vec::new();
        for style in [style, fallback, PathStyle::Absolute] {
            let candidate = path_text(want, source_after, style, keep_md);
            tried.push(candidate);
        }
        if link.form != LinkForm::Markdown {
            // A leading `/` makes a wikilink path absolute even next to a same-named file.
            tried.push(format!(
                "/{}",
                path_text(want, source_after, PathStyle::Absolute, keep_md)
            ));
        }
        // A bare name stays bare only while it is unique: which of several same-named files a
        // bare name reaches is not something to leave to a tie-break.
        let unique = self.after.named(&lookup_name(want)).len() == 1;
        for (number, candidate) in tried.into_iter().enumerate() {
            if number == 0 && style == PathStyle::Bare && (!unique || self.restricted) {
                continue;
            }
            if link.form != LinkForm::Markdown
                && (candidate.contains('#') || candidate.contains('|') || candidate.contains("]]"))
            {
                continue;
            }
            if self.after.resolve(&candidate, source_after) != Some(want) {
                continue;
            }
            if let Some(text) = with_new_path(link.form, &link.original, &candidate) {
                return Ok(text);
            }
        }
        Err(OpsError::invalid_argument(format!(
            "no link from '{source_after}' can name '{want}' unambiguously (its name holds characters links cannot carry, such as '#' or '|'); rename it differently"
        )))
    }
}

/// A wikilink written inside a YAML scalar that opens with `quote`.
pub(super) fn yaml_escape(text: &str, quote: Option<char>) -> String {
    match quote {
        Some('"') => text.replace('\\', "\\\\").replace('"', "\\\""),
        Some('\'') => text.replace('\'', "''"),
        _ => text.to_owned(),
    }
}
