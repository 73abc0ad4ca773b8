//! Paging: the one cursor format and the one limit check of every paged listing in `ops`.
//!
//! A cursor is opaque to clients: the hex of a tagged text, so it survives any transport and a
//! client never builds one. Every decoding failure (not hex, not one of our tags, a tag another
//! kind of listing issued) is the same `invalid_argument` with the same text, so a client needs one
//! rule: pass `next_cursor` back unchanged with the same other arguments, or start over. A cursor
//! never carries anything the caller could not see on the page it came with.

use super::error::OpsError;

/// Page size when the client names none.
pub const DEFAULT_LIMIT: u32 = 50;
/// Largest page a client may ask for.
pub const MAX_LIMIT: u32 = 1000;

/// The page size a client asked for, checked against the bounds every listing shares.
pub(super) fn check_limit(limit: Option<u32>) -> Result<usize, OpsError> {
    match limit.unwrap_or(DEFAULT_LIMIT) {
        0 => Err(OpsError::invalid_argument(
            "limit must be at least 1; omit it for the default of 50",
        )),
        n if n > MAX_LIMIT => Err(OpsError::invalid_argument(format!(
            "limit {n} is over the maximum of {MAX_LIMIT}; page with next_cursor instead"
        ))),
        n => Ok(n as usize),
    }
}

/// Which ranked list a semantic-search cursor continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VectorList {
    Semantic,
    Hybrid,
}

/// Where the next page of a keyword search starts in each of its two ranked lists (`None`: that
/// list is done, or was not searched), and whether the first page fell back to matching any word,
/// so later pages run the same query over both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct KeywordPosition {
    pub notes: Option<usize>,
    pub files: Option<usize>,
    pub any_word: bool,
}

/// Where the next page of a listing starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cursor {
    /// A keyset position in a path-ordered listing: the last path returned, so notes created or
    /// deleted between pages never make the listing skip or repeat a note.
    After(String),
    /// A row offset in a ranked, counted or in-memory list.
    Offset(usize),
    /// A keyword search position over notes and files.
    Keyword(KeywordPosition),
    /// A row offset in a semantic or hybrid result list.
    Vector { list: VectorList, offset: usize },
}

const AFTER: &str = "after:";
const OFFSET: &str = "offset:";
const KEYWORD: &str = "search:";
const VECTOR: &str = "vec:";

impl Cursor {
    pub(super) fn encode(&self) -> String {
        let text = match self {
            Cursor::After(path) => format!("{AFTER}{path}"),
            Cursor::Offset(offset) => format!("{OFFSET}{offset}"),
            // `search:<notes>:<any word>[:<files>]`, `-` for a finished note list: without files it
            // is the text cursors had before files were searched.
            Cursor::Keyword(position) => {
                let notes = position
                    .notes
                    .map_or_else(|| "-".to_string(), |notes| notes.to_string());
                let any_word = u8::from(position.any_word);
                match position.files {
                    Some(files) => format!("{KEYWORD}{notes}:{any_word}:{files}"),
                    None => format!("{KEYWORD}{notes}:{any_word}"),
                }
            }
            Cursor::Vector { list, offset } => {
                let letter = match list {
                    VectorList::Semantic => "s",
                    VectorList::Hybrid => "h",
                };
                format!("{VECTOR}{letter}:{offset}")
            }
        };
        hex::encode(text)
    }

    /// Any cursor `ops` issued; the caller then refuses the kinds its listing does not issue.
    pub(super) fn decode(raw: &str) -> Result<Cursor, OpsError> {
        Cursor::parse(raw).ok_or_else(|| invalid(raw))
    }

    fn parse(raw: &str) -> Option<Cursor> {
        let text = String::from_utf8(hex::decode(raw).ok()?).ok()?;
        if let Some(path) = text.strip_prefix(AFTER) {
            return Some(Cursor::After(path.to_string()));
        }
        if let Some(offset) = text.strip_prefix(OFFSET) {
            return Some(Cursor::Offset(offset.parse().ok()?));
        }
        if let Some(rest) = text.strip_prefix(KEYWORD) {
            let mut parts = rest.split(':');
            let notes = match parts.next()? {
                "-" => None,
                notes => Some(notes.parse().ok()?),
            };
            let any_word = match parts.next()? {
                "0" => false,
                "1" => true,
                _ => return None,
            };
            let files = parts.next().map(str::parse).transpose().ok()?;
            if parts.next().is_some() {
                return None;
            }
            return Some(Cursor::Keyword(KeywordPosition {
                notes,
                files,
                any_word,
            }));
        }
        let (letter, offset) = text.strip_prefix(VECTOR)?.split_once(':')?;
        let list = match letter {
            "s" => VectorList::Semantic,
            "h" => VectorList::Hybrid,
            _ => return None,
        };
        Some(Cursor::Vector {
            list,
            offset: offset.parse().ok()?,
        })
    }

    /// The last path of the previous page of a path-ordered listing (`None` for the first page).
    pub(super) fn after(raw: Option<&str>) -> Result<Option<String>, OpsError> {
        match raw.map(Cursor::decode).transpose()? {
            None => Ok(None),
            Some(Cursor::After(path)) => Ok(Some(path)),
            Some(_) => Err(invalid(raw.unwrap_or_default())),
        }
    }

    /// The first row of the page in an offset-paged listing (0 for the first page).
    pub(super) fn offset(raw: Option<&str>) -> Result<usize, OpsError> {
        match raw.map(Cursor::decode).transpose()? {
            None => Ok(0),
            Some(Cursor::Offset(offset)) => Ok(offset),
            Some(_) => Err(invalid(raw.unwrap_or_default())),
        }
    }
}

/// The one answer to a cursor this listing did not issue.
pub(super) fn invalid(raw: &str) -> OpsError {
    OpsError::invalid_argument(format!(
        "cursor {raw:?} is not one this tool issued; pass next_cursor from the previous page unchanged (with the same other arguments), or omit cursor to start from the beginning"
    ))
}

/// The page of `rows` starting at `offset`, and the cursor of the next page when more follow.
pub(super) fn page_of<T>(
    mut rows: Vec<T>,
    offset: usize,
    limit: usize,
) -> (Vec<T>, Option<String>) {
    let total = rows.len();
    let rows: Vec<T> = if offset >= total {
        Vec::new()
    } else {
        rows.drain(offset..total.min(offset + limit)).collect()
    };
    let next = (offset + limit < total).then(|| Cursor::Offset(offset + limit).encode());
    (rows, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        for cursor in [
            Cursor::After("Daily/2025-01-01.md".into()),
            Cursor::After(String::new()),
            Cursor::Offset(7),
            Cursor::Keyword(KeywordPosition {
                notes: Some(40),
                files: None,
                any_word: true,
            }),
            Cursor::Keyword(KeywordPosition {
                notes: Some(0),
                files: Some(3),
                any_word: false,
            }),
            Cursor::Keyword(KeywordPosition {
                notes: None,
                files: Some(12),
                any_word: true,
            }),
            Cursor::Vector {
                list: VectorList::Semantic,
                offset: 0,
            },
            Cursor::Vector {
                list: VectorList::Hybrid,
                offset: 950,
            },
        ] {
            assert_eq!(Cursor::decode(&cursor.encode()).expect("ours"), cursor);
        }
    }

    /// The texts cursors carried before they shared this type, so a page-one cursor issued by an
    /// older build still yields page two.
    #[test]
    fn earlier_cursors_still_decode() {
        assert_eq!(
            Cursor::decode(&hex::encode("after:Notes/a.md")).expect("ours"),
            Cursor::After("Notes/a.md".into())
        );
        assert_eq!(
            Cursor::decode(&hex::encode("offset:3")).expect("ours"),
            Cursor::Offset(3)
        );
        assert_eq!(
            Cursor::decode(&hex::encode("search:10:0")).expect("ours"),
            Cursor::Keyword(KeywordPosition {
                notes: Some(10),
                files: None,
                any_word: false
            })
        );
        assert_eq!(
            Cursor::decode(&hex::encode("vec:h:20")).expect("ours"),
            Cursor::Vector {
                list: VectorList::Hybrid,
                offset: 20
            }
        );
    }

    #[test]
    fn foreign_cursors_are_one_invalid_argument() {
        let foreign = [
            "zz".to_string(),
            "garbage".to_string(),
            "../../etc/passwd".to_string(),
            "eyJvZmZzZXQiOiAtMX0=".to_string(),
            hex::encode("offset:-1"),
            hex::encode("vec:x:1"),
            hex::encode("search:1"),
            hex::encode("search:1:2"),
            hex::encode("search:1:0:x"),
            hex::encode("search:1:0:2:3"),
            hex::encode([0xff, 0xfe]),
        ];
        for raw in &foreign {
            let error = Cursor::decode(raw).expect_err(raw);
            assert_eq!(error.code(), "invalid_argument");
            assert_eq!(error.to_string(), invalid(raw).to_string());
        }
        // A cursor of another kind of listing is refused with the same answer.
        let offset = Cursor::Offset(7).encode();
        assert_eq!(
            Cursor::after(Some(&offset))
                .expect_err("offset")
                .to_string(),
            invalid(&offset).to_string()
        );
        let after = Cursor::After("a.md".into()).encode();
        assert!(Cursor::offset(Some(&after)).is_err());
        assert_eq!(Cursor::offset(None).expect("first page"), 0);
        assert_eq!(Cursor::after(None).expect("first page"), None);
    }

    #[test]
    fn limits() {
        assert_eq!(check_limit(None).expect("default"), 50);
        assert_eq!(check_limit(Some(1000)).expect("max"), 1000);
        assert!(check_limit(Some(0)).is_err());
        assert!(check_limit(Some(1001)).is_err());
    }

    #[test]
    fn in_memory_pages() {
        let rows: Vec<u32> = (0..5).collect();
        let (page, next) = page_of(rows.clone(), 0, 2);
        assert_eq!(page, [0, 1]);
        let next = Cursor::offset(next.as_deref()).expect("ours");
        assert_eq!(next, 2);
        let (page, next) = page_of(rows.clone(), 4, 2);
        assert_eq!((page, next), (vec![4], None));
        let (page, next) = page_of(rows, 9, 2);
        assert_eq!((page, next), (Vec::new(), None));
    }
}
