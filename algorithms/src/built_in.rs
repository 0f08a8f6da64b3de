//! The built-in algorithms: their registration, in the order `list` shows them, and the
//! `From` of each one's configuration into an [`AlgorithmConfig`]. The only place in the
//! workspace that names them all.

#[cfg(feature = "raft-rs")]
use crate::raft_rs;
use crate::registry::{AlgorithmConfig, AlgorithmEntry};
use crate::{bully, etcd, external, k8s_lease, multi_raft, raft, ring, zookeeper};

/// Adds the built-in algorithms to a new registry, in the order `list` shows them. A user's
/// algorithm is added with [`crate::register`] instead; nothing else in the workspace names one.
pub(crate) fn built_ins(entries: &mut Vec<&'static AlgorithmEntry>) {
    use crate::registry::insert_built_in;
    insert_built_in::<raft::Raft>(entries);
    insert_built_in::<bully::Bully>(entries);
    insert_built_in::<ring::Ring>(entries);
    insert_built_in::<etcd::Etcd>(entries);
    insert_built_in::<zookeeper::ZooKeeper>(entries);
    insert_built_in::<k8s_lease::K8sLease>(entries);
    insert_built_in::<multi_raft::MultiRaft>(entries);
    #[cfg(feature = "raft-rs")]
    insert_built_in::<raft_rs::RaftRs>(entries);
    insert_built_in::<external::External>(entries);
    insert_built_in::<external::ExternalClient>(entries);
}

/// `AlgorithmConfig::from(RaftConfig { .. })`: a built-in algorithm's configuration.
macro_rules! built_in_from {
    ($($alg:ty => $config:ty),+ $(,)?) => {$(
        impl From<$config> for AlgorithmConfig {
            fn from(config: $config) -> Self {
                Self::new::<$alg>(config).expect("built-in algorithms are always registered")
            }
        }
    )+};
}

built_in_from! {
    raft::Raft => raft::RaftConfig,
    bully::Bully => bully::BullyConfig,
    ring::Ring => ring::RingConfig,
    etcd::Etcd => etcd::EtcdConfig,
    zookeeper::ZooKeeper => zookeeper::ZkConfig,
    k8s_lease::K8sLease => k8s_lease::K8sConfig,
    multi_raft::MultiRaft => multi_raft::MultiRaftConfig,
}

#[cfg(feature = "raft-rs")]
built_in_from! {
    raft_rs::RaftRs => raft_rs::RaftRsConfig,
}

/// The algorithms `compare` runs when not told which (command-line names, comma-separated).
pub const DEFAULT_COMPARISON: &str = "raft,bully,ring";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::{Cluster, Knob, KnobShape, KnobValue, Problem};
    use crate::registry::{algorithms, AlgorithmSettings};
    use splitbrain_sim::Nanos;

    fn five() -> Cluster {
        Cluster { nodes: 5 }
    }

    /// `problems` without those a default cannot avoid: the external algorithms have no
    /// default `command` (the user's program), nor `ExternalClient` a default `service`
    /// once written back empty, and say so.
    fn but_required<E: std::fmt::Debug>(
        entry: &AlgorithmEntry,
        mut problems: Vec<Problem<E>>,
    ) -> Vec<Problem<E>> {
        let required: &[&str] = match entry.name {
            "external" => &["command"],
            "external-client" => &["command", "service"],
            _ => &[],
        };
        if !required.is_empty() {
            assert!(
                problems.iter().any(|p| p.field == "command"),
                "{} says that it needs its command",
                entry.name
            );
            problems.retain(|p| !required.contains(&p.field));
        }
        problems
    }

    #[test]
    fn every_default_configuration_is_written_so_that_it_lowers_back_equal() {
        for entry in algorithms() {
            let config = entry.default_config();
            let (lowered, problems) = config.settings().lower(&five());
            let problems = but_required(entry, problems);
            assert!(problems.is_empty(), "{}: {problems:?}", entry.name);
            assert_eq!(lowered, config, "{}", entry.name);
        }
    }

    #[test]
    fn empty_settings_lower_to_the_default_configuration() {
        for entry in algorithms() {
            let text = format!("{}()", entry.scenario_name);
            let options = ron::Options::default()
                .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES);
            let settings = AlgorithmSettings::from_ron(&text, &options).expect(&text);
            let (config, problems) = settings.lower(&five());
            let problems = but_required(entry, problems);
            assert!(problems.is_empty(), "{}: {problems:?}", entry.name);
            assert_eq!(config, entry.default_config(), "{}", entry.name);
        }
    }

    #[test]
    fn names_and_aliases_find_their_algorithm_and_nothing_else() {
        for entry in algorithms() {
            assert!(std::ptr::eq(
                AlgorithmEntry::named(entry.name).unwrap(),
                entry
            ));
            assert!(std::ptr::eq(entry.default_config().entry(), entry));
            for alias in entry.aliases {
                assert_eq!(AlgorithmEntry::named(alias).unwrap().name, entry.name);
            }
        }
        assert!(AlgorithmEntry::named("paxos").is_none());
    }

    #[test]
    fn built_in_algorithms_name_their_message_types_and_external_nodes_declare_theirs() {
        for entry in algorithms() {
            let names = entry.default_config().message_names();
            match entry.name {
                "external" | "external-client" => assert_eq!(names, None, "{}", entry.name),
                _ => assert!(names.is_some_and(|n| !n.is_empty()), "{}", entry.name),
            }
        }
        let raft = AlgorithmEntry::named("raft").unwrap().default_config();
        assert!(raft.message_names().unwrap().contains(&"RequestVoteResp"));
    }

    #[test]
    fn the_engine_knows_each_algorithm_by_its_registry_name() {
        for entry in algorithms() {
            assert_eq!(entry.default_config().info(5).name, entry.name);
        }
    }

    #[test]
    fn a_knob_name_means_the_same_shape_in_every_algorithm_that_has_it() {
        let knobs: Vec<&Knob> = algorithms().into_iter().flat_map(|e| e.knobs).collect();
        for a in &knobs {
            for b in knobs.iter().filter(|b| b.name == a.name) {
                assert_eq!(a.shape, b.shape, "knob {}", a.name);
            }
        }
    }

    #[test]
    fn every_knob_varies_its_setting_within_the_rules_and_refuses_values_that_break_them() {
        for entry in algorithms() {
            for knob in entry.knobs {
                let config = knob_home(entry, knob.name);
                let value = |ns: Nanos| match knob.shape {
                    KnobShape::Duration => KnobValue::Duration(ns),
                    KnobShape::DurationRange => KnobValue::Range(ns, 2 * ns),
                    KnobShape::Choice(_) => unreachable!("choices are checked below"),
                };
                if let KnobShape::Choice(names) = knob.shape {
                    // Every name is a valid design, and at least one is not the default's.
                    let varied: Vec<AlgorithmConfig> = names
                        .iter()
                        .map(|name| config.vary(&five(), knob.name, KnobValue::Choice(name)))
                        .collect::<Result<_, _>>()
                        .unwrap_or_else(|p| panic!("{} {}: {p:?}", entry.name, knob.name));
                    assert!(
                        varied.iter().any(|v| *v != config),
                        "{} {} changed nothing",
                        entry.name,
                        knob.name
                    );
                    let unknown = config.vary(&five(), knob.name, KnobValue::Choice("Nonsense"));
                    assert!(unknown.is_err(), "{} {}", entry.name, knob.name);
                    continue;
                }
                // A value a tenth above or below one of the default's own timings is a valid
                // design (below: ZooKeeper's default session timeout is the server's cap, 20
                // ticks, and a longer one would be negotiated down, so `lease` refuses it)...
                let accepted: Vec<AlgorithmConfig> = config
                    .timings()
                    .into_iter()
                    .flat_map(|(_, ns)| [ns + ns / 10, ns - ns / 10])
                    .filter_map(|ns| config.vary(&five(), knob.name, value(ns)).ok())
                    .collect();
                assert!(
                    !accepted.is_empty(),
                    "{} {}: no value accepted",
                    entry.name,
                    knob.name
                );
                assert!(
                    accepted.iter().all(|varied| *varied != config),
                    "{} {} changed nothing",
                    entry.name,
                    knob.name
                );
                // ...and zero never is: every rule set refuses it or something derived from it.
                assert!(
                    config.vary(&five(), knob.name, value(0)).is_err(),
                    "{} {}=0 accepted",
                    entry.name,
                    knob.name
                );
            }
            let config = entry.default_config();
            let unknown = config.vary(&five(), "no_such_knob", KnobValue::Duration(1));
            assert!(unknown.is_err(), "{}", entry.name);
        }
    }

    /// The design knob `knob` of `entry` is varied from in the test above: the default, or,
    /// for a knob of a service the default does not run (the Kubernetes Lease's etcd
    /// cluster), a design that runs it.
    fn knob_home(entry: &'static AlgorithmEntry, knob: &str) -> AlgorithmConfig {
        if entry.name == "k8s-lease" && knob == "service_election_timeout" {
            let etcd = crate::etcd::EtcdConfig {
                members: 3,
                ..crate::etcd::EtcdConfig::default()
            };
            let config = crate::k8s_lease::K8sConfig {
                etcd: Some(etcd),
                ..crate::k8s_lease::K8sConfig::default()
            };
            return AlgorithmConfig::new::<crate::k8s_lease::K8sLease>(config).expect("valid");
        }
        entry.default_config()
    }

    #[test]
    fn a_broken_rule_names_its_field_and_renders_with_its_hint() {
        let options = ron::Options::default().with_default_extension(
            ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES
                | ron::extensions::Extensions::IMPLICIT_SOME,
        );
        let settings = AlgorithmSettings::from_ron("Raft(heartbeat: \"400ms\")", &options).unwrap();
        let (_, problems) = settings.lower(&five());
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].field, "heartbeat");
        assert_eq!(
            problems[0].error.to_string(),
            "the shortest election timeout (\"150ms\") must be longer than the heartbeat (\"400ms\")"
                .replace('"', "")
        );
        assert!(problems[0].error.hint().unwrap().contains("heartbeat"));
    }
}
