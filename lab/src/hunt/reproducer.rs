//! What a hunt's reproducer is called, and how much shrinking it may cost: the same for the
//! `splitbrain hunt` command and for the harness.

/// How many runs shrinking one failure may spend.
pub const SHRINK_BUDGET_RUNS: u32 = 600;

/// The name of the reproducer of `seed` of `scenario` failing under `key`:
/// `<scenario>-seed<seed>-<key>`, with the `:` of `missing:<invariant>` written `-`.
///
/// ```
/// use splitbrain_lab::hunt::reproducer::name;
/// assert_eq!(name("raft-nemesis", 42, "missing:fencing_safety"),
///            "raft-nemesis-seed42-missing-fencing_safety");
/// ```
pub fn name(scenario: &str, seed: u64, key: &str) -> String {
    format!("{scenario}-seed{seed}-{}", key.replace(':', "-"))
}

/// The file stem of that reproducer: the same, with the scenario's name and the key each cut
/// to what a file name holds ([`file_stem`]); the seed and the key are never cut, so two
/// reproducers never share a file.
pub fn stem(scenario: &str, seed: u64, key: &str) -> String {
    format!(
        "{}-seed{seed}-{}",
        file_stem(scenario),
        file_stem(&key.replace(':', "-"))
    )
}

/// A file name made of `name` (a scenario's name, which may hold anything): letters, digits,
/// `-`, `_` and inner `.` kept, every other character `_`, at most [`MAX_STEM_CHARS`], so
/// that a reproducer stays in its folder (no `/`, no `..`) and its name can be created.
pub fn file_stem(name: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let stem: String = name
        .chars()
        .map(|c| if kept(c) { c } else { '_' })
        .take(MAX_STEM_CHARS)
        .collect();
    let stem = stem.trim_start_matches('.');
    if stem.is_empty() {
        "scenario".to_string()
    } else {
        stem.to_string()
    }
}

/// The most of a scenario's name a reproducer's file name keeps (file systems take 255 bytes:
/// the seed, the invariant and `-shrunk.ron` must fit after it).
pub const MAX_STEM_CHARS: usize = 150;
