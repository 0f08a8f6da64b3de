//! raft-rs' `Ready` handling, step for step as raft-rs 0.7 documents it (`src/raw_node.rs`
//! on `Ready`, `RawNode::advance`; `examples/single_mem_node/main.rs` `on_ready`): send what
//! may leave at once, store the snapshot, entries and hard state, send what had to wait for
//! them, advance, and apply what is committed.

use super::messages::{node_id, RaftRsMsg};
use super::node::{RaftRsCtx, RaftRsNode};
use raft::eraftpb::{Entry, EntryType, Message as RaftMessage};

impl RaftRsNode {
    /// Handles every `Ready` raft-rs has, until it has none.
    pub(crate) fn handle_ready(&mut self, ctx: &mut RaftRsCtx<'_>) {
        while self.raw.has_ready() {
            let mut ready = self.raw.ready();
            // `Ready::messages`: a leader's messages may leave before its own entries are
            // persisted (raft thesis §10.2.1, cited at `RawNode::ready`).
            send_all(ctx, ready.take_messages());
            if !ready.snapshot().is_empty() {
                self.storage
                    .wl()
                    .apply_snapshot(ready.snapshot().clone())
                    .expect("raft-rs hands over only newer snapshots");
            }
            apply(ready.take_committed_entries());
            if !ready.entries().is_empty() {
                self.storage
                    .wl()
                    .append(ready.entries())
                    .expect("raft-rs appends contiguous entries");
            }
            if let Some(hard_state) = ready.hs() {
                self.storage.wl().set_hardstate(hard_state.clone());
            }
            // `Ready::persisted_messages`: votes and a follower's answers leave only after
            // the hard state and entries above are stored (the Raft paper's figure 2 rule:
            // persist before responding).
            send_all(ctx, ready.take_persisted_messages());
            let mut light = self.raw.advance(ready);
            if let Some(commit) = light.commit_index() {
                self.storage.wl().mut_hard_state().set_commit(commit);
            }
            send_all(ctx, light.take_messages());
            apply(light.take_committed_entries());
            self.raw.advance_apply();
        }
    }
}

/// Sends raft-rs' messages to the members they name, in raft-rs' order.
fn send_all(ctx: &mut RaftRsCtx<'_>, messages: Vec<RaftMessage>) {
    for message in messages {
        let to = node_id(message.to).expect("raft-rs addresses a member");
        assert_ne!(to, ctx.me(), "raft-rs never sends to itself");
        ctx.send(to, RaftRsMsg::new(message));
    }
}

/// Applies committed entries to the state machine. Nothing proposes, so the only entries are
/// the empty ones each new leader appends (`Raft::become_leader`): there is nothing to apply,
/// but committing them is what moves the commit index.
fn apply(entries: Vec<Entry>) {
    for entry in entries {
        assert_eq!(entry.get_entry_type(), EntryType::EntryNormal);
        assert!(
            entry.data.is_empty(),
            "only a new leader's empty entries are ever committed"
        );
    }
}
