//! The `query` target: the checks live in `fuzz/checks/query.rs`, which `tests/it/fuzz_replay.rs`
//! also runs over every seed and regression input on stable Rust.
#![no_main]

#[path = "../checks/query.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
