//! Process identities.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A process in the simulation: an election member, a modeled service, or the resource.
/// In JSON (and any serde format), the bare number.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into per-node vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// What this id is called under the renaming `names` (node `i` is called `names[i]`):
    /// an id past the end of `names` (the resource, a process the renaming leaves alone)
    /// keeps its own. What a [`Process::digest_renamed`](crate::Process::digest_renamed)
    /// applies to every id in its state.
    ///
    /// ```
    /// use splitbrain_sim::NodeId;
    /// let swap = [NodeId(1), NodeId(0)];
    /// assert_eq!(NodeId(0).renamed(&swap), NodeId(1));
    /// assert_eq!(NodeId(7).renamed(&swap), NodeId(7));
    /// ```
    pub fn renamed(self, names: &[NodeId]) -> NodeId {
        names.get(self.index()).copied().unwrap_or(self)
    }
}

/// `values`, one per node, rearranged under the renaming `names` (node `i` is called
/// `names[i]`): what node `i` had is found at `names[i]`. For a process's per-peer
/// vectors in [`Process::digest_renamed`](crate::Process::digest_renamed). A renaming
/// keeps every node of `values` among them.
///
/// ```
/// use splitbrain_sim::ids::renamed_vec;
/// use splitbrain_sim::NodeId;
/// let rotate = [NodeId(1), NodeId(2), NodeId(0)];
/// assert_eq!(renamed_vec(&["a", "b", "c"], &rotate), ["c", "a", "b"]);
/// ```
pub fn renamed_vec<T: Clone>(values: &[T], names: &[NodeId]) -> Vec<T> {
    let mut out = values.to_vec();
    for (index, value) in values.iter().enumerate() {
        let to = NodeId::from(index).renamed(names).index();
        assert!(
            to < values.len(),
            "a renaming keeps n{index} among the nodes"
        );
        out[to] = value.clone();
    }
    out
}

impl From<usize> for NodeId {
    fn from(index: usize) -> Self {
        Self(u32::try_from(index).expect("node index fits in u32"))
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}
