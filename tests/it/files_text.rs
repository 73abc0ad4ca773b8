//! Text files returned whole or in line windows: byte-exact whole reads, windows that tile the
//! file, the cap as an explicit error, and non-UTF-8 refused.

use quire::files::text::{
    DEFAULT_TEXT_CAP, TextError, TextOutput, TextRequest, WindowRange, read_text, window_text,
};

fn request(start_line: Option<usize>, limit: Option<usize>) -> TextRequest {
    TextRequest {
        start_line,
        limit,
        cap_bytes: DEFAULT_TEXT_CAP,
    }
}

/// One window of `text`: the returned text and its header.
fn check(
    text: &str,
    start_line: Option<usize>,
    limit: Option<usize>,
    expected: &str,
    header: &str,
) {
    let output = window_text(text, request(start_line, limit))
        .unwrap_or_else(|error| panic!("{start_line:?}/{limit:?}: {error}"));
    assert_eq!(output.text, expected, "{start_line:?}/{limit:?}");
    let window = output.window.expect("a paged read has a window");
    assert_eq!(window.header(), header);
    assert_eq!(output.rendered(), format!("{header}\n\n{expected}"));
}

#[test]
fn windows_are_whole_lines_headed_by_their_range() {
    let text = "one\ntwo\r\nthree\nfour\nfive";
    check(
        text,
        Some(1),
        Some(2),
        "one\ntwo\r\n",
        "Lines 1-2 of 5; next start_line: 3.",
    );
    check(
        text,
        Some(3),
        Some(2),
        "three\nfour\n",
        "Lines 3-4 of 5; next start_line: 5.",
    );
    check(
        text,
        Some(5),
        Some(2),
        "five",
        "Lines 5-5 of 5; end of file.",
    );
    check(
        text,
        Some(4),
        None,
        "four\nfive",
        "Lines 4-5 of 5; end of file.",
    );
    check(
        text,
        None,
        Some(1),
        "one\n",
        "Lines 1-1 of 5; next start_line: 2.",
    );
    check(
        text,
        Some(2),
        Some(usize::MAX),
        "two\r\nthree\nfour\nfive",
        "Lines 2-5 of 5; end of file.",
    );
    // A final newline ends the last line; it does not start another.
    check(
        "a\nb\n",
        Some(2),
        Some(5),
        "b\n",
        "Lines 2-2 of 2; end of file.",
    );
    check("", Some(1), Some(10), "", "No lines: the text is empty.");
    check("\n\n", Some(2), None, "\n", "Lines 2-2 of 2; end of file.");
}

#[test]
fn windows_laid_end_to_end_are_the_file() {
    let text = "﻿bom line\r\nsecond\n\nfourth é日\nno newline at the end";
    for limit in 1..=6 {
        let mut joined = String::new();
        let mut start = Some(1);
        while let Some(start_line) = start {
            let output = window_text(text, request(Some(start_line), Some(limit))).expect("window");
            joined.push_str(&output.text);
            let WindowRange {
                next_start_line,
                total_lines,
                ..
            } = output.window.expect("window");
            assert_eq!(total_lines, 5);
            start = next_start_line;
        }
        assert_eq!(joined, text, "limit {limit}");
    }
}

#[test]
fn an_unpaged_read_is_byte_exact() {
    let bytes = "﻿id,name\r\n1,Zoë\r\n2,\"a, b\"".as_bytes();
    let output = read_text(bytes, TextRequest::WHOLE).expect("utf-8");
    assert_eq!(
        output,
        TextOutput {
            text: String::from_utf8(bytes.to_vec()).expect("utf-8"),
            window: None
        }
    );
    assert_eq!(output.rendered().as_bytes(), bytes);
}

#[test]
fn text_over_the_cap_is_an_error_that_says_how_to_page() {
    let text = "0123456789\n".repeat(30); // 30 lines of 11 bytes
    let capped = |start_line, limit| TextRequest {
        start_line,
        limit,
        cap_bytes: 100,
    };
    let error = window_text(&text, capped(None, None)).expect_err("330 bytes > 100");
    assert_eq!(error.code(), "too_large");
    assert_eq!(
        error,
        TextError::TooLarge {
            bytes: 330,
            cap: 100,
            total_lines: 30,
            start_line: 1,
            lines_that_fit: 9
        }
    );
    assert_eq!(
        error.to_string(),
        "the text is 330 bytes, more than the 100-byte cap (the text has 30 lines); \
         read it in windows: start_line 1 with limit 9 fits"
    );
    // The cap applies to the window, not to the file.
    let output = window_text(&text, capped(Some(10), Some(9))).expect("99 bytes fit");
    assert_eq!(output.text.len(), 99);
    let error = window_text(&text, capped(Some(2), Some(10))).expect_err("110 bytes > 100");
    assert_eq!(
        error,
        TextError::TooLarge {
            bytes: 110,
            cap: 100,
            total_lines: 30,
            start_line: 2,
            lines_that_fit: 9
        }
    );
}

#[test]
fn a_window_that_exactly_meets_the_cap_is_returned() {
    let text = "0123456789\n".repeat(30);
    let at_cap = TextRequest {
        start_line: Some(25),
        limit: None,
        cap_bytes: 66,
    };
    assert_eq!(window_text(&text, at_cap).expect("66 bytes").text.len(), 66);
    let below = TextRequest {
        cap_bytes: 65,
        ..at_cap
    };
    let error = window_text(&text, below).expect_err("66 > 65");
    assert_eq!(
        error,
        TextError::TooLarge {
            bytes: 66,
            cap: 65,
            total_lines: 30,
            start_line: 25,
            lines_that_fit: 5
        }
    );
    let one_long_line = "x".repeat(200);
    let error = window_text(
        &one_long_line,
        TextRequest {
            cap_bytes: 100,
            ..TextRequest::WHOLE
        },
    )
    .expect_err("one 200-byte line");
    assert!(
        error
            .to_string()
            .ends_with("line 1 alone is longer than the cap, so it cannot be returned as text"),
        "{error}"
    );
}

#[test]
fn bad_windows_are_invalid_arguments() {
    let text = "a\nb\nc\n";
    let cases = [
        (
            Some(0),
            None,
            TextError::ZeroArgument { name: "start_line" },
        ),
        (Some(1), Some(0), TextError::ZeroArgument { name: "limit" }),
        (
            Some(4),
            None,
            TextError::StartPastEnd {
                start_line: 4,
                total_lines: 3,
            },
        ),
    ];
    for (start_line, limit, expected) in cases {
        let error = window_text(text, request(start_line, limit)).expect_err("invalid");
        assert_eq!(error.code(), "invalid_argument");
        assert_eq!(error, expected);
    }
    assert_eq!(
        window_text("", request(Some(2), None)),
        Err(TextError::StartPastEnd {
            start_line: 2,
            total_lines: 0
        })
    );
}

#[test]
fn non_utf8_text_is_refused_with_its_position() {
    let latin1 = b"caf\xe9\nna\xefve\n";
    let error = read_text(latin1, TextRequest::WHOLE).expect_err("latin-1");
    assert_eq!(error, TextError::NotUtf8 { offset: 3, line: 1 });
    assert_eq!(error.code(), "not_utf8");
    let later = b"line one\nline two\n\xff\xfe";
    assert_eq!(
        read_text(later, request(Some(1), Some(1))),
        Err(TextError::NotUtf8 {
            offset: 18,
            line: 3
        })
    );
}
