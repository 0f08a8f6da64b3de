//! When a coordination service held a lease (a key, a session, a Lease record) for each
//! candidate, in true time: the lease windows of the leadership timeline.

use crate::ids::NodeId;
use crate::report::LeaseSpan;
use crate::time::Nanos;

/// Open windows per process, counted: a holder with two live leases (an abandoned one not yet
/// expired) has one window, from the first to the end of the last.
#[derive(Debug)]
pub struct LeaseWindows {
    open: Vec<(u32, Nanos)>,
    pub(crate) spans: Vec<LeaseSpan>,
}

impl LeaseWindows {
    pub(crate) fn new(processes: usize) -> Self {
        Self {
            open: vec![(0, 0); processes],
            spans: Vec::new(),
        }
    }

    /// The service now holds a lease for `holder`.
    pub fn held(&mut self, now: Nanos, holder: NodeId) {
        let (count, since) = &mut self.open[holder.index()];
        if *count == 0 {
            *since = now;
        }
        *count += 1;
    }

    /// One of `holder`'s leases ended (expired, revoked, released, taken over).
    pub fn ended(&mut self, now: Nanos, holder: NodeId) {
        let (count, since) = &mut self.open[holder.index()];
        if *count == 0 {
            return;
        }
        *count -= 1;
        if *count == 0 {
            self.spans.push(LeaseSpan {
                node: holder,
                from_ns: *since,
                to_ns: now,
            });
        }
    }

    /// Closes every window still open at the end of the run.
    pub fn finish(&mut self, end_ns: Nanos) {
        for (index, (count, since)) in self.open.iter_mut().enumerate() {
            if *count > 0 {
                *count = 0;
                self.spans.push(LeaseSpan {
                    node: NodeId::from(index),
                    from_ns: *since,
                    to_ns: end_ns,
                });
            }
        }
        self.spans.sort_by_key(|s| (s.from_ns, s.node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_runs_from_the_first_lease_to_the_end_of_the_last() {
        let mut w = LeaseWindows::new(3);
        w.held(10, NodeId(1));
        w.held(20, NodeId(1));
        w.ended(30, NodeId(1));
        w.ended(40, NodeId(2)); // never held: ignored
        w.ended(50, NodeId(1));
        w.held(60, NodeId(0));
        w.finish(100);
        let spans: Vec<_> = w
            .spans
            .iter()
            .map(|s| (s.node.index(), s.from_ns, s.to_ns))
            .collect();
        assert_eq!(spans, vec![(1, 10, 50), (0, 60, 100)]);
    }
}
