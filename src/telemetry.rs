//! Logging setup: human-readable lines on stderr.
//!
//! stdout belongs to the MCP stdio transport, so nothing here may ever write to it. The level comes
//! from `QUIRE_LOG` (or `RUST_LOG`), `info` by default (rmcp's per-message chatter at `warn`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub fn init() {
    init_with_default("info,rmcp=warn");
}

/// For one-shot commands whose own output says what happened: warnings and errors only, unless
/// `QUIRE_LOG` asks for more.
pub fn init_quiet() {
    init_with_default("warn");
}

fn init_with_default(default: &str) {
    let filter = std::env::var("QUIRE_LOG")
        .ok()
        .and_then(|value| EnvFilter::try_new(value).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    // A second init (tests calling into app twice) is harmless; ignore the error it returns.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
