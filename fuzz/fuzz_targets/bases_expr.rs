//! The `bases_expr` target: the checks live in `fuzz/checks/bases_expr.rs`, which
//! `tests/it/fuzz_replay.rs` also runs over every seed and regression input on stable Rust.
#![no_main]

#[path = "../checks/bases_expr.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
