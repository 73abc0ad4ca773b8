//! `quire search QUERY`: one search as the owner, the way `vault_search` runs it, printed as text
//! or as the tool's JSON.

use crate::app::build_ops;
use crate::config::{Config, RerankMode};
use crate::index::IndexOptions;
use crate::ops::{Context, SearchMode, SearchNotes, SemanticSearch};

/// `quire search QUERY [--json]`: brings the index up to date, then runs one keyword search.
pub fn run(
    config: &Config,
    query: &str,
    json: bool,
    limit: u32,
    mode: SearchMode,
) -> anyhow::Result<String> {
    let options = IndexOptions {
        without_chunks: !crate::app::semantic_set_up(config),
        ..IndexOptions::default()
    };
    let ops = build_ops(config, options)?;
    if mode != SearchMode::Keyword {
        // Like `serve`: a usable model means vectors (computed now when missing); otherwise the
        // answer is keyword search with a notice.
        match crate::embed::resolve(&config.search.models).start() {
            Ok(service) => {
                let rerank = config.search.rerank == RerankMode::Blended;
                ops.enable_semantic(SemanticSearch::new(service, rerank))?;
                ops.embed_pending(&|_| {})?;
            }
            Err(error) => ops.disable_semantic(error.to_string()),
        }
    }
    let found = ops.search(
        &Context::owner(),
        SearchNotes {
            query: query.to_string(),
            limit: Some(limit),
            mode,
            ..SearchNotes::default()
        },
    )?;
    if json {
        let results: Vec<serde_json::Value> = found
            .results
            .iter()
            .map(|hit| {
                serde_json::json!({
                    "path": hit.path,
                    "title": hit.title,
                    "score": hit.score,
                    "snippet": hit.snippet,
                    "bytes": hit.bytes,
                    "modified": hit.modified,
                    "tags": hit.tags,
                })
            })
            .collect();
        let mut document = serde_json::json!({
            "results": results,
            "search_mode": found.search_mode,
            "reranked": found.reranked,
        });
        if let Some(notice) = &found.notice {
            document["notice"] = serde_json::Value::String(notice.clone());
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&document)?));
    }
    let mut out = format!(
        "search mode: {}{}\n",
        found.search_mode,
        if found.reranked { " (reranked)" } else { "" }
    );
    if let Some(notice) = &found.notice {
        out.push_str(&format!("note: {notice}\n"));
    }
    if found.results.is_empty() {
        out.push_str(&format!("no notes match {query:?}\n"));
        return Ok(out);
    }
    for hit in &found.results {
        out.push_str(&format!("{}  ({:.2})\n", hit.path, hit.score));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("    {}\n", hit.snippet));
        }
    }
    Ok(out)
}
