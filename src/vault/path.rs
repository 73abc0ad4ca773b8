//! `VaultPath`: the one gate through which a client-supplied path enters Quire.
//!
//! Parsing is purely syntactic and happens once, at the edge: absolute paths, drive letters,
//! backslashes, NUL bytes, empty, `.` and `..` segments are `invalid_path`; any dot-prefixed
//! segment (`.obsidian`, `.trash`, `.git`) is forbidden. The stored form is NFC-normalised so that
//! names synced from macOS (NFD) and typed by a model (NFC) compare equal. Resolution against the
//! disk (symlinks, NFC lookup) lives in `vault::resolve`; nothing here touches the file system.

use std::fmt;

use unicode_normalization::UnicodeNormalization;

/// A syntactically valid, vault-relative path: `/`-separated, NFC, non-empty segments, no hidden
/// segment. It may or may not exist on disk.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VaultPath {
    rel: String,
}

/// Why a path was refused before it ever reached the disk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("the path contains a NUL byte")]
    Nul,
    #[error(
        "the path is absolute; give a path relative to the vault root, such as 'Folder/Note.md'"
    )]
    Absolute,
    #[error("the path contains a backslash; separate folders with '/'")]
    Backslash,
    #[error("the path starts with a drive letter; give a path relative to the vault root")]
    DriveLetter,
    #[error("the path has an empty segment ('//' or a trailing '/')")]
    EmptySegment,
    #[error("the path contains a '.' or '..' segment; paths may not leave or re-enter folders")]
    DotSegment,
    #[error(
        "the path has the hidden segment '{0}'; Quire never reads or writes dot-folders such as .obsidian, .trash or .git"
    )]
    Hidden(String),
    #[error(
        "a name in the path is {bytes} bytes long; file systems allow at most {MAX_NAME_BYTES} bytes per file or folder name, so choose a shorter one"
    )]
    NameTooLong { bytes: usize },
    #[error(
        "the name '{name}' {what}, which Obsidian refuses in file and folder names (such a file cannot sync to Windows or Obsidian mobile, or shows a different name than it has); choose a name without it"
    )]
    RefusedName { name: String, what: String },
}

/// The longest file or folder name Linux file systems accept (NAME_MAX), in bytes.
const MAX_NAME_BYTES: usize = 255;

impl PathError {
    /// Hidden segments name real, reachable places that policy keeps out of reach; everything
    /// else is a malformed path.
    pub fn is_forbidden(&self) -> bool {
        matches!(self, PathError::Hidden(_))
    }
}

impl VaultPath {
    /// Parses a path naming a file inside the vault.
    pub fn parse(raw: &str) -> Result<VaultPath, PathError> {
        if raw.is_empty() {
            return Err(PathError::Empty);
        }
        // The rules apply to the normalised text, the one stored and opened: NFC maps a few
        // characters to ASCII (the Kelvin sign to `K`), so `K:` must be caught after it.
        let normalised = nfc(raw);
        if normalised.contains('\0') {
            return Err(PathError::Nul);
        }
        if normalised.contains('\\') {
            return Err(PathError::Backslash);
        }
        if normalised.starts_with('/') {
            return Err(PathError::Absolute);
        }
        let bytes = normalised.as_bytes();
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            return Err(PathError::DriveLetter);
        }
        for segment in normalised.split('/') {
            check_segment(segment)?;
        }
        Ok(VaultPath { rel: normalised })
    }

    /// Parses a folder argument: `""`, `"/"` and `"."` mean the vault root (`None`); one trailing
    /// `/` is accepted because models write folders that way.
    pub fn parse_folder(raw: &str) -> Result<Option<VaultPath>, PathError> {
        let trimmed = raw.strip_suffix('/').unwrap_or(raw);
        if trimmed.is_empty() || trimmed == "." {
            return if raw.contains('\0') {
                Err(PathError::Nul)
            } else {
                Ok(None)
            };
        }
        VaultPath::parse(trimmed).map(Some)
    }

    /// Builds a path from segments already known to be safe (read back from a vault scan).
    /// Returns `None` when a segment would not pass `parse`.
    pub fn from_segments<'a>(segments: impl IntoIterator<Item = &'a str>) -> Option<VaultPath> {
        let joined = segments.into_iter().collect::<Vec<_>>().join("/");
        VaultPath::parse(&joined).ok()
    }

    pub fn as_str(&self) -> &str {
        &self.rel
    }

    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.rel.split('/')
    }

    /// The last segment: the file or folder name.
    pub fn file_name(&self) -> &str {
        self.rel.rsplit('/').next().unwrap_or(&self.rel)
    }

    /// The file name without its final extension, which is what Obsidian shows as a note's title.
    pub fn stem(&self) -> &str {
        let name = self.file_name();
        match name.rfind('.') {
            Some(0) | None => name,
            Some(dot) => &name[..dot],
        }
    }

    /// The lower-cased extension without the dot, if any.
    pub fn extension(&self) -> Option<String> {
        let name = self.file_name();
        match name.rfind('.') {
            Some(0) | None => None,
            Some(dot) => Some(name[dot + 1..].to_lowercase()),
        }
    }

    pub fn parent(&self) -> Option<VaultPath> {
        self.rel.rfind('/').map(|slash| VaultPath {
            rel: self.rel[..slash].to_string(),
        })
    }

    /// True when `self` is `folder` or lies below it.
    pub fn starts_with(&self, folder: &VaultPath) -> bool {
        self.rel == folder.rel
            || (self.rel.starts_with(&folder.rel)
                && self.rel.as_bytes().get(folder.rel.len()) == Some(&b'/'))
    }
}

impl VaultPath {
    /// Refuses a path to be created whose names Obsidian itself refuses: control characters
    /// (line breaks, tabs), bidirectional controls that make a name display as another,
    /// `* " < > : | ?`, and Windows device names (`CON.md`). Existing files with such names stay
    /// readable; only new names are checked.
    pub fn check_new_names(&self) -> Result<(), PathError> {
        for segment in self.segments() {
            if let Some(what) = refused_character(segment).or_else(|| device_name(segment)) {
                return Err(PathError::RefusedName {
                    name: segment.escape_debug().to_string(),
                    what,
                });
            }
        }
        Ok(())
    }
}

/// The first character of `name` Obsidian refuses, described for the error.
fn refused_character(name: &str) -> Option<String> {
    name.chars().find_map(|c| match c {
        '*' | '"' | '<' | '>' | ':' | '|' | '?' => Some(format!("contains '{c}'")),
        '\n' => Some("contains a line break".to_owned()),
        '\r' => Some("contains a carriage return".to_owned()),
        '\t' => Some("contains a tab".to_owned()),
        c if c.is_control() => Some(format!("contains the control character U+{:04X}", c as u32)),
        '\u{200E}'
        | '\u{200F}'
        | '\u{061C}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}' => Some(format!(
            "contains the bidirectional control U+{:04X}",
            c as u32
        )),
        _ => None,
    })
}

/// Windows reserves these names, with any extension, in every folder.
fn device_name(name: &str) -> Option<String> {
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    let reserved = matches!(upper.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.len() == 4
            && upper.as_bytes()[3].is_ascii_digit()
            && upper.as_bytes()[3] != b'0');
    reserved.then(|| format!("is the Windows device name '{stem}'"))
}

fn check_segment(segment: &str) -> Result<(), PathError> {
    if segment.is_empty() {
        return Err(PathError::EmptySegment);
    }
    if segment == "." || segment == ".." {
        return Err(PathError::DotSegment);
    }
    if segment.starts_with('.') {
        return Err(PathError::Hidden(segment.to_string()));
    }
    // Caught here, a name the file system would refuse is the caller's mistake (`invalid_path`),
    // not an `internal` error from deep inside an open.
    if segment.len() > MAX_NAME_BYTES {
        return Err(PathError::NameTooLong {
            bytes: segment.len(),
        });
    }
    Ok(())
}

impl fmt::Display for VaultPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rel)
    }
}

impl fmt::Debug for VaultPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VaultPath({:?})", self.rel)
    }
}

/// `text` in Unicode NFC, copied as it is when a quick check proves it already is (every
/// ASCII name, which is nearly every vault path).
pub(crate) fn nfc(text: &str) -> String {
    match unicode_normalization::is_nfc_quick(text.chars()) {
        unicode_normalization::IsNormalized::Yes => text.to_owned(),
        _ => text.nfc().collect(),
    }
}

/// Whether a name's compatibility form has a `/` or starts with a `.` (a full-width solidus, a
/// one-dot leader): folded as deny rules fold paths, such a name does not stand where its folder
/// does, so the ACL judges the note alone rather than with its folder. No ASCII name is unusual
/// (a `VaultPath` has no `/` in a name, and hidden names are never paths).
pub fn unusual_name(name: &str) -> bool {
    if name.is_ascii() {
        return false;
    }
    let mut compatible = name
        .nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .peekable();
    if compatible.peek() == Some(&'.') {
        return true;
    }
    compatible.any(|c| c == '/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_escape_form() {
        let cases: &[(&str, PathError)] = &[
            ("", PathError::Empty),
            ("../x.md", PathError::DotSegment),
            ("a/../../x.md", PathError::DotSegment),
            ("./x.md", PathError::DotSegment),
            ("/etc/passwd", PathError::Absolute),
            ("C:\\x.md", PathError::Backslash),
            ("C:/x.md", PathError::DriveLetter),
            ("a\\b.md", PathError::Backslash),
            ("a\0b.md", PathError::Nul),
            ("a//b.md", PathError::EmptySegment),
            ("a/", PathError::EmptySegment),
            (".obsidian/app.json", PathError::Hidden(".obsidian".into())),
            (".trash/x.md", PathError::Hidden(".trash".into())),
            ("a/.git/config", PathError::Hidden(".git".into())),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                VaultPath::parse(raw).as_ref(),
                Err(expected),
                "input {raw:?}"
            );
        }
    }

    #[test]
    fn a_drive_letter_made_by_normalising_is_refused() {
        // Found by fuzzing: NFC turns the Kelvin sign (U+212A) into an ASCII `K`, so `K:` only
        // appears once the path is normalised.
        assert_eq!(
            VaultPath::parse("\u{212A}:x.md"),
            Err(PathError::DriveLetter)
        );
        assert_eq!(
            VaultPath::parse("a/\u{212A}:x.md").map(|p| p.to_string()),
            Ok("a/K:x.md".to_owned())
        );
    }

    #[test]
    fn r47_names_obsidian_refuses_are_refused_for_new_files() {
        for (raw, says) in [
            ("Inbox/a\nb.md", "line break"),
            ("Inbox/a\rb.md", "carriage return"),
            ("Inbox/a\tb.md", "a tab"),
            ("Inbox/gpj.\u{202E}evil.md", "U+202E"),
            ("Inbox/\u{2067}x.md", "U+2067"),
            ("Meeting: notes.md", "':'"),
            ("What?.md", "'?'"),
            ("a*b.md", "'*'"),
            ("a<b.md", "'<'"),
            ("a>b.md", "'>'"),
            ("a|b.md", "'|'"),
            ("say \"hi\".md", "'\"'"),
            ("CON.md", "device name 'CON'"),
            ("Folder/com1.txt", "device name 'com1'"),
            ("lpt9/x.md", "device name 'lpt9'"),
            ("nul", "device name 'nul'"),
        ] {
            let path = VaultPath::parse(raw).expect("parses");
            let error = path.check_new_names().expect_err(raw);
            assert!(error.to_string().contains(says), "{raw:?}: {error}");
        }
        for fine in [
            "Console.md",
            "COM0.md",
            "COM10.md",
            "Café/Ünïcödé 日本.md",
            "a#b^c[d].md",
            "NULL.md",
        ] {
            assert_eq!(
                VaultPath::parse(fine).expect("parses").check_new_names(),
                Ok(()),
                "{fine}"
            );
        }
    }

    #[test]
    fn normalises_to_nfc() {
        let nfd = VaultPath::parse("Cafe\u{301}.md").expect("valid");
        assert_eq!(nfd.as_str(), "Caf\u{e9}.md");
    }

    #[test]
    fn names_and_extensions() {
        let p = VaultPath::parse("Projects/Plan v2.final.MD").expect("valid");
        assert_eq!(p.file_name(), "Plan v2.final.MD");
        assert_eq!(p.stem(), "Plan v2.final");
        assert_eq!(p.extension().as_deref(), Some("md"));
        assert_eq!(
            p.parent().map(|p| p.to_string()).as_deref(),
            Some("Projects")
        );
        let folder = VaultPath::parse("Projects").expect("valid");
        assert!(p.starts_with(&folder));
        assert!(
            !VaultPath::parse("Projects2/x.md")
                .expect("valid")
                .starts_with(&folder)
        );
    }

    #[test]
    fn folders_accept_root_and_trailing_slash() {
        assert_eq!(VaultPath::parse_folder(""), Ok(None));
        assert_eq!(VaultPath::parse_folder("/"), Ok(None));
        assert_eq!(
            VaultPath::parse_folder("Daily/").map(|f| f.map(|f| f.to_string())),
            Ok(Some("Daily".to_string()))
        );
        assert!(VaultPath::parse_folder("../").is_err());
    }
}
