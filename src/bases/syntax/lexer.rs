//! Splits an expression into tokens. A `/` opens a regular expression where a value is expected
//! (at the start, after an operator, an opening bracket, a comma or a colon) and divides anywhere
//! else, as in JavaScript. Never panics: every offset it slices at is a character boundary.

use super::SyntaxError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Number(f64),
    String(String),
    Regex {
        source: String,
        flags: String,
    },
    Name(String),
    /// Punctuation and operators, as written: `(`, `==`, `&&`, ...
    Symbol(&'static str),
    End,
}

impl Token {
    pub(super) fn describe(&self) -> String {
        match self {
            Token::Number(n) => format!("the number {n}"),
            Token::String(s) => format!("the string {s:?}"),
            Token::Regex { source, .. } => format!("the regular expression /{source}/"),
            Token::Name(name) => format!("`{name}`"),
            Token::Symbol(symbol) => format!("`{symbol}`"),
            Token::End => "the end of the expression".to_owned(),
        }
    }
}

/// Longest first, so `==` wins over `=`-less prefixes and `>=` over `>`.
const SYMBOLS: &[&str] = &[
    "==", "!=", ">=", "<=", "&&", "||", "(", ")", "[", "]", "{", "}", ",", ".", ":", "!", "+", "-",
    "*", "/", "%", ">", "<",
];

/// Every token of `text` with its byte offset, ending with `Token::End`.
pub(super) fn tokens(text: &str) -> Result<Vec<(Token, usize)>, SyntaxError> {
    let mut out: Vec<(Token, usize)> = Vec::new();
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if c.is_whitespace() {
            at += c.len_utf8();
            continue;
        }
        let start = at;
        let (token, end) = if c.is_ascii_digit()
            || (c == '.' && text[at + 1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            number(text, at)?
        } else if c == '"' || c == '\'' {
            string(text, at, c)?
        } else if c == '/' && regex_allowed(out.last().map(|(token, _)| token)) {
            regex(text, at)?
        } else if is_name_start(c) {
            let end = text[at..]
                .char_indices()
                .find(|(_, ch)| !is_name_part(*ch))
                .map_or(text.len(), |(offset, _)| at + offset);
            (Token::Name(text[at..end].to_owned()), end)
        } else if let Some(symbol) = SYMBOLS.iter().find(|s| text[at..].starts_with(**s)) {
            (Token::Symbol(symbol), at + symbol.len())
        } else {
            return Err(SyntaxError::UnexpectedCharacter { at, found: c });
        };
        out.push((token, start));
        at = end;
    }
    out.push((Token::End, text.len()));
    Ok(out)
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_name_part(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Whether a `/` after `previous` starts a regular expression rather than dividing.
fn regex_allowed(previous: Option<&Token>) -> bool {
    match previous {
        None => true,
        Some(Token::Symbol(symbol)) => !matches!(*symbol, ")" | "]" | "}"),
        Some(_) => false,
    }
}

fn number(text: &str, start: usize) -> Result<(Token, usize), SyntaxError> {
    let bytes = text.as_bytes();
    let mut end = start;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    // A dot is a decimal point only when a digit follows: `1.isTruthy()` calls a method.
    if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    } else if end == start && end < bytes.len() && bytes[end] == b'.' {
        // `.5`
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut exponent = end + 1;
        if exponent < bytes.len() && (bytes[exponent] == b'+' || bytes[exponent] == b'-') {
            exponent += 1;
        }
        if exponent < bytes.len() && bytes[exponent].is_ascii_digit() {
            end = exponent;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    let written = &text[start..end];
    match written.parse::<f64>() {
        Ok(value) => Ok((Token::Number(value), end)),
        Err(_) => Err(SyntaxError::BadNumber {
            at: start,
            text: written.to_owned(),
        }),
    }
}

fn string(text: &str, start: usize, quote: char) -> Result<(Token, usize), SyntaxError> {
    let mut out = String::new();
    let mut chars = text[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        if c == quote {
            return Ok((Token::String(out), start + 1 + offset + c.len_utf8()));
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, escaped)) = chars.next() else {
            break;
        };
        match escaped {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            'u' => {
                let digits: String = chars.clone().take(4).map(|(_, d)| d).collect();
                match u32::from_str_radix(&digits, 16)
                    .ok()
                    .and_then(char::from_u32)
                {
                    Some(decoded) if digits.len() == 4 => {
                        out.push(decoded);
                        for _ in 0..4 {
                            chars.next();
                        }
                    }
                    _ => out.push('u'),
                }
            }
            other => out.push(other),
        }
    }
    Err(SyntaxError::UnterminatedString { at: start })
}

/// `/source/flags`; `\/` in the source stands for `/`, and `/` inside `[...]` needs no escape.
fn regex(text: &str, start: usize) -> Result<(Token, usize), SyntaxError> {
    let mut source = String::new();
    let mut in_class = false;
    let mut chars = text[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\n' => break,
            '/' if !in_class => {
                let flags_start = start + 1 + offset + 1;
                let flags_end = text[flags_start..]
                    .char_indices()
                    .find(|(_, f)| !f.is_ascii_alphabetic())
                    .map_or(text.len(), |(o, _)| flags_start + o);
                let flags = text[flags_start..flags_end].to_owned();
                return Ok((Token::Regex { source, flags }, flags_end));
            }
            '\\' => match chars.next() {
                Some((_, '/')) => source.push('/'),
                Some((_, escaped)) => {
                    source.push('\\');
                    source.push(escaped);
                }
                None => break,
            },
            '[' => {
                in_class = true;
                source.push(c);
            }
            ']' => {
                in_class = false;
                source.push(c);
            }
            _ => source.push(c),
        }
    }
    Err(SyntaxError::UnterminatedRegex { at: start })
}
