//! What the CLI says when a run outgrows its runtime guard (`--max-events`,
//! `--max-in-flight`, `--max-memory`).

use splitbrain_sim::limits::{format_bytes, Limit, LimitExceeded};

/// The error and its hint, for the run named by `what` (a file and seed, a design...).
pub fn message(what: &str, e: &LimitExceeded) -> String {
    format!("error: {what}: {e}\n  hint: {}", hint(e))
}

/// How to get past the limit: raise it, or make the run smaller.
pub fn hint(e: &LimitExceeded) -> String {
    let raised = match e.limit {
        Limit::Memory => format_bytes(e.allowed.saturating_mul(2)).replace(' ', ""),
        _ => e.allowed.saturating_mul(2).to_string(),
    };
    let smaller = match e.limit {
        Limit::Events => "a shorter `duration`, fewer nodes or longer timings",
        Limit::InFlight => {
            "fewer nodes, a shorter `duration`, or timings that do not send faster than the \
             network delivers (a `Stream` timeout or retransmission timeout far below the \
             latency reconnects and resends without end)"
        }
        Limit::Memory => "a shorter `duration` or fewer nodes",
        Limit::Interrupted => return "it was stopped on purpose".to_string(),
    };
    format!(
        "if the run is meant to be this big, raise the limit (e.g. {} {raised}); otherwise try \
         {smaller}",
        e.limit.flag()
    )
}
