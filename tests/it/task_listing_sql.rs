//! `vault_list_tasks` answered in SQL (`Ops::list_tasks`) against the in-memory listing it replaced
//! (`Ops::list_tasks_in_memory`, kept as the reference): a generated vault of random tasks (every
//! status symbol, valid and invalid dates in both field formats, priorities, recurrence, nested
//! tags, headings, nesting under tasks and plain items) under several plugin settings (defaults,
//! custom statuses, a tag or plain-text global filter, Obsidian's excluded files), every filter and
//! sort, every page, for the owner and for an identity that may read only part of the vault.

use quire::acl::{IdentityRules, Policy, Principal, Rule};
use quire::ops::{Context, ListTasks, TaskDateFilter, TaskSort};

use crate::support::TestVault;

/// A small deterministic generator, so a failure reproduces.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SYMBOLS: &[&str] = &[" ", " ", "x", "X", "/", "-", ">", "~", "?", "!"];
const DATES: &[&str] = &[
    "2026-11-28",
    "2026-11-30",
    "2026-12-01",
    "2026-12-02",
    "2027-01-15",
    "2025-02-30",
];
const TAGS: &[&str] = &[
    "#work",
    "#work/deep",
    "#Work/Other",
    "#home",
    "#todo",
    "#todo/sub",
];
const HEADINGS: &[&str] = &["Inbox", "Projects", "Someday", "inbox"];

fn random_line(random: &mut Random) -> String {
    let mut line = format!("- [{}] task {}", random.pick(SYMBOLS), random.below(1000));
    if random.below(3) == 0 {
        line.push_str(" TODO:");
    }
    for _ in 0..random.below(3) {
        line.push(' ');
        line.push_str(random.pick(TAGS));
    }
    let dataview = random.below(4) == 0;
    let fields: [(&str, &str); 6] = [
        ("📅", "due"),
        ("⏳", "scheduled"),
        ("🛫", "start"),
        ("➕", "created"),
        ("✅", "completion"),
        ("❌", "cancelled"),
    ];
    for (emoji, key) in fields {
        if random.below(3) == 0 {
            let date = random.pick(DATES);
            if dataview {
                line.push_str(&format!(" [{key}:: {date}]"));
            } else {
                line.push_str(&format!(" {emoji} {date}"));
            }
        }
    }
    if random.below(3) == 0 {
        line.push(' ');
        line.push_str(random.pick(&["🔺", "⏫", "🔼", "🔽", "⏬"]));
    }
    if random.below(6) == 0 {
        line.push_str(" 🔁 every week");
    }
    line
}

fn random_note(random: &mut Random) -> String {
    let mut text = String::from("intro\n");
    for _ in 0..1 + random.below(3) {
        text.push_str(&format!("\n## {}\n\n", random.pick(HEADINGS)));
        for _ in 0..random.below(12) {
            let indent = "  ".repeat(random.below(3));
            if random.below(6) == 0 {
                text.push_str(&format!("{indent}- a plain item\n"));
            } else {
                text.push_str(&format!("{indent}{}\n", random_line(random)));
            }
        }
    }
    text
}

const CUSTOM_STATUSES: &str = r#""statusSettings": {
    "coreStatuses": [
      {"symbol": " ", "name": "Todo", "nextStatusSymbol": "x", "availableAsCommand": true, "type": "TODO"},
      {"symbol": "x", "name": "Done", "nextStatusSymbol": " ", "availableAsCommand": true, "type": "DONE"}
    ],
    "customStatuses": [
      {"symbol": ">", "name": "Deferred", "nextStatusSymbol": "x", "availableAsCommand": true, "type": "IN_PROGRESS"},
      {"symbol": "~", "name": "Dropped", "nextStatusSymbol": " ", "availableAsCommand": true, "type": "CANCELLED"},
      {"symbol": "?", "name": "Question", "nextStatusSymbol": " ", "availableAsCommand": true, "type": "NON_TASK"},
      {"symbol": "x", "name": "Shadowed", "nextStatusSymbol": " ", "availableAsCommand": true, "type": "CANCELLED"}
    ]
  }"#;

fn settings_variants() -> Vec<(&'static str, Option<String>)> {
    vec![
        ("defaults", None),
        ("custom statuses", Some(format!("{{{CUSTOM_STATUSES}}}"))),
        (
            "tag global filter",
            Some(r##"{"globalFilter": "#todo", "removeGlobalFilter": true}"##.to_owned()),
        ),
        (
            "text global filter and custom statuses",
            Some(format!(
                r#"{{"globalFilter": "TODO:", "removeGlobalFilter": false, {CUSTOM_STATUSES}}}"#
            )),
        ),
    ]
}

fn date_filter(before: Option<&str>, on: Option<&str>, after: Option<&str>) -> TaskDateFilter {
    TaskDateFilter {
        before: before.map(str::to_owned),
        on: on.map(str::to_owned),
        after: after.map(str::to_owned),
    }
}

fn requests() -> Vec<ListTasks> {
    let strings = |items: &[&str]| items.iter().map(|item| (*item).to_owned()).collect();
    let mut requests = vec![ListTasks::default()];
    for status in [
        &["TODO"][..],
        &["IN_PROGRESS"],
        &["DONE"],
        &["CANCELLED"],
        &["NON_TASK"],
        &["TODO", "IN_PROGRESS"],
        &["DONE", "CANCELLED", "NON_TASK"],
    ] {
        requests.push(ListTasks {
            status: strings(status),
            ..ListTasks::default()
        });
    }
    let ranges = [
        date_filter(Some("2026-12-01"), None, None),
        date_filter(None, Some("2026-11-30"), None),
        date_filter(None, None, Some("2026-11-30")),
        date_filter(Some("2027-01-01"), None, Some("2026-11-28")),
        date_filter(Some("today"), None, None),
    ];
    for range in &ranges {
        let base = ListTasks::default();
        requests.push(ListTasks {
            due: Some(range.clone()),
            ..base.clone()
        });
        requests.push(ListTasks {
            scheduled: Some(range.clone()),
            ..base.clone()
        });
        requests.push(ListTasks {
            start: Some(range.clone()),
            ..base.clone()
        });
        requests.push(ListTasks {
            created: Some(range.clone()),
            ..base.clone()
        });
        requests.push(ListTasks {
            done: Some(range.clone()),
            ..base.clone()
        });
        requests.push(ListTasks {
            cancelled: Some(range.clone()),
            ..base
        });
    }
    for priority in [
        &["high"][..],
        &["normal", "lowest"],
        &["highest", "medium", "low"],
    ] {
        requests.push(ListTasks {
            priority: strings(priority),
            ..ListTasks::default()
        });
    }
    for folder in ["a", "a/b", "c", "nowhere"] {
        requests.push(ListTasks {
            folder: Some(folder.to_owned()),
            ..ListTasks::default()
        });
    }
    for (tags, exact) in [
        (&["work"][..], false),
        (&["work"], true),
        (&["#WORK/deep", "home"], false),
        (&["todo"], false),
        (&["todo/sub"], true),
        (&["home"], true),
    ] {
        requests.push(ListTasks {
            tags: strings(tags),
            exact_tags: exact,
            ..ListTasks::default()
        });
    }
    for headings in [&["inbox"][..], &["## Projects", "someday"]] {
        requests.push(ListTasks {
            headings: strings(headings),
            ..ListTasks::default()
        });
    }
    requests.push(ListTasks {
        path: Some("a/note 3.md".to_owned()),
        ..ListTasks::default()
    });
    requests.push(ListTasks {
        top_level_only: true,
        ..ListTasks::default()
    });
    for sort in [
        TaskSort::Position,
        TaskSort::Due,
        TaskSort::Scheduled,
        TaskSort::Start,
        TaskSort::Created,
        TaskSort::Done,
        TaskSort::Cancelled,
        TaskSort::Priority,
        TaskSort::Modified,
    ] {
        requests.push(ListTasks {
            sort_by: sort,
            ..ListTasks::default()
        });
        requests.push(ListTasks {
            sort_by: sort,
            status: strings(&["TODO"]),
            due: Some(date_filter(Some("2027-01-01"), None, None)),
            top_level_only: true,
            ..ListTasks::default()
        });
    }
    // The due order with only status, date and priority conditions walks the due index.
    for status in [&["TODO"][..], &["DONE", "NON_TASK"], &[]] {
        requests.push(ListTasks {
            sort_by: TaskSort::Due,
            status: strings(status),
            priority: strings(&["high", "normal", "low"]),
            scheduled: Some(date_filter(None, None, Some("2026-11-28"))),
            ..ListTasks::default()
        });
        requests.push(ListTasks {
            sort_by: TaskSort::Due,
            status: strings(status),
            ..ListTasks::default()
        });
    }
    requests.push(ListTasks {
        status: strings(&["TODO", "DONE"]),
        priority: strings(&["high", "normal"]),
        tags: strings(&["work"]),
        headings: strings(&["inbox", "projects"]),
        folder: Some("a".to_owned()),
        sort_by: TaskSort::Due,
        ..ListTasks::default()
    });
    requests
}

#[test]
fn sql_listing_matches_the_in_memory_listing() {
    let mut random = Random(0x5eed_1234_abcd_0042);
    let mut builder = TestVault::builder();
    for index in 0..60 {
        let folder = ["", "a/", "a/b/", "c/", "ab/"][index % 5];
        builder = builder.note(
            &format!("{folder}note {index}.md"),
            &random_note(&mut random),
        );
    }
    let vault = builder.open();
    let (root, ops) = (&vault.root, &vault.ops);
    let rule = |raw: &str| Rule::parse(raw).expect("rule");
    ops.set_policy(Policy::new(
        Vec::new(),
        std::collections::BTreeMap::from([(
            "agent".to_owned(),
            IdentityRules {
                read: vec![rule("a/"), rule("c/"), rule("note 5.md")],
                write: Vec::new(),
                deny: vec![rule("a/b/")],
            },
        )]),
    ));
    let agent = Context::new(
        Principal::Identity {
            name: "agent".into(),
            client_id: None,
        },
        "test",
    );
    let contexts = [("owner", Context::owner()), ("agent", agent)];
    let app_settings = root.join(".obsidian/app.json");
    let settings_file = root.join(".obsidian/plugins/obsidian-tasks-plugin/data.json");
    let mut compared = 0;
    for (name, settings) in settings_variants() {
        match settings {
            Some(text) => {
                std::fs::create_dir_all(settings_file.parent().expect("parent")).expect("mkdir");
                std::fs::write(&settings_file, text).expect("write settings");
            }
            None => {
                let _ = std::fs::remove_file(&settings_file);
            }
        }
        // From the third variant on, Obsidian's excluded files hide a folder as well.
        if name.contains("global filter") {
            std::fs::create_dir_all(app_settings.parent().expect("parent")).expect("mkdir");
            std::fs::write(&app_settings, r#"{"userIgnoreFilters": ["ab/", "note 1"]}"#)
                .expect("write app settings");
        }
        for ((who, ctx), request) in contexts.iter().flat_map(|context| {
            requests()
                .into_iter()
                .map(move |request| (context, request))
        }) {
            let name = format!("{name}, {who}");
            // Every page of 50 (the default), and the first pages of 7, whose cursors fall inside
            // runs of equal sort keys.
            for (limit, pages) in [(None, usize::MAX), (Some(7), 3)] {
                let mut cursor = None;
                for _ in 0..pages {
                    let page_request = ListTasks {
                        limit,
                        cursor: cursor.clone(),
                        ..request.clone()
                    };
                    let sql = ops.list_tasks(ctx, page_request.clone());
                    let memory = ops.list_tasks_in_memory(ctx, page_request.clone());
                    let (sql, memory) = match (sql, memory) {
                        (Ok(sql), Ok(memory)) => (sql, memory),
                        (Err(sql), Err(memory)) => {
                            assert_eq!(
                                sql.to_string(),
                                memory.to_string(),
                                "{name}: {page_request:?}"
                            );
                            break;
                        }
                        (sql, memory) => panic!(
                            "{name}: {page_request:?}: SQL {:?}, in memory {:?}",
                            sql.map(|list| list.tasks.len()),
                            memory.map(|list| list.tasks.len())
                        ),
                    };
                    if sql.tasks != memory.tasks {
                        let at = (0..sql.tasks.len().max(memory.tasks.len()))
                            .find(|at| sql.tasks.get(*at) != memory.tasks.get(*at))
                            .unwrap_or(0);
                        panic!(
                            "{name}: {page_request:?}: {} tasks in SQL, {} in memory; first difference at {at}:\nSQL       {:?}\nin memory {:?}",
                            sql.tasks.len(),
                            memory.tasks.len(),
                            sql.tasks.get(at),
                            memory.tasks.get(at)
                        );
                    }
                    assert_eq!(
                        sql.next_cursor, memory.next_cursor,
                        "{name}: {page_request:?}"
                    );
                    compared += sql.tasks.len();
                    match sql.next_cursor {
                        Some(next) => cursor = Some(next),
                        None => break,
                    }
                }
            }
        }
    }
    assert!(compared > 30_000, "only {compared} tasks compared");
}
