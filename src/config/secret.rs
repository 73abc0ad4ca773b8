//! Secret files (identity tokens, the owner token, the OAuth key): the one rule for reading a
//! file that holds a secret, so no caller reads one that other users may read too.

use std::path::Path;

/// Why a secret file was not used.
#[derive(Debug)]
pub enum SecretFileError {
    Io(std::io::Error),
    /// Users other than the owner may read it; the mode is given without the file-type bits.
    Exposed {
        mode: u32,
    },
}

/// Reads a file holding a secret (a token or key), refusing one that other users may read.
///
/// The one rule for every secret file (the owner token, the OAuth key, identity tokens): no
/// permission for "others", and no permission for the group unless the file carries a POSIX ACL.
/// With an ACL the group bits of the mode are the ACL's mask, not the owning group's access:
/// systemd's `LoadCredential=` hands a service its credentials as root-owned 0400 files with an ACL
/// entry for the service's user, which `stat` reports as 0440, and those must stay usable. The
/// mode is read from the opened file, so the check and the read concern the same inode.
pub fn read_secret_file(path: &Path) -> Result<String, SecretFileError> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let mut file = std::fs::File::open(path).map_err(SecretFileError::Io)?;
    let mode = file
        .metadata()
        .map_err(SecretFileError::Io)?
        .permissions()
        .mode()
        & 0o777;
    let group_bits_are_an_acl_mask = || {
        let mut value = [0u8; 256];
        match rustix::fs::fgetxattr(&file, "system.posix_acl_access", &mut value[..]) {
            Ok(_) => true,
            // The ACL exists but is longer than the buffer.
            Err(error) => error == rustix::io::Errno::RANGE,
        }
    };
    if mode & 0o007 != 0 || (mode & 0o070 != 0 && !group_bits_are_an_acl_mask()) {
        return Err(SecretFileError::Exposed { mode });
    }
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(SecretFileError::Io)?;
    Ok(text)
}
