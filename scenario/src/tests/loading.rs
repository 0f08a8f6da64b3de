//! Reading scenario files from disk: only regular files, of bounded size, in UTF-8.

use super::*;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// A directory of its own under the system temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("splitbrain-loading-{}-{label}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create the scratch directory");
        Self(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `load(path)`, on a thread of its own: a loader that blocks (as it did on a named pipe)
/// fails the test instead of hanging it. The limit is a guard, not a timing assertion.
fn load_or_hang(path: &Path) -> Result<Scenario, ScenarioError> {
    let (sender, receiver) = mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = sender.send(load(&path));
    });
    receiver
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("load blocked on a file that is not a regular file"))
}

fn kind_of(result: Result<Scenario, ScenarioError>) -> ErrorKind {
    match result {
        Ok(scenario) => panic!("expected an error, got {scenario:#?}"),
        Err(error) => {
            // A file too large is placed at its start; one that is not a file has no text.
            let at_start = matches!(*error.kind, ErrorKind::FileTooLarge { .. });
            assert_eq!(error.location, at_start.then_some((1, 1)), "{error}");
            assert!(error.hint().is_some(), "{error}");
            *error.kind
        }
    }
}

#[test]
fn a_named_pipe_is_refused_before_it_is_opened() {
    let scratch = Scratch::new("fifo");
    let fifo = scratch.0.join("scenario.ron");
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {}
        other => {
            eprintln!("skipped: mkfifo is not available here ({other:?})");
            return;
        }
    }
    assert_eq!(
        kind_of(load_or_hang(&fifo)),
        ErrorKind::NotARegularFile {
            kind: NonRegularFile::NamedPipe
        }
    );
}

#[cfg(unix)]
#[test]
fn a_character_device_that_never_ends_is_refused() {
    let zero = Path::new("/dev/zero");
    if !zero.exists() {
        eprintln!("skipped: no /dev/zero here");
        return;
    }
    let error = load_or_hang(zero).unwrap_err();
    assert_eq!(
        error.to_string(),
        "/dev/zero: the scenario is a character device, not a regular file\n  hint: give the \
         path of a `.ron` file; to use text from a pipe or a device, save it to a file first"
    );
}

#[test]
fn a_directory_is_refused_with_a_hint_on_listing_it() {
    let scratch = Scratch::new("dir");
    let error = load(&scratch.0).unwrap_err();
    assert_eq!(
        *error.kind,
        ErrorKind::NotARegularFile {
            kind: NonRegularFile::Directory
        }
    );
    assert!(
        error.to_string().contains("hint: give a `.ron` file"),
        "{error}"
    );
}

#[test]
fn a_file_over_the_size_limit_is_refused_without_reading_it() {
    let scratch = Scratch::new("big");
    let path = scratch.0.join("big.ron");
    let file = std::fs::File::create(&path).expect("create");
    // Sparse: no disk space, and reading it would allocate the whole size.
    file.set_len(MAX_SCENARIO_BYTES + 1).expect("set_len");
    assert_eq!(
        kind_of(load(&path)),
        ErrorKind::FileTooLarge {
            size_bytes: MAX_SCENARIO_BYTES + 1
        }
    );
}

#[test]
fn a_file_at_the_size_limit_is_read() {
    let scratch = Scratch::new("at-limit");
    let path = scratch.0.join("padded.ron");
    let scenario = "Scenario(algorithm: Raft())";
    let padding = " ".repeat(MAX_SCENARIO_BYTES as usize - scenario.len());
    std::fs::write(&path, format!("{scenario}{padding}")).expect("write");
    assert_eq!(load(&path).expect("valid").name, "padded");
}

#[test]
fn invalid_utf8_is_reported_at_its_byte_offset_line_and_column() {
    let scratch = Scratch::new("utf8");
    let path = scratch.0.join("latin1.ron");
    // `é` is two bytes and one column; the invalid byte 0xff follows it on line 2.
    std::fs::write(&path, b"Scenario(\n  name: \"caf\xc3\xa9\xff\",\n)").expect("write");
    let error = load(&path).unwrap_err();
    assert_eq!(*error.kind, ErrorKind::InvalidUtf8 { byte_offset: 24 });
    assert_eq!(error.location, Some((2, 14)));
    assert!(
        error.to_string().ends_with("hint: save the file as UTF-8 (RON is UTF-8 text); the line and column point at the first invalid byte"),
        "{error}"
    );
}
