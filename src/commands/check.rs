//! `splitbrain check`: validate scenario files.

use crate::cli::CheckArgs;
use crate::exit;
use crate::scenario;

/// Validates every file; prints `ok` lines and errors; exit 2 if any is invalid.
pub fn check(args: &CheckArgs) -> u8 {
    let mut bad = 0;
    for file in &args.files {
        match scenario::load(file) {
            Ok(s) => {
                crate::outln!(
                    "{}: ok ({}, {} nodes, {} faults)",
                    file.display(),
                    s.algorithm.name(),
                    s.sim.members,
                    s.sim.faults.len()
                );
                for note in s.adjustments() {
                    crate::outln!("  note: {note}");
                }
            }
            Err(e) => {
                eprintln!("{e}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        exit::BAD_INPUT
    } else {
        exit::MATCHED
    }
}
