//! The event queue: a 4-ary min-heap ordered by `(time, seq)`, where `seq` is a global
//! insertion counter, so equal times pop in scheduling order and never by payload.
//!
//! Handles below `timer_slots` are timer slots: at most one entry each, whose position is
//! tracked so a timer is re-keyed or removed in place (no lazy cancellation, no tombstones).
//! Other handles are opaque to the queue.
//!
//! Popping is fused with the next push: [`EventQueue::take_min`] leaves the minimum in place
//! and the first [`EventQueue::push`] afterwards overwrites it and sifts down once, instead of
//! a pop (sift down) followed by a push (sift up). This is safe because everything pushed while
//! the minimum is taken orders after it: its time is not earlier and its `seq` is larger.

use crate::time::Nanos;

const ARITY: usize = 4;
const NOT_QUEUED: u32 = u32::MAX;

/// One queued event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub(crate) time: Nanos,
    pub(crate) seq: u64,
    pub(crate) handle: u32,
}

impl Entry {
    #[inline]
    fn key(&self) -> (Nanos, u64) {
        (self.time, self.seq)
    }
}

/// A priority queue of events with in-place timer slots.
#[derive(Debug)]
pub struct EventQueue {
    heap: Vec<Entry>,
    /// For each timer slot, its index in `heap`, or `NOT_QUEUED`.
    slot_pos: Vec<u32>,
    next_seq: u64,
    /// The minimum was handed out by `take_min` and still occupies `heap[0]`.
    min_taken: bool,
}

impl EventQueue {
    /// A queue with `timer_slots` slots (handles `0..timer_slots`).
    pub fn new(timer_slots: usize) -> Self {
        assert!(timer_slots < NOT_QUEUED as usize);
        Self {
            heap: Vec::with_capacity(1024),
            slot_pos: vec![NOT_QUEUED; timer_slots],
            next_seq: 0,
            min_taken: false,
        }
    }

    /// How many events are queued (a taken minimum no longer counts).
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.min_taken)
    }

    /// Whether no event is queued (a taken minimum no longer counts).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next sequence number, for entries scheduled now.
    fn bump_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// The time of the next event, without taking it.
    pub fn peek_time(&mut self) -> Option<Nanos> {
        self.settle();
        self.heap.first().map(|e| e.time)
    }

    /// Takes the next event. Its slot (if a timer) is free again at once; the entry's heap
    /// place is reused by the next push.
    pub fn take_min(&mut self) -> Option<Entry> {
        self.settle();
        let top = *self.heap.first()?;
        if self.is_slot(top.handle) {
            self.slot_pos[top.handle as usize] = NOT_QUEUED;
        }
        self.min_taken = true;
        Some(top)
    }

    /// Queues a non-timer event at `time` and returns its entry.
    pub fn push(&mut self, time: Nanos, handle: u32) -> Entry {
        assert!(!self.is_slot(handle), "timer handles go through set_slot");
        let entry = Entry {
            time,
            seq: self.bump_seq(),
            handle,
        };
        self.insert(entry);
        entry
    }

    /// Arms timer slot `slot` at `time`, re-keying it in place if already armed.
    pub fn set_slot(&mut self, slot: u32, time: Nanos) {
        let entry = Entry {
            time,
            seq: self.bump_seq(),
            handle: slot,
        };
        self.rekey_or_insert(entry);
    }

    /// Moves an armed slot to `time`, keeping its sequence number (a clock change is not a
    /// new scheduling decision). Does nothing if the slot is not armed.
    pub fn move_slot(&mut self, slot: u32, time: Nanos) {
        let pos = self.slot_pos[slot as usize];
        if pos == NOT_QUEUED {
            return;
        }
        let seq = self.heap[pos as usize].seq;
        self.rekey_or_insert(Entry {
            time,
            seq,
            handle: slot,
        });
    }

    /// Disarms timer slot `slot`, if armed.
    pub fn cancel_slot(&mut self, slot: u32) {
        let pos = self.slot_pos[slot as usize];
        if pos != NOT_QUEUED {
            self.slot_pos[slot as usize] = NOT_QUEUED;
            self.remove_at(pos as usize);
        }
    }

    /// The true time slot `slot` fires at, if armed.
    pub fn slot_time(&self, slot: u32) -> Option<Nanos> {
        let pos = self.slot_pos[slot as usize];
        (pos != NOT_QUEUED).then(|| self.heap[pos as usize].time)
    }

    fn is_slot(&self, handle: u32) -> bool {
        (handle as usize) < self.slot_pos.len()
    }

    fn rekey_or_insert(&mut self, entry: Entry) {
        let pos = self.slot_pos[entry.handle as usize];
        if pos == NOT_QUEUED {
            self.insert(entry);
            return;
        }
        let pos = pos as usize;
        let old = self.heap[pos];
        self.heap[pos] = entry;
        if entry.key() < old.key() {
            self.sift_up(pos);
        } else {
            self.sift_down(pos);
        }
    }

    fn insert(&mut self, entry: Entry) {
        if self.min_taken {
            // Fused pop + push: overwrite the taken minimum and sift down once.
            debug_assert!(entry.key() > self.heap[0].key());
            self.min_taken = false;
            self.heap[0] = entry;
            self.sift_down(0);
        } else {
            self.heap.push(entry);
            let last = self.heap.len() - 1;
            self.sift_up(last);
        }
    }

    /// Completes a pending `take_min` by really removing the minimum.
    fn settle(&mut self) {
        if self.min_taken {
            self.min_taken = false;
            self.remove_root();
        }
    }

    fn remove_root(&mut self) {
        let last = self.heap.pop().expect("a taken minimum is in the heap");
        if !self.heap.is_empty() {
            self.heap[0] = last;
            self.sift_down(0);
        }
    }

    fn remove_at(&mut self, pos: usize) {
        assert!(
            !(self.min_taken && pos == 0),
            "the taken minimum is not removable"
        );
        let last = self.heap.pop().expect("removing from a non-empty heap");
        if pos == self.heap.len() {
            return;
        }
        let removed_key = self.heap[pos].key();
        self.heap[pos] = last;
        if last.key() < removed_key {
            self.sift_up(pos);
        } else {
            self.sift_down(pos);
        }
    }

    #[inline]
    fn place(&mut self, pos: usize, entry: Entry) {
        self.heap[pos] = entry;
        if self.is_slot(entry.handle) {
            self.slot_pos[entry.handle as usize] = pos as u32;
        }
    }

    fn sift_up(&mut self, mut pos: usize) {
        let entry = self.heap[pos];
        // The taken minimum stays at the root: everything queued meanwhile orders after it.
        let floor = usize::from(self.min_taken);
        while pos > floor {
            let parent = (pos - 1) / ARITY;
            if self.heap[parent].key() <= entry.key() {
                break;
            }
            let moved = self.heap[parent];
            self.place(pos, moved);
            pos = parent;
        }
        self.place(pos, entry);
    }

    fn sift_down(&mut self, mut pos: usize) {
        let entry = self.heap[pos];
        let len = self.heap.len();
        loop {
            let first = pos * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut best = first;
            let mut best_key = self.heap[first].key();
            for child in first + 1..end {
                let key = self.heap[child].key();
                if key < best_key {
                    best = child;
                    best_key = key;
                }
            }
            if best_key >= entry.key() {
                break;
            }
            let moved = self.heap[best];
            self.place(pos, moved);
            pos = best;
        }
        self.place(pos, entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;
    use std::collections::BTreeMap;

    /// Pops everything in order, as the engine does (take, then no push).
    fn drain(queue: &mut EventQueue) -> Vec<Entry> {
        std::iter::from_fn(|| queue.take_min()).collect()
    }

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut queue = EventQueue::new(0);
        for handle in [10, 11, 12] {
            queue.push(5, handle);
        }
        queue.push(1, 13);
        let order: Vec<u32> = drain(&mut queue).iter().map(|e| e.handle).collect();
        assert_eq!(order, vec![13, 10, 11, 12]);
    }

    #[test]
    fn a_rearmed_timer_slot_moves_instead_of_duplicating() {
        let mut queue = EventQueue::new(2);
        queue.set_slot(0, 100);
        queue.set_slot(0, 50);
        queue.set_slot(1, 70);
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.slot_time(0), Some(50));
        queue.cancel_slot(1);
        let order: Vec<(u64, u32)> = drain(&mut queue)
            .iter()
            .map(|e| (e.time, e.handle))
            .collect();
        assert_eq!(order, vec![(50, 0)]);
    }

    #[test]
    fn a_push_after_take_reuses_the_root() {
        let mut queue = EventQueue::new(1);
        queue.push(10, 5);
        queue.push(20, 6);
        let first = queue.take_min().unwrap();
        assert_eq!(first.handle, 5);
        queue.push(15, 7);
        queue.set_slot(0, 10);
        let order: Vec<u32> = drain(&mut queue).iter().map(|e| e.handle).collect();
        assert_eq!(order, vec![0, 7, 6]);
    }

    /// Differential test against a BTreeMap oracle keyed by (time, seq).
    #[test]
    fn random_operations_match_an_ordered_map_oracle() {
        let slots = 8u32;
        let mut rng = SimRng::stream(11, 1);
        let mut queue = EventQueue::new(slots as usize);
        let mut oracle: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut slot_key: Vec<Option<(u64, u64)>> = vec![None; slots as usize];
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            match rng.below(5) {
                0 | 1 => {
                    let entry = queue.push(now + rng.below(100), slots + rng.below(1000) as u32);
                    assert_eq!(entry.seq, seq);
                    oracle.insert((entry.time, entry.seq), entry.handle);
                    seq += 1;
                }
                2 => {
                    let slot = rng.below(u64::from(slots)) as u32;
                    let time = now + rng.below(100);
                    queue.set_slot(slot, time);
                    if let Some(old) = slot_key[slot as usize].take() {
                        oracle.remove(&old);
                    }
                    oracle.insert((time, seq), slot);
                    slot_key[slot as usize] = Some((time, seq));
                    seq += 1;
                }
                3 => {
                    let slot = rng.below(u64::from(slots)) as u32;
                    queue.cancel_slot(slot);
                    if let Some(old) = slot_key[slot as usize].take() {
                        oracle.remove(&old);
                    }
                }
                _ => {
                    let got = queue.take_min();
                    let want = oracle.pop_first();
                    assert_eq!(got.map(|e| ((e.time, e.seq), e.handle)), want);
                    if let Some(e) = got {
                        now = e.time;
                        if e.handle < slots {
                            slot_key[e.handle as usize] = None;
                        }
                    }
                }
            }
            assert_eq!(queue.len(), oracle.len());
        }
    }
}
