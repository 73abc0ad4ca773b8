//! A link rewritten for a moved target: which path style the original used (shortest, relative,
//! absolute), the new path text in that style, and the link with only its path replaced.

use super::resolve::join;
use super::{LinkForm, LinkLine, fold};

/// How a link names its target, which a rewrite keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// Only the file name (`[[Note]]`, `[a](Note.md)`).
    Bare,
    /// Relative to the linking file's folder (`../Other/Note.md`, `./Note.md`, `Sub/Note`).
    Relative,
    /// The vault path (`Folder/Note`).
    Absolute,
}

/// The style of `path` as written in `source`, given the file it resolved to.
pub fn path_style(path: &str, source: &str, target: &str) -> PathStyle {
    if path.starts_with("./") || path.starts_with("../") {
        return PathStyle::Relative;
    }
    if !path.contains('/') {
        return PathStyle::Bare;
    }
    let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
    if !folder.is_empty()
        && !path.starts_with('/')
        && let Some(joined) = join(folder, path)
    {
        let joined = fold(&joined);
        let target = fold(target);
        if joined == target || format!("{joined}.md") == target {
            return PathStyle::Relative;
        }
    }
    PathStyle::Absolute
}

/// `target` (a vault path) written as a link path from `source` in `style`; a note's `.md` is
/// written only when `keep_md`.
pub fn path_text(target: &str, source: &str, style: PathStyle, keep_md: bool) -> String {
    let target = if keep_md { target } else { strip_md(target) };
    match style {
        PathStyle::Bare => target.rsplit('/').next().unwrap_or(target).to_owned(),
        PathStyle::Absolute => target.to_owned(),
        PathStyle::Relative => {
            let folder = source.rsplit_once('/').map_or("", |(folder, _)| folder);
            let from: Vec<&str> = folder.split('/').filter(|part| !part.is_empty()).collect();
            let to: Vec<&str> = target.split('/').collect();
            let common = from
                .iter()
                .zip(&to)
                .take_while(|(a, b)| a == b)
                .count()
                .min(to.len().saturating_sub(1));
            let mut parts = vec![".."; from.len() - common];
            parts.extend(&to[common..]);
            parts.join("/")
        }
    }
}

/// `path` without a final `.md` (any case).
pub fn strip_md(path: &str) -> &str {
    let cut = path.len().saturating_sub(3);
    match path.get(cut..) {
        Some(end) if end.eq_ignore_ascii_case(".md") => &path[..cut],
        _ => path,
    }
}

/// Whether a link path spells out `.md`.
pub fn spells_md(path: &str) -> bool {
    strip_md(path).len() != path.len()
}

/// The link's text (`original`) with its path replaced by `new_path`, keeping everything else: the
/// embed `!`, the `#heading`/`#^block` part, the alias or link text, angle brackets and the title.
/// `new_path` is plain text; it is percent-encoded for a markdown link without angle brackets, in
/// the manner of the original (non-ASCII stays as it is unless the original encoded some).
/// `None` when the original is not a link of that form.
pub fn with_new_path(form: LinkForm, original: &str, new_path: &str) -> Option<String> {
    match form {
        LinkForm::Wiki | LinkForm::Property => {
            let embed = original.starts_with('!');
            let inner = original
                .strip_prefix('!')
                .unwrap_or(original)
                .strip_prefix("[[")?
                .strip_suffix("]]")?;
            let target_end = match inner.find('|') {
                Some(at) if at > 0 => {
                    if inner[..at].ends_with('\\') {
                        at - 1
                    } else {
                        at
                    }
                }
                _ => inner.len(),
            };
            let path_end = inner[..target_end].find('#').unwrap_or(target_end);
            // Obsidian reads `[[|#a|b]]` as the link `|#a|b`: after a non-empty path the `|` of
            // its subpath would start an alias instead, so no rewrite keeps that link's meaning.
            if inner[path_end..target_end].contains('|') {
                return None;
            }
            // Spaces around a path are trimmed by Obsidian; keep those after the `#` part only.
            let rest = &inner[path_end..];
            let rest = if path_end == target_end {
                rest.trim_start()
            } else {
                rest
            };
            Some(format!(
                "{}[[{new_path}{rest}]]",
                if embed { "!" } else { "" }
            ))
        }
        LinkForm::Markdown => {
            let open = original.find('[')?;
            let mut line = LinkLine::new(original);
            let found = line.markdown_link(open)?;
            let (start, end, angle) = line.destination_span(found.text_end)?;
            let raw = &original[start..end];
            // The link is percent-decoded before its `#` part is split off, so an encoded `%23`
            // starts the subpath too, and the rewrite keeps it.
            let path_end = raw
                .find('#')
                .into_iter()
                .chain(raw.to_ascii_lowercase().find("%23"))
                .min()
                .unwrap_or(raw.len());
            let destination = if angle {
                format!("{}{}", new_path.replace('>', "%3E"), &raw[path_end..])
            } else {
                // The kept `#subpath` may close a parenthesis the old path opened; alone it
                // would end the destination early.
                balance_parens(&format!(
                    "{}{}",
                    encode_path(new_path, raw),
                    &raw[path_end..]
                ))
            };
            Some(format!(
                "{}{destination}{}",
                &original[..start],
                &original[end..]
            ))
        }
        LinkForm::CanvasFile => Some(new_path.to_owned()),
    }
}

/// Escapes each parenthesis of a bare destination that has no partner, so the destination reads
/// back whole (`destination_span` counts pairs) and means the same (escapes are removed).
pub(super) fn balance_parens(destination: &str) -> String {
    let bytes = destination.as_bytes();
    let mut unmatched = Vec::new();
    let mut open = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 1,
            b'(' => open.push(index),
            // The guard pops the partner when there is one.
            b')' if open.pop().is_none() => unmatched.push(index),
            _ => {}
        }
        index += 1;
    }
    unmatched.extend(open);
    if unmatched.is_empty() {
        return destination.to_owned();
    }
    unmatched.sort_unstable();
    let mut out = String::with_capacity(destination.len() + unmatched.len());
    let mut from = 0;
    for at in unmatched {
        out.push_str(&destination[from..at]);
        out.push('\\');
        from = at;
    }
    out.push_str(&destination[from..]);
    out
}

/// Percent-encodes a path for a markdown link destination in the manner of `like`, the
/// destination it replaces.
pub(super) fn encode_path(path: &str, like: &str) -> String {
    let encode_non_ascii = like.as_bytes().windows(3).any(|w| {
        w[0] == b'%'
            && matches!(w[1], b'8'..=b'9' | b'A'..=b'F' | b'a'..=b'f')
            && w[2].is_ascii_hexdigit()
    });
    let mut out = String::with_capacity(path.len());
    for character in path.chars() {
        match character {
            ' ' => out.push_str("%20"),
            '%' | '(' | ')' | '<' | '>' | '#' | '^' | '[' | ']' | '\\' | '|' => {
                let mut buffer = [0u8; 4];
                for byte in character.encode_utf8(&mut buffer).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
            character if !character.is_ascii() && encode_non_ascii => {
                let mut buffer = [0u8; 4];
                for byte in character.encode_utf8(&mut buffer).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
            character if character.is_ascii_control() => {
                out.push_str(&format!("%{:02X}", character as u32));
            }
            character => out.push(character),
        }
    }
    out
}
