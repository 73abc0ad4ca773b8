//! Size rules from docs/STYLE.md: a file of `src/` holds one room (at most 800 lines, its inline
//! tests included) and a function fits on a screen or is split into named phases (at most 100
//! lines from `fn` to its closing brace). Functions are found by parsing, so braces in strings,
//! comments and macros cannot fool the count.

use syn::visit::Visit;

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 100;

/// Rooms and functions still waiting to be split, as `file` or `file::function`. The list only
/// shrinks: an entry that no longer breaks its rule fails the test until it is taken out.
const NOT_YET_SPLIT: &[&str] = &[];

struct LongFunctions<'a> {
    file: &'a str,
    found: Vec<(String, usize)>,
}

impl LongFunctions<'_> {
    fn measure(&mut self, name: &syn::Ident, start: proc_macro2::Span, block: &syn::Block) {
        let lines = block.brace_token.span.close().end().line + 1 - start.start().line;
        if lines > MAX_FN_LINES {
            self.found.push((format!("{}::{name}", self.file), lines));
        }
    }
}

impl<'ast> Visit<'ast> for LongFunctions<'_> {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.measure(&item.sig.ident, item.sig.fn_token.span, &item.block);
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.measure(&item.sig.ident, item.sig.fn_token.span, &item.block);
        syn::visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(block) = &item.default {
            self.measure(&item.sig.ident, item.sig.fn_token.span, block);
        }
        syn::visit::visit_trait_item_fn(self, item);
    }
}

/// Every rule broken under `src/`: (`file` or `file::function`, its lines, the limit).
fn oversized() -> Vec<(String, usize, usize)> {
    let mut broken = Vec::new();
    for path in super::tidy::source_files() {
        let file = super::tidy::relative(&path);
        let text = std::fs::read_to_string(&path).expect("source is UTF-8");
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            broken.push((file.clone(), lines, MAX_FILE_LINES));
        }
        let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{file} parses: {e}"));
        let mut long = LongFunctions {
            file: &file,
            found: Vec::new(),
        };
        long.visit_file(&syntax);
        broken.extend(
            long.found
                .into_iter()
                .map(|(name, lines)| (name, lines, MAX_FN_LINES)),
        );
    }
    broken
}

#[test]
fn rooms_and_functions_stay_small() {
    let broken = oversized();
    let new: Vec<String> = broken
        .iter()
        .filter(|(name, ..)| !NOT_YET_SPLIT.contains(&name.as_str()))
        .map(|(name, lines, limit)| format!("{name}: {lines} lines (at most {limit})"))
        .collect();
    let mended: Vec<&str> = NOT_YET_SPLIT
        .iter()
        .copied()
        .filter(|entry| !broken.iter().any(|(name, ..)| name == entry))
        .collect();
    assert!(
        new.is_empty(),
        "split these into rooms or named phases:\n{}",
        new.join("\n")
    );
    assert!(
        mended.is_empty(),
        "now within the limits; take them out of NOT_YET_SPLIT: {mended:?}"
    );
}

#[test]
fn the_size_rule_finds_a_long_function_in_a_macro_free_body() {
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!("fn long() {{\n{body}}}\nfn short() {{ let s = \"}}}}}}\"; }}\n");
    let syntax = syn::parse_file(&text).expect("parses");
    let mut long = LongFunctions {
        file: "x.rs",
        found: Vec::new(),
    };
    long.visit_file(&syntax);
    assert_eq!(
        long.found,
        vec![("x.rs::long".to_string(), MAX_FN_LINES + 2)]
    );
}
