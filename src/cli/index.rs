//! `quire index [--rebuild] [--embed]`: brings the index (and with `--embed` the semantic vectors)
//! up to date in the foreground, with progress bars on stderr, and returns the summary to print.

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::app::{build_ops, semantic_set_up};
use crate::config::Config;
use crate::index::IndexOptions;
use crate::ops::{Ops, SemanticSearch};

/// `quire index [--rebuild]`: brings the index up to date with a progress bar on stderr and
/// returns the summary to print.
pub fn run(config: &Config, rebuild: bool, embed: bool) -> anyhow::Result<String> {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    // A spinner until the scan knows how many notes there are: never a "0/0 notes" bar.
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message("scanning the vault");
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    let counting =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} notes ({elapsed}, eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    let progress_bar = bar.clone();
    let options = IndexOptions {
        rebuild,
        without_chunks: !semantic_set_up(config),
        progress: Some(Box::new(move |done, total| {
            if total > 0 && progress_bar.length() != Some(total as u64) {
                progress_bar.set_style(counting.clone());
                progress_bar.set_message("indexing");
                progress_bar.set_length(total as u64);
            }
            progress_bar.set_position(done as u64);
            true
        })),
        heartbeat: None,
    };
    let ops = match build_ops(config, options) {
        Ok(ops) => ops,
        Err(error) => {
            bar.finish_and_clear();
            return Err(error);
        }
    };
    let stats = ops
        .index()
        .wait_ready()
        .context("the index could not be built")?;
    bar.finish_and_clear();
    let mut summary = format!(
        "indexed {} notes in {:.2} s: {} read and parsed, {} unchanged, {} removed\n  index: {}\n",
        stats.notes,
        stats.elapsed.as_secs_f64(),
        stats.parsed,
        stats.unchanged,
        stats.removed,
        config.index.display()
    );
    if embed {
        summary.push_str(&embed_now(config, &ops)?);
    }
    Ok(summary)
}

/// `quire index --verify`: the index just brought up to date must hold exactly what a rebuild
/// from scratch holds. The rebuild goes to a sibling file (same file system, removed afterwards)
/// so the live index is never touched; the first differing facts are named.
pub fn verify(config: &Config) -> anyhow::Result<String> {
    // Both indexes as `serve` would keep them: with chunks only where semantic search is set up.
    let without_chunks = !semantic_set_up(config);
    let ops = build_ops(
        config,
        IndexOptions {
            without_chunks,
            ..IndexOptions::default()
        },
    )?;
    let live = ops.index().dump().context("reading the index")?;
    let mut fresh_path = config.index.clone().into_os_string();
    fresh_path.push(format!(".verify-{}", std::process::id()));
    let fresh_path = std::path::PathBuf::from(fresh_path);
    let fresh = (|| -> anyhow::Result<Vec<String>> {
        let index = crate::index::Index::open(
            &fresh_path,
            std::sync::Arc::clone(ops.index().vault()),
            IndexOptions {
                rebuild: true,
                without_chunks,
                ..IndexOptions::default()
            },
        )?;
        index.wait_ready()?;
        Ok(index.dump()?)
    })();
    for suffix in ["", "-wal", "-shm"] {
        let mut path = fresh_path.clone().into_os_string();
        path.push(suffix);
        let _ = std::fs::remove_file(path);
    }
    let fresh = fresh.context("building the comparison index")?;
    if live == fresh {
        return Ok(format!(
            "verified: the index holds exactly what a fresh rebuild holds ({} facts)\n",
            live.len()
        ));
    }
    let only_live: Vec<&String> = live
        .iter()
        .filter(|fact| fresh.binary_search(fact).is_err())
        .collect();
    let only_fresh: Vec<&String> = fresh
        .iter()
        .filter(|fact| live.binary_search(fact).is_err())
        .collect();
    let mut report = format!(
        "the index differs from a fresh rebuild: {} facts only in the index, {} only in the rebuild (run `quire index --rebuild` to repair)",
        only_live.len(),
        only_fresh.len()
    );
    for fact in only_live.iter().take(20) {
        report.push_str(&format!("\n  index only:   {fact}"));
    }
    for fact in only_fresh.iter().take(20) {
        report.push_str(&format!("\n  rebuild only: {fact}"));
    }
    anyhow::bail!(report)
}

/// `quire index --embed`: computes the missing vectors in the foreground with a progress bar.
fn embed_now(config: &Config, ops: &Ops) -> anyhow::Result<String> {
    let service = crate::embed::resolve(&config.search.models)
        .start()
        .context("semantic search is not available (`quire doctor` says why)")?;
    let model = service.info().name.clone();
    ops.enable_semantic(SemanticSearch::new(service, false))?;
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} chunks ({rate}, eta {eta})")
            .map(|style| {
                // Whole chunks per second: indicatif's own {per_sec} prints four decimals.
                style.with_key(
                    "rate",
                    |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                        let _ = write!(out, "{:.0} chunks/s", state.per_sec());
                    },
                )
            })
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(format!("embedding with {model}"));
    let started = std::time::Instant::now();
    let progress_bar = bar.clone();
    let pass = ops.embed_pending(&move |counts| {
        progress_bar.set_length(counts.chunks);
        progress_bar.set_position(counts.embedded);
    })?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    Ok(format!(
        "embedded {} chunks with {model} in {seconds:.1} s ({:.0} chunks/s); {} of {} chunks have vectors, {} stale vectors removed\n",
        pass.embedded,
        pass.embedded as f64 / seconds.max(1e-9),
        pass.counts.embedded,
        pass.counts.chunks,
        pass.pruned
    ))
}
