//! Returning a text file (or the text rendering of a canvas or PDF) whole or as a window of lines,
//! within a cap on the returned size.
//! It never truncates silently: text over the cap is an error naming the size and how to page it.
//!
//! Invariants:
//! - An unpaged read returns the text byte for byte (BOM, line endings and a missing final newline
//!   included).
//! - A window is whole lines, each with its own line ending, so the windows of a file laid end to
//!   end are the file.
//! - Lines are counted as editors count them: `a\nb` and `a\nb\n` both have two lines, an empty
//!   text has none. Only `\n` ends a line; a `\r` before it stays part of the line's ending.

/// The default cap on returned text: 100 KiB, as in Vault Cortex.
pub const DEFAULT_TEXT_CAP: usize = 100 * 1024;

/// Which part of the text to return and how much may be returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextRequest {
    /// First line of the window, 1-based. With `limit` absent and this absent, the whole text.
    pub start_line: Option<usize>,
    /// Most lines in the window.
    pub limit: Option<usize>,
    /// Most bytes of text returned (the window's own text; the header is not counted).
    pub cap_bytes: usize,
}

impl TextRequest {
    /// The whole text, within the default cap.
    pub const WHOLE: TextRequest = TextRequest {
        start_line: None,
        limit: None,
        cap_bytes: DEFAULT_TEXT_CAP,
    };
}

/// Where a window sits in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowRange {
    /// First line returned, 1-based.
    pub start_line: usize,
    /// Last line returned, 1-based and inclusive; `start_line - 1` when the window is empty.
    pub end_line: usize,
    pub total_lines: usize,
    /// The `start_line` of the next window, absent at the end of the text.
    pub next_start_line: Option<usize>,
}

impl WindowRange {
    /// The one-line header that precedes a window, e.g.
    /// `Lines 1-50 of 143; next start_line: 51.` or `Lines 140-143 of 143; end of file.`
    /// (`No lines: the text is empty.` for an empty text)
    pub fn header(&self) -> String {
        // Only an empty text has an empty window: any other start past the end is refused.
        if self.end_line < self.start_line {
            return "No lines: the text is empty.".to_owned();
        }
        let range = format!("Lines {}-{}", self.start_line, self.end_line);
        match self.next_start_line {
            Some(next) => format!("{range} of {}; next start_line: {next}.", self.total_lines),
            None => format!("{range} of {}; end of file.", self.total_lines),
        }
    }
}

/// Text ready to return: the text itself and, for a paged read, where the window sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextOutput {
    pub text: String,
    /// Present exactly when `start_line` or `limit` was given.
    pub window: Option<WindowRange>,
}

impl TextOutput {
    /// The text as one block: a paged read is its header, a blank line, then the window's lines.
    pub fn rendered(&self) -> String {
        match &self.window {
            Some(window) => format!("{}\n\n{}", window.header(), self.text),
            None => self.text.clone(),
        }
    }
}

/// Why text cannot be returned. Each variant has a stable [`code`](TextError::code).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextError {
    #[error("{}", too_large_message(self))]
    TooLarge {
        /// Bytes the requested text has.
        bytes: usize,
        cap: usize,
        total_lines: usize,
        /// The first line the request asked for (1 for a whole read).
        start_line: usize,
        /// How many lines from `start_line` fit within the cap (0 when even the first is too long).
        lines_that_fit: usize,
    },
    #[error(
        "the file is not UTF-8 text: invalid byte at offset {offset} (line {line}); it may be binary or in another encoding"
    )]
    NotUtf8 { offset: usize, line: usize },
    #[error("start_line and limit count from 1; got {name} = 0")]
    ZeroArgument { name: &'static str },
    #[error("start_line {start_line} is past the end of the text, which has {total_lines} lines")]
    StartPastEnd {
        start_line: usize,
        total_lines: usize,
    },
}

impl TextError {
    /// A stable machine-readable code, the first word of the tool error an adapter shows.
    pub fn code(&self) -> &'static str {
        match self {
            TextError::TooLarge { .. } => "too_large",
            TextError::NotUtf8 { .. } => "not_utf8",
            TextError::ZeroArgument { .. } | TextError::StartPastEnd { .. } => "invalid_argument",
        }
    }
}

fn too_large_message(error: &TextError) -> String {
    let TextError::TooLarge {
        bytes,
        cap,
        total_lines,
        start_line,
        lines_that_fit,
    } = *error
    else {
        return String::new();
    };
    let advice = if lines_that_fit == 0 {
        format!("line {start_line} alone is longer than the cap, so it cannot be returned as text")
    } else {
        format!("read it in windows: start_line {start_line} with limit {lines_that_fit} fits")
    };
    format!(
        "the text is {bytes} bytes, more than the {cap}-byte cap (the text has {total_lines} lines); {advice}"
    )
}

/// Decodes `bytes` as UTF-8 and returns the requested part of it.
pub fn read_text(bytes: &[u8], request: TextRequest) -> Result<TextOutput, TextError> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let offset = error.valid_up_to();
        let line = bytes[..offset]
            .iter()
            .filter(|&&byte| byte == b'\n')
            .count()
            + 1;
        TextError::NotUtf8 { offset, line }
    })?;
    window_text(text, request)
}

/// Returns the requested part of `text`: all of it byte for byte, or a window of whole lines.
pub fn window_text(text: &str, request: TextRequest) -> Result<TextOutput, TextError> {
    let lines = line_spans(text);
    let total_lines = lines.len();
    if request.start_line.is_none() && request.limit.is_none() {
        if text.len() > request.cap_bytes {
            return Err(too_large(&lines, 0, text.len(), request.cap_bytes));
        }
        return Ok(TextOutput {
            text: text.to_owned(),
            window: None,
        });
    }

    let start_line = request.start_line.unwrap_or(1);
    if start_line == 0 {
        return Err(TextError::ZeroArgument { name: "start_line" });
    }
    if request.limit == Some(0) {
        return Err(TextError::ZeroArgument { name: "limit" });
    }
    // Asking for line 1 of an empty text is a normal first page; any other start past the end is a
    // mistake the caller should hear about.
    if start_line > total_lines.max(1) {
        return Err(TextError::StartPastEnd {
            start_line,
            total_lines,
        });
    }
    let first = start_line - 1;
    let end = request.limit.map_or(total_lines, |limit| {
        first.saturating_add(limit).min(total_lines)
    });
    let window = &lines[first.min(end)..end];
    let byte_range = match (window.first(), window.last()) {
        (Some(first_line), Some(last_line)) => first_line.0..last_line.1,
        _ => 0..0,
    };
    if byte_range.len() > request.cap_bytes {
        return Err(too_large(
            &lines,
            first,
            byte_range.len(),
            request.cap_bytes,
        ));
    }
    Ok(TextOutput {
        text: text[byte_range].to_owned(),
        window: Some(WindowRange {
            start_line,
            end_line: end,
            total_lines,
            next_start_line: (end < total_lines).then_some(end + 1),
        }),
    })
}

fn too_large(lines: &[(usize, usize)], first: usize, bytes: usize, cap: usize) -> TextError {
    let start = lines.get(first).map_or(0, |line| line.0);
    let lines_that_fit = lines[first.min(lines.len())..]
        .iter()
        .take_while(|line| line.1 - start <= cap)
        .count();
    TextError::TooLarge {
        bytes,
        cap,
        total_lines: lines.len(),
        start_line: first + 1,
        lines_that_fit,
    }
}

/// The byte span of every line, each including its `\n`.
fn line_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (index, byte) in text.bytes().enumerate() {
        if byte == b'\n' {
            spans.push((start, index + 1));
            start = index + 1;
        }
    }
    if start < text.len() {
        spans.push((start, text.len()));
    }
    spans
}
