//! Structure rules from STYLE.md that the compiler cannot see: file headers, the one home of each
//! framework, pure modules without I/O, and an architecture document that names every module.

use std::path::{Path, PathBuf};

fn source_files() -> Vec<PathBuf> {
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

fn relative(path: &Path) -> String {
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
    violations.extend(confined("rusqlite", &["src/index/", "src/http/"]));
    violations.extend(confined("axum", &["src/http/"]));
    violations.extend(confined(
        "anyhow",
        &["src/app.rs", "src/main.rs", "src/cli/"],
    ));
    violations.extend(confined("ort::", &["src/embed/"]));
    violations.extend(confined("tokenizers::", &["src/embed/"]));
    violations.extend(confined("sqlite_vec", &["src/index/"]));
    // Outbound HTTPS: model downloads (`quire model install`) and Client ID Metadata Documents.
    violations.extend(confined("reqwest", &["src/embed/", "src/http/oauth/"]));
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn dependencies_point_downward() {
    // (module folder, things it must never reach for)
    let rules: &[(&str, &[&str])] = &[
        (
            "src/markdown/",
            &[
                "std::fs",
                "std::io",
                "std::net",
                "tokio",
                "SystemTime",
                "crate::",
            ],
        ),
        ("src/acl/", &["std::fs", "std::io", "tokio", "crate::"]),
        (
            "src/vault/",
            &[
                "crate::markdown",
                "crate::ops",
                "crate::mcp",
                "crate::config",
                "rmcp",
            ],
        ),
        (
            "src/index/",
            &[
                "crate::ops",
                "crate::mcp",
                "crate::http",
                "crate::app",
                "crate::config",
                "rmcp",
            ],
        ),
        (
            "src/embed/",
            &[
                "crate::index",
                "crate::ops",
                "crate::mcp",
                "crate::http",
                "crate::app",
            ],
        ),
        (
            "src/search/",
            &["std::fs", "std::io", "tokio", "crate::", "rusqlite"],
        ),
        (
            "src/ops/",
            &["crate::mcp", "crate::app", "crate::config", "rmcp"],
        ),
    ];
    let mut violations = Vec::new();
    for path in source_files() {
        let rel = relative(&path);
        let code = production_code(&path);
        for (module, forbidden) in rules {
            if rel.starts_with(module) {
                for needle in *forbidden {
                    // A pure module may refer to its own submodules through `crate::<itself>`.
                    let own = format!(
                        "crate::{}",
                        module.trim_start_matches("src/").trim_end_matches('/')
                    );
                    let offending = code
                        .match_indices(needle)
                        .any(|(at, _)| !(*needle == "crate::" && code[at..].starts_with(&own)));
                    if offending {
                        violations.push(format!("{rel} uses {needle}"));
                    }
                }
            }
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
