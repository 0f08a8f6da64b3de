//! SIGINT, SIGTERM and SIGHUP during a hunt. Before the hunt has anything to keep (its
//! outputs are not open yet), the first one ends the process at once, whatever it was
//! waiting for. From [`Interrupt::keep_results`] on, the first one lets the hunt finish its
//! batch, keep its records and print a partial summary, then exit; a second one ends the
//! process at once. Either way the exit code is the conventional 128 + signal (130 for
//! Ctrl-C, 143 for SIGTERM), so a CI job killed at its timeout never reads as green.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The signals a hunt stops for.
const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Whether (and by which signal) the process was asked to stop.
#[derive(Clone)]
pub struct Interrupt {
    received: Arc<AtomicUsize>,
    /// Whether the next signal ends the process at once.
    armed: Arc<AtomicBool>,
}

impl Interrupt {
    /// Installs the handlers (once per process; later calls share them), armed: until
    /// [`Interrupt::keep_results`], a signal ends the process at once. A process blocked
    /// before its hunt began (an output that waits, a full stdout pipe) would otherwise take
    /// the signal as a request to stop later, and keep waiting.
    pub fn install() -> Interrupt {
        static SHARED: OnceLock<Interrupt> = OnceLock::new();
        let interrupt = SHARED
            .get_or_init(|| {
                let received = Arc::new(AtomicUsize::new(0));
                let armed = Arc::new(AtomicBool::new(true));
                for signal in STOP_SIGNALS {
                    // Registered first, so it runs first: exits only on a second signal.
                    let exit_code = 128 + u32::try_from(signal).unwrap_or(0);
                    let _ = signal_hook::flag::register_conditional_shutdown(
                        signal,
                        i32::try_from(exit_code).unwrap_or(1),
                        Arc::clone(&armed),
                    );
                    let _ = signal_hook::flag::register(signal, Arc::clone(&armed));
                    let _ = signal_hook::flag::register_usize(
                        signal,
                        Arc::clone(&received),
                        usize::try_from(signal).unwrap_or(0),
                    );
                }
                Interrupt { received, armed }
            })
            .clone();
        interrupt.armed.store(true, Ordering::SeqCst);
        interrupt
    }

    /// From now on the first signal asks for a clean stop (the results so far are kept and
    /// reported), and only a second one ends the process at once: called once the hunt's
    /// outputs are open, just before its seed loop.
    pub fn keep_results(&self) {
        // A signal before this store ended the process; one after it finds the flag clear.
        self.armed.store(false, Ordering::SeqCst);
    }

    /// The signal received, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            n => i32::try_from(n).ok(),
        }
    }

    /// The exit code for having been stopped by `signal`: 128 + its number.
    pub fn exit_code(signal: i32) -> u8 {
        u8::try_from(128 + signal).unwrap_or(u8::MAX)
    }

    /// The signal's conventional name.
    pub fn name(signal: i32) -> String {
        match signal {
            SIGINT => "SIGINT".to_string(),
            SIGTERM => "SIGTERM".to_string(),
            SIGHUP => "SIGHUP".to_string(),
            n => format!("signal {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Interrupt;

    #[test]
    fn stopped_by_a_signal_exits_with_128_plus_its_number() {
        assert_eq!(Interrupt::exit_code(2), 130);
        assert_eq!(Interrupt::exit_code(15), 143);
        assert_eq!(Interrupt::name(15), "SIGTERM");
    }
}
