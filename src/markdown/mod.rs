//! PROVISIONAL: replaced by the full pure markdown model.
pub mod frontmatter;
pub mod headings;
pub mod tags;
