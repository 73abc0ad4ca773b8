//! Searching the vault: ranked search over the index (keyword, semantic, hybrid), grep, the tag,
//! folder, property and recency listings, and the counted vocabularies.
//!
//! `notes.rs` holds `vault_search`'s request and result types and its mode dispatch: the cursor
//! and the mode decide whether the semantic leg (`semantic`) answers or keyword search (`keyword`)
//! does. Every mode also returns files that are not notes (canvases, PDFs, text formats) by
//! their indexed text and its chunks' vectors, unless a filter only notes can meet is given.
//! Inputs are validated in `filters` (dates, tags, properties) and turned into the
//! index's filters; client text never reaches SQL or FTS syntax. Obsidian's excluded files are left
//! out of search results (keyword search, grep, tag and property searches) but stay listable by
//! folder and in `vault_list_notes`. Every function blocks: call it off the async executor.

mod counts;
mod filters;
mod grep;
mod keyword;
mod listings;
mod notes;
mod semantic;

pub(in crate::ops) use counts::visible_scope;
pub use counts::{CountList, Counted, CountedList, ListPropertyValues};
pub use filters::{DateFilter, SearchFilters};
pub use grep::{DEFAULT_GREP_BUDGET, Grep, GrepHit, GrepResult};
pub use listings::{RecentNotes, RecentSort, SearchByFolder, SearchByProperty, SearchByTag};
pub use notes::{RebuiltIndex, SearchMode, SearchNotes, SearchResult, SearchResults};
pub(in crate::ops) use semantic::SemanticSlot;
pub use semantic::{EmbedPass, SemanticSearch};
