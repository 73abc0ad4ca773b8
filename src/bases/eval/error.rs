//! Why an expression could not be evaluated for a row. Each message names the place (a byte
//! offset into the expression) and says what to write instead.

use super::MAX_STEPS;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("at byte {at}: unknown function `{name}()`; docs/BASES.md lists the functions")]
    UnknownFunction { at: usize, name: String },
    #[error("at byte {at}: a {type_name} has no method `{name}()`")]
    UnknownMethod {
        at: usize,
        name: String,
        type_name: &'static str,
    },
    #[error("at byte {at}: `{name}` expects {expected}")]
    Arguments {
        at: usize,
        name: String,
        expected: &'static str,
    },
    #[error("at byte {at}: cannot apply `{op}` to a {left} and a {right}")]
    Operands {
        at: usize,
        op: &'static str,
        left: &'static str,
        right: &'static str,
    },
    #[error("at byte {at}: cannot apply `{op}` to a {operand}")]
    Operand {
        at: usize,
        op: &'static str,
        operand: &'static str,
    },
    #[error("at byte {at}: {text:?} is not a date; write YYYY-MM-DD or YYYY-MM-DD HH:mm:ss")]
    BadDate { at: usize, text: String },
    #[error(
        "at byte {at}: {text:?} is not a duration; write a number and a unit, such as \"1d\" or \"2 weeks\""
    )]
    BadDuration { at: usize, text: String },
    #[error("at byte {at}: {text:?} is not a number")]
    BadNumber { at: usize, text: String },
    #[error("at byte {at}: the {what} would be too large; work on less data")]
    TooLarge { at: usize, what: &'static str },
    #[error("the expression took more than {MAX_STEPS} steps for one row; simplify it")]
    TooManySteps,
    /// The query's budget (`Budget`) is spent; the query answers why, not this cell.
    #[error("the query's budget ran out before this value was computed")]
    OverBudget,
    #[error("`{name}` is neither a built-in summary nor one under `summaries`")]
    UnknownSummary { name: String },
    #[error("formula `{name}` failed for this row: {message}")]
    FormulaFailed { name: String, message: String },
}

impl EvalError {
    /// The byte offset into the expression the error points at, when it points at one.
    pub fn at(&self) -> Option<usize> {
        match self {
            EvalError::UnknownFunction { at, .. }
            | EvalError::UnknownMethod { at, .. }
            | EvalError::Arguments { at, .. }
            | EvalError::Operands { at, .. }
            | EvalError::Operand { at, .. }
            | EvalError::BadDate { at, .. }
            | EvalError::BadDuration { at, .. }
            | EvalError::BadNumber { at, .. }
            | EvalError::TooLarge { at, .. } => Some(*at),
            EvalError::TooManySteps
            | EvalError::OverBudget
            | EvalError::UnknownSummary { .. }
            | EvalError::FormulaFailed { .. } => None,
        }
    }
}
