//! The synthetic vault the benchmarks share: `benches/gen_vault.py` (seed 42) with the vocabulary
//! of `../shared/vaults/tasks-docs`, generated once per size under `target/<folder>/`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Generator {
    script: PathBuf,
    vocabulary: PathBuf,
    work: PathBuf,
}

/// The generator writing under `target/<folder>`, or `None` after a SKIP notice when the
/// vocabulary (beside the repository, in ../shared) or python3 is missing.
pub fn generator(folder: &str) -> Option<Generator> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script = repo.join("benches/gen_vault.py");
    let vocabulary = repo.join("../shared/vaults/tasks-docs");
    if !script.is_file()
        || !vocabulary.is_dir()
        || Command::new("python3").arg("--version").output().is_err()
    {
        println!(
            "SKIP: the vault generator ({}) or its vocabulary ({}) is absent; the vocabulary ships beside the repository in ../shared",
            script.display(),
            vocabulary.display()
        );
        return None;
    }
    let work = repo.join("target").join(folder);
    std::fs::create_dir_all(&work).expect("create the benchmark's folder under target/");
    Some(Generator {
        script,
        vocabulary,
        work,
    })
}

impl Generator {
    pub fn work(&self) -> &Path {
        &self.work
    }

    /// The vault of `size` notes, generated on first use. The generator writes the queries file
    /// beside the vault last, so its presence marks a finished vault.
    pub fn vault(&self, size: usize) -> PathBuf {
        let vault = self.work.join(format!("vault-{size}"));
        if !self.queries(size).is_file() {
            println!("generating a vault of {size} notes in {}", vault.display());
            let _ = std::fs::remove_dir_all(&vault);
            let status = Command::new("python3")
                .arg(&self.script)
                .arg(&vault)
                .args(["--notes", &size.to_string(), "--seed", "42", "--vocab-from"])
                .arg(&self.vocabulary)
                .status()
                .expect("run python3");
            assert!(status.success(), "gen_vault.py failed");
        }
        vault
    }

    /// The generator's 200 one- and two-word queries for the vault of `size` notes.
    pub fn queries(&self, size: usize) -> PathBuf {
        self.work.join(format!("vault-{size}.queries.txt"))
    }
}
