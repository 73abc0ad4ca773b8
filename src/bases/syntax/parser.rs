//! A Pratt parser over the tokens: JavaScript's precedence (`||` < `&&` < equality < comparison
//! < `+ -` < `* / %` < unary < member, index and call). Recursion is counted against
//! `MAX_NESTING`, so a hostile expression is refused long before the stack is at risk.

use std::sync::Arc;

use super::lexer::{Token, tokens};
use super::{
    BinaryOp, Expr, ExprKind, MAX_EXPRESSION_BYTES, MAX_NESTING, RegexLiteral, SyntaxError, UnaryOp,
};

/// The most memory one compiled regular expression may take, so a regex bomb is refused.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Parses one expression; the whole text must be consumed.
pub fn parse(text: &str) -> Result<Expr, SyntaxError> {
    if text.len() > MAX_EXPRESSION_BYTES {
        return Err(SyntaxError::TooLong { length: text.len() });
    }
    if text.trim().is_empty() {
        return Err(SyntaxError::Empty);
    }
    let mut parser = Parser {
        tokens: tokens(text)?,
        next: 0,
        depth: 0,
    };
    let expr = parser.expression(0)?;
    match parser.peek() {
        Token::End => Ok(expr),
        other => Err(SyntaxError::Expected {
            at: parser.position(),
            expected: "an operator or the end of the expression",
            found: other.describe(),
        }),
    }
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    next: usize,
    depth: usize,
}

/// Binding power of each binary operator (higher binds tighter).
fn binary(token: &Token) -> Option<(BinaryOp, u8)> {
    let Token::Symbol(symbol) = token else {
        return None;
    };
    let found = match *symbol {
        "||" => (BinaryOp::Or, 1),
        "&&" => (BinaryOp::And, 2),
        "==" => (BinaryOp::Equal, 3),
        "!=" => (BinaryOp::NotEqual, 3),
        ">" => (BinaryOp::Greater, 4),
        "<" => (BinaryOp::Less, 4),
        ">=" => (BinaryOp::GreaterOrEqual, 4),
        "<=" => (BinaryOp::LessOrEqual, 4),
        "+" => (BinaryOp::Add, 5),
        "-" => (BinaryOp::Subtract, 5),
        "*" => (BinaryOp::Multiply, 6),
        "/" => (BinaryOp::Divide, 6),
        "%" => (BinaryOp::Remainder, 6),
        _ => return None,
    };
    Some(found)
}

const UNARY_POWER: u8 = 7;

impl Parser {
    fn peek(&self) -> &Token {
        self.tokens.get(self.next).map_or(&Token::End, |(t, _)| t)
    }

    fn position(&self) -> usize {
        self.tokens
            .get(self.next)
            .or(self.tokens.last())
            .map_or(0, |(_, at)| *at)
    }

    fn advance(&mut self) -> (Token, usize) {
        let at = self.position();
        match self.tokens.get(self.next) {
            Some((token, _)) => {
                self.next += 1;
                (token.clone(), at)
            }
            None => (Token::End, at),
        }
    }

    fn eat(&mut self, symbol: &str) -> bool {
        if matches!(self.peek(), Token::Symbol(s) if *s == symbol) {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, symbol: &'static str, expected: &'static str) -> Result<(), SyntaxError> {
        if self.eat(symbol) {
            return Ok(());
        }
        Err(SyntaxError::Expected {
            at: self.position(),
            expected,
            found: self.peek().describe(),
        })
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(SyntaxError::TooDeep {
                at: self.position(),
            });
        }
        Ok(())
    }

    fn expression(&mut self, min_power: u8) -> Result<Expr, SyntaxError> {
        self.enter()?;
        let mut left = self.prefix()?;
        while let Some((op, power)) = binary(self.peek()) {
            if power <= min_power {
                break;
            }
            let (_, at) = self.advance();
            let right = self.expression(power)?;
            let start = left.at.min(at);
            left = Expr::new(ExprKind::Binary(op, Box::new(left), Box::new(right)), start)?;
        }
        self.depth -= 1;
        Ok(left)
    }

    fn prefix(&mut self) -> Result<Expr, SyntaxError> {
        let (token, at) = self.advance();
        let op = match token {
            Token::Symbol("!") => Some(UnaryOp::Not),
            Token::Symbol("-") => Some(UnaryOp::Negate),
            Token::Symbol("+") => Some(UnaryOp::Plus),
            _ => None,
        };
        if let Some(op) = op {
            let operand = self.expression(UNARY_POWER)?;
            return Expr::new(ExprKind::Unary(op, Box::new(operand)), at);
        }
        let primary = self.primary(token, at)?;
        self.postfix(primary)
    }

    fn primary(&mut self, token: Token, at: usize) -> Result<Expr, SyntaxError> {
        let kind = match token {
            Token::Number(n) => ExprKind::Number(n),
            Token::String(s) => ExprKind::String(s),
            Token::Regex { source, flags } => ExprKind::Regex(compile_regex(source, flags, at)?),
            Token::Name(name) => match name.as_str() {
                "true" => ExprKind::Bool(true),
                "false" => ExprKind::Bool(false),
                "null" => ExprKind::Null,
                _ if matches!(self.peek(), Token::Symbol("(")) => {
                    self.next += 1;
                    let args = self.arguments(")")?;
                    ExprKind::Call {
                        target: None,
                        name,
                        args,
                    }
                }
                _ => ExprKind::Name(name),
            },
            Token::Symbol("(") => {
                let inner = self.expression(0)?;
                self.expect(")", "`)` to close the parenthesis")?;
                return Ok(inner);
            }
            Token::Symbol("[") => ExprKind::List(self.arguments("]")?),
            Token::Symbol("{") => ExprKind::Object(self.object_entries()?),
            other => {
                return Err(SyntaxError::Expected {
                    at,
                    expected: "a value, a property or a function call",
                    found: other.describe(),
                });
            }
        };
        Expr::new(kind, at)
    }

    /// Member access, indexing and method calls, left to right.
    fn postfix(&mut self, mut expr: Expr) -> Result<Expr, SyntaxError> {
        loop {
            let at = self.position();
            if self.eat(".") {
                let name = match self.advance() {
                    (Token::Name(name), _) => name,
                    (other, at) => {
                        return Err(SyntaxError::Expected {
                            at,
                            expected: "a field or method name after `.`",
                            found: other.describe(),
                        });
                    }
                };
                let kind = if self.eat("(") {
                    let args = self.arguments(")")?;
                    ExprKind::Call {
                        target: Some(Box::new(expr)),
                        name,
                        args,
                    }
                } else {
                    ExprKind::Member(Box::new(expr), name)
                };
                expr = Expr::new(kind, at)?;
            } else if self.eat("[") {
                let index = self.expression(0)?;
                self.expect("]", "`]` to close the index")?;
                expr = Expr::new(ExprKind::Index(Box::new(expr), Box::new(index)), at)?;
            } else {
                return Ok(expr);
            }
        }
    }

    /// Comma-separated expressions up to `close` (a trailing comma is allowed).
    fn arguments(&mut self, close: &'static str) -> Result<Vec<Expr>, SyntaxError> {
        self.enter()?;
        let mut items = Vec::new();
        while !self.eat(close) {
            items.push(self.expression(0)?);
            if !self.eat(",") {
                let expected = if close == ")" {
                    "`,` or `)` in the argument list"
                } else {
                    "`,` or `]` in the list"
                };
                self.expect(close, expected)?;
                break;
            }
        }
        self.depth -= 1;
        Ok(items)
    }

    /// `{"key": value, name: value}` up to the closing brace.
    fn object_entries(&mut self) -> Result<Vec<(String, Expr)>, SyntaxError> {
        self.enter()?;
        let mut entries = Vec::new();
        while !self.eat("}") {
            let key = match self.advance() {
                (Token::String(key) | Token::Name(key), _) => key,
                (Token::Number(n), _) => super::super::value::number_text(n),
                (other, at) => {
                    return Err(SyntaxError::Expected {
                        at,
                        expected: "a key (a string or a name) in the object",
                        found: other.describe(),
                    });
                }
            };
            self.expect(":", "`:` after the object key")?;
            entries.push((key, self.expression(0)?));
            if !self.eat(",") {
                self.expect("}", "`,` or `}` in the object")?;
                break;
            }
        }
        self.depth -= 1;
        Ok(entries)
    }
}

/// Compiles a JavaScript regular expression literal with size limits. Flags: `g` (replace all),
/// `i`, `m`, `s`; `u` and `y` change nothing here.
fn compile_regex(
    source: String,
    flags: String,
    at: usize,
) -> Result<Arc<RegexLiteral>, SyntaxError> {
    let mut builder = regex::RegexBuilder::new(&source);
    builder
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(MAX_NESTING as u32);
    for flag in flags.chars() {
        match flag {
            'g' | 'u' | 'y' | 'd' => {}
            'i' => {
                builder.case_insensitive(true);
            }
            'm' => {
                builder.multi_line(true);
            }
            's' => {
                builder.dot_matches_new_line(true);
            }
            other => {
                return Err(SyntaxError::BadRegex {
                    at,
                    message: format!("unknown flag `{other}`; use g, i, m or s"),
                });
            }
        }
    }
    let regex = builder.build().map_err(|error| SyntaxError::BadRegex {
        at,
        message: first_line(&error.to_string()),
    })?;
    Ok(Arc::new(RegexLiteral {
        global: flags.contains('g'),
        source,
        flags,
        regex,
    }))
}

/// regex's messages draw the pattern over several lines; the last line says what is wrong.
fn first_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|line| line.trim_start().starts_with("error:"))
        .unwrap_or(message.lines().next().unwrap_or(""))
        .trim()
        .to_owned()
}
