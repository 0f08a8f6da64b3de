//! Reading a scenario file from disk: only a regular file, at most [`MAX_SCENARIO_BYTES`],
//! and only UTF-8 text.
//!
//! A named pipe blocks a reader until something writes to it, and a character device such as
//! `/dev/zero` never ends: both are refused by their file type before anything is opened or
//! read. The read itself is bounded too, so a file that grows while it is read cannot
//! exhaust memory.

use super::error::{ErrorKind, NonRegularFile, ScenarioError};
use std::fs::{File, FileType, Metadata};
use std::io::Read;
use std::path::Path;

/// The largest scenario file that is read: 16 MiB. The library's scenarios are a few
/// kilobytes; anything near this is not a scenario.
pub const MAX_SCENARIO_BYTES: u64 = 16 * 1024 * 1024;

/// The text of the scenario file at `path`, or an error that names `origin`.
pub(crate) fn read_source(path: &Path, origin: &str) -> Result<String, ScenarioError> {
    let fail = |kind| ScenarioError::new(origin, None, kind);
    // `metadata` follows symbolic links, as opening the file would.
    let metadata = std::fs::metadata(path).map_err(|e| fail(read_error(&e)))?;
    check_metadata(&metadata).map_err(too_large_at_start(origin))?;
    let mut file = File::open(path).map_err(|e| fail(read_error(&e)))?;
    // The path may have been swapped between the two looks: check what was opened.
    let opened = file.metadata().map_err(|e| fail(read_error(&e)))?;
    check_metadata(&opened).map_err(too_large_at_start(origin))?;
    let mut bytes = Vec::new();
    // One byte more than the limit tells a file that grew past it from one that fits.
    (&mut file)
        .take(MAX_SCENARIO_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(read_error(&e)))?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        let kind = ErrorKind::FileTooLarge {
            size_bytes: bytes.len() as u64,
        };
        return Err(ScenarioError::new(origin, Some((1, 1)), kind));
    }
    decode(bytes, origin)
}

/// An error of [`check_metadata`]: a file too large is placed at its start (1:1), as every
/// refusal of a scenario's text is placed; a file that is not a regular file has no text.
fn too_large_at_start(origin: &str) -> impl Fn(ErrorKind) -> ScenarioError + '_ {
    move |kind| {
        let at = matches!(kind, ErrorKind::FileTooLarge { .. }).then_some((1, 1));
        ScenarioError::new(origin, at, kind)
    }
}

fn read_error(error: &std::io::Error) -> ErrorKind {
    ErrorKind::Read {
        reason: super::error::lowercase_first(&error.to_string()),
    }
}

/// Refuses anything but a regular file of at most [`MAX_SCENARIO_BYTES`].
fn check_metadata(metadata: &Metadata) -> Result<(), ErrorKind> {
    if !metadata.is_file() {
        return Err(ErrorKind::NotARegularFile {
            kind: non_regular_kind(&metadata.file_type()),
        });
    }
    if metadata.len() > MAX_SCENARIO_BYTES {
        return Err(ErrorKind::FileTooLarge {
            size_bytes: metadata.len(),
        });
    }
    Ok(())
}

#[cfg(unix)]
fn non_regular_kind(file_type: &FileType) -> NonRegularFile {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        NonRegularFile::Directory
    } else if file_type.is_fifo() {
        NonRegularFile::NamedPipe
    } else if file_type.is_char_device() {
        NonRegularFile::CharacterDevice
    } else if file_type.is_block_device() {
        NonRegularFile::BlockDevice
    } else if file_type.is_socket() {
        NonRegularFile::Socket
    } else {
        NonRegularFile::Other
    }
}

#[cfg(not(unix))]
fn non_regular_kind(file_type: &FileType) -> NonRegularFile {
    if file_type.is_dir() {
        NonRegularFile::Directory
    } else {
        NonRegularFile::Other
    }
}

/// The bytes as text; invalid UTF-8 is an error at the line and column where it starts.
fn decode(bytes: Vec<u8>, origin: &str) -> Result<String, ScenarioError> {
    String::from_utf8(bytes).map_err(|e| {
        let byte_offset = e.utf8_error().valid_up_to();
        // The bytes before the offset are valid UTF-8 by definition of `valid_up_to`.
        let valid = std::str::from_utf8(&e.as_bytes()[..byte_offset]).unwrap_or_default();
        ScenarioError::new(
            origin,
            Some(super::locate::end_position(valid)),
            ErrorKind::InvalidUtf8 { byte_offset },
        )
    })
}
