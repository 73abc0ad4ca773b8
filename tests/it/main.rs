//! The one integration-test binary: each module tests Quire through a public boundary with real
//! files on disk. End-to-end tests through a real MCP client live in `tests/python/`.

mod config;
mod daily_notes;
mod edit_notes;
mod http;
mod index_consistency;
mod link_oracle;
mod markdown_oracle;
mod move_note;
mod sandbox;
mod search;
mod semantic;
mod semantic_model;
mod task_listing_sql;
mod task_tools;
mod tasks_oracle;
mod tidy;
mod vault_paths;
mod watcher;
mod yaml_oracle;

/// Reports that data kept beside the repository (`../shared`: oracles, real vaults) is missing.
/// A bare clone skips with a visible notice; `tests/run` sets `QUIRE_REQUIRE_SHARED=1`, so in CI
/// a missing oracle fails instead of passing while checking nothing.
pub fn skip_without_shared(what: &str, path: &std::path::Path) {
    assert!(
        std::env::var("QUIRE_REQUIRE_SHARED").as_deref() != Ok("1"),
        "QUIRE_REQUIRE_SHARED=1 but {what} is missing at {}",
        path.display()
    );
    eprintln!("SKIP: {what} not found at {}", path.display());
}
