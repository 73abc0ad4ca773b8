//! PROVISIONAL frontmatter split.
use serde_json::{Map, Value};
pub struct FrontmatterSplit<'a> {
    pub yaml: Option<&'a str>,
    pub block_len: usize,
    pub body: &'a str,
    pub body_start_line: usize,
}
pub fn split(text: &str) -> FrontmatterSplit<'_> {
    if let Some(rest) = text.strip_prefix("---\n")
        && let Some(end) = rest.find("\n---\n")
    {
        {
            return FrontmatterSplit {
                yaml: Some(&rest[..end + 1]),
                block_len: 4 + end + 5,
                body: &rest[end + 5..],
                body_start_line: 1,
            };
        }
    }
    FrontmatterSplit {
        yaml: None,
        block_len: 0,
        body: text,
        body_start_line: 1,
    }
}
#[derive(Debug, Clone, PartialEq)]
pub struct PropertiesError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}
pub fn parse_properties(yaml: &str) -> Result<Map<String, Value>, PropertiesError> {
    serde_saphyr::from_str::<Map<String, Value>>(yaml).map_err(|e| PropertiesError {
        line: 1,
        column: 1,
        message: e.to_string(),
    })
}
pub fn render_properties(map: &Map<String, Value>) -> String {
    format!(
        "---\n{}---\n",
        serde_saphyr::to_string(map).unwrap_or_default()
    )
}
