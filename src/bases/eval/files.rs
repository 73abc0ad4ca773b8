//! Files and links: the fields of a file (`name`, `folder`, `tags`, `links`, `mtime`, ...), its
//! methods (`hasLink`, `hasTag`, `inFolder`, `hasProperty`, `asLink`) and a link's (`asFile`,
//! `linksTo`). A file's facts come from the row when it is the row's file, else from the
//! environment; a file the environment does not know has no fields.

use super::super::env::FileFacts;
use super::super::value::{DateValue, Link, Value};
use super::{EvalError, Evaluator};

/// The path `link` leads to, from the file it is written in.
pub(super) fn resolve_link(evaluator: &Evaluator<'_>, link: &Link) -> Option<String> {
    evaluator.env().resolve(link.file_part(), &link.from)
}

/// Runs `read` over the facts of `path`, if the row or the environment has them.
fn with_facts<T>(
    evaluator: &Evaluator<'_>,
    path: &str,
    read: impl FnOnce(&FileFacts) -> T,
) -> Option<T> {
    if let Some(row) = evaluator.context.row
        && row.facts().path == path
    {
        return Some(read(row.facts()));
    }
    evaluator.env().file(path).map(|facts| read(&facts))
}

fn links_of(targets: &[String], from: &str) -> Value {
    Value::List(
        targets
            .iter()
            .map(|target| Value::Link(Link::parse(target, from)))
            .collect(),
    )
}

/// `file.<name>`; an unknown name reads that file's note property (`this.status`).
pub(super) fn file_field(evaluator: &Evaluator<'_>, path: &str, name: &str) -> Value {
    if name == "backlinks" {
        let paths = evaluator.env().backlinks(path);
        return Value::List(
            paths
                .into_iter()
                .map(|from| {
                    Value::Link(Link {
                        target: from,
                        display: None,
                        from: String::new(),
                    })
                })
                .collect(),
        );
    }
    let row_property = || {
        evaluator
            .context
            .row
            .filter(|row| row.facts().path == path)
            .and_then(|row| row.property(name))
    };
    with_facts(evaluator, path, |facts| match name {
        "file" => Value::File(facts.path.clone()),
        "name" => Value::String(facts.name().to_owned()),
        "basename" => Value::String(facts.basename().to_owned()),
        "path" => Value::String(facts.path.clone()),
        "folder" => Value::String(facts.folder().to_owned()),
        "ext" => Value::String(facts.ext().to_owned()),
        "size" => Value::Number(facts.size as f64),
        "ctime" => facts
            .ctime
            .map_or(Value::Null, |at| Value::Date(DateValue::timed(at))),
        "mtime" => facts
            .mtime
            .map_or(Value::Null, |at| Value::Date(DateValue::timed(at))),
        "tags" => Value::List(
            facts
                .tags
                .iter()
                .map(|tag| Value::String(format!("#{}", tag.trim_start_matches('#'))))
                .collect(),
        ),
        "links" => links_of(&facts.links, &facts.path),
        "embeds" => links_of(&facts.embeds, &facts.path),
        "properties" => Value::Object(facts.properties.clone()),
        other => row_property()
            .or_else(|| facts.property(other).cloned())
            .unwrap_or(Value::Null),
    })
    .unwrap_or(Value::Null)
}

/// The path `value` (a file, a link, or a path or link text) stands for, from `from`.
fn path_of(evaluator: &Evaluator<'_>, value: &Value, from: &str) -> Option<String> {
    match value {
        Value::File(path) => Some(path.clone()),
        Value::Link(link) => resolve_link(evaluator, link),
        Value::String(text) => {
            if evaluator.env().file(text).is_some() {
                return Some(text.clone());
            }
            let link = Link::parse(text, from);
            evaluator.env().resolve(link.file_part(), from)
        }
        _ => None,
    }
}

/// Whether the file at `path` links to what `other` stands for.
fn has_link(evaluator: &Evaluator<'_>, path: &str, other: &Value) -> bool {
    let wanted = path_of(evaluator, other, path);
    let written = match other {
        Value::String(text) => Some(Link::parse(text, path).file_part().to_owned()),
        Value::Link(link) => Some(link.file_part().to_owned()),
        _ => None,
    };
    with_facts(evaluator, path, |facts| {
        facts.links.iter().any(|target| {
            let link = Link::parse(target, path);
            match &wanted {
                Some(wanted) => {
                    evaluator.env().resolve(link.file_part(), path).as_deref()
                        == Some(wanted.as_str())
                }
                None => written.as_deref() == Some(link.file_part()),
            }
        })
    })
    .unwrap_or(false)
}

/// A tag as compared: no `#`, lower case (Obsidian's tags ignore case).
fn tag_key(tag: &str) -> String {
    tag.trim().trim_start_matches('#').to_lowercase()
}

pub(super) fn file_method(
    evaluator: &Evaluator<'_>,
    path: &str,
    name: &str,
    values: &[Value],
    at: usize,
) -> Option<Result<Value, EvalError>> {
    let answer = match name {
        "asLink" => Value::Link(Link {
            target: path.to_owned(),
            display: values
                .first()
                .filter(|v| !matches!(v, Value::Null))
                .map(Value::to_text),
            from: String::new(),
        }),
        "hasLink" => match values.first() {
            Some(other) => Value::Bool(has_link(evaluator, path, other)),
            None => {
                return Some(Err(EvalError::Arguments {
                    at,
                    name: "hasLink()".to_owned(),
                    expected: "a file, a link or a path",
                }));
            }
        },
        "hasProperty" => {
            let key = super::methods::first_text(values);
            Value::Bool(
                with_facts(evaluator, path, |facts| facts.property(&key).is_some())
                    .unwrap_or(false),
            )
        }
        "hasTag" => {
            let wanted: Vec<String> = values.iter().map(|v| tag_key(&v.to_text())).collect();
            Value::Bool(
                with_facts(evaluator, path, |facts| {
                    facts.tags.iter().map(|t| tag_key(t)).any(|tag| {
                        wanted.iter().any(|w| {
                            !w.is_empty() && (tag == *w || tag.starts_with(&format!("{w}/")))
                        })
                    })
                })
                .unwrap_or(false),
            )
        }
        "inFolder" => Value::Bool(in_folder(path, &super::methods::first_text(values))),
        _ => return None,
    };
    Some(Ok(answer))
}

/// Whether `path` lies in `folder` or below it; the vault root holds everything.
fn in_folder(path: &str, folder: &str) -> bool {
    let folder = folder.trim().trim_matches('/');
    if folder.is_empty() {
        return true;
    }
    let parent = path.rfind('/').map_or("", |slash| &path[..slash]);
    parent == folder || parent.starts_with(&format!("{folder}/"))
}

pub(super) fn link_method(
    evaluator: &Evaluator<'_>,
    link: &Link,
    name: &str,
    values: &[Value],
) -> Option<Result<Value, EvalError>> {
    let resolved =
        resolve_link(evaluator, link).filter(|path| evaluator.env().file(path).is_some());
    let answer = match name {
        "asFile" => resolved.map_or(Value::Null, Value::File),
        "linksTo" => Value::Bool(match (resolved, values.first()) {
            (Some(path), Some(other)) => has_link(evaluator, &path, other),
            _ => false,
        }),
        _ => return None,
    };
    Some(Ok(answer))
}
