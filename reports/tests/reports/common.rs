//! Small synthetic results shared by the tests: one run, one trace, chart inputs.

#![allow(dead_code)] // Each test module uses a different part.

use splitbrain_reports::{CdfSeries, ElectionMessages, ScalingSeries, TraceEvent};
use splitbrain_sim::report::{
    Counters, DropStats, FaultRecord, LeadershipSpan, LivenessVerdict, RunReport, WriteStats,
};
use splitbrain_sim::{NodeId, NANOS_PER_MILLI, NANOS_PER_SEC};
use std::path::PathBuf;

pub const MS: u64 = NANOS_PER_MILLI;
pub const S: u64 = NANOS_PER_SEC;

/// A five-node run: n1 leads, crashes at 5s, n4 takes over; a partition makes n0 believe it
/// leads too for a while; a clock jump that never heals.
pub fn run_report() -> RunReport {
    let span = |node, term, from_ns, to_ns| LeadershipSpan {
        node: NodeId(node),
        term,
        from_ns,
        to_ns,
    };
    RunReport {
        algorithm: "raft".to_string(),
        seed: 7,
        members: 5,
        signals: splitbrain_sim::SignalSupport::NONE,
        end_ns: 20 * S,
        events: 4709,
        leaders: Vec::new(),
        leadership_spans: vec![
            span(1, 1, 172 * MS, 5 * S),
            span(4, 2, 5 * S + 182 * MS, 20 * S),
            span(0, 1, 9 * S, 11 * S),
        ],
        lease_spans: Vec::new(),
        failovers: Vec::new(),
        elections: Vec::new(),
        futile_campaign_messages: Vec::new(),
        steady_state: Default::default(),
        messages: Vec::new(),
        drops: DropStats::default(),
        writes: WriteStats::default(),
        counters: Counters::default(),
        overlap_ns: 2 * S,
        acting_overlap_ns: 0,
        downtime: Vec::new(),
        faults: vec![
            FaultRecord {
                at_ns: 5 * S,
                kind: "crash".to_string(),
                description: "crash n1 (leader)".to_string(),
                nodes: vec![NodeId(1)],
                healed_at_ns: Some(7 * S),
                skipped: false,
                safety_violations: 0,
            },
            FaultRecord {
                at_ns: 9 * S,
                kind: "partition".to_string(),
                description: "partition: <n0> & \"the rest\"".to_string(),
                nodes: vec![NodeId(0)],
                healed_at_ns: Some(11 * S),
                skipped: false,
                safety_violations: 0,
            },
            FaultRecord {
                at_ns: 14 * S,
                kind: "clock_jump".to_string(),
                description: "clock jump n3 by -3s".to_string(),
                nodes: vec![NodeId(3)],
                healed_at_ns: None,
                skipped: false,
                safety_violations: 0,
            },
        ],
        violations: Vec::new(),
        liveness: LivenessVerdict::Met {
            quiet_from_ns: 11 * S,
            leader: NodeId(4),
            at_ns: 11 * S,
        },
        stall: None,
        final_leader: Some(NodeId(4)),
        observations: Vec::new(),
        measures: Vec::new(),
        curves: Vec::new(),
    }
}

/// One trace line, in the column order of docs/trace-format.md.
#[allow(clippy::too_many_arguments)]
pub fn line(
    t: u64,
    node: Option<u32>,
    ev: &str,
    what: &str,
    from: Option<u32>,
    sent: Option<u64>,
    term: Option<u64>,
    leader: bool,
    check: &str,
) -> String {
    let opt = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
    format!(
        "{{\"t\":{t},\"node\":{},\"local\":{},\"ev\":\"{ev}\",\"what\":\"{what}\",\"from\":{},\"sent\":{},\"term\":{},\"leader\":{leader},\"check\":\"{check}\"}}",
        opt(node.map(u64::from)),
        if node.is_some() { t.to_string() } else { "null".to_string() },
        opt(from.map(u64::from)),
        opt(sent),
        opt(term),
    )
}

/// A trace of a leader crash and an election among three nodes, with writes to the resource
/// (node 3), a dropped message, a rejected write and a broken invariant. `heartbeats` extra
/// heartbeat exchanges after the election make the window as busy as wanted.
pub fn trace_text(heartbeats: u64) -> String {
    let mut lines = vec![
        line(0, Some(0), "start", "", None, None, Some(0), false, "ok"),
        line(0, Some(1), "start", "", None, None, Some(0), false, "ok"),
        line(0, Some(2), "start", "", None, None, Some(0), false, "ok"),
        line(
            100 * MS,
            Some(0),
            "deliver",
            "RequestVoteResp",
            Some(1),
            Some(95 * MS),
            Some(1),
            true,
            "ok",
        ),
        line(
            200 * MS,
            Some(3),
            "write_accepted",
            "1",
            Some(0),
            Some(198 * MS),
            None,
            false,
            "ok",
        ),
        line(
            1000 * MS,
            Some(0),
            "crash",
            "",
            None,
            None,
            Some(1),
            false,
            "ok",
        ),
        line(
            1000 * MS,
            None,
            "fault",
            "crash n0 (leader)",
            None,
            None,
            None,
            false,
            "ok",
        ),
        line(
            1200 * MS,
            Some(2),
            "deliver",
            "RequestVote",
            Some(1),
            Some(1195 * MS),
            Some(2),
            false,
            "ok",
        ),
        line(
            1201 * MS,
            Some(0),
            "drop",
            "RequestVote",
            Some(1),
            Some(1195 * MS),
            Some(1),
            false,
            "ok",
        ),
        line(
            1205 * MS,
            Some(1),
            "deliver",
            "RequestVoteResp",
            Some(2),
            Some(1200 * MS),
            Some(2),
            true,
            "ok",
        ),
        line(
            1206 * MS,
            Some(2),
            "deliver",
            "RequestVote",
            Some(1),
            Some(1203 * MS),
            Some(2),
            true,
            "election_safety",
        ),
        line(
            1300 * MS,
            Some(3),
            "write_rejected",
            "1",
            Some(0),
            Some(1290 * MS),
            None,
            false,
            "ok",
        ),
        line(
            1400 * MS,
            Some(0),
            "restart",
            "",
            None,
            None,
            Some(1),
            false,
            "ok",
        ),
        line(
            1400 * MS,
            None,
            "heal",
            "crash n0 (leader)",
            None,
            None,
            None,
            false,
            "ok",
        ),
    ];
    for i in 0..heartbeats {
        let t = 1500 * MS + i * MS;
        lines.push(line(
            t + 500_000,
            Some(2),
            "deliver",
            "AppendEntries",
            Some(1),
            Some(t),
            Some(2),
            false,
            "ok",
        ));
    }
    lines.join("\n") + "\n"
}

pub fn trace(heartbeats: u64) -> Vec<TraceEvent> {
    splitbrain_reports::parse_trace(&trace_text(heartbeats)).expect("the fixture parses")
}

pub fn cdf_series() -> Vec<CdfSeries> {
    vec![
        CdfSeries {
            label: "raft".to_string(),
            samples_ns: vec![300 * MS, 150 * MS, 220 * MS, 180 * MS],
            unresolved: 1,
        },
        CdfSeries {
            label: "bully <&>".to_string(),
            samples_ns: vec![250 * MS, 2 * S],
            unresolved: 0,
        },
    ]
}

pub fn election_groups() -> Vec<ElectionMessages> {
    let kinds = |pairs: &[(&str, f64)]| pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect();
    vec![
        ElectionMessages {
            label: "raft".to_string(),
            per_kind: kinds(&[("RequestVote", 4.5), ("RequestVoteResp", 4.25)]),
        },
        ElectionMessages {
            label: "bully".to_string(),
            per_kind: kinds(&[("Election", 6.0), ("Ok", 3.0), ("Coordinator", 4.0)]),
        },
    ]
}

pub fn scaling_series() -> Vec<ScalingSeries> {
    vec![
        ScalingSeries {
            label: "raft".to_string(),
            points: vec![(3, 4.0), (5, 8.0), (9, 16.0), (51, 100.0)],
        },
        ScalingSeries {
            label: "bully".to_string(),
            points: vec![(5, 14.0), (3, 5.0), (9, 44.0), (51, 1300.0), (7, 0.0)],
        },
    ]
}

/// A fresh empty directory under the system's temporary directory.
pub fn scratch_dir(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("splitbrain-reports-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
