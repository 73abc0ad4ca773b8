//! Canvas rendering never panics, and every entry of `nodes` and `edges` is either rendered or
//! counted as skipped: nodes + edges + skipped = the entries the file holds.

use quire::markdown::canvas::{CanvasError, render_canvas};
use serde_json::Value;

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    match render_canvas(text) {
        Ok(rendered) => {
            let Some(Value::Object(canvas)) = parsed else {
                panic!("rendered a canvas that is not a JSON object");
            };
            let entries = |key: &str| match canvas.get(key) {
                None | Some(Value::Null) => 0,
                Some(Value::Array(items)) => items.len(),
                // A `nodes` or `edges` that is not a list is one malformed entry.
                Some(_) => 1,
            };
            assert_eq!(
                rendered.nodes + rendered.edges + rendered.skipped,
                entries("nodes") + entries("edges"),
                "{rendered:?}"
            );
            assert!(rendered.file_targets.len() <= rendered.nodes);
            assert!(
                rendered.markdown.starts_with("Canvas: "),
                "{:?}",
                rendered.markdown
            );
            if rendered.skipped > 0 {
                assert!(rendered.markdown.contains("skipped as malformed"));
            }
            assert_eq!(
                render_canvas(text).ok(),
                Some(rendered),
                "rendering is not deterministic"
            );
        }
        Err(CanvasError::NotAnObject) => {
            assert!(matches!(parsed, Some(ref value) if !value.is_object()));
        }
        Err(error) => {
            assert!(parsed.is_none(), "{error}");
            let _ = error.code();
        }
    }
}
