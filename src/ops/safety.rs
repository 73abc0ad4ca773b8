//! When a destructive call asks the user first (`[safety]`): deleting a note, overwriting one
//! whole, and a batch, undo or move touching more than `confirm_over` notes. The asking itself
//! is the MCP adapter's (elicitation, or an input-required result); this is the policy.

/// Whether calls that need confirmation ask for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfirmMode {
    /// Ask when the client can show a question; otherwise act as asked.
    #[default]
    Auto,
    /// Ask, and refuse when the client cannot show a question.
    Required,
    /// Never ask.
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Safety {
    pub confirm: ConfirmMode,
    /// A batch, undo or move touching more notes than this asks first.
    pub confirm_over: usize,
}

impl Default for Safety {
    fn default() -> Safety {
        Safety {
            confirm: ConfirmMode::Auto,
            confirm_over: 10,
        }
    }
}
