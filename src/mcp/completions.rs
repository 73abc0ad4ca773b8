//! `completion/complete`: values for the prompts' arguments (`memory-review`'s `file` and `section`,
//! `daily-review`'s `date`) and for the `note://{+path}` template's `path`, from `ops`, as the
//! caller, so nothing the caller may not read is offered. Anything else completes to nothing.

use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use super::prompts::{DAILY_REVIEW, MEMORY_REVIEW, Served};
use super::resources::TEMPLATE;
use crate::ops::{Completions, Context, Ops, OpsError};

/// What to complete: an argument of a prompt or of the note template, and the text typed so far.
pub fn complete(
    ops: &Ops,
    ctx: &Context,
    request: &CompleteRequestParams,
    served: Served,
) -> Result<CompleteResult, OpsError> {
    let typed = request.argument.value.as_str();
    let found = match (&request.r#ref, request.argument.name.as_str()) {
        (Reference::Prompt(prompt), "file") if prompt.name == MEMORY_REVIEW && served.memory => {
            ops.complete_memory_file(ctx, typed)?
        }
        (Reference::Prompt(prompt), "section") if prompt.name == MEMORY_REVIEW && served.memory => {
            // The file chosen already, when the client says (completion context), narrows it.
            let file = request
                .context
                .as_ref()
                .and_then(|context| context.arguments.as_ref())
                .and_then(|arguments| arguments.get("file"))
                .map(String::as_str);
            ops.complete_memory_section(ctx, file, typed)?
        }
        (Reference::Prompt(prompt), "date") if prompt.name == DAILY_REVIEW => {
            ops.complete_daily_date(ctx, typed)?
        }
        (Reference::Resource(template), "path") if template.uri == TEMPLATE => {
            ops.complete_note_path(ctx, typed)?
        }
        _ => Completions::default(),
    };
    let total = (!found.has_more).then_some(found.values.len() as u32);
    // `ops` returns at most the protocol's 100 values, the only case this refuses.
    let info =
        CompletionInfo::with_pagination(found.values, total, found.has_more).unwrap_or_default();
    Ok(CompleteResult::new(info))
}
