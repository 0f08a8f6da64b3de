//! Writing to standard output without panicking. `println!` panics when stdout is closed
//! (`splitbrain run ... | head`) or full; the CLI prints through
//! [`outln!`](crate::outln!) instead, which ends the process quietly on a closed pipe and
//! with exit 2 and a message on other errors. Also the checks of output paths the commands
//! make before any work; the files themselves are written by `splitbrain_reports::file`.

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

pub use splitbrain_reports::file::{
    atomic_partial, folder_of, io_message, is_name_too_long, partial_path, same_file, write_file,
    OutputFile, MAX_NAME_BYTES,
};

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
    splitbrain_reports::file::check_name_fits(path).map_err(|e| format!("error: {what}: {e}"))?;
    let folder = folder_of(path);
    if !folder.is_dir() {
        return Err(format!(
            "error: {what} {shown}: the folder {} does not exist\n  hint: create it first, or name a file in an existing folder",
            folder.display()
        ));
    }
    Ok(())
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
