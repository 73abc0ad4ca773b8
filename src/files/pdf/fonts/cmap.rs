//! A font's ToUnicode CMap: its tokens, and the `bfchar`/`bfrange` entries read into a map from
//! character codes to text. Bounded by the map's size; never panics on a malformed stream.

use super::{MAX_MAP_ENTRIES, key};
use std::collections::HashMap;

/// Parses the `bfchar` and `bfrange` sections of a ToUnicode CMap into a code → text map keyed by
/// code length and code. Malformed entries are skipped.
pub(super) fn parse_to_unicode(bytes: &[u8]) -> HashMap<u64, String> {
    let tokens = tokenize(bytes);
    let mut map = HashMap::new();
    let mut index = 0;
    while index < tokens.len() && map.len() < MAX_MAP_ENTRIES {
        match &tokens[index] {
            Token::Word(word) if word == "beginbfchar" => {
                index += 1;
                while index + 1 < tokens.len() {
                    match (&tokens[index], &tokens[index + 1]) {
                        (Token::Hex(source), destination) if source.len() <= 4 => {
                            if let Some(text) = destination_text(destination) {
                                map.insert(key(source.len() as u8, code_of(source)), text);
                            }
                            index += 2;
                        }
                        _ => break,
                    }
                }
            }
            Token::Word(word) if word == "beginbfrange" => {
                index += 1;
                while index + 2 < tokens.len() {
                    let (Token::Hex(low), Token::Hex(high)) = (&tokens[index], &tokens[index + 1])
                    else {
                        break;
                    };
                    if low.len() > 4 || low.len() != high.len() {
                        index += 3;
                        continue;
                    }
                    let len = low.len() as u8;
                    let (low, high) = (code_of(low), code_of(high));
                    let count = high.saturating_sub(low) as usize + 1;
                    match &tokens[index + 2] {
                        Token::Hex(start) => {
                            let mut units = utf16_units(start);
                            for offset in
                                0..count.min(MAX_MAP_ENTRIES - map.len().min(MAX_MAP_ENTRIES))
                            {
                                if let Some(last) = units.last_mut()
                                    && offset > 0
                                {
                                    *last = last.wrapping_add(1);
                                }
                                map.insert(
                                    key(len, low + offset as u32),
                                    String::from_utf16_lossy(&units),
                                );
                            }
                        }
                        Token::Array(items) => {
                            for (offset, item) in items.iter().take(count).enumerate() {
                                map.insert(
                                    key(len, low + offset as u32),
                                    String::from_utf16_lossy(&utf16_units(item)),
                                );
                            }
                        }
                        _ => {}
                    }
                    index += 3;
                }
            }
            _ => index += 1,
        }
    }
    map
}

fn destination_text(token: &Token) -> Option<String> {
    match token {
        Token::Hex(bytes) => Some(String::from_utf16_lossy(&utf16_units(bytes))),
        _ => None,
    }
}

fn code_of(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0u32, |acc, byte| acc << 8 | u32::from(*byte))
}

fn utf16_units(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks(2)
        .map(|pair| match pair {
            [high, low] => u16::from_be_bytes([*high, *low]),
            [single] => u16::from(*single),
            _ => 0xFFFD,
        })
        .collect()
}

#[derive(Debug)]
enum Token {
    Hex(Vec<u8>),
    Array(Vec<Vec<u8>>),
    Word(String),
    Other,
}

/// A tokenizer for the small PostScript subset CMaps use: hex strings, arrays of hex strings,
/// words; comments, names, dictionaries and literal strings are skipped.
fn tokenize(bytes: &[u8]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut index = 0;
    let mut array: Option<Vec<Vec<u8>>> = None;
    while index < bytes.len() {
        let byte = bytes[index];
        match byte {
            b'%' => {
                while index < bytes.len() && bytes[index] != b'\n' && bytes[index] != b'\r' {
                    index += 1;
                }
            }
            b'<' if bytes.get(index + 1) == Some(&b'<') => index += 2,
            b'>' if bytes.get(index + 1) == Some(&b'>') => index += 2,
            b'<' => {
                let start = index + 1;
                let end = bytes[start..]
                    .iter()
                    .position(|byte| *byte == b'>')
                    .map_or(bytes.len(), |offset| start + offset);
                let hex = hex_bytes(&bytes[start..end]);
                match &mut array {
                    Some(items) => items.push(hex),
                    None => tokens.push(Token::Hex(hex)),
                }
                index = end + 1;
            }
            b'[' => {
                array = Some(Vec::new());
                index += 1;
            }
            b']' => {
                if let Some(items) = array.take() {
                    tokens.push(Token::Array(items));
                }
                index += 1;
            }
            b'(' => {
                // Literal strings (CMap names, registry) do not matter here; skip them.
                let mut depth = 0usize;
                while index < bytes.len() {
                    match bytes[index] {
                        b'\\' => index += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    index += 1;
                }
                index += 1;
                tokens.push(Token::Other);
            }
            _ if byte.is_ascii_whitespace() => index += 1,
            _ => {
                let start = index;
                while index < bytes.len()
                    && !bytes[index].is_ascii_whitespace()
                    && !b"<>[]()%/".contains(&bytes[index])
                {
                    index += 1;
                }
                if index == start {
                    // A name's slash or a stray delimiter.
                    index += 1;
                    tokens.push(Token::Other);
                } else if array.is_none() {
                    tokens.push(Token::Word(
                        String::from_utf8_lossy(&bytes[start..index]).into_owned(),
                    ));
                }
            }
        }
    }
    tokens
}

fn hex_bytes(text: &[u8]) -> Vec<u8> {
    let digits: Vec<u8> = text
        .iter()
        .filter_map(|byte| (*byte as char).to_digit(16).map(|digit| digit as u8))
        .collect();
    digits
        .chunks(2)
        .map(|pair| match pair {
            [high, low] => high << 4 | low,
            [high] => high << 4,
            _ => 0,
        })
        .collect()
}
