//! What one `vault_query_base` may spend (issue 63): the bytes of values it holds at once, the steps
//! of all its cells together, its deadline and the client's cancellation, text made by any
//! function, copies charged by their size, and `.obsidian/types.json` read bounded and once per
//! version. Each base here is small enough that the code before the fix answered it (slowly, or
//! with hundreds of MB) rather than exhausting the machine running the tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quire::ops::{self, BaseAnswer, Context, OpsError};

use crate::support::TestVault;

fn query(
    vault: &TestVault,
    ctx: &Context,
    base: &str,
    limit: Option<u32>,
) -> Result<BaseAnswer, OpsError> {
    vault.ops.query_base(
        ctx,
        ops::QueryBase {
            base: Some(base.to_owned()),
            limit,
            ..ops::QueryBase::default()
        },
    )
}

fn notes(count: usize) -> Vec<(String, String)> {
    (0..count)
        .map(|n| {
            (
                format!("n{n:03}.md"),
                format!("---\nk: {n}\n---\nnote {n}\n"),
            )
        })
        .collect()
}

/// A base with `count` formulas each making `bytes` of text, shown in its columns.
fn wide_base(count: usize, bytes: usize, view: &str) -> String {
    let mut yaml = String::from("formulas:\n");
    for at in 0..count {
        yaml.push_str(&format!("  f{at}: '\"x\".repeat({bytes})'\n"));
    }
    let order: Vec<String> = (0..count).map(|at| format!("formula.f{at}")).collect();
    yaml.push_str(&format!(
        "views:\n  - type: table\n    order: [{}]\n{view}",
        order.join(", ")
    ));
    yaml
}

#[test]
fn r63_f1_a_query_holding_more_than_its_bytes_is_refused_by_name() {
    let vault = TestVault::with_notes(&notes(2));
    // 70 formulas of 1 MB for one row: 70 MB held, over the 64 MiB a query may hold.
    let base = wide_base(70, 1_000_000, "    limit: 1\n");
    let started = Instant::now();
    let error = query(&vault, &Context::owner(), &base, None).expect_err("over its bytes");
    assert_eq!(error.code(), "over_budget", "{error}");
    let message = error.to_string();
    for says in ["67108864 bytes", "`formula.f", "'n000.md'", "slice()"] {
        assert!(message.contains(says), "{says:?} missing from: {message}");
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    // The server is still whole: the next query answers.
    let small = query(&vault, &Context::owner(), &wide_base(2, 10, ""), None).expect("answers");
    assert_eq!(small.total, 2);
}

#[test]
fn r63_f1_only_the_page_computes_the_formulas_no_sort_reads() {
    // 30 MB of cells per row: 40 rows of them are over the query's bytes, one page of 1 is not.
    let vault = TestVault::with_notes(&notes(40));
    let base = wide_base(30, 1_000_000, "");
    let page = query(&vault, &Context::owner(), &base, Some(1)).expect("one row's cells");
    assert_eq!(page.total, 40);
    assert_eq!(page.rows.len(), 1);
    assert!(page.next_cursor.is_some());
    let all = query(&vault, &Context::owner(), &base, Some(40)).expect_err("40 rows' cells");
    assert_eq!(all.code(), "over_budget", "{all}");
    // A sort by a formula needs it for every row, and says which it was.
    let sorted = wide_base(
        30,
        1_000_000,
        "    sort:\n      - property: formula.f0\n        direction: ASC\n",
    );
    let small_sort = sorted.replace("repeat(1000000)", "repeat(10)");
    assert_eq!(
        query(&vault, &Context::owner(), &small_sort, Some(1))
            .expect("sorts")
            .total,
        40
    );
}

#[test]
fn r63_f1_copies_are_charged_by_their_size_and_text_is_capped_everywhere() {
    let vault = TestVault::with_notes(&notes(1));
    // Formulas are computed in name order where none uses another, so `copies` sees the 21 others.
    let mut base = String::from("formulas:\n  a00: '\"x\".repeat(1000000)'\n");
    for at in 1..=20 {
        base.push_str(&format!("  a{at:02}: 'formula.a00'\n"));
    }
    let copies = ["formula"; 12].join(", ");
    base.push_str(&format!("  copies: '[{copies}].length'\n"));
    base.push_str("  format: 'date(\"2024-01-01\").format(\"x\".repeat(100000))'\n");
    base.push_str("views:\n  - type: table\n    order: [formula.copies, formula.format]\n");
    let answer = query(&vault, &Context::owner(), &base, None).expect("answers");
    let values = &answer.rows[0].values;
    let copies = values["formula.copies"]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(copies.contains("steps"), "{:?}", values["formula.copies"]);
    let format = values["formula.format"]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(
        format.contains("too large"),
        "{:?}",
        values["formula.format"]
    );
}

#[test]
fn r63_f4_all_cells_of_a_query_share_one_budget() {
    // Each cell takes a few million steps, within one evaluation's 5 M; 60 rows of them are
    // well over the query's 50 M, so the steps trip it on any machine, not only the deadline on
    // a slow one (the code before ran each to its end).
    let vault = TestVault::with_notes(&notes(60));
    let base = "formulas:\n  slow: '\"x\".repeat(500000).split(\"\").map(value).length'\nviews:\n  - type: table\n    order: [formula.slow]\n";
    let started = Instant::now();
    let error = query(&vault, &Context::owner(), base, Some(60)).expect_err("over its steps");
    assert_eq!(error.code(), "over_budget", "{error}");
    let message = error.to_string();
    assert!(
        message.contains("50000000 evaluation steps") || message.contains("10 s"),
        "{message}"
    );
    assert!(message.contains("file.inFolder"), "{message}");
    // The deadline (10 s) bounds it even in a debug build.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn r63_f4_a_cancelled_query_stops_soon() {
    let vault = TestVault::with_notes(&notes(60));
    let base = "formulas:\n  slow: '\"x\".repeat(200000).split(\"\").map(value).length'\nviews:\n  - type: table\n    order: [formula.slow]\n";
    let cancelled = Arc::new(AtomicBool::new(false));
    let ctx = Context::owner().sharing_cancellation(Arc::clone(&cancelled));
    let flag = Arc::clone(&cancelled);
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
        Instant::now()
    });
    let error = query(&vault, &ctx, base, Some(60)).expect_err("cancelled");
    let stopped = Instant::now();
    let asked = canceller.join().expect("canceller");
    assert_eq!(error.code(), "cancelled", "{error}");
    assert!(
        stopped.duration_since(asked) < Duration::from_secs(1),
        "stopped {:?} after the cancellation",
        stopped.duration_since(asked)
    );
}

#[test]
fn r63_f15_types_json_is_capped_and_kept_until_it_changes() {
    let vault = TestVault::with_notes(&[("a.md", "---\nowned: \"true\"\n---\n")]);
    let types = vault.path(".obsidian/types.json");
    std::fs::create_dir_all(vault.path(".obsidian")).expect("mkdir");
    let base = "views:\n  - type: table\n    order: [owned]\n";
    let owned = |vault: &TestVault| {
        query(vault, &Context::owner(), base, None)
            .expect("answers")
            .rows[0]
            .values["owned"]
            .clone()
    };
    assert_eq!(owned(&vault), serde_json::json!("true"));
    std::fs::write(&types, r#"{"types": {"owned": "checkbox"}}"#).expect("write");
    assert_eq!(owned(&vault), serde_json::json!(true), "a new file is read");
    // Over 1 MiB: not read at all, as if no types were declared.
    let padding = " ".repeat(2 << 20);
    std::fs::write(
        &types,
        format!(r#"{{"types": {{"owned": "checkbox"}}}}{padding}"#),
    )
    .expect("write");
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(
            owned(&vault),
            serde_json::json!("true"),
            "an oversized file is ignored"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    std::fs::write(&types, r#"{"types": {"owned": "checkbox"}}"#).expect("write");
    assert_eq!(
        owned(&vault),
        serde_json::json!(true),
        "a changed file is read again"
    );
}
