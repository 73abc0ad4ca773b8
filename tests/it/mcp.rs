//! The MCP server in process: rmcp's own client drives `QuireServer` over a `tokio::io::duplex`
//! pipe. Golden `tools/list` snapshots (`tests/it/snapshots/`) pin the tool surface for the
//! default configuration, `read_only`, and an identity without write rules, so any change to a
//! name, description or schema shows as a diff; the context budget holds the model-facing part of
//! the list to its size; a few calls check the adapter end to end (typed enums, argument errors,
//! the caller taken from the request).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::index::{Index, IndexOptions};
use quire::mcp::{Features, QuireServer, Shared, ToolGroup};
use quire::ops::Ops;
use quire::vault::Vault;
use rmcp::model::{CallToolRequestParams, ClientJsonRpcMessage, GetExtensions, JsonObject, Tool};
use rmcp::service::{RoleClient, RoleServer, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{ServiceExt, model::JsonRpcMessage};
use serde_json::{Value, json};

/// The context budget of issue 17: the model-facing part of `tools/list` (name, description and
/// input schema as JSON) averages at most this many bytes per tool over the default surface.
const BUDGET_PER_TOOL: usize = 1200;

const NOTES: &[(&str, &str)] = &[
    ("Welcome.md", "# Welcome\n\nHello.\n"),
    (
        "Projects/Plan.md",
        "# Plan\n\n## Tasks\n\n- [ ] write the plan 📅 2030-01-02\n- [ ] review 📅 2030-01-01\n",
    ),
    ("Board.md", "## Backlog\n\n- [ ] one\n- [ ] two\n"),
];

struct Served {
    _dir: tempfile::TempDir,
    root: PathBuf,
    client: RunningService<RoleClient, ()>,
}

/// Who the test client is to the server.
enum As {
    /// stdio: no HTTP request, so the owner.
    Owner,
    /// An HTTP caller the auth layer proved: an identity that may read everything and write nothing.
    Reader,
}

async fn serve(features: Features, caller: As) -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("vault");
    for (path, text) in NOTES {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write note");
    }
    let vault = Arc::new(Vault::open(&root, 1 << 20).expect("open vault"));
    let index = Index::open(
        &dir.path().join("index.db"),
        Arc::clone(&vault),
        IndexOptions::default(),
    )
    .expect("open index");
    let ops = Ops::new(vault, index);
    let principal = match caller {
        As::Owner => None,
        As::Reader => {
            let mut identities = BTreeMap::new();
            identities.insert(
                "reader".to_string(),
                IdentityRules {
                    read: vec![Rule::parse("/").expect("rule")],
                    write: Vec::new(),
                    deny: Vec::new(),
                },
            );
            ops.set_policy(Policy::new(Vec::new(), identities));
            Some(Principal::Identity {
                name: "reader".into(),
                client_id: None,
            })
        }
    };
    let (changes, _) = tokio::sync::broadcast::channel(16);
    let (policy_changes, _) = tokio::sync::broadcast::channel(4);
    let shared = Arc::new(Shared::new(
        Arc::new(ops),
        changes,
        features,
        policy_changes,
    ));
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let server = QuireServer::new(shared);
    tokio::spawn(async move {
        let transport = AsCaller {
            inner: IntoTransport::<RoleServer, _, _>::into_transport(server_end),
            principal,
        };
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_end).await.expect("client initialises");
    Served {
        _dir: dir,
        root,
        client,
    }
}

/// The server end of the pipe, marking each incoming message as the streamable HTTP transport
/// does: with the HTTP request's parts, which carry the principal the bearer check proved.
struct AsCaller<T> {
    inner: T,
    principal: Option<Principal>,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for AsCaller<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let mut message: ClientJsonRpcMessage = self.inner.receive().await?;
        if let Some(principal) = &self.principal {
            let (mut parts, ()) = http::Request::new(()).into_parts();
            parts.extensions.insert(principal.clone());
            match &mut message {
                JsonRpcMessage::Request(request) => {
                    request.request.extensions_mut().insert(parts);
                }
                JsonRpcMessage::Notification(notification) => {
                    notification.notification.extensions_mut().insert(parts);
                }
                _ => {}
            }
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

impl Served {
    async fn tools(&self) -> Vec<Tool> {
        self.client
            .list_all_tools()
            .await
            .expect("tools/list answers")
    }

    /// Calls a tool; returns whether it failed, its structured content and its first text.
    async fn call(&self, tool: &str, arguments: Value) -> (bool, Value, String) {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        let result = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .expect("tools/call answers");
        let text = result
            .content
            .first()
            .and_then(|block| block.as_text())
            .map(|text| text.text.clone())
            .unwrap_or_default();
        (
            result.is_error == Some(true),
            result.structured_content.unwrap_or(Value::Null),
            text,
        )
    }

    fn text(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).expect("read note")
    }
}

fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/snapshots")
        .join(format!("{name}.json"))
}

/// Compares `tools` with the checked-in snapshot `name`; `QUIRE_UPDATE_SNAPSHOTS=1` rewrites it.
fn check_snapshot(name: &str, tools: &[Tool]) {
    let mut actual = serde_json::to_string_pretty(tools).expect("tools serialise");
    actual.push('\n');
    let path = snapshot_path(name);
    if std::env::var("QUIRE_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("folder")).expect("mkdir snapshots");
        std::fs::write(&path, &actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        panic!(
            "tools/list ({name}) differs from {}:\n{}\nIf the change is intended, update the snapshots with\n    QUIRE_UPDATE_SNAPSHOTS=1 cargo nextest run mcp::\nand commit them.",
            path.display(),
            line_diff(&expected, &actual)
        );
    }
}

/// A unified-style diff of two texts: common lines around each change, `-` expected, `+` actual.
fn line_diff(expected: &str, actual: &str) -> String {
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    // Common prefix and suffix first, so the quadratic part only sees what changed.
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    // Longest common subsequence of the middle parts.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut lines = Vec::new();
    let context = prefix.saturating_sub(3);
    lines.extend(old[context..prefix].iter().map(|line| format!("  {line}")));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            lines.push(format!("  {}", a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            lines.push(format!("- {}", a[i]));
            i += 1;
        } else {
            lines.push(format!("+ {}", b[j]));
            j += 1;
        }
    }
    let after = &old[old.len() - suffix..];
    lines.extend(after.iter().take(3).map(|line| format!("  {line}")));
    format!(
        "--- snapshot\n+++ tools/list now\n@@ line {} @@\n{}",
        context + 1,
        lines.join("\n")
    )
}

/// The bytes of what a model reads of one tool: its name, description and input schema, as JSON.
fn model_facing_bytes(tool: &Tool) -> usize {
    json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
    })
    .to_string()
    .len()
}

/// `schema` with every `$ref` into `root`'s `$defs` replaced by what it names.
fn resolved(root: &Value, schema: &Value) -> Value {
    match schema {
        Value::Object(object) => match object.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.trim_start_matches("#/$defs/");
                resolved(root, &root["$defs"][name])
            }
            None => Value::Object(
                object
                    .iter()
                    .map(|(key, value)| (key.clone(), resolved(root, value)))
                    .collect(),
            ),
        },
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| resolved(root, item)).collect())
        }
        other => other.clone(),
    }
}

fn names(tools: &[Tool]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

#[tokio::test]
async fn default_surface_matches_its_snapshot() {
    let served = serve(Features::default(), As::Owner).await;
    check_snapshot("tools_default", &served.tools().await);
}

/// `docs/tools.md`, the tools page the README links to, is the live default surface: one line per
/// tool with its parameters (required ones marked), written by `QUIRE_UPDATE_SNAPSHOTS=1`.
#[tokio::test]
async fn tools_page_matches_the_live_surface() {
    let served = serve(Features::default(), As::Owner).await;
    let actual = tools_page(&served.tools().await);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tools.md");
    if std::env::var("QUIRE_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::write(&path, &actual).expect("write docs/tools.md");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "docs/tools.md is stale:\n{}\nRegenerate it with\n    QUIRE_UPDATE_SNAPSHOTS=1 cargo nextest run mcp::\nand commit it.",
        line_diff(&expected, &actual)
    );
}

fn tools_page(tools: &[Tool]) -> String {
    let mut page = String::from(
        "# Tools\n\nEvery tool a default `quire serve` offers, from its live `tools/list` (generated by \
         `tests/it/mcp.rs`; do not edit by hand). Parameters marked `*` are required. Tool groups, \
         read-only mode and identities narrow this list: see [configuration](configuration.md).\n\n\
         | tool | kind | what it does | parameters |\n|---|---|---|---|\n",
    );
    for tool in tools {
        let annotations = tool.annotations.as_ref();
        let kind = if annotations.and_then(|a| a.read_only_hint) == Some(true) {
            "reads"
        } else if annotations.and_then(|a| a.destructive_hint) == Some(true) {
            "writes, destructive"
        } else {
            "writes"
        };
        let description = tool.description.as_deref().unwrap_or_default();
        // The first sentence: the rest is for the model, not for a table.
        let summary = description
            .split_once(". ")
            .map_or(description, |(first, _)| first)
            .trim_end_matches('.')
            .replace('|', "\\|");
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let parameters: Vec<String> = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .keys()
                    .map(|name| {
                        let star = if required.contains(&name.as_str()) {
                            "*"
                        } else {
                            ""
                        };
                        format!("`{name}`{star}")
                    })
                    .collect()
            })
            .unwrap_or_default();
        page.push_str(&format!(
            "| `{}` | {kind} | {summary} | {} |\n",
            tool.name,
            parameters.join(", ")
        ));
    }
    page
}

#[tokio::test]
async fn read_only_surface_matches_its_snapshot() {
    let features = Features {
        read_only: true,
        ..Features::default()
    };
    let served = serve(features, As::Owner).await;
    let tools = served.tools().await;
    assert!(
        tools
            .iter()
            .all(|tool| tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)),
        "read_only serves read-only tools only: {:?}",
        names(&tools)
    );
    check_snapshot("tools_read_only", &tools);
}

#[tokio::test]
async fn an_identity_without_write_rules_sees_its_own_surface() {
    let served = serve(Features::default(), As::Reader).await;
    let tools = served.tools().await;
    assert!(!names(&tools).contains(&"vault_write_note".to_string()));
    check_snapshot("tools_reader_identity", &tools);
    // Its identity came from the request: a write tool is unknown to it, and the note stays.
    let (failed, _, text) = served
        .call(
            "vault_write_note",
            json!({"path": "Welcome.md", "body": "x", "overwrite": true}),
        )
        .await;
    assert!(
        failed && text.starts_with("invalid_argument: there is no tool named"),
        "{text}"
    );
    assert_eq!(served.text("Welcome.md"), "# Welcome\n\nHello.\n");
    let (failed, read, text) = served
        .call("vault_read_note", json!({"path": "Welcome.md"}))
        .await;
    assert!(!failed, "{text}");
    assert_eq!(read["content"], "# Welcome\n\nHello.\n");
}

#[tokio::test]
async fn the_default_surface_keeps_to_its_context_budget() {
    let served = serve(Features::default(), As::Owner).await;
    let tools = served.tools().await;
    let total: usize = tools.iter().map(model_facing_bytes).sum();
    let descriptions: usize = tools
        .iter()
        .map(|tool| tool.description.as_deref().map_or(0, str::len))
        .sum();
    let inputs: usize = tools
        .iter()
        .map(|tool| {
            Value::Object(tool.input_schema.as_ref().clone())
                .to_string()
                .len()
        })
        .sum();
    let outputs: usize = tools
        .iter()
        .filter_map(|tool| tool.output_schema.as_ref())
        .map(|schema| Value::Object(schema.as_ref().clone()).to_string().len())
        .sum();
    let whole = serde_json::to_string(&tools)
        .expect("tools serialise")
        .len();
    let average = total / tools.len();
    // `cargo nextest run mcp::the_default_surface --no-capture` prints these for docs/PERFORMANCE.md.
    println!(
        "tool surface: {} tools; model-facing {total} bytes ({average} per tool; budget {BUDGET_PER_TOOL}); descriptions {descriptions}, input schemas {inputs}, output schemas {outputs}; whole tools/list {whole}",
        tools.len()
    );
    for tool in &tools {
        println!("  {:<28} {:>5}", tool.name, model_facing_bytes(tool));
    }
    assert!(
        average <= BUDGET_PER_TOOL,
        "the model-facing part of tools/list averages {average} bytes per tool, over the budget of {BUDGET_PER_TOOL}: shorten descriptions or schemas"
    );
}

#[tokio::test]
async fn calls_run_one_operation_and_map_its_errors() {
    let served = serve(Features::default(), As::Owner).await;
    let (failed, read, text) = served
        .call("vault_read_note", json!({"path": "Welcome.md"}))
        .await;
    assert!(!failed, "{text}");
    let revision = read["revision"].as_str().expect("revision").to_owned();
    let (failed, _, text) = served
        .call("vault_read_note", json!({"path": "Missing.md"}))
        .await;
    assert!(failed && text.starts_with("not_found: "), "{text}");
    // Arguments off the schema are the model's to fix: invalid_argument, never a protocol error.
    let (failed, _, text) = served
        .call("vault_list_notes", json!({"limit": "ten"}))
        .await;
    assert!(failed && text.starts_with("invalid_argument: "), "{text}");
    let (failed, _, text) = served
        .call("vault_list_notes", json!({"limit": 5, "bogus": 1}))
        .await;
    assert!(failed && text.starts_with("invalid_argument: "), "{text}");
    let (failed, _, text) = served
        .call(
            "vault_read_note",
            json!({"path": "Welcome.md", "outline": true, "heading": "x"}),
        )
        .await;
    assert!(failed && text.starts_with("invalid_argument: "), "{text}");
    let (failed, written, text) = served
        .call(
            "vault_write_note",
            json!({"path": "Welcome.md", "body": "new\n", "overwrite": true, "expected_revision": revision}),
        )
        .await;
    assert!(!failed, "{text}");
    assert_eq!(written["created"], false);
    assert_eq!(served.text("Welcome.md"), "new\n");
    let (failed, _, text) = served.call("vault_no_such_tool", json!({})).await;
    assert!(failed && text.contains("vault_read_note"), "{text}");
}

/// A failed call's code travels back to the call log with its result; the client reads the
/// result as the spec has it, with no `_meta` of ours.
#[tokio::test]
async fn failed_results_carry_nothing_but_their_text() {
    let served = serve(Features::default(), As::Owner).await;
    for (tool, arguments) in [
        ("vault_read_note", json!({"path": "Missing.md"})),
        ("vault_list_notes", json!({"limit": "ten"})),
    ] {
        let Value::Object(arguments) = arguments else {
            panic!("arguments are an object");
        };
        let result = served
            .client
            .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
            .await
            .expect("tools/call answers");
        assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
        assert_eq!(result.meta, None, "{tool}: {result:?}");
    }
}

#[tokio::test]
async fn paging_parameters_are_one_flat_schema() {
    let served = serve(Features::default(), As::Owner).await;
    let tools = served.tools().await;
    let listing = tools
        .iter()
        .find(|tool| tool.name == "vault_list_notes")
        .expect("vault_list_notes");
    let schema: &JsonObject = &listing.input_schema;
    assert_eq!(schema["additionalProperties"], false);
    let properties = schema["properties"].as_object().expect("properties");
    assert!(properties.contains_key("limit") && properties.contains_key("cursor"));
    assert!(!schema.contains_key("allOf"), "{schema:?}");
    let (failed, first, text) = served.call("vault_list_notes", json!({"limit": 1})).await;
    assert!(!failed, "{text}");
    let cursor = first["next_cursor"].as_str().expect("a second page");
    let (failed, second, text) = served
        .call("vault_list_notes", json!({"limit": 1, "cursor": cursor}))
        .await;
    assert!(!failed, "{text}");
    assert_ne!(first["notes"][0]["path"], second["notes"][0]["path"]);
}

#[tokio::test]
async fn task_value_sets_are_enums_read_as_before() {
    let served = serve(Features::default(), As::Owner).await;
    let tools = served.tools().await;
    let schema = |tool: &str, property: &str| -> Value {
        let tool = tools
            .iter()
            .find(|t| t.name == tool)
            .expect("task tool listed");
        let root = Value::Object(tool.input_schema.as_ref().clone());
        resolved(&root, &root["properties"][property])
    };
    assert!(
        schema("vault_list_tasks", "sort_by")
            .to_string()
            .contains("\"due\"")
    );
    assert!(
        schema("vault_create_task", "format")
            .to_string()
            .contains("\"dataview\"")
    );
    assert!(
        schema("vault_create_task", "position")
            .to_string()
            .contains("\"top\"")
    );

    // Case and spaces are ignored, as before; unknown values are argument errors.
    let (failed, listed, text) = served
        .call("vault_list_tasks", json!({"sort_by": " DUE "}))
        .await;
    assert!(!failed, "{text}");
    let order: Vec<&str> = listed["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|task| task["due"].as_str())
        .collect();
    assert_eq!(order, ["2030-01-01", "2030-01-02"]);
    for (tool, arguments) in [
        ("vault_list_tasks", json!({"sort_by": "urgency"})),
        (
            "vault_create_task",
            json!({"path": "Board.md", "description": "x", "format": "yaml"}),
        ),
        (
            "vault_create_task",
            json!({"path": "Board.md", "description": "x", "heading": "Backlog", "position": "middle"}),
        ),
        (
            "vault_create_task",
            json!({"path": "Board.md", "description": "x", "heading": "Backlog", "position": -1}),
        ),
    ] {
        let (failed, _, text) = served.call(tool, arguments.clone()).await;
        assert!(
            failed && text.starts_with("invalid_argument: "),
            "{arguments}: {text}"
        );
    }
    assert_eq!(
        served.text("Board.md"),
        "## Backlog\n\n- [ ] one\n- [ ] two\n"
    );

    // An index as a number or as text; top and bottom by name.
    for (description, position) in [
        ("after one", json!(1)),
        ("first", json!("top")),
        ("also second", json!("1")),
        ("last", json!("Bottom")),
    ] {
        let (failed, _, text) = served
            .call(
                "vault_create_task",
                json!({"path": "Board.md", "description": description, "heading": "Backlog", "position": position, "format": "Emoji"}),
            )
            .await;
        assert!(!failed, "{position}: {text}");
    }
    assert_eq!(
        served.text("Board.md"),
        "## Backlog\n\n- [ ] first\n- [ ] also second\n- [ ] one\n- [ ] after one\n- [ ] two\n- [ ] last\n"
    );
}

/// Every `vault_…` word of `text`.
fn mentions(text: &str) -> Vec<String> {
    text.match_indices("vault_")
        .map(|(at, _)| {
            text[at..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect()
        })
        .collect()
}

/// The tools a served surface's descriptions and instructions name that it does not serve.
async fn stray_mentions(served: &Served) -> Vec<String> {
    let tools = served.tools().await;
    let listed = names(&tools);
    let instructions = served
        .client
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .unwrap_or_default();
    let mut texts: Vec<String> = tools
        .iter()
        .filter_map(|tool| tool.description.as_deref().map(str::to_owned))
        .collect();
    texts.push(instructions);
    texts
        .iter()
        .flat_map(|text| mentions(text))
        .filter(|name| !listed.contains(name))
        .collect()
}

#[tokio::test]
async fn a_group_subset_serves_its_tools_and_mentions_no_other() {
    let served = serve(
        Features {
            groups: vec![ToolGroup::Tasks],
            ..Features::default()
        },
        As::Owner,
    )
    .await;
    assert_eq!(
        names(&served.tools().await),
        ["vault_create_task", "vault_list_tasks", "vault_update_task"]
    );
    assert_eq!(stray_mentions(&served).await, Vec::<String>::new());
    // A tool of a group not served is unknown, exactly like a misspelt one.
    let (failed, _, text) = served
        .call("vault_read_note", json!({"path": "Welcome.md"}))
        .await;
    assert!(
        failed && text.starts_with("invalid_argument: there is no tool named"),
        "{text}"
    );
    let (failed, _, text) = served.call("vault_list_tasks", json!({})).await;
    assert!(!failed, "{text}");
}

#[tokio::test]
async fn descriptions_and_instructions_name_only_served_tools() {
    let mut surfaces: Vec<(String, Features)> = ToolGroup::ALL
        .into_iter()
        .map(|group| {
            (
                group.name().to_owned(),
                Features {
                    groups: vec![group],
                    ..Features::default()
                },
            )
        })
        .collect();
    surfaces.push(("default".into(), Features::default()));
    surfaces.push((
        "read_only".into(),
        Features {
            read_only: true,
            ..Features::default()
        },
    ));
    surfaces.push((
        "without vault_search_by_property".into(),
        Features {
            disabled_tools: vec!["vault_search_by_property".into()],
            ..Features::default()
        },
    ));
    for (name, features) in surfaces {
        let served = serve(features, As::Owner).await;
        assert_eq!(
            stray_mentions(&served).await,
            Vec::<String>::new(),
            "{name}"
        );
    }
    // The rule has teeth: the full surface does name tools in descriptions and instructions.
    let served = serve(Features::default(), As::Owner).await;
    let values = served
        .tools()
        .await
        .into_iter()
        .find(|tool| tool.name == "vault_list_property_values")
        .and_then(|tool| tool.description.map(|text| text.to_string()))
        .expect("described");
    assert!(values.contains("vault_search_by_property"), "{values}");
    let reader = serve(Features::default(), As::Reader).await;
    assert_eq!(
        stray_mentions(&reader).await,
        Vec::<String>::new(),
        "reader"
    );
}
