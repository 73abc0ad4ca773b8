//! Task statuses as the Tasks plugin models them: a symbol between the brackets, a name, the symbol a
//! toggle moves to, and a type (`TODO`, `IN_PROGRESS`, `DONE`, `CANCELLED`, `NON_TASK`).
//! The registry holds the plugin's defaults plus the statuses the vault's plugin settings define; a
//! symbol it does not know is read as an unknown `TODO` that toggles to `x`, as the plugin does.
//! Pure data: reading the settings file is the caller's job.

use serde_json::Value;

/// The behaviour class of a status; the names are the plugin's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusType {
    Todo,
    InProgress,
    Done,
    Cancelled,
    NonTask,
}

impl StatusType {
    /// The plugin's spelling (`TODO`, `IN_PROGRESS`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            StatusType::Todo => "TODO",
            StatusType::InProgress => "IN_PROGRESS",
            StatusType::Done => "DONE",
            StatusType::Cancelled => "CANCELLED",
            StatusType::NonTask => "NON_TASK",
        }
    }

    /// Parses the plugin's spelling; anything else is `None`.
    pub fn parse(text: &str) -> Option<StatusType> {
        match text {
            "TODO" => Some(StatusType::Todo),
            "IN_PROGRESS" => Some(StatusType::InProgress),
            "DONE" => Some(StatusType::Done),
            "CANCELLED" => Some(StatusType::Cancelled),
            "NON_TASK" => Some(StatusType::NonTask),
            _ => None,
        }
    }
}

/// One status: what the checkbox holds and what a toggle does with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub symbol: String,
    pub name: String,
    pub next_symbol: String,
    pub kind: StatusType,
}

impl Status {
    fn new(symbol: &str, name: &str, next_symbol: &str, kind: StatusType) -> Status {
        Status {
            symbol: symbol.to_owned(),
            name: name.to_owned(),
            next_symbol: next_symbol.to_owned(),
            kind,
        }
    }

    /// The status the plugin invents for a symbol nobody configured.
    fn unknown(symbol: &str) -> Status {
        Status::new(symbol, "Unknown", "x", StatusType::Todo)
    }
}

/// The statuses a vault knows, in the plugin's lookup order (first one with a symbol wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusRegistry {
    statuses: Vec<Status>,
}

impl Default for StatusRegistry {
    /// The plugin's defaults: todo, done, in progress, cancelled.
    fn default() -> Self {
        StatusRegistry {
            statuses: vec![
                Status::new(" ", "Todo", "x", StatusType::Todo),
                Status::new("x", "Done", " ", StatusType::Done),
                Status::new("/", "In Progress", "x", StatusType::InProgress),
                Status::new("-", "Cancelled", " ", StatusType::Cancelled),
            ],
        }
    }
}

impl StatusRegistry {
    /// The statuses of the plugin's `data.json` (`statusSettings.coreStatuses` then `customStatuses`).
    /// Entries that are not well formed are skipped, as the plugin skips them; without any valid entry
    /// the defaults stay.
    pub fn from_plugin_settings(settings: &Value) -> StatusRegistry {
        let mut statuses = Vec::new();
        let groups = ["coreStatuses", "customStatuses"];
        for group in groups {
            let entries = settings
                .get("statusSettings")
                .and_then(|status_settings| status_settings.get(group))
                .and_then(Value::as_array);
            for entry in entries.into_iter().flatten() {
                let text = |key: &str| entry.get(key).and_then(Value::as_str);
                let (Some(symbol), Some(next)) = (text("symbol"), text("nextStatusSymbol")) else {
                    continue;
                };
                // A status symbol is exactly one character, as the checkbox holds one.
                if symbol.chars().count() != 1 {
                    continue;
                }
                let kind = text("type")
                    .and_then(StatusType::parse)
                    .unwrap_or(StatusType::Todo);
                if statuses
                    .iter()
                    .any(|status: &Status| status.symbol == symbol)
                {
                    continue;
                }
                statuses.push(Status::new(symbol, text("name").unwrap_or(""), next, kind));
            }
        }
        if statuses.is_empty() {
            return StatusRegistry::default();
        }
        StatusRegistry { statuses }
    }

    /// The status for a symbol, or the plugin's unknown status for it.
    pub fn by_symbol(&self, symbol: &str) -> Status {
        self.find(symbol)
            .cloned()
            .unwrap_or_else(|| Status::unknown(symbol))
    }

    /// The type of a symbol's status, without building the status.
    pub fn kind_of(&self, symbol: &str) -> StatusType {
        self.find(symbol)
            .map_or(StatusType::Todo, |status| status.kind)
    }

    fn find(&self, symbol: &str) -> Option<&Status> {
        self.statuses.iter().find(|status| status.symbol == symbol)
    }

    /// The status a toggle moves to.
    pub fn next(&self, status: &Status) -> Status {
        self.by_symbol(&status.next_symbol)
    }

    /// The status a new occurrence of a recurring task gets: the first `TODO` (else `IN_PROGRESS`)
    /// along the toggle chain after `completed`, else the plain todo status.
    pub fn next_recurrence_status(&self, completed: &Status) -> Status {
        let first = self.next(completed);
        for wanted in [StatusType::Todo, StatusType::InProgress] {
            let mut candidate = first.clone();
            if candidate.kind == wanted {
                return candidate;
            }
            for _ in 0..self.statuses.len().saturating_sub(1) {
                candidate = self.next(&candidate);
                if candidate.kind == wanted {
                    return candidate;
                }
            }
        }
        self.by_symbol(" ")
    }

    /// Every configured status, in order.
    pub fn statuses(&self) -> &[Status] {
        &self.statuses
    }
}
