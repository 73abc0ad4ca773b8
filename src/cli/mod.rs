//! The `quire` subcommands other than `serve`, one file each, named as `main` names them:
//! each takes the validated `Config` (where it needs one) and its flags, and returns the text
//! `main` prints; `main` alone turns errors into exit codes. `serve` is `app`, the composition
//! root; commands that open the vault build `Ops` through the same `app::build_ops`.
//!
//! Nothing here is reached by a client: these run once, as the owner, from a shell.

pub mod acl;
pub mod check_config;
pub mod connect;
pub mod doctor;
pub mod history;
pub mod index;
pub mod model;
pub mod oauth;
pub mod pdfium;
pub mod search;
pub mod token;
