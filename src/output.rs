//! Writing to standard output without panicking. `println!` panics when stdout is closed
//! (`splitbrain run ... | head`) or full; the CLI prints through
//! [`outln!`](crate::outln!) instead, which ends the process quietly on a closed pipe and
//! with exit 2 and a message on other errors.

use crate::exit;
use std::io::{ErrorKind, Write};

/// Prints one line to stdout; on failure, ends the process (see the module docs).
#[macro_export]
macro_rules! outln {
    () => { $crate::output::line(format_args!("")) };
    ($($arg:tt)*) => { $crate::output::line(format_args!($($arg)*)) };
}

/// Writes one formatted line to stdout.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() != ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to standard output: {}", io_message(&e));
        }
        std::process::exit(i32::from(exit::BAD_INPUT));
    }
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
/// replace them.
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
fn resolve(path: &std::path::Path) -> Result<Target, String> {
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
        let link = std::fs::read_link(&current)
            .map_err(|e| format!("cannot follow {}: {}", current.display(), io_message(&e)))?;
        // A relative link is relative to its own folder; an absolute one replaces the path.
        current = folder_of(&current).join(link);
    }
    Err(format!(
        "cannot write to {}: too many levels of symbolic links",
        path.display()
    ))
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
    pub fn create(path: &std::path::Path) -> Result<Self, String> {
        Self::open(path, true)
    }

    /// Like [`OutputFile::create`], but never replaces a file: a temporary file left by a
    /// killed writer, or locked by a live one, is an error at once, and a file that appears
    /// at `path` meanwhile is an error at [`OutputFile::commit`] (which then keeps the
    /// temporary file, to lose nothing).
    pub fn create_new(path: &std::path::Path) -> Result<Self, String> {
        Self::open(path, false)
    }

    fn open(path: &std::path::Path, replace: bool) -> Result<Self, String> {
        let shown = path.display();
        let is_dir_path = path.as_os_str().to_string_lossy().ends_with('/') || path.is_dir();
        if is_dir_path {
            return Err(format!("cannot write to {shown}: it is a directory"));
        }
        let (target, partial, file) = match resolve(path)? {
            Target::Through => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .map_err(|e| open_error(path, &e))?;
                (path.to_path_buf(), None, file)
            }
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
    pub fn commit(mut self) -> Result<(), String> {
        let shown = self.path.display().to_string();
        let flushed = self
            .writer
            .flush()
            .and_then(|()| self.writer.get_ref().sync_data().or(Ok(())));
        if let Err(e) = flushed {
            self.discard();
            return Err(format!("cannot write to {shown}: {}", io_message(&e)));
        }
        if let Some(partial) = &self.partial {
            if !self.replace {
                return self.commit_new(partial.clone());
            }
            if let Err(e) = std::fs::rename(partial, &self.target) {
                return Err(open_error(&self.path, &e));
            }
        }
        self.committed = true;
        Ok(())
    }

    /// Moves the temporary file into place only if nothing is there: a hard link fails on an
    /// existing name, where a rename would replace it.
    fn commit_new(&mut self, partial: std::path::PathBuf) -> Result<(), String> {
        let shown = self.path.display().to_string();
        if let Err(e) = std::fs::hard_link(&partial, &self.target) {
            let no_links = e.kind() != std::io::ErrorKind::AlreadyExists && !self.target.exists();
            if no_links && std::fs::rename(&partial, &self.target).is_ok() {
                // A filesystem without hard links: the name was free a moment ago.
                self.committed = true;
                return Ok(());
            }
            // Keep what was written: it is whole, only its name is taken.
            self.committed = true;
            return Err(format!(
                "cannot write to {shown}: {}; what was written is in {}",
                io_message(&e),
                partial.display()
            ));
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
) -> Result<std::fs::File, String> {
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
                format!(
                    "cannot write to {}: {} was left by a run that was killed\n  hint: remove it (no run is writing it), or pass --force to replace it",
                    path.display(),
                    partial.display()
                )
            });
        }
        Err(e) => return Err(open_error(path, &e)),
    };
    // Locked by another writer, or moved into place by it between the open and the lock (a
    // finished file, which this one must not truncate): either way that writer owns it.
    if !lock(&file) || !still_at(&file, partial) {
        return Err(busy(path, partial));
    }
    file.set_len(0).map_err(|e| open_error(path, &e))?;
    Ok(file)
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

fn busy(path: &std::path::Path, partial: &std::path::Path) -> String {
    format!(
        "cannot write to {}: another splitbrain run is writing it (its {} is locked)\n  hint: wait for that run to end, or write to another file (hunt --force replaces only a finished one)",
        path.display(),
        partial.display()
    )
}

/// Refuses, before anything is written, a file name longer than file systems take: its
/// temporary file would be written in full, and only the rename into place would fail.
fn name_fits(path: &std::path::Path, target: &std::path::Path) -> Result<(), String> {
    let bytes = target.file_name().map_or(0, |n| n.as_encoded_bytes().len());
    if bytes <= MAX_NAME_BYTES {
        return Ok(());
    }
    Err(format!(
        "cannot write to {}: file name too long ({bytes} bytes)\n  hint: a name in the path is longer than the file system allows ({MAX_NAME_BYTES} bytes): choose a shorter one",
        path.display()
    ))
}

fn open_error(path: &std::path::Path, e: &std::io::Error) -> String {
    let hint = if is_name_too_long(e) {
        format!("\n  hint: a name in the path is longer than the file system allows ({MAX_NAME_BYTES} bytes): choose a shorter one")
    } else {
        String::new()
    };
    format!(
        "cannot write to {}: {}{hint}",
        path.display(),
        io_message(e)
    )
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

/// A stable 64-bit hash (FNV-1a).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Writes `text` to `path` through an [`OutputFile`].
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), String> {
    let mut file = OutputFile::create(path)?;
    if let Err(e) = file.writer().write_all(text.as_bytes()) {
        file.discard();
        return Err(format!(
            "cannot write to {}: {}",
            path.display(),
            io_message(&e)
        ));
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

/// Refuses a set of paths in which an output names an input or another output.
pub fn distinct_outputs(
    inputs: &[(&str, &std::path::Path)],
    outputs: &[(&str, &std::path::Path)],
) -> Result<(), String> {
    for (i, (what, out)) in outputs.iter().enumerate() {
        // The temporary file written first counts too: it would be truncated.
        let partial = atomic_partial(out).unwrap_or_else(|| partial_path(out));
        for (other_what, other) in inputs.iter().chain(&outputs[..i]) {
            let written = if same_file(out, other) {
                out.to_path_buf()
            } else if same_file(&partial, other) {
                partial.clone()
            } else {
                continue;
            };
            let shown = if written == *out {
                format!("{what} {}", out.display())
            } else {
                format!(
                    "{what} {} (written first as {})",
                    out.display(),
                    written.display()
                )
            };
            return Err(format!(
                "error: {shown} is also the {other_what}: writing it would destroy the other\n  hint: give every output its own file"
            ));
        }
    }
    Ok(())
}

/// Refuses, before any work, an output file that cannot be created: its folder is missing
/// or not a folder, or the path is a folder. (Whether the disk has room is known only when
/// writing.)
pub fn check_can_create(what: &str, path: &std::path::Path) -> Result<(), String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(format!(
            "error: {what} {shown}: it is a folder\n  hint: name a file, like {what} hunt.xml"
        ));
    }
    check_name_lengths(what, path)?;
    if let Ok(Target::File(target)) = resolve(path) {
        name_fits(path, &target).map_err(|e| format!("error: {what}: {e}"))?;
    }
    let folder = folder_of(path);
    if !folder.is_dir() {
        return Err(format!(
            "error: {what} {shown}: the folder {} does not exist\n  hint: create it first, or name a file in an existing folder",
            folder.display()
        ));
    }
    Ok(())
}

/// Whether `e` says a name is too long (a file name past 255 bytes, or a path past the
/// system's limit: `ENAMETOOLONG`), where freeing space or retrying cannot help.
pub fn is_name_too_long(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::InvalidFilename
}

/// Refuses, before any work, a path with a name (a folder's or the file's) longer than file
/// systems take: the error would come only when the output is written, after the run.
pub fn check_name_lengths(what: &str, path: &std::path::Path) -> Result<(), String> {
    let too_long = path
        .components()
        .map(|c| c.as_os_str().as_encoded_bytes().len())
        .find(|&bytes| bytes > MAX_NAME_BYTES);
    match too_long {
        None => Ok(()),
        Some(bytes) => Err(format!(
            "error: {what} {}: a name in it is {bytes} bytes, longer than file systems allow ({MAX_NAME_BYTES})\n  hint: choose a shorter name",
            path.display()
        )),
    }
}
