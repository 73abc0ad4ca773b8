//! Obsidian Bases: the expression language of filters and formulas, the `.base` file model, and
//! the evaluation of a view over rows. Pure: no files, no index, no clock; the caller supplies
//! rows and an `Environment` (links, other files, now), so the index can implement them later and
//! tests implement them over an in-memory vault.
//!
//! `syntax` reads expressions once into trees; `model` reads a base's YAML into a `Base` whose
//! every expression is parsed and whose formulas are ordered by dependency; `eval` evaluates one
//! expression for one row; `run` evaluates a view (filters, formulas, sort, groups, limit,
//! summaries) into a plain `ViewResult`.
//!
//! Decisions where Obsidian's pages leave behaviour open (docs/BASES.md has the full list):
//! - Dates are wall-clock (civil) dates; the environment's time zone is used only for epoch
//!   milliseconds and for text with an offset. A date with no time stays without one after adding
//!   whole days, and gains one when hours, minutes or seconds are added.
//! - Two dates subtract to milliseconds (a number), as the syntax page says; a duration becomes
//!   milliseconds with a month counted as 30 days.
//! - An empty list or object is falsy (JavaScript says truthy), so `if(tags, ...)` reads as users
//!   mean it.
//! - `&&` and `||` return an operand, as in JavaScript; filters use its truthiness.
//! - Null in arithmetic gives null, and null joins text as "", so a missing property empties a cell
//!   instead of failing it. A method called on null gives null (`isEmpty()` true, `isTruthy()`
//!   false, `toString()` "").
//! - Text that reads as a number equals, compares and computes (`-`, `*`, `/`, `%`) as that
//!   number; `+` with text always joins text. A date compares with text that reads as a date.
//! - Links are equal when they resolve to the same file, else when their targets are the same text;
//!   a link equals the file it resolves to; a file equals its path.
//! - A link keeps the file it is written in and is resolved through the environment when a
//!   comparison or lookup needs it (no resolved path is cached in the value).
//! - `file.tags` lists tags with `#`; `hasTag` ignores `#` and case and matches nested tags.
//!   `file.backlinks` and `file.links` are lists of links. An unknown field of a file reads that
//!   file's note property, so `this.status` works.
//! - `duration * n` and `n * duration` both scale; `duration('1d') / 2` halves.
//! - Lists have `mean`, `median`, `sum`, `min`, `max` and `stddev`, since the syntax page's own
//!   summary example calls `values.mean()`. Stddev is the population deviation.
//! - Sorting orders text case-insensitively (numbers written as text by value, first), puts empty
//!   values last in either direction, and keeps the input order for ties; a view without `sort`
//!   keeps the rows in the order given.
//! - `limit` keeps the first rows after sorting, then grouping splits what is kept; summaries are
//!   over the kept rows (per group too). Numeric summaries read text holding a number (the page
//!   averages `formula.ppu`, a `toFixed` text). Range over dates is a duration. Unique counts
//!   distinct filled values.
//! - A formula that fails for a row gives that cell an error, and formulas that use it fail too;
//!   a filter that fails for a row excludes the row. A reference to an undefined formula is an
//!   error when the base is read, as is a cycle, which names its formulas.
//! - `list(null)` is the empty list, so `list(tags).length` is 0 for a note without tags.
//! - A bare `now` or `today` that is no property of the note reads as the function (the syntax
//!   page writes `now.time()`).
//! - `random()` asks the environment, whose default is a fixed 0.5 so results are repeatable.

pub mod dates;
pub mod env;
pub mod eval;
pub mod model;
pub mod property;
pub mod run;
pub mod summaries;
pub mod syntax;
pub mod value;

#[cfg(test)]
mod tests;

pub use env::{Environment, FileFacts, Row};
pub use eval::{
    Budget, Context, EvalError, FormulaCells, MAX_QUERY_BYTES, MAX_QUERY_STEPS, Overrun, evaluate,
};
pub use model::{Base, BaseError, Filter, Formula, GroupBy, PropertyId, SortKey, View};
pub use property::{from_property, from_typed_property, to_json};
pub use run::{Cell, Column, Group, ResultRow, Summary, ViewResult, run_view};
pub use syntax::{Expr, SyntaxError, parse};
pub use value::{DateValue, Duration, Link, Value};
