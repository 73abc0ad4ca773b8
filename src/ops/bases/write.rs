//! `write_base`: a `.base` file written only once its YAML reads as a base (filters and formulas
//! parse, formulas defined and without circles, views well formed), through `write_note`, so it
//! has the same revision rules, history, lock, reindex and audit as a note.

use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::notes::{WriteNote, WrittenNote};
use crate::ops::shared::{Context, Ops};

use super::source::parse_base;
use super::types::WriteBase;

impl Ops {
    /// Checks `request.base` and writes it to `request.path`; replacing a file needs its revision.
    pub fn write_base(&self, ctx: &Context, request: WriteBase) -> Result<WrittenNote, OpsError> {
        let path = parse_path(&request.path)?;
        if path.extension().as_deref() != Some("base") {
            return Err(OpsError::invalid_argument(format!(
                "'{path}' does not end in .base; a base is written to a .base file (or as a ```base block of a note with the note tools)"
            )));
        }
        // Refused before the base is read, so a caller who may not write learns nothing more.
        self.require_write(ctx, &path)?;
        parse_base(&request.base, "the base given")?;
        self.write_note(
            ctx,
            WriteNote {
                path: request.path,
                body: request.base,
                properties: None,
                overwrite: request.expected_revision.is_some(),
                expected_revision: request.expected_revision,
            },
        )
    }
}
