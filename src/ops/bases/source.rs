//! Where a query's base comes from: a `.base` file, one ```` ```base ```` block of a note, or YAML
//! given inline; and the file `this` stands for by default (the base file, or the note holding
//! the block). Reads only what the caller may read; a denied path answers as a missing one.

use crate::bases::{Base, BaseError};
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::shared::{Context, Ops};
use crate::vault::VaultPath;

/// A base's text and the path `this` stands for unless the caller names another.
pub(super) struct Located {
    pub yaml: String,
    pub this: Option<String>,
}

impl Ops {
    /// The base `path` or `inline` names, checked as the caller may see it.
    pub(super) fn locate_base(
        &self,
        ctx: &Context,
        path: Option<&str>,
        block: Option<usize>,
        inline: Option<String>,
    ) -> Result<Located, OpsError> {
        match (path, inline) {
            (Some(_), Some(_)) => Err(OpsError::invalid_argument(
                "pass either path (a .base file or a note with a base block) or base (inline YAML), not both",
            )),
            (None, None) => Err(OpsError::invalid_argument(
                "pass path (a .base file or a note with a base block) or base (the YAML of a base)",
            )),
            (None, Some(yaml)) => match block {
                Some(_) => Err(OpsError::invalid_argument(
                    "block picks a base block of the note at path; it needs path, not base",
                )),
                None => Ok(Located { yaml, this: None }),
            },
            (Some(raw), None) => {
                let path = parse_path(raw)?;
                let text = self.read_base_text(ctx, &path)?;
                let yaml = match path.extension().as_deref() {
                    Some("base") if block.is_none() => text,
                    Some("base") => {
                        return Err(OpsError::invalid_argument(format!(
                            "'{path}' is a .base file; block picks a base block of a note, so leave it out"
                        )));
                    }
                    Some("md") => pick_block(&path, &text, block)?,
                    _ => {
                        return Err(OpsError::invalid_argument(format!(
                            "'{path}' is neither a .base file nor a note; give a .base file or a note with a base block"
                        )));
                    }
                };
                Ok(Located {
                    yaml,
                    this: Some(path.to_string()),
                })
            }
        }
    }

    /// The UTF-8 text of a file the caller may read.
    pub(super) fn read_base_text(
        &self,
        ctx: &Context,
        path: &VaultPath,
    ) -> Result<String, OpsError> {
        let readable = self.require_read(ctx, path)?;
        let file = self
            .walls
            .vault(&readable)
            .read(path)
            .map_err(|error| OpsError::from_vault(error, None))?;
        String::from_utf8(file.bytes).map_err(|_| {
            OpsError::invalid_argument(format!(
                "'{path}' is not valid UTF-8 text; Quire reads bases as UTF-8"
            ))
        })
    }
}

/// Reads a base, its error worded for the caller with the place it points at.
pub(super) fn parse_base(yaml: &str, source: &str) -> Result<Base, OpsError> {
    Base::parse(yaml).map_err(|error| {
        let hint = match error {
            BaseError::TooLarge { .. } => "split the base or drop what it does not need",
            BaseError::Yaml { .. } => "fix the YAML at that line and column",
            _ => "fix the base there; docs/BASES.md lists what a base may hold",
        };
        OpsError::invalid_argument(format!("{source} is not a valid base: {error}; {hint}"))
    })
}

fn pick_block(path: &VaultPath, text: &str, block: Option<usize>) -> Result<String, OpsError> {
    let mut blocks = base_blocks(text);
    let wanted = block.unwrap_or(0);
    if wanted >= blocks.len() {
        let found = match blocks.len() {
            0 => "no base block".to_owned(),
            1 => "one base block (block 0)".to_owned(),
            n => format!("{n} base blocks (block 0 to {})", n - 1),
        };
        return Err(OpsError::invalid_argument(format!(
            "'{path}' has {found}, so there is no block {wanted}; a base block is a code block fenced with ```base"
        )));
    }
    Ok(blocks.swap_remove(wanted))
}

/// The contents of the note's ```` ```base ```` (or `~~~base`) code blocks, in order. Only fences
/// at the top level count, as Obsidian renders a base block only there; a fence of another language
/// hides what it holds, so a base block shown inside a ````` ````markdown ````` example is no base.
pub(super) fn base_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    // The open fence: its character, its length, and whether it is a base block.
    let mut open: Option<(char, usize, bool)> = None;
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end_matches(['\n', '\r']);
        match open {
            None => {
                if let Some((fence, length, info)) = opening_fence(trimmed) {
                    let is_base = info.split_whitespace().next() == Some("base");
                    open = Some((fence, length, is_base));
                    current.clear();
                }
            }
            Some((fence, length, is_base)) => {
                if closes(trimmed, fence, length) {
                    if is_base {
                        blocks.push(std::mem::take(&mut current));
                    }
                    open = None;
                } else if is_base {
                    current.push_str(line);
                }
            }
        }
    }
    // An unclosed fence runs to the end of the note, as in CommonMark.
    if let Some((_, _, true)) = open {
        blocks.push(current);
    }
    blocks
}

/// A fence of three or more backticks or tildes, indented at most three spaces, and its info text.
fn opening_fence(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let fence = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = rest.len() - rest.trim_start_matches(fence).len();
    let info = rest[length..].trim();
    (length >= 3 && !(fence == '`' && info.contains('`'))).then_some((fence, length, info))
}

fn closes(line: &str, fence: char, length: usize) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let run = rest.len() - rest.trim_start_matches(fence).len();
    run >= length && rest[run..].trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::base_blocks;

    #[test]
    fn base_blocks_are_found_at_the_top_level_only() {
        let text = "# Reading\n```base\nviews:\n  - type: table\n```\n\n````markdown\n```base\nno\n```\n````\n~~~base\nfilters: x\n~~~\n";
        assert_eq!(
            base_blocks(text),
            vec![
                "views:\n  - type: table\n".to_owned(),
                "filters: x\n".to_owned()
            ]
        );
        assert_eq!(
            base_blocks("```base\nopen: 1\n"),
            vec!["open: 1\n".to_owned()]
        );
        assert!(base_blocks("```python\nx\n```\n").is_empty());
    }
}
