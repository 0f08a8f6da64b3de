//! The fault parameters: one row of `FAULT_PARAMS` per parameter, and the one rule that sets
//! them, `FaultParam::set`.

use super::Value;
use splitbrain_sim::{FaultAction, FaultSpec, FaultSpread};

/// A fault setting `--param` varies: one number of every explicit fault of one kind, set to
/// the same value. One row of `FAULT_PARAMS` each; what a row sets is written once, in
/// `FaultParam::set`.
#[derive(Debug, PartialEq, Eq)]
pub struct FaultParam {
    /// The parameter's name.
    pub(super) name: &'static str,
    /// The kind of fault it sets, as [`FaultAction::kind_name`] names it.
    pub(super) kind: &'static str,
    /// Which of the fault's numbers.
    pub(super) field: Field,
    /// An example of values, for hints.
    pub(super) values: &'static str,
    /// A fault of that kind, as a scenario writes it.
    pub(super) example: &'static str,
    /// The parameter as a chart's axis names it.
    pub(super) axis: &'static str,
}

/// Which number of a fault a [`FaultParam`] sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Field {
    /// The length inside the kind (`Pause(_, d)`, a `SlowDisk`'s fsync time): above zero.
    Length,
    /// A `ClockJump`'s signed step.
    Step,
    /// A `ClockDrift`, in ppm.
    Ppm,
    /// A `Loss` or `Duplicate` probability.
    Probability,
    /// `heal_after`, above zero: given to a fault that has none.
    HealAfter,
}

/// The fault parameters, one row each.
pub(super) const FAULT_PARAMS: &[FaultParam] = &[
    FaultParam {
        name: "pause",
        kind: "pause",
        field: Field::Length,
        values: "1s,5s",
        example: "(at: \"30s\", do: Pause(Leader, \"5s\"))",
        axis: "length of every Pause",
    },
    FaultParam {
        name: "stall",
        kind: "stall",
        field: Field::Length,
        values: "5s,10s,15s",
        example: "(at: \"30s\", do: Stall(Leader, \"10s\"))",
        axis: "length of every Stall",
    },
    FaultParam {
        name: "suspend",
        kind: "suspend",
        field: Field::Length,
        values: "2s,4s",
        example: "(at: \"30s\", do: Suspend(Leader, \"3s\"))",
        axis: "length of every Suspend",
    },
    FaultParam {
        name: "slow_disk",
        kind: "slow_disk",
        field: Field::Length,
        values: "100ms,1s",
        example: "(at: \"30s\", do: SlowDisk(Leader, \"500ms\"), heal_after: \"10s\")",
        axis: "fsync time of every SlowDisk",
    },
    FaultParam {
        name: "slow_disk_for",
        kind: "slow_disk",
        field: Field::HealAfter,
        values: "5s,30s",
        example: "(at: \"30s\", do: SlowDisk(Leader, \"500ms\"), heal_after: \"10s\")",
        axis: "length of every SlowDisk",
    },
    FaultParam {
        name: "crash",
        kind: "crash",
        field: Field::HealAfter,
        values: "5s,30s",
        example: "(at: \"30s\", do: Crash(Leader), heal_after: \"5s\")",
        axis: "length of every Crash (down until restart)",
    },
    FaultParam {
        name: "partition",
        kind: "partition",
        field: Field::HealAfter,
        values: "1s,10s",
        example: "(at: \"30s\", do: Partition(Isolate(Leader)), heal_after: \"5s\")",
        axis: "length of every partition",
    },
    FaultParam {
        name: "clock_jump",
        kind: "clock_jump",
        field: Field::Step,
        values: "2s,-2s",
        example: "(at: \"30s\", do: ClockJump(Leader, \"2s\"))",
        axis: "clock step of every ClockJump",
    },
    FaultParam {
        name: "drift",
        kind: "clock_drift",
        field: Field::Ppm,
        values: "100,50000",
        example: "(at: \"30s\", do: ClockDrift(Leader, 1000))",
        axis: "drift of every ClockDrift (ppm)",
    },
    FaultParam {
        name: "loss_burst",
        kind: "loss",
        field: Field::Probability,
        values: "0.1,0.5",
        example: "(at: \"30s\", do: Loss(0.3), heal_after: \"5s\")",
        axis: "loss probability of every Loss fault",
    },
    FaultParam {
        name: "duplicate_burst",
        kind: "duplicate",
        field: Field::Probability,
        values: "0.1,0.5",
        example: "(at: \"30s\", do: Duplicate(0.1), heal_after: \"5s\")",
        axis: "duplication probability of every Duplicate fault",
    },
];

impl FaultParam {
    /// What a value sets, for hints: `every SlowDisk's heal_after`.
    pub(super) fn takes(&self) -> String {
        let kind = self.example.split("do: ").nth(1).unwrap_or("");
        let kind = kind.split('(').next().unwrap_or(self.kind);
        let what = match self.field {
            Field::Length if self.kind == "slow_disk" => "fsync time",
            Field::Length => "length",
            Field::Step => "step",
            Field::Ppm => "drift in ppm",
            Field::Probability => "probability",
            Field::HealAfter => "heal_after",
        };
        format!("every {kind}'s {what}")
    }

    /// Sets `value` in `fault` if it is a fault of this kind; whether it was. The one rule of
    /// every fault parameter.
    pub(super) fn set(&self, fault: &mut FaultSpec, value: &Value) -> bool {
        if fault.action.kind_name() != self.kind {
            return false;
        }
        match (self.field, &mut fault.action, value) {
            (Field::HealAfter, _, Value::Duration(v)) => fault.heal_after_ns = Some(*v),
            (
                Field::Length,
                FaultAction::Pause(_, d)
                | FaultAction::Stall(_, d)
                | FaultAction::Suspend(_, d)
                | FaultAction::SlowDisk(_, d),
                Value::Duration(v),
            ) => *d = *v,
            (Field::Step, FaultAction::ClockJump(_, d), Value::Signed(v))
            | (Field::Ppm, FaultAction::ClockDrift(_, d), Value::Signed(v)) => *d = *v,
            (
                Field::Probability,
                FaultAction::Loss(ppm) | FaultAction::Duplicate(ppm),
                Value::Fraction(p),
            ) => *ppm = to_ppm(*p),
            (field, action, value) => {
                unreachable!("{field:?} of {action:?} set to {value:?}: a row names a kind and a field that fit")
            }
        }
        true
    }

    /// Clears the range (`"3s..8s"`) the value replaces, if the fault had one.
    pub(super) fn replace_range(&self, spread: &mut FaultSpread) {
        match self.field {
            Field::HealAfter => spread.heal_after_ns = 0,
            Field::Length | Field::Step => spread.length_ns = 0,
            // No range is written for these.
            Field::Ppm | Field::Probability => {}
        }
    }
}

/// A probability as the network takes it, in parts per million.
pub(super) fn to_ppm(p: f64) -> u32 {
    (p * 1_000_000.0).round() as u32
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use splitbrain_scenario::{self as scenario, Scenario};
    use splitbrain_sim::FaultAction;

    const FAULTS: &str = r#"Scenario(
        algorithm: Raft(),
        duration: "1m",
        faults: [
            (at: "1s", do: Pause(Leader, "1s")),
            (at: "2s", do: Stall(Leader, "1s")),
            (at: "3s", do: Suspend(Leader, "1s")),
            (at: "4s", do: ClockJump(Leader, "1s")),
            (at: "5s", do: ClockDrift(Leader, 100)),
            (at: "6s", do: Partition(Isolate(Leader)), heal_after: "1s"),
            (at: "7s", do: Stall(Node(1), "1s")),
            (at: "8s", do: SlowDisk(Leader, "100ms"), heal_after: "1s"),
            (at: "9s", do: Crash(Leader)),
            (at: "10s", do: Loss(0.2), heal_after: "1s"),
            (at: "11s", do: Duplicate(0.2), heal_after: "1s"),
        ],
    )"#;

    /// The scenario with `NAME=V` applied.
    fn applied(text: &str) -> Scenario {
        let scenario = scenario::parse(FAULTS, "faults.ron").unwrap();
        let (param, values) = parse_param(text).unwrap();
        apply(&scenario, param, &values[0].1).unwrap()
    }

    #[test]
    fn a_swept_fault_length_replaces_its_range_and_leaves_the_others() {
        use splitbrain_sim::NANOS_PER_SEC;
        use std::collections::BTreeSet;
        let ranged = r#"Scenario(algorithm: Raft(), duration: "1m", faults: [
            (at: "1s..2s", do: Pause(Leader, "3s..8s")),
            (at: "9s", do: Partition(Isolate(Leader)), heal_after: "2s..4s"),
        ])"#;
        let scenario = scenario::parse(ranged, "ranged.ron").unwrap();
        let (param, values) = parse_param("pause=5s").unwrap();
        let swept = apply(&scenario, param, &values[0].1).unwrap();
        let mut ats = BTreeSet::new();
        for seed in 1..=20 {
            let faults = swept.materialize(seed).sim.faults;
            assert_eq!(
                faults[0].action.built_in_duration(),
                Some(5 * NANOS_PER_SEC)
            );
            ats.insert(faults[0].at_ns);
            let heal_ns = faults[1].heal_after_ns.unwrap();
            assert!((2 * NANOS_PER_SEC..=4 * NANOS_PER_SEC).contains(&heal_ns));
        }
        assert!(ats.len() > 1, "the at range is still drawn");
    }

    #[test]
    fn each_fault_parameter_sets_every_fault_of_its_kind_and_no_other() {
        let actions = |s: &Scenario| -> Vec<String> {
            s.sim
                .faults
                .iter()
                .map(|f| format!("{:?} {:?}", f.action, f.heal_after_ns))
                .collect()
        };
        let before = actions(&scenario::parse(FAULTS, "faults.ron").unwrap());
        for (text, changed) in [
            ("pause=9s", vec![0]),
            ("stall=9s", vec![1, 6]),
            ("suspend=9s", vec![2]),
            ("clock_jump=-9s", vec![3]),
            ("drift=-900", vec![4]),
            ("partition=9s", vec![5]),
            ("slow_disk=9ms", vec![7]),
            ("slow_disk_for=9s", vec![7]),
            ("crash=9s", vec![8]),
            ("loss_burst=0.9", vec![9]),
            ("duplicate_burst=0.9", vec![10]),
        ] {
            let after = actions(&applied(text));
            for (i, (a, b)) in before.iter().zip(&after).enumerate() {
                assert_eq!(
                    a != b,
                    changed.contains(&i),
                    "{text}: fault {i}: {a} -> {b}"
                );
                if changed.contains(&i) {
                    assert!(b.contains('9'), "{text}: {b}");
                }
            }
        }
        let stall = applied("stall=9s");
        assert_eq!(
            stall.sim.faults[1].action.built_in_duration(),
            Some(9_000_000_000)
        );
        let jump = applied("clock_jump=-9s");
        assert!(matches!(
            jump.sim.faults[3].action,
            FaultAction::ClockJump(_, -9_000_000_000)
        ));
        let disk = applied("slow_disk=9ms");
        assert!(matches!(
            disk.sim.faults[7].action,
            FaultAction::SlowDisk(_, 9_000_000)
        ));
        assert_eq!(disk.sim.faults[7].heal_after_ns, Some(1_000_000_000));
        let disk = applied("slow_disk_for=9s");
        assert_eq!(disk.sim.faults[7].heal_after_ns, Some(9_000_000_000));
        // A crash written without heal_after gets one: it is down for the value, then back.
        let crash = applied("crash=9s");
        assert_eq!(crash.sim.faults[8].heal_after_ns, Some(9_000_000_000));
        let burst = applied("loss_burst=0.9");
        assert_eq!(burst.sim.faults[9].action, FaultAction::Loss(900_000));
        let dup = applied("duplicate_burst=0.9");
        assert_eq!(dup.sim.faults[10].action, FaultAction::Duplicate(900_000));
    }

    #[test]
    fn every_fault_parameter_sets_its_own_example_fault() {
        for f in FAULT_PARAMS {
            let text = format!(
                "Scenario(algorithm: Raft(), duration: \"1m\", faults: [{}])",
                f.example
            );
            let scenario =
                scenario::parse(&text, "example.ron").unwrap_or_else(|e| panic!("{}: {e}", f.name));
            let (param, values) = parse_param(&format!("{}={}", f.name, f.values)).unwrap();
            // Each value gives the fault its own setting (one of them may be the example's).
            let applied: Vec<_> = values
                .iter()
                .map(|(label, value)| {
                    let s =
                        apply(&scenario, param, value).unwrap_or_else(|e| panic!("{label}: {e}"));
                    s.sim.faults
                })
                .collect();
            assert_ne!(applied[0], applied[1], "{}", f.name);
        }
    }

    #[test]
    fn a_fault_parameter_without_its_fault_names_the_kind_and_shows_one() {
        let plain = r#"Scenario(algorithm: Raft(), duration: "1m",
            faults: [(at: "1s", do: Crash(Leader), heal_after: "1s")])"#;
        let scenario = scenario::parse(plain, "plain.ron").unwrap();
        let (param, values) = parse_param("slow_disk=1s").unwrap();
        let error = apply(&scenario, param, &values[0].1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "slow_disk sets every SlowDisk's fsync time, and the scenario has no such fault\n  \
             hint: add one to its faults, like (at: \"30s\", do: SlowDisk(Leader, \"500ms\"), \
             heal_after: \"10s\")"
        );
        let (param, values) = parse_param("fault_duration=1s..2s").unwrap();
        let error = apply(&scenario, param, &values[0].1).unwrap_err();
        assert_eq!(error, ParamError::NoNemesis);
        assert!(error.to_string().contains("crash, partition"), "{error}");
    }

    #[test]
    fn fault_duration_sets_how_long_the_nemesis_faults_last() {
        let text = r#"Scenario(algorithm: Raft(), duration: "1m",
            nemesis: (kinds: [Crash], fault_duration: ("100ms", "5s"), swarm: false))"#;
        let scenario = scenario::parse(text, "nemesis.ron").unwrap();
        let (param, values) = parse_param("fault_duration=2s..3s,4s").unwrap();
        let ranged = apply(&scenario, param, &values[0].1).unwrap();
        let nemesis = ranged.nemesis.as_ref().unwrap();
        assert_eq!(nemesis.fault_duration_ns, (2_000_000_000, 3_000_000_000));
        let fixed = apply(&scenario, param, &values[1].1).unwrap();
        let faults = fixed.materialize(7).sim.faults;
        assert!(!faults.is_empty());
        for fault in faults {
            assert_eq!(fault.heal_after_ns, Some(4_000_000_000), "{fault:?}");
        }
    }

    #[test]
    fn fault_values_are_checked_for_their_kind() {
        for bad in [
            "pause=0s",
            "stall=-1s",
            "clock_jump=later",
            "drift=0.5",
            "partition=x",
            "crash=0s",
            "slow_disk=-1s",
            "loss_burst=1.5",
            "duplicate_burst=-0.1",
            "fault_duration=2s..1s",
            "fault_duration=0s..1s",
            "fault_duration=soon",
        ] {
            assert!(parse_param(bad).is_err(), "{bad}");
        }
        assert!(parse_param("clock_jump=-1s,2s").is_ok());
    }
}
