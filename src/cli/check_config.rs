//! `quire check-config`: validates the configuration (`main` has already loaded it) and prints what
//! Quire would use. Reads manifests to say which model would be used, but loads nothing.

use crate::config::{Access, Config, RerankMode, SearchConfig};

/// The human-readable summary `quire check-config` prints.
pub fn describe(config: &Config) -> String {
    let transport = match &config.http {
        Some(http) => format!(
            "Streamable HTTP on {} ({}; at most {} sessions, {} per identity)",
            http.listen,
            if http.auth { "bearer auth" } else { "no auth" },
            config.http_limits.max_sessions,
            config.http_limits.max_sessions_per_identity,
        ),
        None => "stdio".to_string(),
    };
    format!(
        "configuration is valid\n  config file:    {}\n  vault:          {}\n  state dir:      {}\n  index:          {}\n  max note bytes: {}\n  transport:      {transport}\n  read only:      {}\n  disabled tools: {}\n",
        config
            .config_file
            .as_ref()
            .map_or_else(|| "(none)".to_string(), |p| p.display().to_string()),
        config.vault.display(),
        config.state_dir.display(),
        config.index.display(),
        config.max_note_bytes,
        config.read_only,
        if config.disabled_tools.is_empty() {
            "(none)".to_string()
        } else {
            config.disabled_tools.join(", ")
        },
    ) + &format!("  time zone:      {}\n", config.time_zone_description())
        + &describe_search(&config.search)
        + &describe_access(&config.access)
        + &format!("  oauth:          {}\n", describe_oauth(config, false))
        + &describe_trusted_proxies(&config.http_limits.trusted_proxies)
}

fn describe_trusted_proxies(proxies: &[ipnet::IpNet]) -> String {
    if proxies.is_empty() {
        return String::new();
    }
    let list: Vec<String> = proxies.iter().map(ToString::to_string).collect();
    format!(
        "  trusted proxies: {} (their X-Forwarded-For names the caller for the OAuth rate limits)\n",
        list.join(", ")
    )
}

/// Whether the OAuth server runs and whether it accepts Client ID Metadata Documents (and so
/// makes outbound HTTPS requests). `socket_activated`: as for `Config::fetches_client_metadata`.
pub(super) fn describe_oauth(config: &Config, socket_activated: bool) -> String {
    let serves_http_with_auth = config
        .http
        .as_ref()
        .map_or(socket_activated, |http| http.auth);
    if !config.access.has_identities || !serves_http_with_auth {
        "off (it needs HTTP with auth and at least one identity to bind grants to)".into()
    } else if config.fetches_client_metadata(socket_activated) {
        "on; Client ID Metadata Documents accepted (outbound HTTPS to port 443 of public addresses)"
            .into()
    } else {
        "on; Client ID Metadata Documents refused ([oauth] client_id_metadata_documents = false), only registered clients"
            .into()
    }
}

fn describe_search(search: &SearchConfig) -> String {
    if !search.models.enabled {
        return "  semantic search: off (search.embeddings = false)\n".into();
    }
    // What is on disk now, not what the configuration hopes for: a model or library that is
    // not there is said to be missing.
    let resolution = crate::embed::resolve(&search.models);
    let model = match &resolution.model {
        Ok(found) => format!("{} (from {})", found.value.dir.display(), found.why),
        Err(why) => why.clone(),
    };
    let library = match &resolution.library {
        Ok(found) => format!("{} (from {})", found.value.display(), found.why),
        Err(why) => why.clone(),
    };
    format!(
        "  semantic search: rerank {}\n    model:        {model}\n    onnxruntime:  {library}\n",
        match search.rerank {
            RerankMode::Blended => "blended",
            RerankMode::Off => "off",
        }
    )
}

fn describe_access(access: &Access) -> String {
    if !access.has_identities {
        return "  identities:     (none; HTTP uses the owner token)\n".to_string();
    }
    let mut text = String::from("  identities:\n");
    for (name, _) in &access.tokens {
        text.push_str(&format!(
            "    {name}: enabled (OAuth clients can bind to it)\n"
        ));
    }
    for (name, why) in &access.disabled {
        text.push_str(&format!("    {name}: disabled ({why})\n"));
    }
    text
}
