//! `run --stop-at` (stop a run and print every process's state there) and the `--trace`
//! filters `--trace-nodes` and `--trace-window`.

use splitbrain_sim::engine::{NodeStatus, Reached, Snapshot, StopAt};
pub use splitbrain_sim::trace::{Filtered, Window};
use splitbrain_sim::{Nanos, NodeId};

/// Parses `--stop-at`: a true time in the scenario's duration syntax (`12.5s`, `1m30s`,
/// `800ms`) or `#N`, the N-th trace event (the line number in a `--trace` file, from 1).
pub fn parse_stop_at(text: &str) -> Result<StopAt, String> {
    if let Some(number) = text.strip_prefix('#') {
        return match number.parse::<u64>() {
            Ok(0) => Err("trace events count from #1".to_string()),
            Ok(n) => Ok(StopAt::TraceEvent(n)),
            Err(_) => Err(format!(
                "{number:?} is not an event number (write e.g. '#1234', quoted for the shell)"
            )),
        };
    }
    splitbrain_sim::duration::parse_duration(text)
        .map(StopAt::Time)
        .map_err(|e| {
            format!("{e} (write a true time such as 12.5s, or an event number such as '#1234')")
        })
}

/// Parses `--trace-window FROM..TO` (`5s..10s`, `..2s`, `30s..`).
pub fn parse_window(text: &str) -> Result<Window, String> {
    let Some((from, to)) = text.split_once("..") else {
        return Err("write the window as FROM..TO, e.g. 5s..10s".to_string());
    };
    let end = |part: &str, default: Nanos| match part {
        "" => Ok(default),
        _ => splitbrain_sim::duration::parse_duration(part).map_err(|e| format!("{part:?}: {e}")),
    };
    let window = Window {
        from_ns: end(from, 0)?,
        to_ns: end(to, Nanos::MAX)?,
    };
    if window.from_ns > window.to_ns {
        return Err(format!("the window ends ({to}) before it begins ({from})"));
    }
    Ok(window)
}

/// Prints where the run stopped and every process's state and message there.
pub fn print_snapshot(reached: Reached, snapshot: &Snapshot, names: &[String]) {
    let at = seconds(snapshot.at_ns);
    match reached {
        Reached::Stop => crate::outln!("stopped at {at}"),
        Reached::End => crate::outln!("the run ended at {at}, before the stop"),
    }
    crate::outln!(
        "after trace event #{} (engine event {}); times are true time unless marked local",
        snapshot.trace_events,
        snapshot.events
    );
    for node in &snapshot.nodes {
        print_node(node, names);
    }
    print_in_flight(snapshot, names);
}

/// `ns` as exact seconds: `5.1003264s`, `0s`.
fn seconds(ns: Nanos) -> String {
    signed_seconds(i128::from(ns))
}

/// A clock reading (may be negative) as exact seconds.
fn signed_seconds(ns: impl Into<i128>) -> String {
    let ns: i128 = ns.into();
    let sign = if ns < 0 { "-" } else { "" };
    let (whole, frac) = (ns.abs() / 1_000_000_000, ns.abs() % 1_000_000_000);
    if frac == 0 {
        return format!("{sign}{whole}s");
    }
    let digits = format!("{frac:09}");
    format!("{sign}{whole}.{}s", digits.trim_end_matches('0'))
}

fn name_of(names: &[String], node: NodeId) -> String {
    names
        .get(node.index())
        .cloned()
        .unwrap_or_else(|| node.to_string())
}

fn print_node(node: &splitbrain_sim::engine::NodeSnapshot, names: &[String]) {
    let status = match node.status {
        NodeStatus::Up => "up".to_string(),
        NodeStatus::Crashed => "CRASHED".to_string(),
        NodeStatus::Paused { until_ns } => format!("PAUSED until {}", seconds(until_ns)),
        NodeStatus::Suspended { until_ns } => format!("SUSPENDED until {}", seconds(until_ns)),
    };
    let leads = node
        .leads_term
        .map_or(String::new(), |t| format!(", leads term {t}"));
    let knows = node
        .known_leader
        .map_or("none".to_string(), |l| name_of(names, l));
    crate::outln!();
    crate::outln!(
        "{}: {:?}, term {}{leads}, {status}; knows leader {knows}",
        name_of(names, node.node),
        node.role,
        node.term
    );
    let c = &node.clocks;
    let timers_on = if c.timers_on_wall {
        " (timers on wall)"
    } else {
        ""
    };
    crate::outln!(
        "  clocks: monotonic {}, wall {}, drift {} ppm{timers_on}",
        signed_seconds(c.monotonic_ns),
        signed_seconds(c.wall_ns),
        c.drift_ppm
    );
    if let Some(stall_ns) = node.stall_armed_ns {
        crate::outln!("  stall armed: {} in its next handler", seconds(stall_ns));
    }
    if node.deferred_effects > 0 || node.held_events > 0 {
        crate::outln!(
            "  held: {} events, {} deferred effects of a stalled handler",
            node.held_events,
            node.deferred_effects
        );
    }
    for timer in &node.timers {
        let clock = if timer.wall { "wall" } else { "local" };
        crate::outln!(
            "  timer {}: due {} ({clock} {})",
            timer.name,
            seconds(timer.due_ns),
            signed_seconds(timer.due_local_ns)
        );
    }
    if !node.disk.pending_fsyncs_ns.is_empty() || node.disk.waiting_output > 0 {
        let done: Vec<String> = node
            .disk
            .pending_fsyncs_ns
            .iter()
            .map(|ns| seconds(*ns))
            .collect();
        crate::outln!(
            "  disk: fsyncs done at [{}], {} sends waiting",
            done.join(", "),
            node.disk.waiting_output
        );
    }
    if !node.state.is_empty() {
        let fields: Vec<String> = node
            .state
            .iter()
            .map(|f| format!("{}={}", f.name, f.value))
            .collect();
        let label = match node.status {
            NodeStatus::Crashed => "state (as the crash left it)",
            _ => "state",
        };
        crate::outln!("  {label}: {}", fields.join(" "));
    }
}

fn print_in_flight(snapshot: &Snapshot, names: &[String]) {
    crate::outln!();
    crate::outln!("messages in flight: {}", snapshot.in_flight.len());
    for m in &snapshot.in_flight {
        let due = match m.due_ns {
            Some(ns) => format!("due {}", seconds(ns)),
            None => "held at the paused receiver".to_string(),
        };
        crate::outln!(
            "  {} -> {} {}: sent {}, {due}",
            name_of(names, m.from),
            name_of(names, m.to),
            m.message,
            seconds(m.sent_ns)
        );
    }
    if snapshot.held_on_streams > 0 {
        crate::outln!(
            "  and {} held back on Stream connections",
            snapshot.held_on_streams
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_points_read_as_times_or_event_numbers() {
        assert_eq!(parse_stop_at("12.5s"), Ok(StopAt::Time(12_500_000_000)));
        assert_eq!(parse_stop_at("#1234"), Ok(StopAt::TraceEvent(1234)));
        assert!(parse_stop_at("#0").is_err());
        assert!(parse_stop_at("#x").is_err());
        assert!(parse_stop_at("soon").is_err());
    }

    #[test]
    fn times_print_as_exact_seconds() {
        assert_eq!(seconds(5_100_326_400), "5.1003264s");
        assert_eq!(seconds(0), "0s");
        assert_eq!(signed_seconds(-1_500_000_000i64), "-1.5s");
    }

    #[test]
    fn windows_read_with_either_end_left_out() {
        let w = parse_window("5s..10s").unwrap();
        assert_eq!((w.from_ns, w.to_ns), (5_000_000_000, 10_000_000_000));
        assert_eq!(parse_window("..2s").unwrap().from_ns, 0);
        assert_eq!(parse_window("3s..").unwrap().to_ns, Nanos::MAX);
        assert!(parse_window("10s..5s").is_err());
        assert!(parse_window("5s").is_err());
    }
}
