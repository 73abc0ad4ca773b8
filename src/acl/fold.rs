//! The folded skeleton deny rules are matched on: one string for every spelling a person, a
//! file system or a sync client might produce of the same name.
//!
//! Compatibility decomposition (NFKD) turns full-width and other compatibility letters into their
//! plain forms and splits accented letters into base letter plus combining marks; the marks are
//! dropped; case is folded by upper- then lower-casing, which folds `ß`/`ss`, final sigma and the
//! long s as full case folding does; Turkish dotted `İ` loses its dot with the other marks and
//! dotless `ı` becomes `i`. `unicode-normalization` supplies the tables.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The skeleton of `text`: equal for every spelling that should be treated as the same name.
pub fn fold(text: &str) -> String {
    // ASCII is its own NFKD form without marks, and its upper- then lower-cased form is its lower
    // case: most vault paths are ASCII, and a restricted listing folds every path it shows.
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    fold_unicode(text)
}

/// `fold` by the Unicode tables, for any text.
pub(super) fn fold_unicode(text: &str) -> String {
    let stripped: String = text.nfkd().filter(|c| !is_combining_mark(*c)).collect();
    let cased = stripped.to_uppercase().to_lowercase();
    // Lower-casing can bring marks back (`İ` lower-cases to `i` + U+0307), so strip again.
    cased
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .map(|c| if c == 'ı' { 'i' } else { c })
        .collect()
}
