//! PROVISIONAL tags.
pub fn note_tags(_text: &str) -> Vec<String> {
    Vec::new()
}
