//! Text for glyph names (`/Differences` in a simple font's encoding): the Adobe Glyph List names
//! that occur in practice, `uniXXXX`/`uXXXX[XX]` forms, and ligatures joined by `_`.

/// The text of a glyph name from the Adobe Glyph List conventions: `uniXXXX`, `uXXXXX`, single
/// letters, the common names below, accented letters (`eacute`), ligatures written `f_i`, and
/// suffixed variants (`a.sc`). `None` for names that say nothing (`g123`, unknown names).
pub(super) fn glyph_name_text(name: &str) -> Option<String> {
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
