//! The expression language of Obsidian Bases as a tree: the nodes, the parse errors, and the one
//! entry point `parse`. Pure text in, tree out; it never evaluates and never resolves a name.
//!
//! Parsing is bounded: an expression longer than `MAX_EXPRESSION_BYTES` or nested deeper than
//! `MAX_NESTING` is refused with an error, so no input can exhaust the stack or the memory.

mod lexer;
mod parser;

use std::sync::Arc;

pub use parser::parse;

/// The longest expression accepted; real formulas are a line or two.
pub const MAX_EXPRESSION_BYTES: usize = 16 * 1024;
/// The deepest nesting of brackets, calls and operators accepted.
pub const MAX_NESTING: usize = 64;
/// The tallest expression tree accepted (a chain of 100 `+` is as tall as 100 nested calls).
pub const MAX_TREE_DEPTH: usize = 100;

/// One node of an expression, with the byte offset where it starts in the source text.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub at: usize,
    /// The height of the tree under this node (a leaf is 1), at most `MAX_TREE_DEPTH`.
    pub depth: usize,
}

impl Expr {
    /// A node over its children; refused when it would make the tree deeper than
    /// `MAX_TREE_DEPTH`, so evaluating or dropping any tree stays within the stack.
    pub(crate) fn new(kind: ExprKind, at: usize) -> Result<Expr, SyntaxError> {
        let below = match &kind {
            ExprKind::List(items)
            | ExprKind::Call {
                target: None,
                args: items,
                ..
            } => items.iter().map(|e| e.depth).max().unwrap_or(0),
            ExprKind::Call {
                target: Some(target),
                args,
                ..
            } => args
                .iter()
                .map(|e| e.depth)
                .max()
                .unwrap_or(0)
                .max(target.depth),
            ExprKind::Object(entries) => entries.iter().map(|(_, e)| e.depth).max().unwrap_or(0),
            ExprKind::Member(inner, _) | ExprKind::Unary(_, inner) => inner.depth,
            ExprKind::Index(left, right) | ExprKind::Binary(_, left, right) => {
                left.depth.max(right.depth)
            }
            _ => 0,
        };
        if below >= MAX_TREE_DEPTH {
            return Err(SyntaxError::TooDeep { at });
        }
        Ok(Expr {
            kind,
            at,
            depth: below + 1,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Regex(Arc<RegexLiteral>),
    List(Vec<Expr>),
    Object(Vec<(String, Expr)>),
    /// A bare name: a note property, or one of `file`, `note`, `formula`, `this`, and inside
    /// list functions and summaries `value`, `index`, `acc`, `values`.
    Name(String),
    Member(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    /// `name(args)` when `target` is `None`, else `target.name(args)`.
    Call {
        target: Option<Box<Expr>>,
        name: String,
        args: Vec<Expr>,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Negate,
    Plus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    Remainder,
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterOrEqual,
    LessOrEqual,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Remainder => "%",
            BinaryOp::Equal => "==",
            BinaryOp::NotEqual => "!=",
            BinaryOp::Greater => ">",
            BinaryOp::Less => "<",
            BinaryOp::GreaterOrEqual => ">=",
            BinaryOp::LessOrEqual => "<=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

/// A `/pattern/flags` literal, compiled once when the expression is parsed.
#[derive(Debug)]
pub struct RegexLiteral {
    pub source: String,
    pub flags: String,
    pub regex: regex::Regex,
    /// The `g` flag: `replace` replaces every match, not only the first.
    pub global: bool,
}

impl PartialEq for RegexLiteral {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.flags == other.flags
    }
}

/// Why an expression could not be read; `at` is a byte offset into the expression.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SyntaxError {
    #[error("the expression is empty; write a value, a property or a function call")]
    Empty,
    #[error(
        "the expression is {length} bytes long; at most {MAX_EXPRESSION_BYTES} are accepted, split it into formulas"
    )]
    TooLong { length: usize },
    #[error(
        "at byte {at}: nesting deeper than {MAX_NESTING} levels; split the expression into formulas"
    )]
    TooDeep { at: usize },
    #[error("at byte {at}: unexpected character {found:?}")]
    UnexpectedCharacter { at: usize, found: char },
    #[error("at byte {at}: the string is never closed; end it with the quote that opened it")]
    UnterminatedString { at: usize },
    #[error("at byte {at}: the regular expression is never closed; end it with `/`")]
    UnterminatedRegex { at: usize },
    #[error("at byte {at}: invalid regular expression: {message}")]
    BadRegex { at: usize, message: String },
    #[error("at byte {at}: {text:?} is not a number")]
    BadNumber { at: usize, text: String },
    #[error("at byte {at}: expected {expected}, found {found}")]
    Expected {
        at: usize,
        expected: &'static str,
        found: String,
    },
}

impl SyntaxError {
    /// The byte offset the error points at (0 for errors about the whole expression).
    pub fn at(&self) -> usize {
        match self {
            SyntaxError::Empty | SyntaxError::TooLong { .. } => 0,
            SyntaxError::TooDeep { at }
            | SyntaxError::UnexpectedCharacter { at, .. }
            | SyntaxError::UnterminatedString { at }
            | SyntaxError::UnterminatedRegex { at }
            | SyntaxError::BadRegex { at, .. }
            | SyntaxError::BadNumber { at, .. }
            | SyntaxError::Expected { at, .. } => *at,
        }
    }

    /// The 1-based column (in characters) of `at()` within `source`.
    pub fn column(&self, source: &str) -> usize {
        let at = self.at().min(source.len());
        source
            .char_indices()
            .take_while(|(offset, _)| *offset < at)
            .count()
            + 1
    }
}
