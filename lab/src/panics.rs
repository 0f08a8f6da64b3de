//! A panic inside one seed's run is a bug in splitbrain, and `hunt`, `compare` and `sweep`
//! report it as that run's failure (with the panic's message and place) instead of dying with
//! every other seed's result. Outside a seed's run, panics behave as usual.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Set while this thread runs a seed; the hook leaves the panic's text here.
    static IN_SEED: Cell<bool> = const { Cell::new(false) };
    static MESSAGE: Cell<Option<String>> = const { Cell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once per process) a panic hook that, inside [`catch`], records the message and
/// place instead of printing them; elsewhere it defers to the hook that was there before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_SEED.with(Cell::get) {
                let place = info
                    .location()
                    .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                let text = payload_text(info.payload());
                MESSAGE.with(|m| m.set(Some(format!("panicked{place}: {text}"))));
            } else {
                previous(info);
            }
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// A panic caught by [`catch`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Panicked {
    /// `panicked at FILE:LINE:COLUMN: MESSAGE`.
    pub message: String,
}

/// Runs `work`; a panic in it comes back as `Err` with its message and place.
pub fn catch<T>(work: impl FnOnce() -> T) -> Result<T, Panicked> {
    install_hook();
    let was_in_seed = IN_SEED.with(|f| f.replace(true));
    let _ = splitbrain_sim::take_handler_panic();
    let result = panic::catch_unwind(AssertUnwindSafe(work));
    IN_SEED.with(|f| f.set(was_in_seed));
    result.map_err(|payload| {
        let message = MESSAGE
            .with(Cell::take)
            .unwrap_or_else(|| format!("panicked: {}", payload_text(payload.as_ref())));
        // A process's handler panicked: say which node, event and time (the engine left it).
        let message = match splitbrain_sim::take_handler_panic() {
            Some(handling) => format!("{handling}: {message}"),
            None => message,
        };
        Panicked { message }
    })
}

#[cfg(test)]
mod tests {
    use super::catch;

    #[test]
    fn a_panic_comes_back_as_its_message_and_place() {
        let caught = catch(|| -> u32 { panic!("boom {}", 7) })
            .unwrap_err()
            .message;
        assert!(caught.contains("boom 7"), "{caught}");
        assert!(caught.contains("src/panics.rs:"), "{caught}");
        assert_eq!(catch(|| 5).unwrap(), 5);
    }
}
