//! What the integration tests share: the rules for data kept beside the repository (`../shared`:
//! oracles and real vaults), which a bare clone lacks.

use std::path::{Path, PathBuf};

/// `<repo>/../shared`, or `$QUIRE_SHARED`: oracles and real vaults kept beside the repository.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("QUIRE_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
        PathBuf::from,
    )
}

/// Reports that a real vault from `../shared` is missing. A bare clone skips with a visible
/// notice; `tests/run` sets `QUIRE_REQUIRE_SHARED=1`, so in CI it fails instead.
pub fn skip_without_shared(what: &str, path: &Path) {
    skip_or_fail(what, path, &["QUIRE_REQUIRE_SHARED"]);
}

/// Reports that an oracle (captured output of Obsidian, the Tasks plugin, a test suite) is
/// missing. `tests/run` sets `QUIRE_REQUIRE_ORACLES=1` (and `QUIRE_REQUIRE_SHARED=1`, which
/// covers oracles too), so there a missing oracle fails instead of passing while checking nothing.
pub fn skip_without_oracle(what: &str, path: &Path) {
    skip_or_fail(what, path, ORACLE_VARIABLES);
}

const ORACLE_VARIABLES: &[&str] = &["QUIRE_REQUIRE_ORACLES", "QUIRE_REQUIRE_SHARED"];

fn skip_or_fail(what: &str, path: &Path, variables: &[&str]) {
    if let Some(variable) = requiring(variables, |name| std::env::var(name).ok()) {
        panic!("{variable}=1 but {what} is missing at {}", path.display());
    }
    eprintln!("SKIP: {what} not found at {}", path.display());
}

/// The first of `variables` set to `1`, which turns a skip into a failure.
fn requiring<'a>(
    variables: &[&'a str],
    lookup: impl Fn(&str) -> Option<String>,
) -> Option<&'a str> {
    variables
        .iter()
        .copied()
        .find(|name| lookup(name).as_deref() == Some("1"))
}

#[test]
fn either_variable_makes_a_missing_oracle_fail_and_only_the_shared_one_a_missing_vault() {
    let set = |names: &'static [&'static str]| {
        move |name: &str| names.contains(&name).then(|| "1".to_string())
    };
    assert_eq!(requiring(ORACLE_VARIABLES, set(&[])), None);
    assert_eq!(
        requiring(ORACLE_VARIABLES, set(&["QUIRE_REQUIRE_ORACLES"])),
        Some("QUIRE_REQUIRE_ORACLES")
    );
    assert_eq!(
        requiring(ORACLE_VARIABLES, set(&["QUIRE_REQUIRE_SHARED"])),
        Some("QUIRE_REQUIRE_SHARED")
    );
    assert_eq!(
        requiring(&["QUIRE_REQUIRE_SHARED"], set(&["QUIRE_REQUIRE_ORACLES"])),
        None
    );
    let zero = |_: &str| Some("0".to_string());
    assert_eq!(requiring(ORACLE_VARIABLES, zero), None);
}
