use super::*;

fn span(node: u32, from_ns: Nanos, to_ns: Nanos) -> LeadershipSpan {
    LeadershipSpan {
        node: NodeId::from(node as usize),
        term: 1,
        from_ns,
        to_ns,
    }
}

fn fault(kind: &str, node: u32, at_ns: Nanos, healed_at_ns: Option<Nanos>) -> FaultRecord {
    FaultRecord {
        at_ns,
        kind: kind.to_string(),
        description: format!("{kind} n{node}"),
        nodes: vec![NodeId::from(node as usize)],
        healed_at_ns,
        skipped: false,
        safety_violations: 0,
    }
}

fn n(i: usize) -> NodeId {
    NodeId::from(i)
}

#[test]
fn a_leader_that_takes_its_leadership_back_late_is_downtime_with_the_same_holder() {
    let d = downtime(
        &[span(1, 1_000, 4_000), span(1, 6_000, 9_000)],
        &[],
        3,
        9_000,
    );
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].from_ns, d[0].to_ns, d[0].recovered),
        (4_000, 6_000, true)
    );
    assert!(d[0].same_holder());
    assert_eq!(d[0].cause, DowntimeCause::Spurious);
}

#[test]
fn a_paused_leader_that_still_believes_it_leads_cannot_act() {
    let spans = [span(0, 0, 10_000)];
    let d = downtime(&spans, &[fault("pause", 0, 3_000, Some(5_000))], 3, 10_000);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].from_ns, d[0].to_ns), (3_000, 5_000));
    assert_eq!((d[0].leader_before, d[0].leader_after), (n(0), Some(n(0))));
    assert_eq!(d[0].cause, DowntimeCause::MemberFault);
}

#[test]
fn a_fault_on_a_service_process_makes_it_a_service_fault() {
    // 3 members; process 3 is the service's first member.
    let spans = [span(0, 0, 4_000), span(2, 7_000, 10_000)];
    let crash = fault("crash", 3, 2_000, Some(6_000));
    let d = downtime(&spans, std::slice::from_ref(&crash), 3, 10_000);
    assert_eq!(d[0].cause, DowntimeCause::ServiceFault);
    assert!(!d[0].same_holder());
    // The same crash on a member is a member fault.
    let on_member = fault("crash", 1, 2_000, Some(6_000));
    let d = downtime(&spans, &[on_member], 3, 10_000);
    assert_eq!(d[0].cause, DowntimeCause::MemberFault);
}

#[test]
fn a_leader_crashed_for_good_with_nobody_after_it_is_unrecovered() {
    let d = downtime(
        &[span(0, 0, 4_000)],
        &[fault("crash", 0, 4_000, None)],
        3,
        10_000,
    );
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].to_ns, d[0].recovered, d[0].leader_after),
        (10_000, false, None)
    );
    assert_eq!(d[0].cause, DowntimeCause::MemberFault);
}

#[test]
fn the_election_at_start_up_and_a_handover_at_one_instant_are_no_downtime() {
    assert!(downtime(&[span(0, 2_000, 10_000)], &[], 3, 10_000).is_empty());
    let handover = [span(0, 1_000, 5_000), span(1, 5_000, 10_000)];
    assert!(downtime(&handover, &[], 3, 10_000).is_empty());
}

#[test]
fn a_one_off_fault_counts_only_if_it_struck_since_the_group_last_recovered() {
    let spans = [span(0, 2_000, 4_000), span(1, 6_000, 9_000)];
    let before = fault("clock_jump", 1, 1_000, None);
    let d = downtime(&spans, &[before], 3, 9_000);
    assert_eq!(
        d[0].cause,
        DowntimeCause::Spurious,
        "struck before the leader was up"
    );
    let since = fault("clock_jump", 1, 3_000, None);
    let d = downtime(&spans, &[since], 3, 9_000);
    assert_eq!(d[0].cause, DowntimeCause::MemberFault);
    // A partition never healed stays a cause, whenever it began.
    let partition = fault("partition", 2, 1_000, None);
    let d = downtime(&spans, &[partition], 3, 9_000);
    assert_eq!(d[0].cause, DowntimeCause::MemberFault);
}

#[test]
fn a_skipped_fault_is_no_cause() {
    let spans = [span(0, 0, 4_000), span(1, 6_000, 9_000)];
    let mut skipped = fault("crash", 0, 3_000, None);
    skipped.skipped = true;
    assert_eq!(
        downtime(&spans, &[skipped], 3, 9_000)[0].cause,
        DowntimeCause::Spurious
    );
}

#[test]
fn a_frozen_leader_does_not_overlap_the_leader_that_replaced_it() {
    let spans = [span(0, 0, 10_000), span(1, 4_000, 10_000)];
    assert_eq!(acting_overlap_ns(&spans, &[], 10_000), 6_000);
    let paused = fault("pause", 0, 3_000, None);
    assert_eq!(acting_overlap_ns(&spans, &[paused], 10_000), 0);
    let resumed = fault("pause", 0, 3_000, Some(8_000));
    assert_eq!(acting_overlap_ns(&spans, &[resumed], 10_000), 2_000);
}

#[test]
fn the_latest_fault_decides_the_cause_not_a_service_blip_ridden_out_before() {
    // A service member paused at 2 s (the leader rode it out), then the leader crashed at 6 s.
    let spans = [span(0, 0, 6_000), span(1, 8_000, 10_000)];
    let blip = fault("pause", 3, 2_000, Some(3_000));
    let crash = fault("crash", 0, 6_000, None);
    let d = downtime(&spans, &[blip.clone(), crash], 3, 10_000);
    assert_eq!(d[0].cause, DowntimeCause::MemberFault);
    // The other way round: a member fault ridden out, then the service's.
    let member_blip = fault("pause", 2, 2_000, Some(3_000));
    let service_crash = fault("crash", 3, 6_000, None);
    let d = downtime(&spans, &[member_blip, service_crash], 3, 10_000);
    assert_eq!(d[0].cause, DowntimeCause::ServiceFault);
}
