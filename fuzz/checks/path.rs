//! `VaultPath`: whatever a client sends, an accepted path stays inside the vault (no `..`, `.`,
//! NUL, backslash, absolute or drive-letter form, no hidden segment), is NFC, and parsing it again
//! gives the same path.

use std::path::{Component, Path};

use quire::vault::{PathError, VaultPath};

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    check_file(raw);
    check_folder(raw);
}

fn check_file(raw: &str) {
    match VaultPath::parse(raw) {
        Ok(path) => {
            assert!(!raw.contains('\0'), "accepted a NUL: {raw:?}");
            assert!(!raw.starts_with('/'), "accepted an absolute path: {raw:?}");
            assert_safe(&path, raw);
            let again = VaultPath::parse(path.as_str());
            assert_eq!(
                again.as_ref(),
                Ok(&path),
                "normalisation is not idempotent: {raw:?}"
            );
            let rebuilt = VaultPath::from_segments(path.segments());
            assert_eq!(
                rebuilt.as_ref(),
                Some(&path),
                "segments do not rebuild the path"
            );
            if let Some(parent) = path.parent() {
                assert_safe(&parent, raw);
                assert!(path.starts_with(&parent));
                assert!(!parent.starts_with(&path));
            }
            assert!(!path.file_name().is_empty());
            assert!(path.file_name().starts_with(path.stem()));
            if let Some(extension) = path.extension() {
                assert_eq!(extension, extension.to_lowercase());
            }
        }
        Err(error) => {
            // The error names a real cause.
            match &error {
                PathError::Empty => assert!(raw.is_empty()),
                PathError::Nul => assert!(raw.contains('\0')),
                PathError::Absolute => assert!(raw.starts_with('/')),
                PathError::Backslash => assert!(raw.contains('\\')),
                PathError::Hidden(segment) => assert!(segment.starts_with('.')),
                _ => {}
            }
            let _ = error.to_string();
        }
    }
}

fn check_folder(raw: &str) {
    match VaultPath::parse_folder(raw) {
        Ok(Some(folder)) => {
            assert_safe(&folder, raw);
            let again = VaultPath::parse_folder(folder.as_str());
            assert_eq!(
                again,
                Ok(Some(folder)),
                "folder normalisation is not idempotent: {raw:?}"
            );
        }
        Ok(None) => {
            assert!(!raw.contains('\0'));
            assert!(
                matches!(raw, "" | "/" | "." | "./"),
                "{raw:?} read as the vault root"
            );
        }
        Err(_) => {}
    }
}

/// What every accepted path must be, checked from the outside rather than with the parser's rules.
fn assert_safe(path: &VaultPath, raw: &str) {
    let text = path.as_str();
    assert!(!text.is_empty(), "empty path from {raw:?}");
    assert!(
        !text.contains('\0') && !text.contains('\\'),
        "{text:?} from {raw:?}"
    );
    assert!(!text.starts_with('/'), "{text:?} from {raw:?}");
    let bytes = text.as_bytes();
    assert!(!(bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'));
    for segment in text.split('/') {
        assert!(
            !segment.is_empty(),
            "empty segment in {text:?} from {raw:?}"
        );
        assert!(
            !segment.starts_with('.'),
            "dot segment {segment:?} from {raw:?}"
        );
        assert!(
            segment.len() <= 255,
            "a {}-byte name from {raw:?}",
            segment.len()
        );
    }
    // Joined to a vault root, the path names only plain components below it.
    let joined = Path::new("/vault").join(text);
    assert!(joined.starts_with("/vault"));
    for component in Path::new(text).components() {
        assert!(
            matches!(component, Component::Normal(_)),
            "{component:?} in {text:?} from {raw:?}"
        );
    }
    assert!(unicode_normalization::is_nfc(text), "{text:?} is not NFC");
}
