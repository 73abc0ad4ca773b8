//! `quire doctor`: which features are on and why (vault, index, sync, transport, systemd, time
//! zone, OAuth, semantic search, sandbox). It loads the model and applies the sandbox to its own
//! process, so what it prints is what the machine really does, not what the configuration hopes.

use super::check_config::describe_oauth;
use crate::config::{Config, RerankMode, Sandbox, SyncConfig};
use crate::vault::Vault;

/// What `quire doctor` prints: which features are on and why. It applies the configured sandbox to
/// its own process (last), so the sandbox line reports what the kernel really enforces.
pub fn report(config: &Config) -> String {
    let mut lines = vec![format!("quire {}", env!("CARGO_PKG_VERSION"))];
    let notes = Vault::open(&config.vault, config.max_note_bytes).map(|vault| {
        vault.scan(None).map(|files| {
            files
                .iter()
                .filter(|file| file.path.extension().as_deref() == Some("md"))
                .count()
        })
    });
    lines.push(match notes {
        Ok(Ok(count)) => format!(
            "vault:           {} ({count} notes)",
            config.vault.display()
        ),
        Ok(Err(error)) => format!(
            "vault:           {} (cannot scan: {error})",
            config.vault.display()
        ),
        Err(error) => format!(
            "vault:           {} (cannot open: {error})",
            config.vault.display()
        ),
    });
    lines.push(format!(
        "index:           {} ({})",
        config.index.display(),
        std::fs::metadata(&config.index).map_or_else(
            |_| "not built yet; `quire index` or `quire serve` builds it".to_string(),
            |meta| format!("{} KiB", meta.len() / 1024)
        )
    ));
    lines.extend(doctor_state(config));
    lines.extend(doctor_sync(config));
    lines.push(format!(
        "transport:       {}",
        match &config.http {
            Some(http) if http.auth =>
                format!("Streamable HTTP on {} with bearer auth", http.listen),
            Some(http) => format!("Streamable HTTP on {} without auth (loopback)", http.listen),
            None => "stdio (HTTP when systemd passes a socket)".into(),
        }
    ));
    let env_flag = |name: &str| std::env::var_os(name).is_some();
    lines.push(format!(
        "systemd:         {}; socket activation {}; watchdog {}; journald {}",
        if crate::systemd::under_systemd() {
            "running under systemd"
        } else {
            "not under systemd"
        },
        if env_flag("LISTEN_FDS") {
            "offered"
        } else {
            "not offered"
        },
        std::env::var("WATCHDOG_USEC")
            .map_or_else(|_| "off".to_string(), |usec| format!("every {usec} us")),
        if env_flag("JOURNAL_STREAM") {
            "in use"
        } else {
            "not in use (stderr)"
        },
    ));
    // jiff describes its database only through Debug: `TimeZoneDatabase(ZoneInfo(/dir))` or
    // `TimeZoneDatabase(Bundled(available))`.
    let database = format!("{:?}", jiff::tz::db());
    lines.push(format!(
        "time zone:       {}; {}",
        config.time_zone_description(),
        match database
            .split_once("ZoneInfo(")
            .and_then(|(_, rest)| rest.split(')').next())
        {
            Some(dir) =>
                format!("tz database {dir} (the copy built into Quire covers zones it lacks)"),
            None => "no system tz database found; using the copy built into Quire".to_string(),
        }
    ));
    lines.push(format!(
        "oauth:           {}",
        describe_oauth(config, config.http.is_none())
    ));
    lines.extend(doctor_semantic(config));
    lines.push(doctor_pdfium(config));
    let plan = crate::app::sandbox_plan(config, config.http.is_some());
    let sandbox = match crate::systemd::apply_sandbox(&plan) {
        Ok(report) => report.to_string(),
        Err(error) => error.to_string(),
    };
    lines.push(format!(
        "sandbox:         {sandbox} (sandbox = \"{}\")",
        match config.sandbox {
            Sandbox::Required => "required",
            Sandbox::BestEffort => "best-effort",
            Sandbox::Off => "off",
        }
    ));
    lines.join("\n") + "\n"
}

/// The sync service as Quire sees it: the shared files and the last run's status.
fn doctor_sync(config: &Config) -> Vec<String> {
    let sync = &config.sync;
    if sync == &SyncConfig::default() {
        return vec!["sync:            not configured ([sync] in the config file)".into()];
    }
    let mut lines = Vec::new();
    if let Some(marker) = &sync.first_sync_marker {
        lines.push(format!(
            "first sync:      {} ({})",
            marker.display(),
            if marker.exists() {
                "done"
            } else {
                "WAITING: Quire serves only once the first sync has completed"
            }
        ));
    }
    if let Some(lock) = &sync.lock_file {
        lines.push(format!(
            "sync lock:       {} (held shared during every write; the sync takes it exclusively)",
            lock.display()
        ));
    }
    if let Some(path) = &sync.status_file {
        match crate::sync_status::read(path) {
            Ok(status) => lines.extend(status.describe()),
            Err(error) => lines.push(format!("sync:            {error}")),
        }
    }
    lines
}

/// The pdfium line of `quire doctor`: which library renders PDF pages (`vault_read_file` with
/// `raw: true`), from where, and whether it loads. Without it only page rendering is missing.
fn doctor_pdfium(config: &Config) -> String {
    use crate::files::pdf::{pdfium, render};
    match pdfium::locate(&config.files.pdfium) {
        Ok(found) => match render::check_library(&found.value) {
            Ok(()) => format!(
                "pdfium:          {} (from {}); PDF pages render as images",
                found.value.display(),
                found.why
            ),
            Err(error) => format!(
                "pdfium:          WARNING {} (from {}) does not load: {error}",
                found.value.display(),
                found.why
            ),
        },
        Err(why) => format!(
            "pdfium:          not installed ({why}); PDF text works, page images need `quire pdfium install`"
        ),
    }
}

/// The semantic search lines of `quire doctor`: which library and model, why, and whether they
/// load (they are loaded here, so a broken model shows up now rather than as a log line later).
fn doctor_semantic(config: &Config) -> Vec<String> {
    let resolution = crate::embed::resolve(&config.search.models);
    let mut lines = Vec::new();
    lines.push(match &resolution.library {
        Ok(found) => match crate::embed::load_runtime(&found.value) {
            Ok(version) => format!(
                "onnxruntime:     {} ({version}; from {})",
                found.value.display(),
                found.why
            ),
            Err(error) => format!(
                "onnxruntime:     WARNING {} (from {}) does not load: {error}",
                found.value.display(),
                found.why
            ),
        },
        Err(why) => format!("onnxruntime:     {why}"),
    });
    lines.push(match &resolution.model {
        Ok(found) => format!(
            "model:           {} at {} ({} dimensions; from {})",
            found.value.manifest.name,
            found.value.dir.display(),
            found.value.manifest.dimensions,
            found.why
        ),
        Err(why) => format!("model:           {why}"),
    });
    if let Some(reranker) = &resolution.reranker {
        lines.push(match reranker {
            Ok(found) => format!(
                "reranker:        {} at {} (rerank = {})",
                found.value.manifest.name,
                found.value.dir.display(),
                match config.search.rerank {
                    RerankMode::Blended => "blended",
                    RerankMode::Off => "off: configured but unused",
                }
            ),
            Err(why) => format!("reranker:        WARNING {why}"),
        });
    }
    let absent = config.search.models.never_set_up(&resolution);
    lines.push(match resolution.start() {
        Ok(service) => format!(
            "semantic search: on ({}{}); `vault_search` answers in hybrid mode once vectors are computed",
            service.info().name,
            service
                .info()
                .reranker
                .as_ref()
                .map(|name| format!(", reranking with {name}"))
                .unwrap_or_default()
        ),
        // Nothing installed is the default state, not a fault: say how to add a model.
        Err(_) if absent => {
            "semantic search: off, search is keyword-only (no model installed: `quire model install minilm` adds one)".to_string()
        }
        Err(error) if config.search.models.enabled => {
            format!("semantic search: WARNING off, search is keyword-only: {error}")
        }
        Err(_) => "semantic search: off (search.embeddings = false); search is keyword-only".into(),
    });
    lines
}

/// The state directory, and the history kept in it.
fn doctor_state(config: &Config) -> [String; 2] {
    let state = format!("state directory: {}", config.state_dir.display());
    [state, doctor_history(config)]
}

/// The history's size against its bound, read from `history.db` without changing it.
fn doctor_history(config: &Config) -> String {
    let Some(retention) = config.history else {
        return "history:         off ([history] enabled = false): changes cannot be listed or undone".into();
    };
    let path = config.state_dir.join("history.db");
    let on_disk = std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(0);
    let kept = if path.exists() {
        crate::history::History::stored_bytes_at(&path)
    } else {
        Ok(0)
    };
    match kept {
        Ok(kept) => format!(
            "history:         {} KiB of versions kept (bound {} MiB, {} days); {} KiB on disk in {}",
            kept / 1024,
            retention.max_bytes / (1024 * 1024),
            retention.max_age.as_secs() / 86_400,
            on_disk / 1024,
            path.display()
        ),
        Err(error) => format!("history:         cannot be read: {error}"),
    }
}
