//! Charts: well-formed SVG and PNG, the numbers behind them, determinism, edge cases.

use crate::common::*;
use splitbrain_reports::*;
use splitbrain_sim::NodeId;

/// Default lifeline names, a fenced resource, the trace's own terms.
const LABELS: SequenceLabels<'static> = SequenceLabels {
    node_names: &[],
    fenced: true,
    leadership: &[],
    members: None,
};

fn all_charts() -> Vec<Chart> {
    let report = run_report();
    let leases = [LeaseWindow {
        node: NodeId(4),
        from_ns: 5 * S + 182 * MS,
        to_ns: 20 * S,
    }];
    let objective = Objective {
        label: "objective: p99 ≤ 1s".to_string(),
        at_ns: S,
    };
    vec![
        failover_cdf(
            "cdf",
            "Failover <time> & more",
            "recovery time",
            &cdf_series(),
            Some(&objective),
        )
        .unwrap(),
        messages_per_election(
            "stacked",
            "Messages per election",
            "algorithm",
            &election_groups(),
        )
        .unwrap(),
        messages_vs_cluster_size(
            "scaling",
            "Messages against size",
            "messages",
            &scaling_series(),
        )
        .unwrap(),
        leadership_timeline("timeline", "Timeline", &report, &[], &leases).unwrap(),
        sequence_diagram(
            "sequence",
            "Sequence",
            &trace(3),
            900 * MS,
            1600 * MS,
            &LABELS,
        )
        .unwrap(),
    ]
}

/// Decodes a PNG: its width, height and 8-bit RGB pixels.
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a png header");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a sane png size")];
    let info = reader.next_frame(&mut pixels).expect("png pixels");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

fn svg_size(doc: &roxmltree::Document) -> (u32, u32) {
    let root = doc.root_element();
    let dim = |a| {
        root.attribute(a)
            .expect("svg size")
            .parse()
            .expect("a number")
    };
    (dim("width"), dim("height"))
}

#[test]
fn every_chart_is_a_well_formed_svg_with_its_title_as_text() {
    for chart in all_charts() {
        let doc = roxmltree::Document::parse(&chart.svg)
            .unwrap_or_else(|e| panic!("{}: svg does not parse: {e}", chart.name));
        assert_eq!(
            doc.root_element().tag_name().name(),
            "svg",
            "{}",
            chart.name
        );
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(
            texts.contains(&chart.title.as_str()),
            "{}: {texts:?}",
            chart.name
        );
    }
}

#[test]
fn every_chart_is_a_png_of_the_same_size_as_its_svg() {
    for chart in all_charts() {
        let (width, height, pixels) = decode_png(&chart.png);
        let doc = roxmltree::Document::parse(&chart.svg).unwrap();
        assert_eq!((width, height), svg_size(&doc), "{}", chart.name);
        assert_eq!(pixels.len(), width as usize * height as usize * 3);
    }
}

#[test]
fn png_text_is_drawn_with_the_embedded_font() {
    // The title sits in the top 40 rows, centred: without a font those rows would be blank.
    for chart in all_charts() {
        let (width, _, pixels) = decode_png(&chart.png);
        let row_bytes = width as usize * 3;
        let dark = pixels[..40 * row_bytes]
            .chunks(3)
            .filter(|p| p.iter().all(|&c| c < 100))
            .count();
        assert!(
            dark > 200,
            "{}: only {dark} dark pixels in the title band",
            chart.name
        );
    }
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    let (a, b) = (all_charts(), all_charts());
    for (x, y) in a.iter().zip(&b) {
        assert!(
            x.svg == y.svg,
            "{}: svg differs between two renders",
            x.name
        );
        assert!(
            x.png == y.png,
            "{}: png differs between two renders",
            x.name
        );
        assert_eq!(x.data, y.data);
    }
}

#[test]
fn different_inputs_give_different_pictures() {
    let mut series = cdf_series();
    let a = failover_cdf("cdf", "t", "x", &series, None).unwrap();
    series[0].samples_ns[0] += 40 * MS;
    let b = failover_cdf("cdf", "t", "x", &series, None).unwrap();
    assert_ne!(a.svg, b.svg);
    assert_ne!(a.png, b.png);
}

#[test]
fn the_cdf_data_is_every_sample_sorted_with_its_cumulative_fraction() {
    let series = cdf_series();
    let chart = failover_cdf("cdf", "t", "x", &series, None).unwrap();
    let csv = chart.data.to_csv();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("series,failover_ns,cumulative_fraction"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // raft: 4 samples and 1 unresolved, so fractions of 5.
    let raft: Vec<(u64, f64)> = rows
        .iter()
        .filter(|r| r[0] == "raft" && !r[1].is_empty())
        .map(|r| (r[1].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    let mut sorted = series[0].samples_ns.clone();
    sorted.sort();
    let expected: Vec<(u64, f64)> = sorted
        .iter()
        .enumerate()
        .map(|(i, &x)| (x, (i + 1) as f64 / 5.0))
        .collect();
    assert_eq!(raft, expected);
    let unresolved = rows.iter().filter(|r| r[0] == "raft" && r[1].is_empty());
    assert_eq!(unresolved.count(), 1);
    // The label with a comma-free but XML-special name is written as is.
    assert_eq!(rows.iter().filter(|r| r[0] == "bully <&>").count(), 2);
}

#[test]
fn the_stacked_bar_data_equals_the_input_means() {
    let groups = election_groups();
    let chart = messages_per_election("stacked", "t", "algorithm", &groups).unwrap();
    let expected: Vec<Vec<Cell>> = groups
        .iter()
        .flat_map(|g| {
            g.per_kind
                .iter()
                .map(|(k, m)| vec![g.label.as_str().into(), k.as_str().into(), (*m).into()])
        })
        .collect();
    assert_eq!(chart.data.rows, expected);
    assert!(chart
        .data
        .to_csv()
        .contains("\nraft,RequestVoteResp,4.25\n"));
}

#[test]
fn the_scaling_data_keeps_points_a_log_axis_cannot_show() {
    let chart = messages_vs_cluster_size("scaling", "t", "messages", &scaling_series()).unwrap();
    let csv = chart.data.to_csv();
    assert!(csv.contains("\nbully,7,0.0\n"), "{csv}");
    assert!(
        csv.contains("\nbully,3,5.0\nbully,5,14.0\n"),
        "sorted by size: {csv}"
    );
    assert_eq!(chart.data.rows.len(), 9);
}

#[test]
fn the_timeline_data_equals_the_runs_spans_and_faults() {
    let report = run_report();
    let chart = leadership_timeline("timeline", "t", &report, &[], &[]).unwrap();
    let rows = &chart.data.rows;
    let spans: Vec<(String, u64, u64, u64)> = rows
        .iter()
        .filter(|r| r[0] == Cell::from("leadership"))
        .map(|r| match (&r[1], &r[2], &r[3], &r[4]) {
            (Cell::Text(n), Cell::Uint(t), Cell::Uint(f), Cell::Uint(e)) => (n.clone(), *t, *f, *e),
            other => panic!("unexpected row {other:?}"),
        })
        .collect();
    let expected: Vec<(String, u64, u64, u64)> = report
        .leadership_spans
        .iter()
        .map(|s| (s.node.to_string(), s.term, s.from_ns, s.to_ns))
        .collect();
    assert_eq!(spans, expected);
    let faults: Vec<&Vec<Cell>> = rows
        .iter()
        .filter(|r| r[0] == Cell::from("fault"))
        .collect();
    assert_eq!(faults.len(), report.faults.len());
    assert_eq!(
        faults[2][4],
        Cell::Empty,
        "a fault that never healed has no end"
    );
    assert_eq!(faults[0][5], Cell::from("crash n1 (leader)"));
    // n0 led 9s..11s while n4 led: that is the overlap.
    let overlap: Vec<&Vec<Cell>> = rows
        .iter()
        .filter(|r| r[0] == Cell::from("overlap"))
        .collect();
    assert_eq!(overlap.len(), 1);
    assert_eq!(
        (&overlap[0][3], &overlap[0][4]),
        (&Cell::Uint(9 * S), &Cell::Uint(11 * S))
    );
}

#[test]
fn the_sequence_data_is_every_message_in_the_window() {
    let events = trace(0);
    let chart = sequence_diagram("sequence", "t", &events, 900 * MS, 1600 * MS, &LABELS).unwrap();
    let csv = chart.data.to_csv();
    let expected = "from,to,message,fate,sent_ns,received_ns,drawn\n\
                    n1,n2,RequestVote,delivered,1195000000,1200000000,true\n\
                    n1,n0,RequestVote,dropped,1195000000,1201000000,true\n\
                    n2,n1,RequestVoteResp,delivered,1200000000,1205000000,true\n\
                    n1,n2,RequestVote,delivered,1203000000,1206000000,true\n\
                    n0,resource,write,rejected,1290000000,1300000000,true\n";
    assert_eq!(csv, expected);
    let texts = chart.svg;
    for mark in [
        "crash",
        "restart",
        "election_safety",
        "rejected",
        "fault: crash n0 (leader)",
    ] {
        assert!(texts.contains(mark), "the diagram marks {mark}");
    }
}

#[test]
fn a_freeze_is_drawn_on_its_lifeline_from_freeze_to_resume() {
    let freeze =
        |t: u64, ev: &str, what: &str| line(t, Some(1), ev, what, None, None, Some(1), true, "ok");
    let text = [
        freeze(0, "start", ""),
        freeze(1000 * MS, "freeze", &(1500 * MS).to_string()),
        freeze(1500 * MS, "resume", ""),
    ]
    .join("\n");
    let events = parse_trace(&text).unwrap();
    let whole = sequence_diagram("sequence", "t", &events, 900 * MS, 1600 * MS, &LABELS).unwrap();
    for mark in ["frozen", "resumes", "amber band: paused or stalled"] {
        assert!(whole.svg.contains(mark), "the diagram marks {mark}");
    }
    // A window that opens during the freeze says so in the lifeline's header.
    let inside = sequence_diagram("sequence", "t", &events, 1200 * MS, 1600 * MS, &LABELS).unwrap();
    assert!(inside.svg.contains("leader t1 frozen"), "{}", inside.svg);
    // Without a freeze, no band and no note.
    let plain = sequence_diagram("sequence", "t", &trace(0), 900 * MS, 1600 * MS, &LABELS).unwrap();
    assert!(!plain.svg.contains("amber band"));
}

#[test]
fn claims_carry_the_summarys_terms_when_the_process_counts_otherwise() {
    // An etcd client's own term is the revision it saw (7, 8); the run numbers its claim 3.
    let text = [
        line(0, Some(1), "start", "", None, None, Some(7), false, "ok"),
        line(
            1000 * MS,
            Some(2),
            "start",
            "",
            None,
            None,
            Some(7),
            false,
            "ok",
        ),
        line(
            1100 * MS,
            Some(2),
            "timer",
            "x",
            None,
            None,
            Some(8),
            false,
            "ok",
        ),
        line(
            1200 * MS,
            Some(1),
            "timer",
            "x",
            None,
            None,
            Some(8),
            true,
            "ok",
        ),
    ]
    .join("\n");
    let events = parse_trace(&text).unwrap();
    let spans = [splitbrain_sim::report::LeadershipSpan {
        node: NodeId(1),
        term: 3,
        from_ns: 1200 * MS,
        to_ns: 2 * S,
    }];
    let labels = SequenceLabels {
        leadership: &spans,
        ..LABELS
    };
    let chart = sequence_diagram("s", "t", &events, 900 * MS, 1600 * MS, &labels).unwrap();
    assert!(chart.svg.contains("leads t3"), "{}", chart.svg);
    for process_term in ["t7", "t8", "term 7", "term 8"] {
        assert!(!chart.svg.contains(process_term), "{process_term}");
    }
    // Without the run's spans, the trace's own terms.
    let plain = sequence_diagram("s", "t", &events, 900 * MS, 1600 * MS, &LABELS).unwrap();
    assert!(plain.svg.contains("leads t8"));
}

#[test]
fn a_busy_window_draws_at_most_the_cap_and_says_so() {
    let events = trace(400);
    let chart = sequence_diagram("sequence", "t", &events, 900 * MS, 3 * S, &LABELS).unwrap();
    let total = 5 + 400;
    assert_eq!(chart.data.rows.len(), total);
    let drawn = chart
        .data
        .rows
        .iter()
        .filter(|r| r[6] == Cell::from("true"))
        .count();
    assert_eq!(drawn, SEQUENCE_MAX_ARROWS);
    let note = format!("showing the first {SEQUENCE_MAX_ARROWS} of {total} messages");
    assert!(chart.svg.contains(&note), "the chart says it is capped");
}

#[test]
fn a_busy_window_folds_the_services_own_messages_and_draws_the_rest() {
    let events = trace(400);
    // n0 is the only member: n1 and n2 play a service's processes, n3 is the resource.
    let labels = SequenceLabels {
        members: Some(1),
        ..LABELS
    };
    let chart = sequence_diagram("sequence", "t", &events, 900 * MS, 3 * S, &labels).unwrap();
    assert_eq!(
        chart.data.rows.len(),
        5 + 400,
        "the data keeps every message"
    );
    let service = |c: &Cell| c == &Cell::from("n1") || c == &Cell::from("n2");
    let internal = |r: &Vec<Cell>| service(&r[0]) && service(&r[1]);
    let folded = chart.data.rows.iter().filter(|r| internal(r)).count();
    assert!(
        folded > SEQUENCE_MAX_ARROWS,
        "the fixture is busy among n1 and n2"
    );
    for row in &chart.data.rows {
        let drawn = row[6] == Cell::from("true");
        assert_eq!(drawn, !internal(row), "{row:?}");
    }
    let note = format!(
        "{} messages; {folded} among service processes",
        405 - folded
    );
    assert!(chart.svg.contains(&note), "{}", chart.svg);
    // A quiet window folds nothing.
    let quiet = sequence_diagram("sequence", "t", &trace(10), 900 * MS, 3 * S, &labels).unwrap();
    assert!(quiet.data.rows.iter().all(|r| r[6] == Cell::from("true")));
}

#[test]
fn node_names_replace_the_default_ones() {
    let names = ["alpha".to_string(), "beta".to_string()];
    let chart = leadership_timeline("timeline", "t", &run_report(), &names, &[]).unwrap();
    assert!(chart.svg.contains("alpha") && chart.svg.contains(">\nn2\n<"));
    assert!(chart.data.to_csv().contains("\nleadership,beta,1,"));
}

#[test]
fn a_fault_on_a_service_past_the_members_gets_its_own_row() {
    let mut report = run_report();
    report.faults[0].nodes = vec![NodeId(5)];
    let names: Vec<String> = ["n0", "n1", "n2", "n3", "n4", "zk"]
        .map(String::from)
        .to_vec();
    let chart = leadership_timeline("timeline", "t", &report, &names, &[]).unwrap();
    assert!(chart.svg.contains(">\nzk\n<"));
    assert!(chart
        .data
        .to_csv()
        .contains("\nfault,zk,,5000000000,7000000000,crash n1 (leader)\n"));
}

#[test]
fn empty_inputs_still_draw_a_chart() {
    let mut empty_run = run_report();
    empty_run.leadership_spans.clear();
    empty_run.faults.clear();
    let charts = [
        failover_cdf("a", "t", "x", &[], None).unwrap(),
        failover_cdf(
            "b",
            "t",
            "x",
            &[CdfSeries {
                label: "x".into(),
                samples_ns: vec![],
                unresolved: 3,
            }],
            None,
        )
        .unwrap(),
        messages_per_election("c", "t", "g", &[]).unwrap(),
        messages_vs_cluster_size("d", "t", "m", &[]).unwrap(),
        leadership_timeline("e", "t", &empty_run, &[], &[]).unwrap(),
        sequence_diagram("f", "t", &[], 0, 0, &LABELS).unwrap(),
        sequence_diagram("g", "t", &trace(0), 5 * S, 6 * S, &LABELS).unwrap(),
    ];
    for chart in charts {
        roxmltree::Document::parse(&chart.svg).expect("svg parses");
        decode_png(&chart.png);
    }
}

#[test]
fn a_chart_name_must_be_a_file_stem() {
    for bad in ["", "Failover", "a/b", "a b", "../x"] {
        let err = failover_cdf(bad, "t", "x", &[], None).unwrap_err();
        assert!(matches!(err, ChartError::BadName { .. }), "{bad:?}: {err}");
    }
}

#[test]
fn a_recorder_fed_event_by_event_draws_the_same_diagrams_keeping_only_its_windows() {
    use splitbrain_sim::TraceSink;
    let events = trace(400);
    let windows = [(900 * MS, 1600 * MS), (1700 * MS, 1750 * MS)];
    let mut recorder = SequenceRecorder::new(&windows);
    for e in &events {
        recorder.record(e);
    }
    let traces = recorder.finish_windows();
    assert_eq!(traces.len(), windows.len());
    for ((from, to), window) in windows.iter().zip(&traces) {
        let inside = events.iter().filter(|e| (*from..=*to).contains(&e.t_ns));
        assert_eq!(window.events_kept(), inside.count());
        assert!(
            window.events_kept() < events.len() / 2,
            "only the window is kept"
        );
        let whole = sequence_diagram("s", "t", &events, *from, *to, &LABELS).unwrap();
        let kept = sequence_diagram_of("s", "t", window, &LABELS).unwrap();
        assert_eq!(kept, whole, "window {from}..={to}");
    }
}

/// The fixture's failover: the crash of n0 at 1 s, n1 elected at 1205 ms, and (if
/// `recovered`) its first write accepted at 1300 ms.
fn fixture_failover(recovered: bool) -> splitbrain_sim::report::Failover {
    splitbrain_sim::report::Failover {
        cause: "crash of leader n0".to_string(),
        fault_kind: "crash".to_string(),
        at_ns: S,
        old_leader: NodeId(0),
        old_term: 1,
        detection_ns: Some(195 * MS),
        election_ns: Some(205 * MS),
        recovery_ns: recovered.then_some(300 * MS),
        unavailable_ns: None,
        followers_heard_ns: None,
        rounds: 1,
        eligible_rounds: None,
        new_leader: Some(NodeId(1)),
        new_term: Some(2),
        outcome: splitbrain_sim::FailoverOutcome::Unresolved,
        leaderless_ns: 0,
        leader_claims: 0,
        episode_ns: 0,
        episode_stable: false,
    }
}

/// Feeds the fixture trace to `recorder`, the failover opening with the fault at 1 s and
/// closing at `closed_at_ns`.
fn feed_failover(
    recorder: &mut FailoverRecorder,
    events: &[splitbrain_sim::TraceEvent],
    failover: &splitbrain_sim::report::Failover,
    closed_at_ns: u64,
) {
    use splitbrain_sim::{EventKind, Milestone, TraceSink};
    let mut closed = false;
    for e in events {
        if !closed && e.t_ns > closed_at_ns {
            recorder.milestone(closed_at_ns, Milestone::FailoverClosed(failover));
            closed = true;
        }
        recorder.record(e);
        if matches!(e.kind, EventKind::Fault { .. }) {
            recorder.milestone(e.t_ns, Milestone::FailoverOpened);
        }
    }
    if !closed {
        recorder.milestone(closed_at_ns, Milestone::FailoverClosed(failover));
    }
}

#[test]
fn a_failover_recorder_keeps_in_one_pass_the_window_a_second_pass_would() {
    let events = trace(400);
    let cases = [
        // Recovered at 1300 ms: the window ends 100 ms later.
        (true, Settle::Recovery, 1300 * MS),
        // Never recovered, closed (superseded) much later: one second after the fault, or
        // 100 ms after the election; what was kept past that is trimmed.
        (false, Settle::Recovery, 1900 * MS),
        (false, Settle::RecoveryOrElection, 1900 * MS),
    ];
    for (recovered, settle, closed_at_ns) in cases {
        let failover = fixture_failover(recovered);
        let wanted = AroundFailovers {
            failovers: 1,
            settle,
            first_election: true,
        };
        let mut recorder = FailoverRecorder::new(wanted);
        feed_failover(&mut recorder, &events, &failover, closed_at_ns);
        let kept = recorder.finish_windows();
        assert_eq!(kept.first_election, None, "a failover: no election window");
        let [CapturedWindow::Kept(window)] = &kept.failovers[..] else {
            panic!("one kept window: {kept:?}");
        };
        let (from, to) = sequence_window(S, settle.settled_at(&failover));
        let whole = sequence_diagram("s", "t", &events, from, to, &LABELS).unwrap();
        let one_pass = sequence_diagram_of("s", "t", window, &LABELS).unwrap();
        assert_eq!(one_pass, whole, "{settle:?}, recovered {recovered}");
    }
}

#[test]
fn a_failover_window_open_past_its_budget_keeps_only_its_bounds() {
    let events = trace(400);
    let failover = fixture_failover(true);
    let wanted = AroundFailovers {
        failovers: 1,
        settle: Settle::Recovery,
        first_election: false,
    };
    let mut recorder = FailoverRecorder::new(wanted).with_budget(5);
    feed_failover(&mut recorder, &events, &failover, 1300 * MS);
    let kept = recorder.finish_windows();
    let (from_ns, to_ns) = sequence_window(S, Some(1300 * MS));
    assert_eq!(
        kept.failovers,
        vec![CapturedWindow::TooLong { from_ns, to_ns }]
    );
}

#[test]
fn a_run_without_failover_keeps_its_first_decided_election() {
    use splitbrain_sim::{Milestone, TraceSink};
    let events = trace(0);
    let election = splitbrain_sim::report::ElectionRecord {
        abandoned_ns: None,
        started_ns: 60 * MS,
        decided_ns: Some(100 * MS),
        winner: Some(NodeId(0)),
        term: Some(1),
        campaigns: 1,
        messages: Vec::new(),
    };
    let wanted = AroundFailovers {
        failovers: 3,
        settle: Settle::RecoveryOrElection,
        first_election: true,
    };
    let mut recorder = FailoverRecorder::new(wanted);
    for e in &events {
        if e.t_ns == 100 * MS {
            recorder.milestone(60 * MS, Milestone::ElectionOpened);
            recorder.milestone(100 * MS, Milestone::ElectionDecided(&election));
        }
        recorder.record(e);
    }
    let kept = recorder.finish_windows();
    assert!(kept.failovers.is_empty());
    let Some(CapturedWindow::Kept(window)) = &kept.first_election else {
        panic!("the election's window: {kept:?}");
    };
    let (from, to) = sequence_window(60 * MS, Some(100 * MS));
    let whole = sequence_diagram("s", "t", &events, from, to, &LABELS).unwrap();
    assert_eq!(
        sequence_diagram_of("s", "t", window, &LABELS).unwrap(),
        whole
    );
}

#[test]
fn long_design_names_are_shown_whole_in_legends_and_under_bars() {
    let names = [
        "raft-prevote-checkquorum-fenced",
        "raft-prevote-checkquorum-unfenced",
        "etcd-5s-session-ttl-fenced",
        "etcd-5s-session-ttl-unfenced",
        "k8s-client-go-defaults-fenced",
        "k8s-client-go-defaults-unfenced",
    ];
    let series: Vec<CdfSeries> = names
        .iter()
        .map(|name| CdfSeries {
            label: name.to_string(),
            samples_ns: vec![S, 2 * S],
            unresolved: 0,
        })
        .collect();
    let cdf = failover_cdf("cdf", "t", "x", &series, None).unwrap();
    for name in names {
        assert!(cdf.svg.contains(name), "{name} whole in the legend");
    }
    assert!(!cdf.svg.contains('…'), "nothing cut short");
    let bars: Vec<ElectionMessages> = names
        .iter()
        .map(|name| ElectionMessages {
            label: name.to_string(),
            per_kind: vec![("RequestVote".to_string(), 4.0)],
        })
        .collect();
    let chart = messages_per_election("bars", "t", "design", &bars).unwrap();
    assert!(!chart.svg.contains('…'), "nothing cut short");
    // Each name wraps at its dashes onto lines that together give it whole.
    for name in names {
        for piece in name.split_inclusive('-') {
            assert!(chart.svg.contains(piece), "{piece} of {name}");
        }
    }
}

#[test]
fn a_fault_or_lease_lasting_far_past_the_run_is_drawn_to_its_end() {
    // A stall of 876600h (the longest a scenario may hold) in a 20 s run, and a lease granted
    // as long: drawn to the run's end. Before, the backend's pixel arithmetic overflowed.
    let mut report = run_report();
    report.faults[0].healed_at_ns = Some(876_600 * 3600 * S);
    let leases = [LeaseWindow {
        node: NodeId(4),
        from_ns: 5 * S,
        to_ns: u64::MAX,
    }];
    let chart = leadership_timeline("timeline", "t", &report, &[], &leases).unwrap();
    assert!(chart.svg.starts_with("<svg"), "{}", &chart.svg[..80]);
    assert!(!chart.png.is_empty());
}
