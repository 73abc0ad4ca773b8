//! The vault's files that are not notes: which kind a file is, and the pure kernels that turn its
//! bytes into something an agent can read (a fitted image, a window of text).
//! It does no I/O and knows nothing of paths beyond their extension, the ACL or MCP: callers read
//! the bytes (after their own path, ACL and size checks) and hand them in. Canvas rendering lives
//! in `markdown::canvas`, beside the other Obsidian formats.

pub mod image;
pub mod pdf;
pub mod text;

/// What `vault_read_file` does with a file, decided by its extension (ignoring case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// png, jpg, jpeg, gif, webp: fitted to the image budget by [`image::fit_image`].
    Image,
    /// canvas: rendered as markdown by `markdown::canvas::render`.
    Canvas,
    /// txt, csv, json, xml, svg, log, yaml, yml, base: returned verbatim through [`text`].
    Text,
    /// pdf: its text layer.
    Pdf,
    /// md: a note, read with `vault_read_note` instead.
    Markdown,
    /// Anything else, including files without an extension.
    Unknown,
}

/// The readable kinds with their extensions, in the order error messages list them.
pub const READABLE_EXTENSIONS: [(FileKind, &[&str]); 4] = [
    (FileKind::Image, &["png", "jpg", "jpeg", "gif", "webp"]),
    (FileKind::Canvas, &["canvas"]),
    (
        FileKind::Text,
        &[
            "txt", "csv", "json", "xml", "svg", "log", "yaml", "yml", "base",
        ],
    ),
    (FileKind::Pdf, &["pdf"]),
];

impl FileKind {
    /// The kind of the file at `path` (a vault path or a bare file name), from its extension.
    pub fn of_path(path: &str) -> FileKind {
        let name = path.rsplit('/').next().unwrap_or(path);
        // A dot at the start is a hidden file's name, not an extension separator.
        let Some((stem, extension)) = name.rsplit_once('.') else {
            return FileKind::Unknown;
        };
        if stem.is_empty() {
            return FileKind::Unknown;
        }
        FileKind::of_extension(extension)
    }

    /// The kind for an extension without its dot, ignoring case.
    pub fn of_extension(extension: &str) -> FileKind {
        let extension = extension.to_ascii_lowercase();
        if extension == "md" {
            return FileKind::Markdown;
        }
        READABLE_EXTENSIONS
            .iter()
            .find(|(_, extensions)| extensions.contains(&extension.as_str()))
            .map_or(FileKind::Unknown, |(kind, _)| *kind)
    }

    /// A stable lower-case name for results and logs.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Image => "image",
            FileKind::Canvas => "canvas",
            FileKind::Text => "text",
            FileKind::Pdf => "pdf",
            FileKind::Markdown => "markdown",
            FileKind::Unknown => "unknown",
        }
    }

    /// Whether `vault_read_file` reads this kind (notes and unknown files it refuses).
    pub fn is_readable(self) -> bool {
        READABLE_EXTENSIONS.iter().any(|(kind, _)| *kind == self)
    }
}

/// The readable kinds as one phrase for error messages:
/// `images (png, jpg, …), canvas (canvas), text (txt, …), pdf (pdf)`.
pub fn readable_kinds_phrase() -> String {
    READABLE_EXTENSIONS
        .iter()
        .map(|(kind, extensions)| {
            let label = if *kind == FileKind::Image {
                "images"
            } else {
                kind.name()
            };
            format!("{label} ({})", extensions.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::{FileKind, readable_kinds_phrase};

    #[test]
    fn kinds_follow_the_extension_ignoring_case() {
        let cases = [
            ("Attachments/Photo.JPG", FileKind::Image),
            ("a.jpeg", FileKind::Image),
            ("scan.webp", FileKind::Image),
            ("Boards/Plan.canvas", FileKind::Canvas),
            ("data/export.CSV", FileKind::Text),
            ("views/Tasks.base", FileKind::Text),
            ("config.yml", FileKind::Text),
            ("diagram.svg", FileKind::Text),
            ("paper.pdf", FileKind::Pdf),
            ("Note.md", FileKind::Markdown),
            ("Note.MD", FileKind::Markdown),
            ("archive.tar.gz", FileKind::Unknown),
            ("Makefile", FileKind::Unknown),
            ("folder.png/file", FileKind::Unknown),
            (".png", FileKind::Unknown),
            ("trailing.", FileKind::Unknown),
        ];
        for (path, expected) in cases {
            assert_eq!(FileKind::of_path(path), expected, "{path}");
        }
    }

    #[test]
    fn only_the_four_content_kinds_are_readable() {
        let readable: Vec<_> = [
            FileKind::Image,
            FileKind::Canvas,
            FileKind::Text,
            FileKind::Pdf,
            FileKind::Markdown,
            FileKind::Unknown,
        ]
        .into_iter()
        .filter(|kind| kind.is_readable())
        .collect();
        assert_eq!(
            readable,
            [
                FileKind::Image,
                FileKind::Canvas,
                FileKind::Text,
                FileKind::Pdf
            ]
        );
        assert_eq!(
            readable_kinds_phrase(),
            "images (png, jpg, jpeg, gif, webp), canvas (canvas), \
             text (txt, csv, json, xml, svg, log, yaml, yml, base), pdf (pdf)"
        );
    }
}
