//! The event queue, ordered by `(time, seq)`, where `seq` is a global insertion counter, so
//! equal times pop in scheduling order and never by payload.
//!
//! Handles below `timer_slots` are timer slots: at most one entry each, kept in a 4-ary
//! min-heap whose positions are tracked so a timer is re-keyed or removed in place (no lazy
//! cancellation, no tombstones). Other handles (messages, faults, resumes) are opaque to the
//! queue and go to a std binary heap while fewer than [`RADIX_FROM`] are queued, and from then
//! until they are all gone to a radix heap ([`RadixQueue`]), which stays fast with half a
//! million in flight; a pop takes the smaller of the minimums, so the order is the one total
//! order of `(time, seq)` whichever structure holds an entry.
//!
//! Popping a timer is fused with arming the next: [`EventQueue::take_min`] leaves a timer
//! minimum in place and the first [`EventQueue::set_slot`] afterwards overwrites it and sifts
//! down once, instead of a pop (sift down) followed by a push (sift up). This is safe because
//! everything armed while the minimum is taken orders after it: its time is not earlier and
//! its `seq` is larger.

use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const ARITY: usize = 4;
/// Non-timer events queued at once from which the radix heap takes over from the binary
/// heap: below it the binary heap fits in cache and is faster (the 5-node storm), above it
/// the radix heap is (the 1,000-node Bully election, half a million in flight).
const RADIX_FROM: usize = 1 << 14;
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
    /// The armed timer slots.
    heap: Vec<Entry>,
    /// Everything else, while few: a binary heap.
    few: BinaryHeap<Reverse<(Nanos, u64, u32)>>,
    /// Everything else, once many ([`RADIX_FROM`]) are queued at once: a radix heap, until it
    /// empties. At most one of `few` and `radix` holds entries.
    radix: RadixQueue,
    /// [`RADIX_FROM`], or lower in tests.
    radix_from: usize,
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
            few: BinaryHeap::new(),
            radix: RadixQueue::new(),
            radix_from: RADIX_FROM,
            slot_pos: vec![NOT_QUEUED; timer_slots],
            next_seq: 0,
            min_taken: false,
        }
    }

    /// How many events are queued (a taken minimum no longer counts).
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.min_taken) + self.few.len() + self.radix.len
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
        let timer = self.heap.first().copied();
        match (timer, self.peek_other()) {
            (Some(t), Some(r)) => Some(t.key().min(r.key()).0),
            (t, r) => t.or(r).map(|e| e.time),
        }
    }

    /// The first of the non-timer events.
    fn peek_other(&mut self) -> Option<Entry> {
        match self.few.peek() {
            Some(&Reverse((time, seq, handle))) => Some(Entry { time, seq, handle }),
            None => self.radix.peek(),
        }
    }

    fn pop_other(&mut self) -> Option<Entry> {
        match self.few.pop() {
            Some(Reverse((time, seq, handle))) => Some(Entry { time, seq, handle }),
            None => self.radix.pop(),
        }
    }

    /// Takes the next event. Its slot (if a timer) is free again at once; a timer's heap
    /// place is reused by the next timer armed.
    pub fn take_min(&mut self) -> Option<Entry> {
        self.settle();
        let timer = self.heap.first().copied();
        let timer_first = match (timer, self.peek_other()) {
            (Some(t), Some(r)) => t.key() < r.key(),
            (t, _) => t.is_some(),
        };
        if !timer_first {
            return self.pop_other();
        }
        let top = timer.expect("a timer is first");
        self.slot_pos[top.handle as usize] = NOT_QUEUED;
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
        if self.radix.len > 0 {
            self.radix.push(entry);
        } else if self.few.len() < self.radix_from {
            self.few
                .push(Reverse((entry.time, entry.seq, entry.handle)));
        } else {
            // Many in flight: from now until they are gone, the radix heap holds them.
            for Reverse((time, seq, handle)) in self.few.drain() {
                self.radix.push(Entry { time, seq, handle });
            }
            self.radix.push(entry);
        }
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
        self.slot_pos[entry.handle as usize] = pos as u32;
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

/// The queue of non-timer events: a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
/// algorithms for the shortest path problem", 1990) on the 128-bit key `(time, seq)`.
///
/// A discrete-event queue is monotone: everything pushed orders after everything popped (its
/// time is not earlier and its `seq` is larger), which is all a radix heap needs. Bucket `i`
/// holds the keys whose highest bit differing from the last key popped is bit `i - 1`
/// (bucket 0: the last key itself), so every key of a bucket orders before every key of a
/// higher one. A pop empties the lowest non-empty bucket into lower ones around its minimum;
/// each entry moves down at most 128 times in all and in practice a few, by appending to a
/// vector: no sift through half a million entries in flight (a binary heap's cache misses).
#[derive(Debug)]
struct RadixQueue {
    buckets: Vec<Vec<Entry>>,
    /// Bit `i` set: bucket `i` is not empty.
    nonempty: [u64; 3],
    /// The key of the last entry popped (every queued key is at least this).
    last: u128,
    /// The minimum, when known: bucket 0's entry, or found by a scan and kept until a pop.
    min: Option<Entry>,
    /// A spare vector for redistributing a bucket, so buckets keep their capacity.
    spare: Vec<Entry>,
    len: usize,
}

const BUCKETS: usize = 129;

impl RadixQueue {
    fn new() -> Self {
        Self {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            nonempty: [0; 3],
            last: 0,
            min: None,
            spare: Vec::new(),
            len: 0,
        }
    }

    #[inline]
    fn key(e: &Entry) -> u128 {
        (u128::from(e.time) << 64) | u128::from(e.seq)
    }

    #[inline]
    fn bucket_of(&self, key: u128) -> usize {
        (128 - (key ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn file(&mut self, entry: Entry) {
        let b = self.bucket_of(Self::key(&entry));
        self.buckets[b].push(entry);
        self.nonempty[b / 64] |= 1 << (b % 64);
    }

    fn first_nonempty(&self) -> Option<usize> {
        (0..3)
            .find(|&w| self.nonempty[w] != 0)
            .map(|w| w * 64 + self.nonempty[w].trailing_zeros() as usize)
    }

    fn push(&mut self, entry: Entry) {
        let key = Self::key(&entry);
        assert!(
            key >= self.last,
            "the event queue is monotone: nothing is scheduled before what already ran"
        );
        if self.min.is_some_and(|m| key < Self::key(&m)) {
            self.min = Some(entry);
        }
        self.file(entry);
        self.len += 1;
    }

    /// The minimum, without taking it (and without moving anything).
    fn peek(&mut self) -> Option<Entry> {
        if self.min.is_none() {
            let b = self.first_nonempty()?;
            self.min = self.buckets[b].iter().min_by_key(|e| Self::key(e)).copied();
        }
        self.min
    }

    fn pop(&mut self) -> Option<Entry> {
        let min = self.peek()?;
        let b = self.first_nonempty().expect("a minimum is queued");
        if b > 0 {
            // Around the new last key, every entry of bucket `b` files into a lower bucket.
            self.last = Self::key(&min);
            let mut moving = std::mem::take(&mut self.spare);
            std::mem::swap(&mut moving, &mut self.buckets[b]);
            self.nonempty[b / 64] &= !(1 << (b % 64));
            for e in moving.drain(..) {
                self.file(e);
            }
            self.spare = moving;
        }
        let taken = self.buckets[0].pop().expect("the minimum is in bucket 0");
        debug_assert_eq!(taken, min);
        debug_assert!(self.buckets[0].is_empty(), "keys are unique");
        self.nonempty[0] &= !1;
        self.last = Self::key(&taken);
        self.min = None;
        self.len -= 1;
        Some(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;
    use std::collections::BTreeMap;

    /// A queue whose radix heap takes over from `radix_from` events.
    fn with_radix_from(timer_slots: usize, radix_from: usize) -> EventQueue {
        EventQueue {
            radix_from,
            ..EventQueue::new(timer_slots)
        }
    }

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

    /// Differential test against a BTreeMap oracle keyed by (time, seq): with the binary
    /// heap only, the radix heap only, and both taking turns.
    #[test]
    fn random_operations_match_an_ordered_map_oracle() {
        for radix_from in [RADIX_FROM, 0, 3, 40] {
            for seed in 1..=4 {
                match_the_oracle(seed, radix_from);
            }
        }
    }

    fn match_the_oracle(seed: u64, radix_from: usize) {
        let slots = 8u32;
        let mut rng = SimRng::stream(seed, 1);
        let mut queue = with_radix_from(slots as usize, radix_from);
        let mut oracle: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut slot_key: Vec<Option<(u64, u64)>> = vec![None; slots as usize];
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            match rng.below(5) {
                0 | 1 => {
                    // Mostly near, sometimes far: keys in low and high radix buckets.
                    let spread = if rng.below(8) == 0 { 1 << 40 } else { 100 };
                    let entry = queue.push(now + rng.below(spread), slots + rng.below(1000) as u32);
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
                3 if rng.below(2) == 0 => {
                    // A clock change moves an armed timer, keeping its sequence number: its
                    // key may then order before non-timer events popped since it was armed.
                    let slot = rng.below(u64::from(slots)) as u32;
                    let time = now + rng.below(100);
                    queue.move_slot(slot, time);
                    if let Some(old) = slot_key[slot as usize].take() {
                        oracle.remove(&old);
                        oracle.insert((time, old.1), slot);
                        slot_key[slot as usize] = Some((time, old.1));
                    }
                }
                3 => {
                    let slot = rng.below(u64::from(slots)) as u32;
                    queue.cancel_slot(slot);
                    if let Some(old) = slot_key[slot as usize].take() {
                        oracle.remove(&old);
                    }
                }
                _ => {
                    let first = oracle.first_key_value().map(|(&(time, _), _)| time);
                    assert_eq!(queue.peek_time(), first);
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
