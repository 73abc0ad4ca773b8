//! The Bases tools (issue 50): a view of a `.base` file, a note's ```` ```base ```` block or
//! inline YAML evaluated over the files the caller may read (`query.rs` over `world.rs`, rows
//! narrowed by `narrow.rs`), the bases a caller may read (`listing.rs`), and writing a checked
//! `.base` file (`write.rs`).

mod answer;
mod listing;
mod narrow;
mod query;
mod source;
mod types;
mod world;
mod write;

pub use types::{
    BaseAnswer, BaseGroup, BaseList, BaseListed, BaseRow, BaseSummary, ListBases, QueryBase,
    ViewListed, WriteBase,
};
