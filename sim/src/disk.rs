//! Disks: how long a process takes to make a write durable (fsync), by default and per
//! process (docs/engine.md, "Disks and processing").

use crate::network_config::Latency;
use crate::time::Nanos;
use serde::Serialize;

/// The processes' disks. The default is an instant disk, as every run before this setting
/// had.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DiskConfig {
    /// How long a durable write (an fsync) takes on every process without an override;
    /// `None`: at once.
    pub fsync: Option<Latency>,
    /// Members whose disk differs from `fsync`.
    pub per_node: Vec<NodeDisk>,
    /// The coordination service's disk, if it differs from `fsync`.
    pub service: Option<Latency>,
    /// Group commit: a write asked for while the disk is busy with another goes down with
    /// every other write asked for meanwhile, in the next fsync, instead of in one of its
    /// own (etcd's `raftNode` loop saves all the entries of a `Ready` in one WAL sync,
    /// server/etcdserver/raft.go `start`; ZooKeeper's `SyncRequestProcessor` flushes a
    /// batch of transactions with one `commit`). `false`: one fsync per write, as LogCabin's
    /// synchronous `updateLogMetadata`.
    pub batch: bool,
}

/// One member's disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeDisk {
    /// The member's index.
    pub node: u32,
    /// Its fsync latency.
    pub fsync: Latency,
}

impl DiskConfig {
    /// The fsync latency of process `index` (members are `0..members`, services after).
    pub fn fsync_of(&self, index: usize, members: usize) -> Option<&Latency> {
        if index >= members
            && let Some(service) = &self.service
        {
            return Some(service);
        }
        self.per_node
            .iter()
            .rev()
            .find(|d| d.node as usize == index)
            .map(|d| &d.fsync)
            .or(self.fsync.as_ref())
    }
}

/// A process's disk during a run: a `SlowDisk` fault's latency, and when it is free (its
/// own latency is the configuration's, [`DiskConfig::fsync_of`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Disk {
    /// A `SlowDisk` fault in force: every fsync that begins before `slow_until_ns` takes
    /// this long instead.
    pub(crate) slow_ns: Option<Nanos>,
    /// When the `SlowDisk` fault heals (`Nanos::MAX`: never).
    pub(crate) slow_until_ns: Nanos,
    /// The true time the last write asked for completes (writes are done one after
    /// another).
    pub(crate) busy_until_ns: Nanos,
    /// The true time the last write asked for starts: later than a new write's start, that
    /// write has not begun, and with [`DiskConfig::batch`] the new one joins it.
    pub(crate) last_start_ns: Nanos,
}
