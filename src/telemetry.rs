//! Logging setup: structured journald entries under systemd, readable lines on stderr otherwise.
//!
//! stdout belongs to the MCP stdio transport, so nothing here may ever write to it. The level comes
//! from `QUIRE_LOG` (or `RUST_LOG`), `info` by default (rmcp's per-message chatter at `warn`).
//! Events carry fields such as `tool`, `identity`, `path` and `outcome`; no event may carry a note
//! body or a token.
//!
//! Field values often hold client-supplied text (a tool's `path`, an OAuth `client_id`), so the
//! stderr format escapes every control character in them: a `\n` in a path must not start a
//! forged log line, nor an escape sequence repaint a terminal. journald stores each field
//! length-prefixed, so there a newline cannot start a new entry.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

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
    // systemd sets JOURNAL_STREAM when stderr is connected to the journal: log natively there,
    // with each tracing field as its own journal field (TOOL=, PATH=, ...).
    let journald = std::env::var_os("JOURNAL_STREAM")
        .and_then(|_| tracing_journald::layer().ok())
        .map(|layer| {
            layer
                .with_field_prefix(None)
                .with_syslog_identifier("quire".into())
        });
    // A second init (tests calling into app twice) is harmless; ignore the error it returns.
    let _ = match journald {
        Some(layer) => tracing_subscriber::registry()
            .with(filter)
            .with(layer)
            .try_init(),
        None => tracing_subscriber::registry()
            .with(filter)
            .with(
                tracing_subscriber::fmt::layer()
                    .fmt_fields(
                        tracing_subscriber::fmt::format::debug_fn(write_escaped_field)
                            .delimited(" "),
                    )
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .try_init(),
    };
}

/// Writes one field as the default format does (`name=value`, the message bare), with every
/// control character of the value escaped (`\n`, `\u{1b}`), so no field can end the line.
fn write_escaped_field(
    writer: &mut Writer<'_>,
    field: &tracing::field::Field,
    value: &dyn std::fmt::Debug,
) -> std::fmt::Result {
    let text = format!("{value:?}");
    if field.name() != "message" {
        write!(writer, "{}=", field.name())?;
    }
    write!(writer, "{}", escape_control_characters(&text))
}

/// `text` with each control character replaced by its Rust escape; everything else unchanged.
pub fn escape_control_characters(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_default());
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}
