//! Opening files for reading without ever blocking on, or reading from, something that is not a
//! regular file.
//!
//! A FIFO named `x.md` would block an `open` for reading until a writer appears, and a device node
//! would be read as if it were a note; either in the vault must not stall the index writer or a
//! tool. Every read of a vault file (notes, canvases, attachments re-read for a revision, the
//! `.obsidian` settings) goes through `open_regular`. It never writes.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading if, and only if, it is a regular file (after following symlinks).
/// `Ok(None)` when it exists but is something else (a folder, FIFO, socket or device).
///
/// The path is `stat`ed first so a device node is never opened at all (opening some devices has
/// effects of its own); the open itself is non-blocking (a FIFO swapped in after the `stat` then
/// opens at once instead of waiting for a writer) and the opened file is checked again with
/// `fstat`, so what is read is the very inode that was checked. `O_NONBLOCK` changes nothing for
/// reads of a regular file.
pub fn open_regular(path: &Path) -> io::Result<Option<(File, Metadata)>> {
    if !std::fs::metadata(path)?.is_file() {
        return Ok(None);
    }
    open_checked(path)
}

/// `open_regular` for a caller that has just `stat`ed `path` itself and found a regular file: the
/// open is non-blocking and the opened file is checked with `fstat` all the same.
pub fn open_checked(path: &Path) -> io::Result<Option<(File, Metadata)>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Ok(None);
    }
    Ok(Some((file, metadata)))
}

/// The whole content of `path` if it is a regular file; `Ok(None)` otherwise (see `open_regular`).
pub fn read_regular(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let Some(opened) = open_regular(path)? else {
        return Ok(None);
    };
    Ok(Some(read_opened(opened)?.0))
}

/// The whole content of a file `open_regular` or `open_checked` opened, with the metadata of the
/// very file read.
pub fn read_opened((mut file, metadata): (File, Metadata)) -> io::Result<(Vec<u8>, Metadata)> {
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    read_sized(&mut file, &mut bytes)?;
    Ok((bytes, metadata))
}

/// Reads `file` to its end into `bytes`, whose capacity the caller already sized from the
/// `fstat` it made: `File::read_to_end` would ask the kernel for the size and position again (a
/// `statx` and an `lseek` per file, 20,000 system calls in a cold build of 10,000 notes).
pub fn read_sized(file: &mut File, bytes: &mut Vec<u8>) -> io::Result<usize> {
    // `Take` reads with the generic loop, which uses the spare capacity before it grows.
    file.take(u64::MAX).read_to_end(bytes)
}

/// `read_regular` as text, with anything that is not a regular file reported as an error of kind
/// `InvalidInput`: for settings files, where "unreadable" already means "use the defaults".
pub fn read_regular_to_string(path: &Path) -> io::Result<String> {
    let bytes = read_regular(path)?
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"))?;
    String::from_utf8(bytes).map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))
}
