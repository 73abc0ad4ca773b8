//! What a PDF font tells the text reader: how its codes map to Unicode, how wide each glyph is,
//! and whether it is monospaced (so its runs become code).
//!
//! Everything is read once per font dictionary into owned tables, so decoding a glyph is a table
//! look-up. Nothing here fails: a font whose tables are missing or malformed still decodes what it
//! can, with estimated widths, because a partial text layer is worth more to a reader than none.

mod cmap;
mod glyph_names;

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object};

use cmap::parse_to_unicode;
use glyph_names::glyph_name_text;

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
