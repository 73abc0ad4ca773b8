//! What a PDF font tells the text reader: how its codes map to Unicode, how wide each glyph is,
//! and whether it is monospaced (so its runs become code).
//!
//! Everything is read once per font dictionary into owned tables, so decoding a glyph is a table
//! look-up. Nothing here fails: a font whose tables are missing or malformed still decodes what it
//! can, with estimated widths, because a partial text layer is worth more to a reader than none.

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object};

/// Bounds on what one font may expand to, so a crafted CMap or width array cannot blow up memory.
const MAX_MAP_ENTRIES: usize = 200_000;
/// How many bytes of a ToUnicode or encoding CMap stream are decoded at most.
const MAX_CMAP_BYTES: usize = 4 * 1024 * 1024;

/// One decoded glyph: its text (possibly empty, or several characters for a ligature) and its
/// advance in text space units (before the font size is applied).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Glyph {
    pub text: String,
    pub advance: f64,
    /// Single-byte code 32, which word spacing (`Tw`) applies to.
    pub is_space_code: bool,
}

/// A font as the text reader needs it.
#[derive(Debug)]
pub(super) struct FontInfo {
    pub monospace: bool,
    /// Type0 (composite) fonts use two-byte codes; simple fonts one byte.
    two_byte: bool,
    to_unicode: HashMap<u64, String>,
    /// For simple fonts without (or with an incomplete) ToUnicode map: the text of each byte
    /// under the font's /Encoding.
    simple_encoding: Option<Vec<String>>,
    widths: Widths,
}

#[derive(Debug)]
enum Widths {
    Simple {
        first_char: u32,
        widths: Vec<f64>,
        missing: f64,
        scale: f64,
    },
    Composite {
        default: f64,
        /// Sorted, non-overlapping `(first, last, width)` code ranges.
        ranges: Vec<(u32, u32, f64)>,
    },
}

impl FontInfo {
    /// Reads a font dictionary. Never fails: unknown parts fall back to estimates.
    pub fn read(doc: &Document, font: &Dictionary) -> FontInfo {
        let subtype = font
            .get(b"Subtype")
            .and_then(Object::as_name)
            .unwrap_or(b"");
        let base_name = font
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .unwrap_or_default();
        // Subset fonts are named `ABCDEF+Real-Name`.
        let name = match base_name.split_once('+') {
            Some((prefix, rest)) if prefix.len() == 6 => rest.to_string(),
            _ => base_name,
        };
        let two_byte = subtype == b"Type0";
        let descendant = if two_byte {
            font.get(b"DescendantFonts")
                .ok()
                .and_then(|object| resolve(doc, object).as_array().ok())
                .and_then(|array| array.first())
                .and_then(|object| resolve(doc, object).as_dict().ok())
        } else {
            None
        };
        let descriptor = descendant
            .unwrap_or(font)
            .get(b"FontDescriptor")
            .ok()
            .and_then(|object| resolve(doc, object).as_dict().ok());
        let fixed_pitch_flag = descriptor
            .and_then(|descriptor| descriptor.get(b"Flags").ok())
            .and_then(|flags| resolve(doc, flags).as_i64().ok())
            .is_some_and(|flags| flags & 1 == 1);
        let monospace = fixed_pitch_flag || monospace_name(&name);

        let to_unicode = font
            .get(b"ToUnicode")
            .ok()
            .and_then(|object| resolve(doc, object).as_stream().ok())
            .and_then(|stream| stream.get_plain_content_with_limit(MAX_CMAP_BYTES).ok())
            .map(|bytes| parse_to_unicode(&bytes))
            .unwrap_or_default();

        let simple_encoding = if two_byte {
            None
        } else {
            font.get_font_encoding_with_limit(doc, MAX_CMAP_BYTES)
                .ok()
                .map(|encoding| {
                    let mut table: Vec<String> = (0u8..=255)
                        .map(|byte| encoding.bytes_to_string(&[byte]).unwrap_or_default())
                        .collect();
                    // lopdf drops a whole /Differences array when it meets one glyph name it
                    // does not know (TeX fonts name `dotlessj`, `.notdef`, ...); apply it here
                    // entry by entry instead.
                    apply_differences(doc, font, &mut table);
                    table
                })
        };

        let widths = if let Some(descendant) = descendant {
            composite_widths(doc, descendant)
        } else {
            simple_widths(doc, font, subtype, descriptor, monospace)
        };
        FontInfo {
            monospace,
            two_byte,
            to_unicode,
            simple_encoding,
            widths,
        }
    }

    /// Splits a shown string into glyphs.
    pub fn decode(&self, bytes: &[u8]) -> Vec<Glyph> {
        if self.two_byte {
            bytes
                .chunks(2)
                .map(|pair| {
                    let code = pair
                        .iter()
                        .fold(0u32, |acc, byte| acc << 8 | u32::from(*byte));
                    let text = self
                        .to_unicode
                        .get(&key(pair.len() as u8, code))
                        .cloned()
                        .unwrap_or_default();
                    Glyph {
                        text,
                        advance: self.widths.advance(code),
                        is_space_code: false,
                    }
                })
                .collect()
        } else {
            bytes
                .iter()
                .map(|byte| {
                    let code = u32::from(*byte);
                    let text = self
                        .to_unicode
                        .get(&key(1, code))
                        .cloned()
                        .or_else(|| {
                            self.simple_encoding
                                .as_ref()
                                .and_then(|table| table.get(*byte as usize).cloned())
                        })
                        .unwrap_or_else(|| {
                            // No map at all: printable ASCII is the best guess.
                            if byte.is_ascii_graphic() || *byte == b' ' {
                                char::from(*byte).to_string()
                            } else {
                                String::new()
                            }
                        });
                    Glyph {
                        text,
                        advance: self.widths.advance(code),
                        is_space_code: *byte == b' ',
                    }
                })
                .collect()
        }
    }
}

impl Widths {
    fn advance(&self, code: u32) -> f64 {
        match self {
            Widths::Simple {
                first_char,
                widths,
                missing,
                scale,
            } => {
                let width = code
                    .checked_sub(*first_char)
                    .and_then(|index| widths.get(index as usize))
                    .copied()
                    .unwrap_or(*missing);
                width * scale
            }
            Widths::Composite { default, ranges } => {
                let index = ranges.partition_point(|(first, _, _)| *first <= code);
                let width = index
                    .checked_sub(1)
                    .and_then(|index| ranges.get(index))
                    .filter(|(_, last, _)| code <= *last)
                    .map_or(*default, |(_, _, width)| *width);
                width / 1000.0
            }
        }
    }
}

fn apply_differences(doc: &Document, font: &Dictionary, table: &mut [String]) {
    let Some(differences) = font
        .get(b"Encoding")
        .ok()
        .and_then(|encoding| resolve(doc, encoding).as_dict().ok())
        .and_then(|encoding| encoding.get(b"Differences").ok())
        .and_then(|differences| resolve(doc, differences).as_array().ok())
    else {
        return;
    };
    let mut code = 0usize;
    for entry in differences {
        match resolve(doc, entry) {
            Object::Integer(value) => code = (*value).clamp(0, 256) as usize,
            Object::Name(name) => {
                if let Some(slot) = table.get_mut(code)
                    && let Some(text) = glyph_name_text(&String::from_utf8_lossy(name))
                {
                    *slot = text;
                }
                code += 1;
            }
            _ => {}
        }
    }
}

/// The text of a glyph name from the Adobe Glyph List conventions: `uniXXXX`, `uXXXXX`, single
/// letters, the common names below, accented letters (`eacute`), ligatures written `f_i`, and
/// suffixed variants (`a.sc`). `None` for names that say nothing (`g123`, unknown names).
fn glyph_name_text(name: &str) -> Option<String> {
    if name == ".notdef" {
        return Some(String::new());
    }
    let base = name.split('.').next().unwrap_or(name);
    if base.is_empty() {
        return None;
    }
    if base.contains('_') {
        let parts: Option<Vec<String>> = base.split('_').map(glyph_name_text).collect();
        return parts.map(|parts| parts.concat());
    }
    if let Some(hex) = base.strip_prefix("uni")
        && hex.len() >= 4
        && hex.len() % 4 == 0
        && hex.chars().all(|c| c.is_ascii_hexdigit())
    {
        let units: Vec<u16> = (0..hex.len())
            .step_by(4)
            .filter_map(|start| u16::from_str_radix(&hex[start..start + 4], 16).ok())
            .collect();
        return Some(String::from_utf16_lossy(&units));
    }
    if let Some(hex) = base.strip_prefix('u')
        && (4..=6).contains(&hex.len())
        && hex.chars().all(|c| c.is_ascii_hexdigit())
    {
        return u32::from_str_radix(hex, 16)
            .ok()
            .and_then(char::from_u32)
            .map(String::from);
    }
    if base.len() == 1 && base.chars().all(|c| c.is_ascii_alphabetic()) {
        return Some(base.to_string());
    }
    if let Some((_, text)) = GLYPH_NAMES.iter().find(|(glyph, _)| *glyph == base) {
        return Some((*text).to_string());
    }
    // An accented letter: the letter, then the combining accent, composed.
    for (accent, mark) in [
        ("grave", '\u{300}'),
        ("acute", '\u{301}'),
        ("circumflex", '\u{302}'),
        ("tilde", '\u{303}'),
        ("dieresis", '\u{308}'),
        ("ring", '\u{30A}'),
        ("cedilla", '\u{327}'),
        ("caron", '\u{30C}'),
        ("ogonek", '\u{328}'),
        ("dotaccent", '\u{307}'),
        ("hungarumlaut", '\u{30B}'),
        ("breve", '\u{306}'),
        ("macron", '\u{304}'),
    ] {
        if let Some(letter) = base.strip_suffix(accent)
            && letter.len() == 1
            && letter.chars().all(|c| c.is_ascii_alphabetic())
        {
            use unicode_normalization::UnicodeNormalization;
            return Some(format!("{letter}{mark}").nfc().collect());
        }
    }
    None
}

/// Glyph names of the Adobe Glyph List that text commonly uses, beyond single letters.
const GLYPH_NAMES: &[(&str, &str)] = &[
    ("space", " "),
    ("nbspace", "\u{a0}"),
    ("exclam", "!"),
    ("quotedbl", "\""),
    ("numbersign", "#"),
    ("dollar", "$"),
    ("percent", "%"),
    ("ampersand", "&"),
    ("quotesingle", "'"),
    ("quoteright", "\u{2019}"),
    ("quoteleft", "\u{2018}"),
    ("quotedblleft", "\u{201c}"),
    ("quotedblright", "\u{201d}"),
    ("quotesinglbase", "\u{201a}"),
    ("quotedblbase", "\u{201e}"),
    ("parenleft", "("),
    ("parenright", ")"),
    ("asterisk", "*"),
    ("asteriskmath", "*"),
    ("plus", "+"),
    ("comma", ","),
    ("hyphen", "-"),
    ("minus", "\u{2212}"),
    ("period", "."),
    ("slash", "/"),
    ("zero", "0"),
    ("one", "1"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("colon", ":"),
    ("semicolon", ";"),
    ("less", "<"),
    ("equal", "="),
    ("greater", ">"),
    ("question", "?"),
    ("at", "@"),
    ("bracketleft", "["),
    ("backslash", "\\"),
    ("bracketright", "]"),
    ("asciicircum", "^"),
    ("underscore", "_"),
    ("grave", "`"),
    ("braceleft", "{"),
    ("bar", "|"),
    ("braceright", "}"),
    ("asciitilde", "~"),
    ("endash", "\u{2013}"),
    ("emdash", "\u{2014}"),
    ("bullet", "\u{2022}"),
    ("ellipsis", "\u{2026}"),
    ("dagger", "\u{2020}"),
    ("daggerdbl", "\u{2021}"),
    ("section", "\u{a7}"),
    ("paragraph", "\u{b6}"),
    ("copyright", "\u{a9}"),
    ("circlecopyrt", "\u{a9}"),
    ("registered", "\u{ae}"),
    ("trademark", "\u{2122}"),
    ("degree", "\u{b0}"),
    ("multiply", "\u{d7}"),
    ("divide", "\u{f7}"),
    ("plusminus", "\u{b1}"),
    ("fi", "fi"),
    ("fl", "fl"),
    ("ff", "ff"),
    ("ffi", "ffi"),
    ("ffl", "ffl"),
    ("dotlessi", "\u{131}"),
    ("dotlessj", "\u{237}"),
    ("germandbls", "\u{df}"),
    ("ae", "\u{e6}"),
    ("AE", "\u{c6}"),
    ("oe", "\u{153}"),
    ("OE", "\u{152}"),
    ("oslash", "\u{f8}"),
    ("Oslash", "\u{d8}"),
    ("lslash", "\u{142}"),
    ("Lslash", "\u{141}"),
    ("eth", "\u{f0}"),
    ("Eth", "\u{d0}"),
    ("thorn", "\u{fe}"),
    ("Thorn", "\u{de}"),
    ("exclamdown", "\u{a1}"),
    ("questiondown", "\u{bf}"),
    ("guillemotleft", "\u{ab}"),
    ("guillemotright", "\u{bb}"),
    ("guilsinglleft", "\u{2039}"),
    ("guilsinglright", "\u{203a}"),
    ("cent", "\u{a2}"),
    ("sterling", "\u{a3}"),
    ("yen", "\u{a5}"),
    ("Euro", "\u{20ac}"),
    ("fraction", "\u{2044}"),
    ("periodcentered", "\u{b7}"),
    ("logicalnot", "\u{ac}"),
    ("mu", "\u{b5}"),
    ("onehalf", "\u{bd}"),
    ("onequarter", "\u{bc}"),
    ("threequarters", "\u{be}"),
    ("arrowright", "\u{2192}"),
    ("arrowleft", "\u{2190}"),
    ("infinity", "\u{221e}"),
    ("lessequal", "\u{2264}"),
    ("greaterequal", "\u{2265}"),
    ("notequal", "\u{2260}"),
    ("element", "\u{2208}"),
    ("summation", "\u{2211}"),
    ("product", "\u{220f}"),
    ("radical", "\u{221a}"),
    ("partialdiff", "\u{2202}"),
    ("integral", "\u{222b}"),
    ("visiblespace", "\u{2423}"),
    ("alpha", "\u{3b1}"),
    ("beta", "\u{3b2}"),
    ("gamma", "\u{3b3}"),
    ("delta", "\u{3b4}"),
    ("epsilon", "\u{3b5}"),
    ("lambda", "\u{3bb}"),
    ("pi", "\u{3c0}"),
    ("sigma", "\u{3c3}"),
    ("tau", "\u{3c4}"),
    ("theta", "\u{3b8}"),
    ("omega", "\u{3c9}"),
];

fn key(len: u8, code: u32) -> u64 {
    (u64::from(len) << 32) | u64::from(code)
}

fn resolve<'a>(doc: &'a Document, object: &'a Object) -> &'a Object {
    doc.dereference(object)
        .map(|(_, object)| object)
        .unwrap_or(object)
}

fn number(doc: &Document, object: &Object) -> Option<f64> {
    match resolve(doc, object) {
        Object::Integer(value) => Some(*value as f64),
        Object::Real(value) => Some(f64::from(*value)),
        _ => None,
    }
}

/// Font names that are monospaced whatever their descriptor says (TeX's typewriter fonts often
/// lack the FixedPitch flag).
fn monospace_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "courier",
        "mono",
        "consol",
        "menlo",
        "inconsolata",
        "cmtt",
        "sftt",
        "lmtt",
        "txtt",
        "typewriter",
        "code",
        "andale",
        "monaco",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

fn simple_widths(
    doc: &Document,
    font: &Dictionary,
    subtype: &[u8],
    descriptor: Option<&Dictionary>,
    monospace: bool,
) -> Widths {
    let first_char = font
        .get(b"FirstChar")
        .ok()
        .and_then(|object| number(doc, object))
        .map_or(0, |value| value.max(0.0) as u32);
    let widths: Vec<f64> = font
        .get(b"Widths")
        .ok()
        .and_then(|object| resolve(doc, object).as_array().ok())
        .map(|array| {
            array
                .iter()
                .take(256)
                .map(|width| number(doc, width).unwrap_or(0.0))
                .collect()
        })
        .unwrap_or_default();
    // Type3 glyph widths are in the font's own matrix; everything else is in thousandths.
    let scale = if subtype == b"Type3" {
        font.get(b"FontMatrix")
            .ok()
            .and_then(|object| resolve(doc, object).as_array().ok())
            .and_then(|matrix| matrix.first())
            .and_then(|value| number(doc, value))
            .filter(|value| value.is_finite() && *value != 0.0)
            .unwrap_or(0.001)
    } else {
        0.001
    };
    let declared_missing = descriptor
        .and_then(|descriptor| descriptor.get(b"MissingWidth").ok())
        .and_then(|object| number(doc, object))
        .filter(|width| *width > 0.0);
    // The standard 14 fonts may come without widths. Courier's are all 600; for the
    // proportional ones an average keeps positions close enough to find word gaps.
    let estimate = if monospace { 600.0 } else { 500.0 };
    if widths.is_empty()
        && subtype != b"Type3"
        && let Some(ascii) = font
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .ok()
            .and_then(|name| super::standard_widths::ascii_widths(&String::from_utf8_lossy(name)))
    {
        return Widths::Simple {
            first_char: 32,
            widths: ascii.iter().map(|width| f64::from(*width)).collect(),
            missing: declared_missing.unwrap_or(estimate),
            scale,
        };
    }
    let missing = declared_missing.unwrap_or(if widths.is_empty() { estimate } else { 0.0 });
    let missing = if subtype == b"Type3" && missing == estimate {
        estimate / 1000.0 / scale
    } else {
        missing
    };
    Widths::Simple {
        first_char,
        widths,
        missing,
        scale,
    }
}

fn composite_widths(doc: &Document, descendant: &Dictionary) -> Widths {
    let default = descendant
        .get(b"DW")
        .ok()
        .and_then(|object| number(doc, object))
        .unwrap_or(1000.0);
    let mut ranges = Vec::new();
    if let Some(array) = descendant
        .get(b"W")
        .ok()
        .and_then(|object| resolve(doc, object).as_array().ok())
    {
        let mut index = 0;
        while index < array.len() && ranges.len() < MAX_MAP_ENTRIES {
            let Some(first) = number(doc, &array[index]) else {
                break;
            };
            let first = first.max(0.0) as u32;
            match array.get(index + 1).map(|object| resolve(doc, object)) {
                Some(Object::Array(list)) => {
                    for (offset, width) in list.iter().enumerate() {
                        if let Some(width) = number(doc, width) {
                            let code = first.saturating_add(offset as u32);
                            ranges.push((code, code, width));
                        }
                    }
                    index += 2;
                }
                Some(last) => {
                    let (Some(last), Some(width)) = (
                        number(doc, last),
                        array.get(index + 2).and_then(|width| number(doc, width)),
                    ) else {
                        break;
                    };
                    ranges.push((first, last.max(0.0) as u32, width));
                    index += 3;
                }
                None => break,
            }
        }
    }
    ranges.sort_by_key(|(first, _, _)| *first);
    ranges.dedup_by_key(|(first, _, _)| *first);
    Widths::Composite { default, ranges }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_unicode_maps_chars_ranges_and_arrays() {
        let cmap = b"/CIDInit /ProcSet findresource begin\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
            2 beginbfchar <0003> <0020> <0011> <00660069> endbfchar\n\
            2 beginbfrange <0024> <0026> <0041> <0030> <0031> [<0078> <D835DC00>] endbfrange\nend";
        let map = parse_to_unicode(cmap);
        assert_eq!(map.get(&key(2, 3)).map(String::as_str), Some(" "));
        assert_eq!(map.get(&key(2, 0x11)).map(String::as_str), Some("fi"));
        assert_eq!(map.get(&key(2, 0x24)).map(String::as_str), Some("A"));
        assert_eq!(map.get(&key(2, 0x26)).map(String::as_str), Some("C"));
        assert_eq!(map.get(&key(2, 0x30)).map(String::as_str), Some("x"));
        assert_eq!(map.get(&key(2, 0x31)).map(String::as_str), Some("𝐀"));
        assert_eq!(
            map.get(&key(1, 0x24)),
            None,
            "code length is part of the key"
        );
    }

    #[test]
    fn malformed_cmaps_give_what_they_can() {
        let map = parse_to_unicode(
            b"beginbfchar <01> <0041> <02> endbfchar beginbfrange <05> endbfrange (x",
        );
        assert_eq!(map.get(&key(1, 1)).map(String::as_str), Some("A"));
        assert!(parse_to_unicode(b"").is_empty());
        assert!(parse_to_unicode(b"<<<<[[[((( ").is_empty());
    }

    #[test]
    fn glyph_names_decode_by_the_adobe_conventions() {
        for (name, text) in [
            ("fi", Some("fi")),
            ("f_f_i", Some("ffi")),
            ("uni00E9", Some("é")),
            ("u1D400", Some("𝐀")),
            ("eacute", Some("é")),
            ("a.sc", Some("a")),
            ("quoteright", Some("\u{2019}")),
            (".notdef", Some("")),
            ("g123", None),
        ] {
            assert_eq!(glyph_name_text(name).as_deref(), text, "{name}");
        }
    }

    #[test]
    fn typewriter_fonts_are_monospace_by_name() {
        for name in [
            "CMTT10",
            "Courier-Bold",
            "DejaVuSansMono",
            "SourceCodePro-Regular",
        ] {
            assert!(monospace_name(name), "{name}");
        }
        for name in ["CMR10", "Helvetica", "Times-Roman", "NimbusRomNo9L-Regu"] {
            assert!(!monospace_name(name), "{name}");
        }
    }
}
