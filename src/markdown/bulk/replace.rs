//! Replacing a literal or a regular expression across one note, only in the regions a caller
//! asked for: the body outside code by default, with code and the properties block opted into.
//! It never lets a match span a region boundary, refuses a replacement that leaves the
//! properties block unreadable, and stops as soon as the new text passes a size limit, so a short
//! pattern with a long replacement cannot make it build gigabytes before anything checks.

use std::ops::Range;

use super::BulkEditError;
use super::keys::offset_in;
use crate::markdown::blocks::{self, CodeSpans, LineKind};
use crate::markdown::frontmatter;

/// What to look for.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// Exact text; an empty literal matches nothing.
    Literal(String),
    Regex(regex::Regex),
}

/// Which regions besides the body's prose are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scope {
    /// Fenced and indented code blocks and inline code spans.
    pub code: bool,
    /// The YAML between the properties block's fences (never the fences).
    pub properties: bool,
}

/// A note after a replacement, and how many matches were replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    pub text: String,
    pub count: usize,
}

/// Replaces every match of `pattern` in the note with `replacement` (for Regex, `$1`-style expansion
/// as `regex::Regex::replace` does; a Literal's replacement is used as written), outside the
/// properties block unless `scope.properties`, and outside code (fenced and indented code blocks,
/// inline code spans) unless `scope.code`.
///
/// Each eligible region is searched on its own, so matches never span a boundary between an eligible
/// and an excluded region, and `^`, `$` and `\b` see a region's ends as the text's ends.
/// In a note whose every line ends in CRLF, the pattern and the replacement see `\n` line endings
/// and every line the replacement writes ends in CRLF, so the note keeps one kind of line ending.
/// `Ok(None)` when nothing matched. `Err(InvalidProperties)` when the replacement would change the
/// properties block so it no longer reads as a YAML mapping, or would move where it begins or ends;
/// `Err(TooLarge)` as soon as the new text passes `max_bytes`.
pub fn replace_across(
    text: &str,
    pattern: &Pattern,
    replacement: &str,
    scope: &Scope,
    max_bytes: usize,
) -> Result<Option<Replaced>, BulkEditError> {
    if !is_crlf_note(text) {
        return replace_in_note(text, pattern, replacement, scope, max_bytes);
    }
    // Working on the LF view keeps `\n` in a pattern meaning a line break, and a `\n` matched
    // right after a `\r` from turning into `\r\r\n`; converting back is exact, as every `\n`
    // of the note followed a `\r`.
    let replaced = replace_in_note(
        &text.replace("\r\n", "\n"),
        pattern,
        &replacement.replace("\r\n", "\n"),
        scope,
        max_bytes,
    )?;
    let Some(replaced) = replaced else {
        return Ok(None);
    };
    // The LF view stayed under the limit, so putting the CRs back at most doubles it.
    let text = replaced.text.replace('\n', "\r\n");
    if text.len() > max_bytes {
        return Err(BulkEditError::TooLarge { max_bytes });
    }
    Ok(Some(Replaced {
        text,
        count: replaced.count,
    }))
}

/// Whether the note has line breaks and every one of them is CRLF.
fn is_crlf_note(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut breaks = bytes
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'\n')
        .map(|(at, _)| at)
        .peekable();
    breaks.peek().is_some() && breaks.all(|at| at > 0 && bytes[at - 1] == b'\r')
}

/// `replace_across` on a note taken as it is written.
fn replace_in_note(
    text: &str,
    pattern: &Pattern,
    replacement: &str,
    scope: &Scope,
    max_bytes: usize,
) -> Result<Option<Replaced>, BulkEditError> {
    let split = frontmatter::split(text);
    let yaml_range = split.yaml.map(|yaml| {
        let start = offset_in(text, yaml);
        start..start + yaml.len()
    });
    let mut regions = Vec::new();
    if let (true, Some(range)) = (scope.properties, yaml_range.clone()) {
        regions.push(range);
    }
    regions.extend(body_regions(text, split.block_len, scope.code));
    let mut out = String::with_capacity(text.len());
    let mut count = 0;
    let mut at = 0;
    let mut new_yaml_range = yaml_range.clone();
    for region in regions {
        out.push_str(text.get(at..region.start).unwrap_or(""));
        let before = out.len();
        // An empty match where a region meets excluded text belongs to neither side: `(?m)^`
        // must not write before a code fence or the closing `---`.
        let touches_excluded = region.end < text.len();
        count += replace_in(
            text.get(region.clone()).unwrap_or(""),
            pattern,
            (replacement, touches_excluded),
            &mut out,
            max_bytes,
        )?;
        if Some(&region) == yaml_range.as_ref() {
            new_yaml_range = Some(before..out.len());
        }
        at = region.end;
    }
    out.push_str(text.get(at..).unwrap_or(""));
    if out.len() > max_bytes {
        return Err(BulkEditError::TooLarge { max_bytes });
    }
    if count == 0 {
        return Ok(None);
    }
    check_properties(&out, split.yaml, new_yaml_range)?;
    Ok(Some(Replaced { text: out, count }))
}

/// The properties block must be where the replacement left it and, when its YAML changed, still
/// read as a mapping.
fn check_properties(
    new_text: &str,
    old_yaml: Option<&str>,
    new_yaml_range: Option<Range<usize>>,
) -> Result<(), BulkEditError> {
    let intended = new_yaml_range.and_then(|range| new_text.get(range));
    let found = frontmatter::split(new_text).yaml;
    if found != intended {
        return Err(BulkEditError::InvalidProperties(
            "the replacement would move where the properties block begins or ends".to_owned(),
        ));
    }
    match found {
        Some(yaml) if Some(yaml) != old_yaml => frontmatter::parse_properties(yaml)
            .map(|_| ())
            .map_err(|error| BulkEditError::InvalidProperties(error.to_string())),
        _ => Ok(()),
    }
}

/// The body's eligible regions, in order: all of it with `code`, otherwise everything but code
/// lines (with their line endings) and inline code spans.
fn body_regions(text: &str, body_start: usize, code: bool) -> Vec<Range<usize>> {
    if code {
        return std::iter::once(body_start..text.len()).collect();
    }
    let mut excluded = Vec::new();
    for line in blocks::scan(text).lines {
        let start = offset_in(text, line.content);
        let end = start + line.content.len();
        match line.kind {
            LineKind::Code => {
                let line_end = text
                    .get(end..)
                    .and_then(|rest| rest.find('\n'))
                    .map_or(text.len(), |newline| end + newline + 1);
                excluded.push(start..line_end);
            }
            LineKind::Text | LineKind::Heading | LineKind::Comment => excluded.extend(
                code_spans(line.content)
                    .into_iter()
                    .map(|span| start + span.start..start + span.end),
            ),
            _ => {}
        }
    }
    let mut regions = Vec::new();
    let mut at = body_start;
    for gap in excluded {
        if gap.start > at {
            regions.push(at..gap.start);
        }
        at = at.max(gap.end);
    }
    if at < text.len() {
        regions.push(at..text.len());
    }
    regions
}

/// The byte ranges of one line's code spans, backticks included, read as `tags` reads them.
fn code_spans(content: &str) -> Vec<Range<usize>> {
    let bytes = content.as_bytes();
    if !bytes.contains(&b'`') {
        return Vec::new();
    }
    let spans = CodeSpans::new(bytes);
    let mut found = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        index = match bytes[index] {
            b'\\' if bytes.get(index + 1).is_some_and(u8::is_ascii_punctuation) => index + 2,
            b'`' => {
                let run = bytes[index..]
                    .iter()
                    .take_while(|byte| **byte == b'`')
                    .count();
                let end = spans.skip(index);
                if end > index + run {
                    found.push(index..end);
                }
                end.max(index + 1)
            }
            _ => index + 1,
        };
    }
    found
}

/// Appends `region` to `out` with every match replaced, leaving out an empty match at its end when
/// `skip_empty_at_end`; returns how many matches were replaced, or `TooLarge` once `out` passes
/// `max_bytes` (checked after each match, so `out` never holds more than one replacement over).
fn replace_in(
    region: &str,
    pattern: &Pattern,
    (replacement, skip_empty_at_end): (&str, bool),
    out: &mut String,
    max_bytes: usize,
) -> Result<usize, BulkEditError> {
    let too_large = Err(BulkEditError::TooLarge { max_bytes });
    let mut count = 0;
    let mut at = 0;
    match pattern {
        Pattern::Literal(literal) if literal.is_empty() => {}
        Pattern::Literal(literal) => {
            for (start, matched) in region.match_indices(literal.as_str()) {
                out.push_str(&region[at..start]);
                out.push_str(replacement);
                at = start + matched.len();
                count += 1;
                if out.len() > max_bytes {
                    return too_large;
                }
            }
        }
        Pattern::Regex(regex) => {
            for captures in regex.captures_iter(region) {
                let Some(whole) = captures.get(0) else {
                    continue;
                };
                if skip_empty_at_end && whole.is_empty() && whole.start() == region.len() {
                    continue;
                }
                out.push_str(&region[at..whole.start()]);
                // `Captures::expand` by the same rules, but refusing a group before appending
                // it: `$0$0$0…` on a long match would otherwise build gigabytes in one call.
                let mut over = false;
                regex_automata::util::interpolate::string(
                    replacement,
                    |index, dst| {
                        let group = captures.get(index).map_or("", |group| group.as_str());
                        if dst.len() + group.len() > max_bytes {
                            over = true;
                        } else if !over {
                            dst.push_str(group);
                        }
                    },
                    |name| regex.capture_names().position(|found| found == Some(name)),
                    out,
                );
                if over {
                    return too_large;
                }
                at = whole.end();
                count += 1;
                if out.len() > max_bytes {
                    return too_large;
                }
            }
        }
    }
    out.push_str(&region[at..]);
    Ok(count)
}
