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
                if !s.designs.is_empty() {
                    crate::outln!("  designs (compare runs each): {}", designs_line(&s));
                }
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

/// The scenario's designs, each with its algorithm and transport.
fn designs_line(s: &splitbrain_scenario::Scenario) -> String {
    let designs: Vec<String> = (s.designs.iter())
        .map(|d| {
            format!(
                "{} ({} on {})",
                d.name,
                d.algorithm.name(),
                splitbrain_scenario::transport_line(&d.transport)
            )
        })
        .collect();
    designs.join(", ")
}
