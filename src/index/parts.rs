//! A very large note stored as several full-text rows ("parts"), so that no note holds the
//! single index writer for long.
//!
//! FTS5 takes a row's words in one statement and writes them at the commit: for 10 MB of distinct
//! words (a log of ids) that is seconds, and every other write waits behind it. A note whose text
//! exceeds `PART_BYTES` is cut into parts of at most that size, at line ends where it can be;
//! the writer stores the first with the note and the others in turns of their own, between
//! other work. Searches judge such a note by all of its rows together (`read::parts`).
//!
//! Pure: no I/O.

/// The most text one full-text row of a note holds.
pub const PART_BYTES: usize = 128 * 1024;

/// A part's full-text rowid is `part << NOTE_BITS | note id` (parts count from 1); a note kept
/// whole has its id as its rowid. Note ids stay far below `2^40`: SQLite gives each new note the
/// largest id plus one.
pub const NOTE_BITS: u32 = 40;

/// The rowid bits that name the note.
pub const NOTE_MASK: i64 = (1 << NOTE_BITS) - 1;

/// The smallest rowid of a part: whole notes' rows are below it, parts' rows from it on.
pub const FIRST_PART_ROWID: i64 = 1 << NOTE_BITS;

/// The full-text rowid of part `part` (from 1) of note `note`.
pub fn rowid(note: i64, part: usize) -> i64 {
    ((part as i64) << NOTE_BITS) | note
}

/// A note's full-text columns, in the table's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns<'a> {
    pub title: &'a str,
    pub headings: &'a str,
    pub properties: &'a str,
    pub body: &'a str,
}

/// The rows note `note` is stored as: `None` when it fits one row (or its id is too large to
/// carry parts, which SQLite never hands out in practice). Row `k` holds piece `k` of each column
/// (empty once a column is used up), so a row never exceeds about three times `PART_BYTES`.
pub fn split(note: i64, columns: Columns<'_>) -> Option<Vec<Columns<'_>>> {
    let total = columns.title.len()
        + columns.headings.len()
        + columns.properties.len()
        + columns.body.len();
    if total <= PART_BYTES || note > NOTE_MASK {
        return None;
    }
    let headings = pieces(columns.headings);
    let properties = pieces(columns.properties);
    let body = pieces(columns.body);
    let rows = headings.len().max(properties.len()).max(body.len()).max(1);
    Some(
        (0..rows)
            .map(|at| Columns {
                title: if at == 0 { columns.title } else { "" },
                headings: piece(&headings, at),
                properties: piece(&properties, at),
                body: piece(&body, at),
            })
            .collect(),
    )
}

fn piece<'a>(pieces: &[&'a str], at: usize) -> &'a str {
    pieces.get(at).copied().unwrap_or("")
}

/// `text` cut into pieces of at most `PART_BYTES` whose concatenation is `text`: after the last
/// line end of a piece's second half, else after its last space or tab there (neither cuts a
/// word), else at the last character boundary that fits.
pub fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while rest.len() > PART_BYTES {
        let mut end = PART_BYTES;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let window = &rest.as_bytes()[PART_BYTES / 2..end];
        let cut = window
            .iter()
            .rposition(|&byte| byte == b'\n')
            .or_else(|| {
                window
                    .iter()
                    .rposition(|&byte| byte == b' ' || byte == b'\t')
            })
            .map_or(end, |at| PART_BYTES / 2 + at + 1);
        let (piece, after) = rest.split_at(cut);
        out.push(piece);
        rest = after;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn columns(body: &str) -> Columns<'_> {
        Columns {
            title: "Title",
            headings: "",
            properties: "",
            body,
        }
    }

    #[test]
    fn a_note_that_fits_stays_one_row() {
        let body = "word ".repeat(PART_BYTES / 5 - 10);
        assert_eq!(split(7, columns(&body)), None);
    }

    #[test]
    fn a_large_note_is_cut_at_line_ends_and_keeps_its_title_in_the_first_row() {
        let body = "a line of words\n".repeat(PART_BYTES / 16 * 3);
        let rows = split(7, columns(&body)).expect("split");
        assert!(rows.len() >= 3, "{} rows", rows.len());
        assert_eq!(rows[0].title, "Title");
        assert!(rows[1..].iter().all(|row| row.title.is_empty()));
        for row in &rows[..rows.len() - 1] {
            assert!(row.body.ends_with('\n'), "cut inside a line");
        }
        let joined: String = rows.iter().map(|row| row.body).collect();
        assert_eq!(joined, body);
    }

    #[test]
    fn rowids_of_parts_sit_above_every_whole_note_and_name_their_note() {
        let id = rowid(12_345, 3);
        assert!(id >= FIRST_PART_ROWID);
        assert_eq!(id & NOTE_MASK, 12_345);
        assert_eq!(rowid(NOTE_MASK, 1) & NOTE_MASK, NOTE_MASK);
        assert_eq!(
            split(NOTE_MASK + 1, columns(&"x ".repeat(PART_BYTES))),
            None
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the text (long lines, no spaces, multi-byte characters), the pieces are
        /// within the limit, never empty, and give back the text.
        #[test]
        fn pieces_give_back_the_text_within_the_limit(
            unit in "[a-z \n\u{e9}\u{1F600}]{1,40}",
            repeat in 1usize..20_000,
        ) {
            let text = unit.repeat(repeat);
            let pieces = pieces(&text);
            prop_assert_eq!(pieces.concat(), text.clone());
            prop_assert!(pieces.iter().all(|piece| piece.len() <= PART_BYTES));
            prop_assert!(pieces.len() == 1 || pieces.iter().all(|piece| !piece.is_empty()));
            if text.len() > PART_BYTES && text.contains(' ') {
                // A cut at a space or line end never splits a word.
                for piece in &pieces[..pieces.len() - 1] {
                    let last = piece.chars().last().unwrap_or(' ');
                    prop_assert!(last == ' ' || last == '\n' || !unit.contains([' ', '\n']));
                }
            }
        }
    }
}
