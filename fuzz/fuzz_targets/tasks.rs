//! The Tasks line grammar: a task Quire writes reads back as the same task, and writing that again
//! gives the same line (parse → write → parse is stable), in each of the plugin's formats.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire::markdown::tasks::{InvalidDates, TaskFormat, TaskSettings, note_tasks, parse_task_line};

/// Lines tried per input; a task line is one line, so more only repeats the work.
const MAX_LINES: usize = 16;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in [TaskFormat::Emoji, TaskFormat::Dataview, TaskFormat::Both] {
        let settings = TaskSettings {
            format,
            ..TaskSettings::default()
        };
        for line in text.lines().take(MAX_LINES) {
            let Some(task) = parse_task_line(line, &settings) else {
                continue;
            };
            for invalid in [InvalidDates::AsWritten, InvalidDates::AsPlugin] {
                let written = task.to_line(invalid);
                let Some(again) = parse_task_line(&written, &settings) else {
                    panic!("{line:?} was written as {written:?}, which is not a task ({format:?})");
                };
                if invalid == InvalidDates::AsWritten {
                    // The style flag says which fields were read; an unreadable recurrence is
                    // dropped as the plugin drops it, and a line left without fields has no style.
                    let mut same_style = again.clone();
                    same_style.dataview = task.dataview;
                    assert_eq!(
                        same_style, task,
                        "{line:?} was written as {written:?} ({format:?})"
                    );
                }
                // Stability is asked of what Quire writes to disk (dates as written). The plugin's
                // own `Invalid date` is read back as a date field, so a description made only of
                // tags gains the plugin's leading space on the next write (the plugin does the
                // same); Quire never writes that form, so it only has to stay a task.
                if invalid == InvalidDates::AsWritten {
                    assert_eq!(
                        again.to_line(invalid),
                        written,
                        "{line:?}: writing is not stable ({format:?}, {invalid:?})"
                    );
                }
            }
        }
        let _ = note_tasks(text, &settings);
    }
});
