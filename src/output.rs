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
        let shown = path.display();
        let is_dir_path = path.as_os_str().to_string_lossy().ends_with('/') || path.is_dir();
        if is_dir_path {
            return Err(format!("cannot write to {shown}: it is a directory"));
        }
        let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file());
        let partial = (!special).then(|| {
            let mut name = path
                .file_name()
                .map(|n| n.to_os_string())
                .unwrap_or_default();
            name.push(".partial");
            path.with_file_name(name)
        });
        let target = partial.as_deref().unwrap_or(path);
        let file = std::fs::File::create(target)
            .map_err(|e| format!("cannot write to {shown}: {}", io_message(&e)))?;
        Ok(Self {
            path: path.to_path_buf(),
            partial,
            writer: std::io::BufWriter::with_capacity(1 << 20, file),
            committed: false,
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
            if let Err(e) = std::fs::rename(partial, &self.path) {
                return Err(format!("cannot write to {shown}: {}", io_message(&e)));
            }
        }
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
