//! `splitbrain check`: validate scenario files.

use crate::exit;
use crate::scenario;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files to validate.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}

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
                // Said, never started: `check` runs nothing.
                for program in s.programs() {
                    let line = splitbrain_lab::shell::command_line(&program);
                    crate::outln!("  note: starts a program for each node: {line}");
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
