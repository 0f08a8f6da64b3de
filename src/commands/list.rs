//! `splitbrain list`: the scenario library and the algorithms.

use crate::exit;
use crate::scenario;
use crate::verdict::describe_expect;
use clap::Args;
use splitbrain_algorithms::algorithms;
use splitbrain_sim::format_duration;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The scenario library folder [default: scenarios, when there is one here].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The scenario library's folder, relative to the repository root.
const LIBRARY: &str = "scenarios";

/// Prints the algorithms, then every scenario in the library folder.
pub fn list(args: &ListArgs) -> u8 {
    crate::outln!("Algorithms:");
    for entry in algorithms() {
        crate::outln!("  {:<10} {}", entry.scenario_name, entry.summary);
        let mut names = vec![entry.name];
        names.extend(entry.aliases);
        if entry.runs_with_defaults() {
            crate::outln!("  {:<10} compare --algorithms {}", "", names.join(" | "));
        } else {
            // Its defaults cannot run (`External` needs its command): only a scenario can.
            crate::outln!("  {:<10} (needs its settings in a scenario)", "");
        }
        let knobs: Vec<String> = entry
            .knobs
            .iter()
            .map(|k| format!("{}={}", k.name, k.example))
            .collect();
        if !knobs.is_empty() {
            crate::outln!("  {:<10} sweep --param {}", "", knobs.join(" | "));
        }
    }
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None if std::path::Path::new(LIBRARY).is_dir() => LIBRARY.into(),
        None => {
            // Outside the repository there is no library to list: the algorithms are the answer.
            crate::outln!("\nNo {LIBRARY}/ folder here: pass --dir DIR to list a scenario folder.");
            return exit::MATCHED;
        }
    };
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ron"))
            .collect(),
        Err(e) => {
            eprintln!(
                "error: cannot read the scenario folder {}: {e}",
                dir.display()
            );
            eprintln!("  hint: give a folder of scenario files, like --dir scenarios");
            return exit::BAD_INPUT;
        }
    };
    files.sort();
    crate::outln!("\nScenarios in {}:", dir.display());
    let width = files
        .iter()
        .map(|f| f.display().to_string().chars().count())
        .max()
        .unwrap_or(0);
    let name_width = algorithms()
        .into_iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0);
    let mut bad = false;
    for file in files {
        match scenario::load(&file) {
            Ok(s) => {
                let faults = match s.nemesis {
                    Some(_) => format!("{:>2} faults + nemesis", s.sim.faults.len()),
                    None => format!("{:>2} faults", s.sim.faults.len()),
                };
                crate::outln!(
                    "  {:<width$}  {:<name_width$} {:>2} nodes  {:>6}  {:<19}  {}",
                    file.display(),
                    s.algorithm.name(),
                    s.sim.members,
                    format_duration(s.sim.duration_ns),
                    faults,
                    expectation(&s)
                );
            }
            Err(e) => {
                bad = true;
                eprintln!("  {e}");
            }
        }
    }
    if bad {
        exit::BAD_INPUT
    } else {
        exit::MATCHED
    }
}

/// `expect Safe`, and for a scenario that shows its point on some seeds only, the share of
/// seeds it states: `expect Safe on 95% of seeds`, so that nobody takes another seed's
/// different outcome for a bug.
fn expectation(s: &scenario::Scenario) -> String {
    let expect = describe_expect(&s.expect);
    if s.expect_rate_ppm == scenario::EVERY_SEED_PPM {
        return format!("expect {expect}");
    }
    let percent = f64::from(s.expect_rate_ppm) / 10_000.0;
    format!("expect {expect} on {percent}% of seeds")
}
