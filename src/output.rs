//! Writing to standard output without panicking. `println!` panics when stdout is closed
//! (`splitbrain run ... | head`) or full; the CLI prints through [`outln!`] instead, which
//! ends the process quietly on a closed pipe and with exit 2 and a message on other errors.

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
/// [`OutputFile::commit`], so an error never leaves a half-written file. Devices, FIFOs and
/// symbolic links (`/dev/stdout`, a named pipe) are written through instead: renaming over
/// them would replace them.
pub struct OutputFile {
    path: std::path::PathBuf,
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

impl OutputFile {
    /// Opens `path` for writing. A directory (or a path ending in `/`) is an error.
    pub fn create(path: &std::path::Path) -> Result<Self, String> {
        Self::open(path, true)
    }

    /// Like [`OutputFile::create`], but never replaces a file: another writer's temporary
    /// file (two hunts given one `--jsonl` path) is an error at once, and a file that
    /// appears at `path` meanwhile is an error at [`OutputFile::commit`] (which then keeps
    /// the temporary file, to lose nothing).
    pub fn create_new(path: &std::path::Path) -> Result<Self, String> {
        Self::open(path, false)
    }

    fn open(path: &std::path::Path, replace: bool) -> Result<Self, String> {
        let shown = path.display();
        let is_dir_path = path.as_os_str().to_string_lossy().ends_with('/') || path.is_dir();
        if is_dir_path {
            return Err(format!("cannot write to {shown}: it is a directory"));
        }
        let partial = atomic_partial(path);
        let target = partial.as_deref().unwrap_or(path);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .create_new(!replace && partial.is_some())
            .open(target)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => format!(
                    "cannot write to {shown}: {} exists: another run is writing it, or one was killed\n  hint: remove it if no run is writing {shown}",
                    target.display()
                ),
                _ => format!("cannot write to {shown}: {}", io_message(&e)),
            })?;
        Ok(Self {
            path: path.to_path_buf(),
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
            if let Err(e) = std::fs::rename(partial, &self.path) {
                return Err(format!("cannot write to {shown}: {}", io_message(&e)));
            }
        }
        self.committed = true;
        Ok(())
    }

    /// Moves the temporary file into place only if nothing is there: a hard link fails on an
    /// existing name, where a rename would replace it.
    fn commit_new(&mut self, partial: std::path::PathBuf) -> Result<(), String> {
        let shown = self.path.display().to_string();
        if let Err(e) = std::fs::hard_link(&partial, &self.path) {
            let no_links = e.kind() != std::io::ErrorKind::AlreadyExists && !self.path.exists();
            if no_links && std::fs::rename(&partial, &self.path).is_ok() {
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

/// The temporary file an [`OutputFile`] at `path` writes first, or `None` when it writes
/// through (a device, a FIFO, a symbolic link: renaming over them would replace them).
pub fn atomic_partial(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file());
    (!special).then(|| partial_path(path))
}

/// The temporary file an [`OutputFile`] at `path` writes before moving it into place:
/// `NAME.partial` beside it.
pub fn partial_path(path: &std::path::Path) -> std::path::PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".partial");
    path.with_file_name(name)
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
        let partial = partial_path(out);
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
    let folder = folder_of(path);
    if !folder.is_dir() {
        return Err(format!(
            "error: {what} {shown}: the folder {} does not exist\n  hint: create it first, or name a file in an existing folder",
            folder.display()
        ));
    }
    Ok(())
}
