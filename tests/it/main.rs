//! The one integration-test binary: each module tests Quire through a public boundary with real
//! files on disk. End-to-end tests through a real MCP client live in `tests/python/`.

mod config;
mod edit_notes;
mod http;
mod index_consistency;
mod markdown_oracle;
mod sandbox;
mod search;
mod semantic;
mod semantic_model;
mod tidy;
mod vault_paths;
mod watcher;
mod yaml_oracle;
