//! Published Raft election results that the shipped scenarios reproduce (docs/validation.md):
//! the split-vote share the thesis' reasoning predicts as a binomial tail, and the thesis'
//! AvailSim WAN failover. Each check is statistical, with bounds several standard errors
//! wide, on fixed seeds: the same binary always gives the same numbers. And what every
//! shipped scenario promises a user who changes its seed: its outcome on every seed, or on
//! the share of seeds its `expect_rate` states.

use crate::common;

use common::{assert_no_panic, json, repo_root, scenario_files, scratch, splitbrain};
use rayon::prelude::*;
use serde_json::Value;
use splitbrain::scenario::{self, Scenario};
use splitbrain::verdict::{judge, judge_objective, Outcome};
use std::path::Path;

/// Runs `splitbrain sweep FILE [--param P] --trials N --json` and returns each value's
/// summary.
fn sweep(file: &str, param: Option<&str>, trials: u32) -> Vec<Value> {
    let out = scratch(&format!("published-{}", file.replace('/', "-")));
    let dir = out.join("report");
    let trials = trials.to_string();
    let mut args = vec!["sweep", file, "--trials", &trials, "--json"];
    if let Some(p) = param {
        args.extend(["--param", p]);
    }
    args.extend(["--out", dir.to_str().unwrap()]);
    let o = splitbrain(&args);
    assert_no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let values = json(&o)["values"].as_array().unwrap().clone();
    let _ = std::fs::remove_dir_all(&out);
    values
}

fn choose(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |c, i| c * f64::from(n - i) / f64::from(i + 1))
}

/// The chance that a failover of `n` servers with `s` survivors splits its first vote when a
/// vote request takes `x` of the timeout range to arrive: at least `s + 1 - quorum` of the
/// `s` survivors' timers fire within that window (scenarios/raft-split-vote.ron).
fn split_formula(n: u32, s: u32, x: f64) -> f64 {
    let needed = s + 1 - (n / 2 + 1);
    (needed..=s)
        .map(|j| choose(s, j) * x.powi(j as i32) * (1.0 - x).powi((s - j) as i32))
        .sum()
}

#[test]
fn the_formula_is_the_one_the_issue_quotes() {
    let percent = |x| (split_formula(5, 4, x) * 1000.0).round() / 10.0;
    assert_eq!(
        [percent(0.01), percent(0.1), percent(0.2)],
        [0.1, 5.2, 18.1]
    );
    assert!((split_formula(5, 3, 0.1) - (1.0 - 0.9f64.powi(3))).abs() < 1e-12);
}

/// The measured split share against the formula, within four standard errors.
fn assert_split_share(file: &str, n: u32, s: u32, latency: &str, x: f64) {
    const TRIALS: u32 = 1000;
    let values = sweep(file, Some(latency), TRIALS);
    let measured = 1.0 - values[0]["first_round_share"].as_f64().unwrap();
    let expected = split_formula(n, s, x);
    let standard_error = (expected * (1.0 - expected) / f64::from(TRIALS)).sqrt();
    assert!(
        (measured - expected).abs() <= 4.0 * standard_error,
        "{file} {latency}: split share {measured:.4}, formula {expected:.4} ± {:.4}",
        4.0 * standard_error
    );
}

#[test]
fn four_survivors_of_five_split_as_the_formula_says() {
    let file = "scenarios/raft-split-vote.ron";
    assert_split_share(file, 5, 4, "latency=30ms..30ms", 0.2);
}

#[test]
fn three_survivors_of_five_split_as_the_formula_says() {
    let file = "scenarios/raft-split-vote-3-of-5.ron";
    assert_split_share(file, 5, 3, "latency=15ms..15ms", 0.1);
}

#[test]
fn six_survivors_of_nine_split_as_the_formula_says() {
    let file = "scenarios/raft-split-vote-6-of-9.ron";
    assert_split_share(file, 9, 6, "latency=30ms..30ms", 0.2);
}

/// The mean and the 99th percentile of the election time, in ms, over 1,000 trials.
fn wan_elections(file: &str) -> (f64, f64) {
    let values = sweep(file, None, 1000);
    let ms = |key: &str| values[0]["election"][key].as_f64().unwrap() / 1e6;
    (ms("mean_ns"), ms("p99_ns"))
}

#[test]
fn a_wan_failover_takes_as_long_as_the_thesis_availsim_runs() {
    // Thesis section 9.4: about 475 ms on average with one of five failed, 99.9% within
    // 1.5 s; about 650 ms with two failed, 99.9% within 3 s. The means within 20%; the 99th
    // percentile within the published 99.9th (1,000 trials cannot resolve the 99.9th).
    let (one_mean, one_p99) = wan_elections("scenarios/raft-wan.ron");
    let (two_mean, two_p99) = wan_elections("scenarios/raft-wan-two-failed.ron");
    assert!(
        (380.0..=570.0).contains(&one_mean),
        "one failed: {one_mean} ms"
    );
    assert!(
        (520.0..=780.0).contains(&two_mean),
        "two failed: {two_mean} ms"
    );
    assert!(
        one_p99 <= 1500.0 && two_p99 <= 3000.0,
        "{one_p99} ms, {two_p99} ms"
    );
    assert!(
        two_mean > one_mean + 80.0,
        "{one_mean} ms then {two_mean} ms"
    );
}

/// Seeds 1..=LIBRARY_SEEDS of every shipped scenario: about 1,600 runs, some 10 s of two
/// cores (50 seeds took 26 s of the test command's budget; `splitbrain hunt FILE --seeds 50`
/// checks a file's `expect_rate` over more).
const LIBRARY_SEEDS: u64 = 20;

/// Whether `run FILE --seed SEED` exits 0: the outcome `run` judges, objective included.
fn matches_expect(scenario: &Scenario, seed: u64) -> bool {
    let s = scenario.materialize(seed);
    let report = splitbrain_algorithms::run(&s.algorithm, s.sim.clone(), None)
        .expect("within the default limits");
    judge_objective(judge(&s.expect, &report), s.objective.as_ref(), &report) == Outcome::Matched
}

/// What is wrong with `file` over the library's seeds, if anything: fewer seeds matched its
/// `expect` than its `expect_rate` promises (every seed, when it states none).
fn shortfall(file: &Path) -> Option<String> {
    let scenario = scenario::load(&repo_root().join(file)).unwrap_or_else(|e| panic!("{e}"));
    let missed: Vec<u64> = (1..=LIBRARY_SEEDS)
        .into_par_iter()
        .filter(|seed| !matches_expect(&scenario, *seed))
        .collect();
    let matched = LIBRARY_SEEDS - missed.len() as u64;
    // At least the stated share of the seeds, rounded up: a promise of 95% over 50 seeds is
    // 48 of them.
    let needed = (LIBRARY_SEEDS * u64::from(scenario.expect_rate_ppm)).div_ceil(1_000_000);
    (matched < needed).then(|| {
        format!(
            "{}: matched its expect on {matched} of seeds 1-{LIBRARY_SEEDS}, it promises {needed} \
             (expect_rate {}); missed on seeds {missed:?}",
            file.display(),
            f64::from(scenario.expect_rate_ppm) / 1e6
        )
    })
}

#[test]
fn every_shipped_scenario_shows_its_point_on_the_share_of_seeds_it_states() {
    // A demonstration that holds on its own seed only looks broken to a user who passes
    // --seed: a scenario either shows its point on every seed (faults placed relative to
    // what it needs) or states the share it shows it on, which `list` then shows.
    let shortfalls: Vec<String> = scenario_files()
        .par_iter()
        .filter_map(|file| shortfall(file))
        .collect();
    assert!(shortfalls.is_empty(), "{}", shortfalls.join("\n"));
}
