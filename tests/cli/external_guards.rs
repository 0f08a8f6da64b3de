//! Issue 43, points 9 to 11, end to end through the binary: settings a service's form would
//! ignore are refused where they are written; a hunt's `--jsonl` on a FIFO and a signal
//! before its seed loop never leave it hanging; a scenario that starts programs says which,
//! before starting them, and `check` finds a program that cannot be started.

use crate::common;

use common::{assert_no_panic, scratch, splitbrain, stderr};
use std::path::PathBuf;

/// `text` written as `name.ron` in a scratch folder of `name`.
#[track_caller]
fn scenario_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(name).join(format!("{name}.ron"));
    std::fs::write(&path, text).expect("write the scenario");
    path
}

/// Point 9: each setting that its form would ignore fails `check` with exit 2, at its line
/// and column, with a hint; before, each passed and ran as if it were not written.
#[test]
fn check_refuses_settings_a_service_would_ignore_at_their_place() {
    let cases = [
        (
            "k8s-cluster",
            "Scenario(\n    nodes: 3,\n    algorithm: ExternalClient(\n        command: [\"python3\", \"tests/fixtures/external/etcd_client.py\"],\n        service: K8sLease(etcd_members: 3, apiservers: 2),\n    ),\n)\n",
            ":5:41: the service's `etcd_members` is a setting of a clustered service",
        ),
        (
            "zk-init-limit",
            "Scenario(\n    nodes: 3,\n    algorithm: ZooKeeper(init_limit: 20),\n)\n",
            ":3:38: `init_limit` is a setting of a ZooKeeper ensemble",
        ),
        (
            "etcd-version",
            "Scenario(\n    nodes: 3,\n    algorithm: Etcd(version: \"3.5\"),\n)\n",
            ":3:30: `version` is a setting of an etcd cluster",
        ),
    ];
    for (name, text, expected) in cases {
        let path = scenario_file(name, text);
        let output = splitbrain(["check", path.to_str().expect("a UTF-8 path")]);
        assert_no_panic(&output);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!("{name}.ron{expected}")),
            "{name}: {err}"
        );
        assert!(err.contains("hint: "), "{name}: {err}");
    }
}
