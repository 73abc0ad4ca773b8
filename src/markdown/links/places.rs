//! Where given texts occur in a file: the wikilinks of property values in a properties block, and
//! the JSON strings of canvas nodes in a canvas file, every occurrence of all of them found in one
//! pass over the file.
//!
//! A search of the file per value or per node was quadratic in a file of many (issue 47). Each
//! text sought here ends in a closer that the file alone locates, so only the stretch before each
//! closer is walked, backwards once, with a rolling hash; a place whose length and hash are a
//! text's is compared with it in full, so the answers are exactly those of the searches. Pure,
//! and never panics.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

/// For each of `originals` (wikilinks: `[[`, text without `]]`, `]]`) in turn, where in `block` it
/// first occurs at a place no text before it took, if anywhere: the answers of searching the block
/// from its start for each and passing the places taken.
///
/// A wikilink opening at a `[[` closes on the first `]]` after it, or one byte later when that `]]`
/// starts `]]]` (its text holds no `]]`), so the wikilinks closing at a `]]` open in the stretch
/// since the previous `]]`. A text takes its occurrences in order, passing for good over one that
/// another text took (`[[a]]` and `[[a]]]` can start at one place).
pub(super) fn first_unused_occurrences(block: &str, originals: &[&str]) -> Vec<Option<usize>> {
    let (patterns, id_of) = Patterns::new(originals);
    let occurrences = wikilink_occurrences(block.as_bytes(), &patterns);
    let mut taken: HashSet<usize> = HashSet::new();
    let mut next = vec![0usize; patterns.texts.len()];
    id_of
        .into_iter()
        .map(|id| {
            let list = occurrences.get(id)?;
            let cursor = next.get_mut(id)?;
            while let Some(&at) = list.get(*cursor) {
                *cursor += 1;
                if taken.insert(at) {
                    return Some(at);
                }
            }
            None
        })
        .collect()
}

/// Every place each of the patterns, all wikilinks, occurs in `bytes`, in order.
fn wikilink_occurrences(bytes: &[u8], patterns: &Patterns) -> Vec<Vec<usize>> {
    let mut occurrences = vec![Vec::new(); patterns.texts.len()];
    let mut found_here = Vec::new();
    let mut previous_close: Option<usize> = None;
    for close in 0..bytes.len().saturating_sub(1) {
        if bytes[close] != b']' || bytes[close + 1] != b']' {
            continue;
        }
        // Openers whose first `]]` is this one lie after the previous `]]` (or overlap its end).
        let lowest = previous_close.map_or(0, |previous| previous.saturating_sub(1));
        previous_close = Some(close);
        // Closing one byte later, on `]]]`, the text is one byte longer: one term more.
        let longer = bytes.get(close + 2).filter(|byte| **byte == b']');
        let hasher = &patterns.hasher;
        hasher.walk_back(bytes, lowest, close + 2, |start, hash, power| {
            if bytes[start] == b'[' && bytes.get(start + 1) == Some(&b'[') {
                let length = close + 2 - start;
                found_here.push((start, length, hash));
                if let Some(&last) = longer {
                    let longer_hash = hasher.add(hash, hasher.term(last, power));
                    found_here.push((start, length + 1, longer_hash));
                }
            }
        });
        // Recorded left to right, so each pattern's places come in order.
        for (start, length, hash) in found_here.drain(..).rev() {
            patterns.record(bytes, start, length, hash, &mut occurrences);
        }
    }
    occurrences
}

/// Where each of some JSON string literals occurs in a canvas file.
pub(super) struct JsonStringPlaces {
    /// Per distinct literal, the places it occurs, in order.
    occurrences: Vec<Vec<usize>>,
    /// Per literal asked for, its distinct literal.
    id_of: Vec<usize>,
}

impl JsonStringPlaces {
    /// Every place each of `quoted` (JSON string literals, quotes included, as serde_json writes
    /// them) occurs in `json`.
    ///
    /// Such a literal ends at the first `"` after its opening one that no `\` escapes, reading the
    /// escapes from its start; read from any `"` of the file, that is the first `"` which a reading
    /// of the file from its start does not step over as escaped (both step alike from there on),
    /// so the literals ending at such a `"` open in the stretch since the one before.
    pub(super) fn new(json: &str, quoted: &[&str]) -> Self {
        let (patterns, id_of) = Patterns::new(quoted);
        let bytes = json.as_bytes();
        let mut occurrences = vec![Vec::new(); patterns.texts.len()];
        let mut found_here = Vec::new();
        let mut previous_quote: Option<usize> = None;
        let mut index = 0;
        while index < bytes.len() {
            match bytes[index] {
                b'\\' => {
                    index += 2;
                    continue;
                }
                b'"' => {
                    let close = index;
                    let lowest = previous_quote.unwrap_or(0);
                    previous_quote = Some(close);
                    patterns
                        .hasher
                        .walk_back(bytes, lowest, close + 1, |start, hash, _| {
                            if bytes[start] == b'"' {
                                found_here.push((start, close + 1 - start, hash));
                            }
                        });
                    for (start, length, hash) in found_here.drain(..).rev() {
                        patterns.record(bytes, start, length, hash, &mut occurrences);
                    }
                }
                _ => {}
            }
            index += 1;
        }
        JsonStringPlaces { occurrences, id_of }
    }

    /// Where the `asked`-th literal first occurs at or after `from`.
    pub(super) fn first_from(&self, asked: usize, from: usize) -> Option<usize> {
        let list = self.occurrences.get(*self.id_of.get(asked)?)?;
        list.get(list.partition_point(|at| *at < from)).copied()
    }
}

/// Distinct texts sought, each findable by its length and hash.
struct Patterns<'a> {
    texts: Vec<&'a str>,
    by_hash: HashMap<(usize, u64), Vec<usize>>,
    hasher: RollingHash,
}

impl<'a> Patterns<'a> {
    /// The distinct texts of `texts`, and the id of each of `texts` among them.
    fn new(texts: &[&'a str]) -> (Patterns<'a>, Vec<usize>) {
        let hasher = RollingHash::new();
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut distinct: Vec<&str> = Vec::new();
        let id_of = texts
            .iter()
            .map(|text| {
                *ids.entry(text).or_insert_with(|| {
                    distinct.push(text);
                    distinct.len() - 1
                })
            })
            .collect();
        let mut by_hash: HashMap<(usize, u64), Vec<usize>> = HashMap::new();
        for (id, text) in distinct.iter().enumerate() {
            by_hash
                .entry((text.len(), hasher.of(text.as_bytes())))
                .or_default()
                .push(id);
        }
        let patterns = Patterns {
            texts: distinct,
            by_hash,
            hasher,
        };
        (patterns, id_of)
    }

    /// Records `start` for each text that `bytes[start..start + length]`, of hash `hash`, is.
    fn record(
        &self,
        bytes: &[u8],
        start: usize,
        length: usize,
        hash: u64,
        occurrences: &mut [Vec<usize>],
    ) {
        for &id in self.by_hash.get(&(length, hash)).into_iter().flatten() {
            let here = bytes.get(start..start + length);
            if self.texts.get(id).map(|text| text.as_bytes()) == here
                && let Some(list) = occurrences.get_mut(id)
            {
                list.push(start);
            }
        }
    }
}

/// Polynomial hashes modulo the prime 2^61 - 1, with a base drawn for each use so that no text can
/// be written to collide (a collision would only cost a comparison). The hash of `s` is the sum of
/// `(s[i] + 1) * base^i`, so a byte is put in front in constant time.
struct RollingHash {
    base: u64,
}

const MERSENNE_61: u64 = (1 << 61) - 1;

impl RollingHash {
    fn new() -> Self {
        let drawn = std::hash::RandomState::new().hash_one(0u64) % MERSENNE_61;
        RollingHash {
            base: drawn.max(257),
        }
    }

    fn multiply(a: u64, b: u64) -> u64 {
        let product = u128::from(a) * u128::from(b);
        // 2^61 is 1 modulo the prime: fold the high bits onto the low ones, twice.
        let folded = (product & u128::from(MERSENNE_61)) + (product >> 61);
        let folded = (folded & u128::from(MERSENNE_61)) + (folded >> 61);
        let reduced = u64::try_from(folded).unwrap_or(u64::MAX);
        if reduced >= MERSENNE_61 {
            reduced - MERSENNE_61
        } else {
            reduced
        }
    }

    fn add(&self, a: u64, b: u64) -> u64 {
        let sum = a + b;
        if sum >= MERSENNE_61 {
            sum - MERSENNE_61
        } else {
            sum
        }
    }

    /// `(byte + 1) * power`.
    fn term(&self, byte: u8, power: u64) -> u64 {
        Self::multiply(u64::from(byte) + 1, power)
    }

    /// The hash of `byte` followed by the text whose hash is `hash`.
    fn push_front(&self, byte: u8, hash: u64) -> u64 {
        self.add(u64::from(byte) + 1, Self::multiply(hash, self.base))
    }

    fn of(&self, bytes: &[u8]) -> u64 {
        bytes
            .iter()
            .rev()
            .fold(0, |hash, byte| self.push_front(*byte, hash))
    }

    /// Walks `bytes[lowest..end]` from its end, calling `visit(start, hash, power)` with the hash
    /// of `bytes[start..end]` and the base to the power of its length.
    fn walk_back(
        &self,
        bytes: &[u8],
        lowest: usize,
        end: usize,
        mut visit: impl FnMut(usize, u64, u64),
    ) {
        let (mut hash, mut power) = (0u64, 1u64);
        for start in (lowest..end.min(bytes.len())).rev() {
            hash = self.push_front(bytes[start], hash);
            power = Self::multiply(power, self.base);
            visit(start, hash, power);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::links::find_from;
    use proptest::prelude::*;

    /// The placement search as it was written, the reference for `first_unused_occurrences`.
    fn placed_by_search(block: &str, originals: &[&str]) -> Vec<Option<usize>> {
        let mut used: Vec<usize> = Vec::new();
        originals
            .iter()
            .map(|original| {
                let mut from = 0;
                while let Some(at) = find_from(block, original, from) {
                    if !used.contains(&at) {
                        used.push(at);
                        return Some(at);
                    }
                    from = at + 1;
                }
                None
            })
            .collect()
    }

    proptest! {
        #[test]
        fn property_links_take_the_places_the_search_took(
            block in prop::collection::vec(
                prop::sample::select(vec!["[[", "]]", "]", "[", "a", "b", "[[a]]", "[[a]]]", "[[b[[a]]", " ", "\n"]),
                0..24,
            ),
            // What `collect_property_links` passes on: `[[`, text without `]]`, `]]`.
            originals in prop::collection::vec(
                prop::sample::select(vec!["[[a]]", "[[a]]]", "[[b[[a]]", "[[b]]", "[[]]]", "[[[a]]", "[[a]b]]", "[[]a]]", "[[a\n]]"]),
                0..10,
            ),
        ) {
            let block = block.concat();
            prop_assert_eq!(
                first_unused_occurrences(&block, &originals),
                placed_by_search(&block, &originals)
            );
        }

        #[test]
        fn json_strings_are_found_where_the_search_finds_them(
            file in prop::collection::vec(
                prop::sample::select(vec!["\"", "\\", "a", "b", "\\\"", "\\u0041", "é", ",", ":", "{", "}"]),
                0..24,
            ),
            strings in prop::collection::vec(
                prop::sample::select(vec!["", "a", "b", "ab", "\"", "\\", "a\"b", "A", "é", "\n"]),
                0..6,
            ),
        ) {
            let file = file.concat();
            let quoted: Vec<String> = strings
                .iter()
                .map(|string| serde_json::to_string(string).unwrap_or_default())
                .collect();
            let asked: Vec<&str> = quoted.iter().map(String::as_str).collect();
            let places = JsonStringPlaces::new(&file, &asked);
            for (index, literal) in asked.iter().enumerate() {
                for from in 0..=file.len() + 1 {
                    let expected = find_from(&file, literal, from);
                    // The search cannot start inside a character; the canvas never asks it to.
                    if file.is_char_boundary(from.min(file.len())) && from <= file.len() {
                        prop_assert_eq!(places.first_from(index, from), expected, "{} from {}", literal, from);
                    }
                }
            }
        }
    }
}
