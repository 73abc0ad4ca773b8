//! `quire token new`: a new random identity token, printed or written to a private file. Needs no
//! configuration and no vault: it only creates a secret.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context as _;

/// `quire token new --identity NAME [--file FILE]`: a new random identity token (64 hex digits),
/// printed, or written to `file` with mode 0600 and never printed.
pub fn new(identity: &str, file: Option<&Path>) -> anyhow::Result<String> {
    let token = hex::encode(rand::random::<[u8; 32]>());
    match file {
        Some(path) => {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .with_context(|| {
                    format!("cannot create {} (it must not exist yet)", path.display())
                })?;
            out.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| out.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(format!(
                "wrote a new token for {identity:?} to {}\nin the config file: token_file = \"{}\"\n",
                path.display(),
                path.display()
            ))
        }
        None => Ok(format!("{token}\n")),
    }
}
