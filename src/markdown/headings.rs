//! PROVISIONAL headings.
#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    pub text: String,
    pub level: u8,
    pub line: usize,
    pub start: usize,
    pub section_end: usize,
}
pub fn headings(text: &str) -> Vec<Heading> {
    let mut out: Vec<Heading> = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let hashes = line.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            out.push(Heading {
                text: line[hashes..].trim().to_string(),
                level: hashes as u8,
                line: i + 1,
                start: offset,
                section_end: text.len(),
            });
        }
        offset += line.len();
    }
    for i in 0..out.len() {
        let level = out[i].level;
        if let Some(next) = out[i + 1..].iter().find(|h| h.level <= level) {
            out[i].section_end = next.start;
        }
    }
    out
}
