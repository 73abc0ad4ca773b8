//! HTML blocks: which line opens one (the CommonMark start conditions) and which ends it.

use super::HtmlEnd;

pub(super) const BLOCK_TAGS: &[&str] = &[
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

pub(super) const RAW_TEXT_TAGS: &[&str] = &["pre", "script", "style", "textarea"];

/// The start of a CommonMark HTML block, and how it ends. Kind 7 (any lone tag) cannot interrupt a
/// paragraph, so it is only recognised when no paragraph is open.
pub(super) fn html_block_start(text: &str, paragraph_open: bool) -> Option<HtmlEnd> {
    let rest = text.strip_prefix('<')?;
    if rest.starts_with("!--") {
        return Some(HtmlEnd::Contains("-->"));
    }
    if rest.starts_with('?') {
        return Some(HtmlEnd::Contains("?>"));
    }
    if rest.starts_with("![CDATA[") {
        return Some(HtmlEnd::Contains("]]>"));
    }
    if rest
        .strip_prefix('!')
        .is_some_and(|after| after.starts_with(|c: char| c.is_ascii_alphabetic()))
    {
        return Some(HtmlEnd::Contains(">"));
    }
    let (closing, name_and_more) = match rest.strip_prefix('/') {
        Some(after) => (true, after),
        None => (false, rest),
    };
    let name_length = name_and_more
        .bytes()
        .take_while(|byte| byte.is_ascii_alphanumeric() || *byte == b'-')
        .count();
    let name = name_and_more.get(..name_length)?;
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let after_name = name_and_more.get(name_length..).unwrap_or("");
    let name_ends = after_name.is_empty()
        || after_name.starts_with([' ', '\t', '>'])
        || after_name.starts_with("/>");
    if !closing
        && name_ends
        && RAW_TEXT_TAGS
            .iter()
            .any(|tag| tag.eq_ignore_ascii_case(name))
    {
        return Some(HtmlEnd::RawTextClose);
    }
    if name_ends && BLOCK_TAGS.iter().any(|tag| tag.eq_ignore_ascii_case(name)) {
        return Some(HtmlEnd::BlankLine);
    }
    // Kind 7, approximated: a whole open or closing tag and nothing else on the line.
    let trimmed = after_name.trim_end_matches([' ', '\t']);
    if !paragraph_open
        && trimmed.ends_with('>')
        && (after_name.starts_with([' ', '\t', '>', '/']))
        && !trimmed[..trimmed.len() - 1].contains(['<', '>'])
    {
        return Some(HtmlEnd::BlankLine);
    }
    None
}

pub(super) fn html_block_ends(end: HtmlEnd, text: &str) -> bool {
    match end {
        HtmlEnd::Contains(needle) => text.contains(needle),
        HtmlEnd::RawTextClose => {
            let lowered = text.to_ascii_lowercase();
            RAW_TEXT_TAGS
                .iter()
                .any(|tag| lowered.contains(&format!("</{tag}>")))
        }
        HtmlEnd::BlankLine => false,
    }
}
