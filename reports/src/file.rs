//! Writing one output file safely: to a temporary file beside it, locked while written, and
//! renamed into place ([`OutputFile`]), so that an error or a second writer never leaves a
//! half-written or truncated file. Errors are [`FileError`]s, whose messages are lowercase
//! fragments (a hint on its own line) for the CLI to print after `error: `.

use std::io::Write;
use std::path::PathBuf;

/// Why an output file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A symbolic link on the way could not be read.
    #[error("cannot follow {}: {}", .link.display(), io_message(.source))]
    Follow {
        /// The link.
        link: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// More symbolic links than Linux follows.
    #[error("cannot write to {}: too many levels of symbolic links", .path.display())]
    TooManyLinks {
        /// The output's path.
        path: PathBuf,
    },
    /// The path names a directory (or ends in `/`).
    #[error("cannot write to {}: it is a directory", .path.display())]
    IsDirectory {
        /// The output's path.
        path: PathBuf,
    },
    /// Opening (or renaming into place) failed.
    #[error("cannot write to {}: {}{}", .path.display(), io_message(.source), name_hint(.source))]
    Open {
        /// The output's path.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// Writing or flushing failed (a full disk, a failing device).
    #[error("cannot write to {}: {}", .path.display(), io_message(.source))]
    Write {
        /// The output's path.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
    /// A file appeared at the path while an output that must not replace one was written;
    /// what was written is kept in the temporary file.
    #[error("cannot write to {}: {}; what was written is in {}", .path.display(), io_message(.source), .partial.display())]
    NameTaken {
        /// The output's path.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
        /// The temporary file, kept.
        partial: PathBuf,
    },
    /// The temporary file of a writer that was killed is in the way.
    #[error("cannot write to {}: {} was left by a run that was killed\n  hint: remove it (no run is writing it), or pass --force to replace it", .path.display(), .partial.display())]
    LeftByKilledRun {
        /// The output's path.
        path: PathBuf,
        /// The temporary file left.
        partial: PathBuf,
    },
    /// Another writer holds the temporary file locked.
    #[error("cannot write to {}: another splitbrain run is writing it (its {} is locked)\n  hint: wait for that run to end, or write to another file (hunt --force replaces only a finished one)", .path.display(), .partial.display())]
    Busy {
        /// The output's path.
        path: PathBuf,
        /// The locked temporary file.
        partial: PathBuf,
    },
    /// A FIFO that nobody has open for reading: writing it would wait for a reader.
    #[error("cannot write to {}: it is a named pipe (FIFO) that nobody is reading\n  hint: start its reader first (it may wait for the writer, as `cat {} &` does), or name a regular file", .path.display(), .path.display())]
    NoReader {
        /// The output's path.
        path: PathBuf,
    },
    /// The file's name is longer than file systems take.
    #[error("cannot write to {}: file name too long ({bytes} bytes)\n  hint: a name in the path is longer than the file system allows ({MAX_NAME_BYTES} bytes): choose a shorter one", .path.display())]
    NameTooLong {
        /// The output's path.
        path: PathBuf,
        /// The length of the file's name, in bytes.
        bytes: usize,
    },
}

/// An I/O error as a lowercase message fragment (STYLE.md), without the OS's capital letter.
pub fn io_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// A file being written: to a temporary file beside the target, renamed into place by
/// [`OutputFile::commit`], so an error never leaves a half-written file. A symbolic link is
/// followed to the file it names, which is then written like any file (the link stays, and a
/// file that must not be replaced is refused through it too). Devices, FIFOs and open file
/// descriptors (`/dev/stdout`, a named pipe) are written through: renaming over them would
/// replace them. A FIFO that nobody reads is refused at once rather than waited on.
///
/// The temporary file is locked while it is written, so that a second writer of the same
/// path (two hunts given one `--jsonl`, even with `--force`) is refused instead of truncating
/// or removing the first one's file.
pub struct OutputFile {
    /// The path as given, for messages.
    path: std::path::PathBuf,
    /// The file written: `path`, its symbolic links followed.
    target: std::path::PathBuf,
    /// The temporary file, when writing atomically.
    partial: Option<std::path::PathBuf>,
    writer: std::io::BufWriter<std::fs::File>,
    /// Moved into place; otherwise dropping the file removes the temporary one.
    committed: bool,
    /// Whether an existing target may be replaced (otherwise the temporary file is created
    /// only if absent, and moved into place only if the target is still absent).
    replace: bool,
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.committed {
            self.discard();
        }
    }
}

/// Where an output is written.
enum Target {
    /// A regular file, existing or not, reached by following symbolic links: written beside
    /// it as `NAME.partial` and renamed onto it.
    File(std::path::PathBuf),
    /// A device, a FIFO, a socket or an open file descriptor: written in place.
    Through,
}

/// How many symbolic links are followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Follows `path`'s symbolic links to what an output there writes.
fn resolve(path: &std::path::Path) -> Result<Target, FileError> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if is_descriptor(&current) {
            return Ok(Target::Through);
        }
        let Ok(meta) = std::fs::symlink_metadata(&current) else {
            return Ok(Target::File(current)); // absent: it is created
        };
        if meta.is_file() {
            return Ok(Target::File(current));
        }
        if !meta.file_type().is_symlink() {
            return Ok(Target::Through);
        }
        let link = std::fs::read_link(&current).map_err(|source| FileError::Follow {
            link: current.clone(),
            source,
        })?;
        // A relative link is relative to its own folder; an absolute one replaces the path.
        current = folder_of(&current).join(link);
    }
    Err(FileError::TooManyLinks {
        path: path.to_path_buf(),
    })
}

/// Whether `path` is one of this process's open files (`/proc/self/fd/1`, which
/// `/dev/stdout` and `/dev/fd/1` lead to): the shell's redirection, written in place.
fn is_descriptor(path: &std::path::Path) -> bool {
    folder_of(path)
        .canonicalize()
        .is_ok_and(|folder| folder.starts_with("/proc"))
}

impl OutputFile {
    /// Opens `path` for writing. A directory (or a path ending in `/`) is an error.
    pub fn create(path: &std::path::Path) -> Result<Self, FileError> {
        Self::open(path, true)
    }

    /// Like [`OutputFile::create`], but never replaces a file: a temporary file left by a
    /// killed writer, or locked by a live one, is an error at once, and a file that appears
    /// at `path` meanwhile is an error at [`OutputFile::commit`] (which then keeps the
    /// temporary file, to lose nothing).
    pub fn create_new(path: &std::path::Path) -> Result<Self, FileError> {
        Self::open(path, false)
    }

    fn open(path: &std::path::Path, replace: bool) -> Result<Self, FileError> {
        let is_dir_path = path.as_os_str().to_string_lossy().ends_with('/') || path.is_dir();
        if is_dir_path {
            return Err(FileError::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        let (target, partial, file) = match resolve(path)? {
            Target::Through => (path.to_path_buf(), None, open_through(path)?),
            Target::File(target) => {
                name_fits(path, &target)?;
                let partial = partial_path(&target);
                let file = open_partial(path, &partial, replace)?;
                (target, Some(partial), file)
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            target,
            partial,
            writer: std::io::BufWriter::with_capacity(1 << 20, file),
            committed: false,
            replace,
        })
    }

    /// The buffered writer.
    pub fn writer(&mut self) -> &mut std::io::BufWriter<std::fs::File> {
        &mut self.writer
    }

    /// Flushes and moves the file into place; on failure nothing is left behind (the temporary
    /// file is removed when `self` drops).
    pub fn commit(mut self) -> Result<(), FileError> {
        let flushed = self
            .writer
            .flush()
            .and_then(|()| self.writer.get_ref().sync_data().or(Ok(())));
        if let Err(source) = flushed {
            self.discard();
            return Err(FileError::Write {
                path: self.path.clone(),
                source,
            });
        }
        if let Some(partial) = &self.partial {
            if !self.replace {
                return self.commit_new(partial.clone());
            }
            if let Err(e) = std::fs::rename(partial, &self.target) {
                return Err(open_error(&self.path, e));
            }
        }
        self.committed = true;
        Ok(())
    }

    /// Moves the temporary file into place only if nothing is there: a hard link fails on an
    /// existing name, where a rename would replace it.
    fn commit_new(&mut self, partial: std::path::PathBuf) -> Result<(), FileError> {
        if let Err(e) = std::fs::hard_link(&partial, &self.target) {
            let no_links = e.kind() != std::io::ErrorKind::AlreadyExists && !self.target.exists();
            if no_links && std::fs::rename(&partial, &self.target).is_ok() {
                // A filesystem without hard links: the name was free a moment ago.
                self.committed = true;
                return Ok(());
            }
            // Keep what was written: it is whole, only its name is taken.
            self.committed = true;
            return Err(FileError::NameTaken {
                path: self.path.clone(),
                source: e,
                partial,
            });
        }
        let _ = std::fs::remove_file(&partial);
        self.committed = true;
        Ok(())
    }

    /// Drops what was written (the temporary file, when writing atomically).
    pub fn discard(&self) {
        if let Some(partial) = &self.partial {
            let _ = std::fs::remove_file(partial);
        }
    }
}

/// The folder `path` is in: its parent, or `.` for a bare file name.
pub fn folder_of(path: &std::path::Path) -> &std::path::Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    }
}

/// The temporary file an [`OutputFile`] at `path` writes first (beside the file its symbolic
/// links lead to), or `None` when it writes through (a device, a FIFO, `/dev/stdout`).
pub fn atomic_partial(path: &std::path::Path) -> Option<std::path::PathBuf> {
    match resolve(path) {
        Ok(Target::File(target)) => Some(partial_path(&target)),
        _ => None,
    }
}

/// The regular file that writing `path` would replace, its symbolic links followed; `None`
/// when nothing is there or the path is written through (a device, a FIFO).
pub fn existing_file(path: &std::path::Path) -> Option<std::path::PathBuf> {
    match resolve(path) {
        Ok(Target::File(target)) if target.is_file() => Some(target),
        _ => None,
    }
}

/// Opens the temporary file `partial` of the output `path` and locks it: a file another
/// writer holds locked is refused, whatever `replace` says. Without `replace`, a temporary
/// file left by a killed writer is refused too; with it, that file is taken over.
fn open_partial(
    path: &std::path::Path,
    partial: &std::path::Path,
    replace: bool,
) -> Result<std::fs::File, FileError> {
    // Not truncated on opening: it may be another writer's, until the lock says otherwise.
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(replace)
        .create_new(!replace)
        .open(partial);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let held = std::fs::OpenOptions::new()
                .write(true)
                .open(partial)
                .is_ok_and(|f| !lock(&f));
            return Err(if held {
                busy(path, partial)
            } else {
                FileError::LeftByKilledRun {
                    path: path.to_path_buf(),
                    partial: partial.to_path_buf(),
                }
            });
        }
        Err(e) => return Err(open_error(path, e)),
    };
    // Locked by another writer, or moved into place by it between the open and the lock (a
    // finished file, which this one must not truncate): either way that writer owns it.
    if !lock(&file) || !still_at(&file, partial) {
        return Err(busy(path, partial));
    }
    file.set_len(0).map_err(|e| open_error(path, e))?;
    Ok(file)
}

/// Opens a device, a FIFO or an open descriptor to write in place. A FIFO is opened without
/// waiting for a reader (`O_NONBLOCK`): one that nobody has open for reading is an error at
/// once ([`FileError::NoReader`]), not a wait before any work is done. Its writes then block
/// again, so that a slow reader slows the writer down instead of failing it.
fn open_through(path: &std::path::Path) -> Result<std::fs::File, FileError> {
    let fifo = is_fifo(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if fifo {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if fifo && is_no_reader(&e) => {
            return Err(FileError::NoReader {
                path: path.to_path_buf(),
            })
        }
        Err(e) => return Err(open_error(path, e)),
    };
    if fifo {
        blocking_writes(&file).map_err(|e| open_error(path, e))?;
    }
    Ok(file)
}

/// Whether `path` is a FIFO (a named pipe, or a pipe reached through `/proc/self/fd`).
#[cfg(unix)]
fn is_fifo(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[cfg(not(unix))]
fn is_fifo(_path: &std::path::Path) -> bool {
    false
}

/// `open(2)`'s answer for a FIFO opened to write without blocking while nobody reads it.
#[cfg(unix)]
fn is_no_reader(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENXIO)
}

#[cfg(not(unix))]
fn is_no_reader(_e: &std::io::Error) -> bool {
    false
}

/// Clears `O_NONBLOCK` on `file` (its own open file description: nobody else's changes).
#[cfg(unix)]
fn blocking_writes(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the lifetime of `file`; F_GETFL and F_SETFL take no pointer.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn blocking_writes(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// Takes the exclusive lock of `file`; false when another open file holds it. A file system
/// without locks (some network ones) is written unlocked, as before locks existed.
fn lock(file: &std::fs::File) -> bool {
    match file.try_lock() {
        Ok(()) => true,
        Err(std::fs::TryLockError::WouldBlock) => false,
        Err(std::fs::TryLockError::Error(_)) => true,
    }
}

/// Whether the open `file` is still the one named `path`.
#[cfg(unix)]
fn still_at(file: &std::fs::File, path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_at(_file: &std::fs::File, _path: &std::path::Path) -> bool {
    true
}

fn busy(path: &std::path::Path, partial: &std::path::Path) -> FileError {
    FileError::Busy {
        path: path.to_path_buf(),
        partial: partial.to_path_buf(),
    }
}

/// Refuses, before anything is written, a file name longer than file systems take: its
/// temporary file would be written in full, and only the rename into place would fail.
fn name_fits(path: &std::path::Path, target: &std::path::Path) -> Result<(), FileError> {
    let bytes = target.file_name().map_or(0, |n| n.as_encoded_bytes().len());
    if bytes <= MAX_NAME_BYTES {
        return Ok(());
    }
    Err(FileError::NameTooLong {
        path: path.to_path_buf(),
        bytes,
    })
}

/// Refuses, before anything is written, an output `path` whose file (its symbolic links
/// followed) has a name longer than file systems take ([`FileError::NameTooLong`]).
pub fn check_name_fits(path: &std::path::Path) -> Result<(), FileError> {
    match resolve(path) {
        Ok(Target::File(target)) => name_fits(path, &target),
        _ => Ok(()),
    }
}

fn open_error(path: &std::path::Path, source: std::io::Error) -> FileError {
    FileError::Open {
        path: path.to_path_buf(),
        source,
    }
}

/// The hint of an error that opening a file too long a name gives, or nothing.
fn name_hint(e: &std::io::Error) -> String {
    if is_name_too_long(e) {
        format!("\n  hint: a name in the path is longer than the file system allows ({MAX_NAME_BYTES} bytes): choose a shorter one")
    } else {
        String::new()
    }
}

/// The temporary file an [`OutputFile`] at `path` writes before moving it into place:
/// `NAME.partial` beside it. A name too long for `.partial` to fit the file system's 255
/// bytes is cut and followed by a hash of the whole name, so that the output still has one
/// temporary file of its own (the same for every writer, whose lock it is).
pub fn partial_path(path: &std::path::Path) -> std::path::PathBuf {
    const SUFFIX: &str = ".partial";
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let bytes = name.as_encoded_bytes();
    let mut partial = if bytes.len() + SUFFIX.len() <= MAX_NAME_BYTES {
        name.clone()
    } else {
        let text = name.to_string_lossy();
        let hash = format!("~{:016x}", fnv1a(bytes));
        let room = MAX_NAME_BYTES - SUFFIX.len() - hash.len();
        let cut = (0..=room)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        std::ffi::OsString::from(format!("{}{hash}", &text[..cut]))
    };
    partial.push(SUFFIX);
    path.with_file_name(partial)
}

/// The longest file name common file systems take (ext4, XFS, Btrfs, tmpfs, APFS), in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// A stable 64-bit hash (FNV-1a): the same for the same bytes on every platform and version,
/// for names and fingerprints that must not change between runs.
///
/// ```
/// assert_eq!(splitbrain_reports::file::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
/// ```
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Writes `text` to `path` through an [`OutputFile`].
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), FileError> {
    let mut file = OutputFile::create(path)?;
    if let Err(source) = file.writer().write_all(text.as_bytes()) {
        file.discard();
        return Err(FileError::Write {
            path: path.to_path_buf(),
            source,
        });
    }
    file.commit()
}

/// Whether two paths name the same file (or would, once written): compared by their
/// canonical folder and file name, so `./a.jsonl` and `out/../a.jsonl` are one.
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    fn key(p: &std::path::Path) -> Option<std::path::PathBuf> {
        if let Ok(full) = p.canonicalize() {
            return Some(full);
        }
        let parent = match p.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.canonicalize().ok()?,
            _ => std::env::current_dir().ok()?,
        };
        Some(parent.join(p.file_name()?))
    }
    match (key(a), key(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Whether `e` says a name is too long (a file name past 255 bytes, or a path past the
/// system's limit: `ENAMETOOLONG`), where freeing space or retrying cannot help.
pub fn is_name_too_long(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::InvalidFilename
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("splitbrain-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_written_file_is_whole_and_leaves_no_temporary_file() {
        let dir = scratch("whole");
        let path = dir.join("out.txt");
        std::fs::write(&path, "old and longer").unwrap();
        write_file(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(!partial_path(&path).exists());
    }

    #[test]
    fn a_second_writer_of_the_same_path_is_refused_while_the_first_writes() {
        let dir = scratch("busy");
        let path = dir.join("out.jsonl");
        let first = OutputFile::create(&path).unwrap();
        let second = OutputFile::create(&path).err().expect("refused");
        assert!(matches!(second, FileError::Busy { .. }), "{second:?}");
        assert!(second
            .to_string()
            .contains("another splitbrain run is writing it"));
        first.commit().unwrap();
        assert!(path.is_file());
    }

    #[test]
    fn create_new_refuses_what_a_killed_writer_left() {
        let dir = scratch("killed");
        let path = dir.join("out.jsonl");
        std::fs::write(partial_path(&path), "half").unwrap();
        let e = OutputFile::create_new(&path).err().expect("refused");
        assert_eq!(
            e.to_string(),
            format!(
                "cannot write to {}: {} was left by a run that was killed\n  hint: remove it (no run is writing it), or pass --force to replace it",
                path.display(),
                partial_path(&path).display()
            )
        );
    }

    #[test]
    fn a_directory_is_refused_and_a_dropped_file_leaves_nothing() {
        let dir = scratch("dir");
        let e = OutputFile::create(&dir).err().expect("refused");
        assert_eq!(
            e.to_string(),
            format!("cannot write to {}: it is a directory", dir.display())
        );
        let path = dir.join("dropped.txt");
        drop(OutputFile::create(&path).unwrap());
        assert!(!path.exists());
        assert!(!partial_path(&path).exists());
    }

    #[test]
    fn the_temporary_name_of_a_long_name_fits_and_stays_its_own() {
        let a = PathBuf::from(format!("{}a", "x".repeat(250)));
        let b = PathBuf::from(format!("{}b", "x".repeat(250)));
        let (pa, pb) = (partial_path(&a), partial_path(&b));
        assert!(pa.as_os_str().len() <= MAX_NAME_BYTES);
        assert!(pa.to_string_lossy().ends_with(".partial"));
        assert_ne!(pa, pb);
        assert_eq!(
            partial_path(Path::new("h.jsonl")),
            Path::new("h.jsonl.partial")
        );
    }
}
