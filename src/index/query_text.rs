//! Turns any text a client types into a valid FTS5 MATCH expression, or into nothing.
//!
//! FTS5's query syntax has operators, column filters and quoting rules, and a raw client string
//! fed to MATCH fails on the first stray quote or parenthesis. So the client's text is never
//! passed through: it is cut into words here, and every word is re-emitted as a quoted FTS5
//! string. The grammar understood is the one people type into search boxes: `"exact phrase"`,
//! `-word` / `NOT word` to exclude, `word*` for a prefix, `a OR b`; everything else (AND, NEAR,
//! parentheses, colons, emoji) is read as plain text. This module never fails and never panics.

/// A word or phrase of the query, as FTS5 will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Atom {
    /// Words of the phrase (one for a single word), each made only of letters and digits.
    words: Vec<String>,
    prefix: bool,
}

impl Atom {
    fn expression(&self) -> String {
        // Words hold only alphanumeric characters, so no quote needs escaping; FTS5 reads the
        // space-separated words inside one string as a phrase.
        let mut out = format!("\"{}\"", self.words.join(" "));
        if self.prefix {
            out.push('*');
        }
        out
    }
}

/// A word of the query that a snippet should highlight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HighlightTerm {
    /// Lower-cased, without diacritics (as `fold` gives).
    pub text: String,
    pub prefix: bool,
}

/// The MATCH expressions for one client query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchQuery {
    /// Every group must match (a group is one atom, or atoms joined by OR); `None` when the
    /// query has no positive words at all.
    pub all: Option<String>,
    /// Any positive atom may match: the fallback when `all` finds nothing. `None` when it would
    /// be the same as `all`.
    pub any: Option<String>,
    pub highlight: Vec<HighlightTerm>,
    /// Each positive atom as its own MATCH expression (one FTS5 phrase each), in query order:
    /// what a ranking over a subset of the notes re-scores (`read::search_scoped`).
    pub phrases: Vec<String>,
    /// `all` as its groups (each an FTS5 expression), and what it excludes (`None`: nothing):
    /// how a note stored as several rows (`index::parts`) is judged, every group matching one of
    /// its rows and the exclusion none.
    pub groups: Vec<String>,
    pub excluded: Option<String>,
}

/// More atoms than this are dropped: nobody types them, and they only slow the query down.
const MAX_ATOMS: usize = 32;

/// Parses any client text. Never fails: text without words gives `all: None`.
pub fn parse(query: &str) -> MatchQuery {
    let mut groups: Vec<Vec<Atom>> = Vec::new();
    let mut negated: Vec<Atom> = Vec::new();
    let mut pending_or = false;
    let mut pending_not = false;
    let mut atoms = 0usize;
    for chunk in chunks(query) {
        if atoms >= MAX_ATOMS {
            break;
        }
        let (negate, body, quoted) = match chunk {
            Chunk::Phrase { negate, text } => (negate, text, true),
            Chunk::Bare(text) => {
                if text == "OR" || text == "|" || text == "||" {
                    pending_or = !groups.is_empty();
                    continue;
                }
                if text == "AND" || text == "&&" || text == "&" {
                    continue;
                }
                if text == "NOT" {
                    pending_not = true;
                    continue;
                }
                match text.strip_prefix('-') {
                    Some(rest) if !rest.is_empty() => (true, rest.trim_start_matches('-'), false),
                    _ => (false, text, false),
                }
            }
        };
        let prefix = !quoted && body.ends_with('*');
        let words = words(body);
        if words.is_empty() {
            continue;
        }
        atoms += 1;
        let atom = Atom { words, prefix };
        if negate || pending_not {
            pending_not = false;
            pending_or = false;
            negated.push(atom);
            continue;
        }
        match groups.last_mut() {
            Some(group) if pending_or => group.push(atom),
            _ => groups.push(vec![atom]),
        }
        pending_or = false;
    }
    assemble(&groups, &negated)
}

/// The MATCH expressions of the positive groups (each atoms joined by OR) and the negated atoms.
fn assemble(groups: &[Vec<Atom>], negated: &[Atom]) -> MatchQuery {
    let highlight = groups
        .iter()
        .flatten()
        .flat_map(|atom| {
            let last = atom.words.len().saturating_sub(1);
            atom.words
                .iter()
                .enumerate()
                .map(move |(index, word)| HighlightTerm {
                    text: fold(word),
                    prefix: atom.prefix && index == last,
                })
        })
        .collect();
    let phrases: Vec<String> = groups.iter().flatten().map(Atom::expression).collect();
    if groups.is_empty() {
        return MatchQuery {
            all: None,
            any: None,
            highlight,
            phrases,
            groups: Vec::new(),
            excluded: None,
        };
    }
    let excluded = (!negated.is_empty()).then(|| {
        let parts: Vec<String> = negated.iter().map(Atom::expression).collect();
        format!("({})", parts.join(" OR "))
    });
    let exclusion = excluded
        .as_ref()
        .map_or(String::new(), |excluded| format!(" NOT {excluded}"));
    let group_expressions: Vec<String> = groups
        .iter()
        .map(|group| {
            let parts: Vec<String> = group.iter().map(Atom::expression).collect();
            format!("({})", parts.join(" OR "))
        })
        .collect();
    let all = format!("({}){exclusion}", group_expressions.join(" AND "));
    let any = (groups.len() > 1).then(|| format!("({}){exclusion}", phrases.join(" OR ")));
    MatchQuery {
        all: Some(all),
        any,
        highlight,
        phrases,
        groups: group_expressions,
        excluded,
    }
}

enum Chunk<'a> {
    Phrase { negate: bool, text: &'a str },
    Bare(&'a str),
}

/// Splits on whitespace and parentheses, keeping `"…"` (optionally preceded by `-`) together.
fn chunks(query: &str) -> Vec<Chunk<'_>> {
    let mut out = Vec::new();
    let mut rest = query;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(' || c == ')');
        if rest.is_empty() {
            return out;
        }
        let (negate, after_sign) = match rest.strip_prefix('-') {
            Some(after) if after.starts_with('"') => (true, after),
            _ => (false, rest),
        };
        if let Some(inside) = after_sign.strip_prefix('"') {
            let end = inside.find('"').unwrap_or(inside.len());
            out.push(Chunk::Phrase {
                negate,
                text: &inside[..end],
            });
            rest = inside.get(end + 1..).unwrap_or("");
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '"')
            .unwrap_or(rest.len());
        let end = if end == 0 { rest.len() } else { end };
        out.push(Chunk::Bare(&rest[..end]));
        rest = &rest[end..];
    }
}

/// The runs of letters and digits in `text`, as FTS5's unicode61 tokenizer would cut them.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !is_word_char(c))
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

pub fn is_word_char(character: char) -> bool {
    character.is_alphanumeric()
}

/// Lower case without diacritics, the comparison FTS5 makes with `remove_diacritics 2`.
pub fn fold(word: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    word.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_anded_with_an_or_fallback() {
        let query = parse("garden  plan");
        assert_eq!(query.all.as_deref(), Some("((\"garden\") AND (\"plan\"))"));
        assert_eq!(query.any.as_deref(), Some("(\"garden\" OR \"plan\")"));
    }

    #[test]
    fn operators_phrases_prefixes_and_exclusions() {
        let query = parse("\"sync client\" conf* -draft a OR b NOT c");
        assert_eq!(
            query.all.as_deref(),
            Some(
                "((\"sync client\") AND (\"conf\"*) AND (\"a\" OR \"b\")) NOT (\"draft\" OR \"c\")"
            )
        );
        assert_eq!(query.highlight[2].text, "conf");
        assert!(query.highlight[2].prefix);
    }

    #[test]
    fn text_without_words_matches_nothing() {
        for text in [
            "", "   ", "\"", "()", "-", "*", "🎉🎉", "-foo", "NOT bar", "OR", "\"\"",
        ] {
            assert_eq!(parse(text).all, None, "{text:?}");
        }
    }

    #[test]
    fn punctuation_inside_words_makes_phrases() {
        let query = parse("e.g. foo-bar NEAR(x y) col:val");
        assert_eq!(
            query.all.as_deref(),
            Some(
                "((\"e g\") AND (\"foo bar\") AND (\"NEAR\") AND (\"x\") AND (\"y\") AND (\"col val\"))"
            )
        );
    }

    #[test]
    fn folding_removes_case_and_diacritics() {
        assert_eq!(fold("Café"), "cafe");
        assert_eq!(fold("ÉCOLE"), "ecole");
    }
}
