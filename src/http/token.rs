//! The owner's bearer token (and other state-directory secrets): created once with the OS random generator, kept in the state
//! directory with mode 0600 so client configurations keep working across restarts.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::config::SecretFileError;

const FILE_NAME: &str = "owner-token";
const MIN_TOKEN_CHARS: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read or create the secret at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "the secret at {path} is shorter than {MIN_TOKEN_CHARS} characters; delete the file and restart to create a new one"
    )]
    TooShort { path: PathBuf },
    #[error("the secret at {path} is readable by other users (mode {mode:o}); run chmod 600 on it")]
    Exposed { path: PathBuf, mode: u32 },
}

/// Returns the token and whether it was just created.
pub fn load_or_create_owner_token(state_dir: &Path) -> Result<(String, bool), TokenError> {
    load_or_create_secret(state_dir, FILE_NAME)
}

/// A random secret (64 hex digits) kept in `state_dir/file_name` with mode 0600, created on
/// first use; also the OAuth server's key material.
pub fn load_or_create_secret(
    state_dir: &Path,
    file_name: &str,
) -> Result<(String, bool), TokenError> {
    let path = state_dir.join(file_name);
    let io_error = |source| TokenError::Io {
        path: path.clone(),
        source,
    };
    match crate::config::read_secret_file(&path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if token.len() < MIN_TOKEN_CHARS {
                return Err(TokenError::TooShort { path });
            }
            Ok((token, false))
        }
        Err(SecretFileError::Exposed { mode }) => Err(TokenError::Exposed { path, mode }),
        Err(SecretFileError::Io(error)) if error.kind() == io::ErrorKind::NotFound => {
            let token = hex::encode(rand::random::<[u8; 32]>());
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(io_error)?;
            file.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| file.sync_all())
                .map_err(io_error)?;
            Ok((token, true))
        }
        Err(SecretFileError::Io(error)) => Err(io_error(error)),
    }
}
