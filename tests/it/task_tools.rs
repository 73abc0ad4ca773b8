//! The task operations through `ops`, on small vaults written here: the Tasks plugin's settings
//! (custom statuses, global filter, Dataview format) apply on the next call without a re-index,
//! Kanban lanes, invalid dates that survive an edit, `onCompletion: delete`, and sub-task progress.

use quire::ops::{Context, CreateTask, ListTasks, TaskFields, TaskItem, TaskPosition, UpdateTask};
use std::path::Path;

use crate::support::TestVault;

/// A vault with these notes and, when given, the Tasks plugin's `data.json`.
fn fixture(notes: &[(&str, &str)], plugin_settings: Option<&str>) -> TestVault {
    let builder = TestVault::builder().notes(notes);
    if let Some(settings) = plugin_settings {
        write_settings(builder.root(), settings);
    }
    builder.open()
}

fn write_settings(root: &Path, settings: &str) {
    let folder = root.join(".obsidian/plugins/obsidian-tasks-plugin");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(folder.join("data.json"), settings).expect("write settings");
}

fn list(fixture: &TestVault, request: ListTasks) -> Vec<TaskItem> {
    fixture
        .ops
        .list_tasks(&Context::owner(), request)
        .expect("list tasks")
        .tasks
}

const SETTINGS: &str = r##"{
  "globalFilter": "#todo",
  "removeGlobalFilter": true,
  "statusSettings": {
    "coreStatuses": [
      {"symbol": " ", "name": "Todo", "nextStatusSymbol": "x", "availableAsCommand": true, "type": "TODO"},
      {"symbol": "x", "name": "Done", "nextStatusSymbol": " ", "availableAsCommand": true, "type": "DONE"}
    ],
    "customStatuses": [
      {"symbol": ">", "name": "Deferred", "nextStatusSymbol": "x", "availableAsCommand": true, "type": "IN_PROGRESS"},
      {"symbol": "~", "name": "Dropped", "nextStatusSymbol": " ", "availableAsCommand": true, "type": "CANCELLED"}
    ]
  }
}"##;

#[test]
fn plugin_settings_apply_on_the_next_call() {
    let note = "- [>] #todo later\n- [~] #todo dropped\n- [ ] not mine\n- [ ] #todo now\n";
    let fixture = fixture(&[("Plan.md", note)], Some(SETTINGS));
    let all = list(&fixture, ListTasks::default());
    let summary: Vec<(usize, &str, &str, &str)> = all
        .iter()
        .map(|task| {
            (
                task.line,
                task.status_type.as_str(),
                task.status_name.as_str(),
                task.description.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "IN_PROGRESS", "Deferred", "later"),
            (2, "CANCELLED", "Dropped", "dropped"),
            (4, "TODO", "Todo", "now"),
        ]
    );
    let deferred = list(
        &fixture,
        ListTasks {
            status: vec!["in_progress".into()],
            ..ListTasks::default()
        },
    );
    assert_eq!(deferred.len(), 1);

    // Toggling the custom status follows its chain and stamps today's done date.
    let written = fixture
        .ops
        .update_task(
            &Context::owner(),
            UpdateTask {
                path: "Plan.md".into(),
                line: Some(1),
                status: Some("toggle".into()),
                ..UpdateTask::default()
            },
        )
        .expect("toggle");
    let today = fixture.ops.today().to_string();
    assert_eq!(
        fixture.read("Plan.md").lines().next(),
        Some(format!("- [x] #todo later ✅ {today}").as_str())
    );
    assert_eq!(written.tasks[0].done.as_deref(), Some(today.as_str()));

    // Without the global filter every checkbox is a task, at once and without a re-index.
    write_settings(&fixture.root, "{}");
    assert_eq!(list(&fixture, ListTasks::default()).len(), 4);
}

#[test]
fn kanban_lanes_and_positions() {
    let board = "---\nkanban-plugin: basic\n---\n\n## Backlog\n\n- [ ] one\n- [ ] two\n\n## Done\n\n**Complete**\n- [x] old\n";
    let fixture = fixture(&[("Board.md", board)], None);
    let create = |description: &str, heading: &str, position: TaskPosition| CreateTask {
        path: "Board.md".into(),
        description: description.into(),
        heading: Some(heading.into()),
        position: Some(position),
        ..CreateTask::default()
    };
    fixture
        .ops
        .create_task(
            &Context::owner(),
            create("between", "Backlog", TaskPosition::Index(1)),
        )
        .expect("create in lane");
    fixture
        .ops
        .create_task(
            &Context::owner(),
            create("first done", "Done", TaskPosition::Top),
        )
        .expect("create at top of the complete lane");
    assert_eq!(
        fixture.read("Board.md"),
        "---\nkanban-plugin: basic\n---\n\n## Backlog\n\n- [ ] one\n- [ ] between\n- [ ] two\n\n## Done\n\n**Complete**\n- [ ] first done\n- [x] old\n"
    );
    let tasks = list(&fixture, ListTasks::default());
    let lanes: Vec<(&str, Option<&str>, bool)> = tasks
        .iter()
        .map(|task| {
            (
                task.description.as_str(),
                task.lane.as_deref(),
                task.lane_complete,
            )
        })
        .collect();
    assert_eq!(
        lanes,
        vec![
            ("one", Some("Backlog"), false),
            ("between", Some("Backlog"), false),
            ("two", Some("Backlog"), false),
            ("first done", Some("Done"), true),
            ("old", Some("Done"), true),
        ]
    );
    // Moving a card to another lane.
    fixture
        .ops
        .update_task(
            &Context::owner(),
            UpdateTask {
                path: "Board.md".into(),
                line: Some(7),
                heading: Some("Done".into()),
                position: Some(TaskPosition::Bottom),
                status: Some("x".into()),
                ..UpdateTask::default()
            },
        )
        .expect("move");
    let text = fixture.read("Board.md");
    assert!(
        text.starts_with(
            "---\nkanban-plugin: basic\n---\n\n## Backlog\n\n- [ ] between\n- [ ] two\n"
        )
    );
    assert!(text.contains("- [x] old\n- [x] one ✅ "), "{text}");
}

#[test]
fn invalid_dates_survive_edits_and_completion_can_delete() {
    let note = "- [ ] pay rent 📅 2025-02-30\n- [ ] throw away 🏁 delete\n- [ ] parent\n    - [x] a\n    - [ ] b\n    - [-] c\n";
    let fixture = fixture(&[("Home.md", note)], None);
    let tasks = list(&fixture, ListTasks::default());
    assert_eq!(tasks[0].due.as_deref(), Some("2025-02-30"));
    assert_eq!(tasks[0].invalid_dates, vec!["due".to_owned()]);
    assert_eq!(
        tasks[2].subtask_progress,
        Some(quire::ops::SubtaskProgress { done: 1, total: 2 })
    );
    fixture
        .ops
        .update_task(
            &Context::owner(),
            UpdateTask {
                path: "Home.md".into(),
                line: Some(1),
                fields: TaskFields {
                    priority: Some("high".into()),
                    ..TaskFields::default()
                },
                ..UpdateTask::default()
            },
        )
        .expect("update");
    assert!(
        fixture
            .read("Home.md")
            .starts_with("- [ ] pay rent ⏫ 📅 2025-02-30\n")
    );
    let deleted = fixture
        .ops
        .update_task(
            &Context::owner(),
            UpdateTask {
                path: "Home.md".into(),
                line: Some(2),
                status: Some("DONE".into()),
                ..UpdateTask::default()
            },
        )
        .expect("complete");
    assert!(deleted.deleted && !deleted.next_occurrence);
    assert!(!fixture.read("Home.md").contains("throw away"));
    let due_filter = list(
        &fixture,
        ListTasks {
            due: Some(quire::ops::TaskDateFilter {
                before: Some("2030-01-01".into()),
                ..Default::default()
            }),
            ..ListTasks::default()
        },
    );
    assert!(
        due_filter.is_empty(),
        "an invalid date matches no date filter"
    );
}

#[test]
fn dataview_tasks_stay_dataview_and_descriptions_are_checked() {
    let note = "- [ ] review [due:: 2025-06-20]\n";
    let fixture = fixture(&[("Dv.md", note)], None);
    fixture
        .ops
        .update_task(
            &Context::owner(),
            UpdateTask {
                path: "Dv.md".into(),
                line: Some(1),
                fields: TaskFields {
                    recurrence: Some("every week".into()),
                    ..TaskFields::default()
                },
                ..UpdateTask::default()
            },
        )
        .expect("update");
    assert_eq!(
        fixture.read("Dv.md"),
        "- [ ] review  [repeat:: every week]  [due:: 2025-06-20]\n"
    );
    let refused = fixture.ops.create_task(
        &Context::owner(),
        CreateTask {
            path: "Dv.md".into(),
            description: "sneaky 📅 2025-01-01".into(),
            ..CreateTask::default()
        },
    );
    assert!(
        matches!(refused, Err(ref error) if error.code() == "invalid_argument"),
        "{refused:?}"
    );
    let refused = fixture.ops.create_task(
        &Context::owner(),
        CreateTask {
            path: "Dv.md".into(),
            description: "x".into(),
            fields: TaskFields {
                recurrence: Some("every blue moon".into()),
                ..TaskFields::default()
            },
            ..CreateTask::default()
        },
    );
    assert!(matches!(refused, Err(ref error) if error.code() == "invalid_argument"));
}

#[test]
fn tasks_follow_the_access_policy() {
    use quire::acl::{IdentityRules, Policy, Principal, Rule};
    let fixture = fixture(
        &[
            ("Work/a.md", "- [ ] work task\n"),
            ("Private/b.md", "- [ ] secret task\n"),
        ],
        None,
    );
    let rule = |raw: &str| Rule::parse(raw).expect("rule");
    fixture.ops.set_policy(Policy::new(
        Vec::new(),
        std::collections::BTreeMap::from([(
            "agent".to_owned(),
            IdentityRules {
                read: vec![rule("Work/")],
                write: vec![rule("Work/")],
                deny: Vec::new(),
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
    let listed = fixture
        .ops
        .list_tasks(&agent, ListTasks::default())
        .expect("list");
    let paths: Vec<&str> = listed.tasks.iter().map(|task| task.path.as_str()).collect();
    assert_eq!(paths, vec!["Work/a.md"]);
    let hidden = fixture.ops.list_tasks(
        &agent,
        ListTasks {
            path: Some("Private/b.md".into()),
            ..ListTasks::default()
        },
    );
    assert!(matches!(hidden, Err(ref error) if error.code() == "not_found"));
    let refused = fixture.ops.update_task(
        &agent,
        UpdateTask {
            path: "Private/b.md".into(),
            line: Some(1),
            status: Some("x".into()),
            ..UpdateTask::default()
        },
    );
    assert!(matches!(refused, Err(ref error) if error.code() == "path_forbidden"));
    assert_eq!(fixture.read("Private/b.md"), "- [ ] secret task\n");
}
