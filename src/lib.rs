//! Quire: an MCP server that turns an Obsidian vault into a safe, searchable appliance for AI
//! agents. `docs/ARCHITECTURE.md` is the map, with the layers from the pure kernels (`markdown`,
//! `acl`, `rank_fusion`) up to `app`; modules are listed here alphabetically, as `cargo fmt` keeps
//! them.

pub mod acl;
pub mod app;
pub mod bases;
pub mod cli;
pub mod config;
pub mod embed;
pub mod files;
pub mod health;
pub mod history;
pub mod http;
pub mod index;
pub mod markdown;
pub mod mcp;
pub mod native;
pub mod ops;
pub mod rank_fusion;
pub mod sync_status;
pub mod systemd;
pub mod telemetry;
pub mod tool_groups;
pub mod vault;
