//! Quire: an MCP server that turns an Obsidian vault into a safe, searchable appliance for AI
//! agents. `docs/ARCHITECTURE.md` is the map; modules are listed here in reading order, pure ones
//! first, and dependencies point only upwards in this list.

pub mod acl;
pub mod app;
pub mod cli;
pub mod config;
pub mod embed;
pub mod files;
pub mod health;
pub mod http;
pub mod index;
pub mod markdown;
pub mod mcp;
pub mod native;
pub mod ops;
pub mod search;
pub mod sync_status;
pub mod systemd;
pub mod telemetry;
pub mod vault;
