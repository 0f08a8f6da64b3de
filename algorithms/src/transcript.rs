//! What each node was told and answered, step by step, recorded on request: two runs of the
//! same seed must give the same transcript, and the first step where they do not names the
//! node that is not a function of its inputs (`run --check-determinism`).

use splitbrain_sim::NodeId;
use std::cell::RefCell;

/// Every exchange of one run, per node: (event line, reply line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    nodes: Vec<Vec<(String, String)>>,
}

thread_local! {
    static RECORDING: RefCell<Option<Transcript>> = const { RefCell::new(None) };
}

/// Runs `work` recording the exchanges of the external nodes it runs on this thread.
///
/// ```
/// use splitbrain_algorithms::transcript;
/// let ((), recorded) = transcript::recording(|| ());
/// assert!(recorded.is_empty());
/// ```
pub fn recording<R>(work: impl FnOnce() -> R) -> (R, Transcript) {
    let recording = Recording::start();
    let result = work();
    (result, recording.finish())
}

/// A recording under way on this thread, for work that does not fit in a closure (a run
/// with early returns): [`Recording::finish`] gives what it recorded.
///
/// ```
/// use splitbrain_algorithms::transcript::Recording;
/// let recording = Recording::start();
/// assert!(recording.finish().is_empty());
/// ```
#[must_use = "finish the recording to get the transcript"]
pub struct Recording {
    outer: Option<Transcript>,
}

impl Recording {
    /// Starts recording the exchanges of the external nodes run on this thread.
    pub fn start() -> Recording {
        let outer = RECORDING.with(|r| r.replace(Some(Transcript::default())));
        Recording { outer }
    }

    /// Stops, and gives what was recorded.
    pub fn finish(mut self) -> Transcript {
        let outer = self.outer.take();
        RECORDING.with(|r| r.replace(outer)).unwrap_or_default()
    }
}

/// Records one exchange of `node`, if recording.
pub(crate) fn record(node: NodeId, event: &str, reply: &[u8]) {
    RECORDING.with(|r| {
        if let Some(transcript) = r.borrow_mut().as_mut() {
            let nodes = &mut transcript.nodes;
            if nodes.len() <= node.index() {
                nodes.resize(node.index() + 1, Vec::new());
            }
            let reply = String::from_utf8_lossy(reply).into_owned();
            nodes[node.index()].push((event.trim_end().to_string(), reply));
        }
    });
}

impl Transcript {
    /// Whether no exchange was recorded (no external node ran).
    pub fn is_empty(&self) -> bool {
        self.nodes.iter().all(Vec::is_empty)
    }

    /// The first step at which a node, told the same as in `other`, answered differently:
    /// `n1, step 57: told `...`, it answered `A` in the first run and `B` in the second`
    /// (`runs` names the two: `("the first run", "the second")`).
    pub fn first_difference(&self, other: &Transcript, runs: (&str, &str)) -> Option<String> {
        for (node, (mine, theirs)) in self.nodes.iter().zip(&other.nodes).enumerate() {
            for (step, (a, b)) in mine.iter().zip(theirs).enumerate() {
                if a.0 == b.0 && a.1 != b.1 {
                    return Some(format!(
                        "n{node}, step {}: told `{}`, it answered `{}` in {} and `{}` in {}",
                        step + 1,
                        crate::text::shorten(&a.0),
                        crate::text::shorten(&a.1),
                        runs.0,
                        crate::text::shorten(&b.1),
                        runs.1
                    ));
                }
            }
        }
        None
    }
}
