//! Renders every chart from realistic synthetic data (and, given trace files, sequence
//! diagrams of real runs) into one output folder, to look at them as a reader would.
//!
//! ```sh
//! splitbrain run scenarios/raft-leader-crash.ron --json --trace /tmp/t.jsonl > /tmp/t.json
//! cargo run -p splitbrain-reports --example gallery -- /tmp/gallery/out [/tmp/t.json /tmp/t.jsonl]...
//! ```
//!
//! Each `run --json` output gives a leadership timeline (the JSON is read field by field:
//! `RunReport` is not `Deserialize`); its trace, a sequence diagram around its first failover.

use splitbrain_reports::{
    failover_cdf, leadership_timeline, messages_per_election, messages_vs_cluster_size,
    parse_trace, sequence_diagram, sequence_window, write_report, CdfSeries, Chart, DataTable,
    ElectionMessages, LeaseWindow, Objective, ReportDoc, ScalingSeries, Section, SequenceLabels,
    Table,
};
use splitbrain_sim::report::{
    Counters, DropStats, FaultRecord, LeadershipSpan, LivenessVerdict, RunReport, WriteStats,
};
use splitbrain_sim::{NodeId, NANOS_PER_MILLI, NANOS_PER_SEC};
use std::path::PathBuf;

/// A small deterministic generator (xorshift), so the gallery needs no rand dependency.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn failover_samples(rng: &mut Xorshift, base_ms: u64, spread_ms: u64, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            let mut ms = base_ms + rng.below(spread_ms);
            // A tail: one failover in eight needs a second round.
            if rng.below(8) == 0 {
                ms += base_ms + rng.below(spread_ms);
            }
            ms * NANOS_PER_MILLI + rng.below(NANOS_PER_MILLI)
        })
        .collect()
}

fn synthetic_report() -> RunReport {
    let s = NANOS_PER_SEC;
    let span = |node: u32, term: u64, from_ns: u64, to_ns: u64| LeadershipSpan {
        node: NodeId(node),
        term,
        from_ns,
        to_ns,
    };
    let fault = |at_ns: u64, kind: &str, description: &str, nodes: &[u32], healed: Option<u64>| {
        FaultRecord {
            at_ns,
            kind: kind.to_string(),
            description: description.to_string(),
            nodes: nodes.iter().map(|&n| NodeId(n)).collect(),
            healed_at_ns: healed,
            skipped: false,
            safety_violations: 0,
        }
    };
    RunReport {
        algorithm: "lease".to_string(),
        seed: 7,
        members: 5,
        signals: splitbrain_sim::SignalSupport::NONE,
        end_ns: 30 * s,
        events: 12_345,
        leaders: Vec::new(),
        leadership_spans: vec![
            span(1, 1, 172 * NANOS_PER_MILLI, 5 * s),
            span(4, 2, 5 * s + 182 * NANOS_PER_MILLI, 12 * s),
            span(0, 3, 11 * s + 300 * NANOS_PER_MILLI, 20 * s),
            span(4, 2, 12 * s + 500 * NANOS_PER_MILLI, 13 * s),
            span(2, 4, 20 * s + 400 * NANOS_PER_MILLI, 30 * s),
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
        overlap_ns: 1_200 * NANOS_PER_MILLI,
        acting_overlap_ns: 0,
        downtime: Vec::new(),
        faults: vec![
            fault(5 * s, "crash", "crash n1 (leader)", &[1], Some(7 * s)),
            fault(
                10 * s,
                "pause",
                "pause n4 (leader) for 3s",
                &[4],
                Some(13 * s),
            ),
            fault(15 * s, "clock_jump", "clock jump n3 by -3s", &[3], None),
            fault(
                20 * s,
                "partition",
                "partition isolate n0 (leader) & <others>",
                &[0],
                Some(25 * s),
            ),
        ],
        violations: Vec::new(),
        liveness: LivenessVerdict::Met {
            quiet_from_ns: 25 * s,
            leader: NodeId(2),
            at_ns: 25 * s + 40 * NANOS_PER_MILLI,
        },
        stall: None,
        final_leader: Some(NodeId(2)),
        observations: Vec::new(),
        measures: Vec::new(),
        curves: Vec::new(),
    }
}

/// The fields of a `run --json` report that the timeline draws.
fn report_from_json(r: &serde_json::Value) -> RunReport {
    let mut report = synthetic_report();
    let u = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    report.algorithm = r["algorithm"].as_str().unwrap_or("").to_string();
    report.seed = u(&r["seed"]);
    report.members = u(&r["members"]) as usize;
    report.end_ns = u(&r["end_ns"]);
    report.overlap_ns = u(&r["overlap_ns"]);
    report.leadership_spans = r["leadership_spans"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| LeadershipSpan {
            node: NodeId(u(&s["node"]) as u32),
            term: u(&s["term"]),
            from_ns: u(&s["from_ns"]),
            to_ns: u(&s["to_ns"]),
        })
        .collect();
    report.faults = r["faults"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| FaultRecord {
            at_ns: u(&f["at_ns"]),
            kind: f["kind"].as_str().unwrap_or("").to_string(),
            description: f["description"].as_str().unwrap_or("").to_string(),
            nodes: f["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| NodeId(u(n) as u32))
                .collect(),
            healed_at_ns: f["healed_at_ns"].as_u64(),
            skipped: false,
            safety_violations: 0,
        })
        .collect();
    report
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().map_or("/tmp/gallery/out", String::as_str));
    let mut rng = Xorshift(0x5EED);
    let mut charts: Vec<Chart> = Vec::new();

    let series = vec![
        CdfSeries {
            label: "raft".to_string(),
            samples_ns: failover_samples(&mut rng, 160, 160, 200),
            unresolved: 0,
        },
        CdfSeries {
            label: "raft (pre-vote)".to_string(),
            samples_ns: failover_samples(&mut rng, 180, 170, 200),
            unresolved: 0,
        },
        CdfSeries {
            label: "bully".to_string(),
            samples_ns: failover_samples(&mut rng, 250, 100, 200),
            unresolved: 6,
        },
        CdfSeries {
            label: "ring".to_string(),
            samples_ns: failover_samples(&mut rng, 300, 400, 200),
            unresolved: 0,
        },
    ];
    let objective = Objective {
        label: "objective: p99 ≤ 1s".to_string(),
        at_ns: NANOS_PER_SEC,
    };
    charts.push(failover_cdf(
        "failover-cdf",
        "Failover time by algorithm (fault to new leader's first write)",
        "failover time",
        &series,
        Some(&objective),
    )?);

    let kinds = |pairs: &[(&str, f64)]| -> Vec<(String, f64)> {
        pairs.iter().map(|&(k, m)| (k.to_string(), m)).collect()
    };
    let groups = vec![
        ElectionMessages {
            label: "raft".to_string(),
            per_kind: kinds(&[("RequestVote", 4.6), ("RequestVoteResp", 4.3)]),
        },
        ElectionMessages {
            label: "raft (pre-vote)".to_string(),
            per_kind: kinds(&[
                ("PreVote", 4.2),
                ("PreVoteResp", 4.1),
                ("RequestVote", 4.5),
                ("RequestVoteResp", 4.2),
            ]),
        },
        ElectionMessages {
            label: "bully".to_string(),
            per_kind: kinds(&[("Election", 6.0), ("Ok", 3.0), ("Coordinator", 4.0)]),
        },
        ElectionMessages {
            label: "ring".to_string(),
            per_kind: kinds(&[("Election", 7.5), ("Elected", 5.0), ("Ack", 12.5)]),
        },
    ];
    charts.push(messages_per_election(
        "messages-per-election",
        "Messages per election by type",
        "algorithm",
        &groups,
    )?);

    let sizes = [3u64, 5, 7, 9, 15, 25, 51];
    let scaling = vec![
        ScalingSeries {
            label: "raft".to_string(),
            points: sizes
                .iter()
                .map(|&n| (n, 2.0 * (n - 1) as f64 * 1.1))
                .collect(),
        },
        ScalingSeries {
            label: "bully".to_string(),
            points: sizes
                .iter()
                .map(|&n| (n, (n * (n - 1)) as f64 / 2.0 + n as f64))
                .collect(),
        },
        ScalingSeries {
            label: "ring (all ids)".to_string(),
            points: sizes.iter().map(|&n| (n, (n * n) as f64 * 1.5)).collect(),
        },
        ScalingSeries {
            label: "ring (Chang-Roberts)".to_string(),
            points: sizes.iter().map(|&n| (n, 3.0 * n as f64)).collect(),
        },
    ];
    charts.push(messages_vs_cluster_size(
        "messages-vs-cluster-size",
        "Messages per election against cluster size",
        "messages per election",
        &scaling,
    )?);

    // A sweep: one parameter, six values, long labels.
    let values = [
        "100ms..200ms",
        "150ms..300ms",
        "200ms..400ms",
        "300ms..600ms",
        "500ms..1s",
        "1s..2s",
    ];
    let sweep: Vec<CdfSeries> = values
        .iter()
        .enumerate()
        .map(|(i, v)| CdfSeries {
            label: format!("election_timeout={v}"),
            samples_ns: failover_samples(&mut rng, 100 << i.min(4), 100 << i.min(4), 100),
            unresolved: 0,
        })
        .collect();
    charts.push(failover_cdf(
        "sweep-cdf",
        "Recovery time by election timeout (raft, 100 trials each)",
        "recovery time",
        &sweep,
        None,
    )?);
    let sweep_messages: Vec<ElectionMessages> = values
        .iter()
        .enumerate()
        .map(|(i, v)| ElectionMessages {
            label: v.to_string(),
            per_kind: kinds(&[
                ("RequestVote", 4.0 + 2.0 / (i + 1) as f64),
                ("RequestVoteResp", 4.0 + 1.0 / (i + 1) as f64),
            ]),
        })
        .collect();
    charts.push(messages_per_election(
        "sweep-messages",
        "Messages per election by election timeout",
        "election timeout (min..max)",
        &sweep_messages,
    )?);
    let mut nemesis = synthetic_report();
    nemesis.members = 7;
    nemesis.end_ns = 60 * NANOS_PER_SEC;
    nemesis.faults = (0..14u64)
        .map(|i| FaultRecord {
            at_ns: (3 + 4 * i) * NANOS_PER_SEC,
            kind: if i % 3 == 0 { "clock_jump" } else { "pause" }.to_string(),
            description: format!("nemesis fault {i}: pause n{} for 1.5s", i % 7),
            nodes: vec![NodeId((i % 7) as u32)],
            healed_at_ns: (i % 3 != 0)
                .then_some((3 + 4 * i) * NANOS_PER_SEC + 1_500 * NANOS_PER_MILLI),
            skipped: false,
            safety_violations: 0,
        })
        .collect();
    nemesis.leadership_spans = (0..20u64)
        .map(|i| LeadershipSpan {
            node: NodeId((i * 3 % 7) as u32),
            term: i + 1,
            from_ns: i * 3 * NANOS_PER_SEC,
            to_ns: (i * 3 + 3) * NANOS_PER_SEC - 200 * NANOS_PER_MILLI,
        })
        .collect();
    charts.push(leadership_timeline(
        "timeline-nemesis",
        "Leadership timeline: random nemesis, 7 nodes",
        &nemesis,
        &[],
        &[],
    )?);

    let report = synthetic_report();
    let leases: Vec<LeaseWindow> = report
        .leadership_spans
        .iter()
        .map(|s| LeaseWindow {
            node: s.node,
            from_ns: s.from_ns,
            to_ns: (s.to_ns + 800 * NANOS_PER_MILLI).min(report.end_ns),
        })
        .collect();
    charts.push(leadership_timeline(
        "timeline-lease",
        "Leadership timeline: lease, seed 7",
        &report,
        &[],
        &leases,
    )?);

    // Real runs: `run --json` output and its trace, in pairs.
    let mut real_sections = Vec::new();
    for pair in args[1..].chunks(2) {
        let [json_path, trace_path] = pair else {
            return Err("real runs come as RUN.json TRACE.jsonl pairs".into());
        };
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json_path)?)?;
        let scenario = json["scenario"].as_str().unwrap_or("run").to_string();
        let report = report_from_json(&json["report"]);
        let mut section = Section::new(format!("Real run: {scenario}"));
        let name = format!("timeline-{scenario}");
        charts.push(leadership_timeline(
            &name,
            &format!("Leadership timeline: {scenario}, seed {}", report.seed),
            &report,
            &[],
            &[],
        )?);
        section = section.chart(name);
        let failover = &json["report"]["failovers"][0];
        if let Some(at) = failover["at_ns"].as_u64() {
            let settled = failover["recovery_ns"].as_u64().map(|r| at + r);
            let events = parse_trace(&std::fs::read_to_string(trace_path)?)?;
            let (from, to) = sequence_window(at, settled);
            let name = format!("sequence-{scenario}");
            charts.push(sequence_diagram(
                &name,
                &format!("Messages around the failover: {scenario}"),
                &events,
                from,
                to,
                &SequenceLabels {
                    fenced: true,
                    ..SequenceLabels::default()
                },
            )?);
            section = section.chart(name);
        }
        real_sections.push(section);
    }

    let mut summary = Table::new(&["algorithm", "n", "p50", "p99", "unresolved"]);
    for s in &series {
        let d = splitbrain_reports::Distribution::from_nanos(&s.samples_ns).expect("samples");
        summary.push(vec![
            s.label.clone(),
            d.count.to_string(),
            splitbrain_sim::format_duration(d.p50_ns),
            splitbrain_sim::format_duration(d.p99_ns),
            s.unresolved.to_string(),
        ]);
    }
    let mut extra = DataTable::new("failover-summary", &["algorithm", "p50_ns", "p99_ns"]);
    for s in &series {
        let d = splitbrain_reports::Distribution::from_nanos(&s.samples_ns).expect("samples");
        extra.push(vec![
            s.label.as_str().into(),
            d.p50_ns.into(),
            d.p99_ns.into(),
        ]);
    }
    let doc = ReportDoc {
        title: "Gallery: every chart on synthetic data".to_string(),
        command: "cargo run -p splitbrain-reports --example gallery".to_string(),
        seeds: vec![1, 2, 3, 4, 5, 9],
        facts: vec![("scenario".to_string(), "synthetic".to_string())],
        sections: vec![
            Section::new("Failover time")
                .text("Synthetic samples; the bully series has 6 unresolved failovers.")
                .table(summary)
                .chart("failover-cdf"),
            Section::new("Messages")
                .chart("messages-per-election")
                .chart("messages-vs-cluster-size"),
            Section::new("Timeline")
                .chart("timeline-lease")
                .chart("timeline-nemesis"),
            Section::new("Sweep")
                .chart("sweep-cdf")
                .chart("sweep-messages"),
        ],
    };
    let mut doc = doc;
    doc.sections.extend(real_sections);
    let written = write_report(&out, &doc, &charts, &[extra])?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(())
}
