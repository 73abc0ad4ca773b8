//! The one integration-test binary: each module tests Quire through a public boundary with real
//! files on disk. End-to-end tests through a real MCP client live in `tests/python/`.

mod config;
mod connect;
mod daily_notes;
mod edit_notes;
mod file_text;
mod files_canvas;
mod files_image;
mod files_pdf;
mod files_text;
mod fuzz_replay;
mod history;
mod http;
mod index_consistency;
mod large_notes;
mod link_oracle;
mod markdown_oracle;
mod mcp;
mod memory;
mod memory_recall;
mod move_note;
mod restricted_counts;
mod sandbox;
mod search;
mod semantic;
mod semantic_model;
mod support;
mod task_listing_sql;
mod task_tools;
mod tasks_oracle;
mod tidy;
mod tidy_size;
mod vault_files;
mod vault_paths;
mod watcher;
mod yaml_oracle;
