//! The event queue, ordered by `(time, seq)`, where `seq` is a global insertion counter, so
//! equal times pop in scheduling order and never by payload.
//!
//! Handles below `timer_slots` are timer slots: at most one entry each, kept in a 4-ary
//! min-heap whose positions are tracked so a timer is re-keyed or removed in place (no lazy
//! cancellation, no tombstones). Other handles (messages, faults, resumes) are opaque to the
//! queue and go to a std binary heap until a push finds `CALENDAR_FROM` of them queued, and
//! from then until a quarter of that or fewer remain to a calendar queue (`CalendarQueue`),
//! which stays fast with half a million in flight; a pop takes the smaller of the minimums, so
//! the order is the one total order of `(time, seq)` whichever structure holds an entry.
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
/// Non-timer events queued at once from which the calendar queue takes over from the binary
/// heap (at the next push): below it the binary heap fits in cache and is faster (the 5-node
/// storm), above it the calendar is (the 1,000-node Bully election, half a million in
/// flight). It hands back to the binary heap when a quarter of this or fewer remain, so a
/// sparse tail does not walk empty buckets.
const CALENDAR_FROM: usize = 1 << 14;
const NOT_QUEUED: u32 = u32::MAX;

/// One queued event.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub(crate) time: Nanos,
    pub(crate) seq: u64,
    pub(crate) handle: u32,
}

impl Entry {
    /// `(time, seq)` as one number: compares in one step, in the queue's order.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time) << 64) | u128::from(self.seq)
    }
}

/// An entry in a std (max-)heap, ordered so that the earliest `(time, seq)` comes out first.
/// Keys are unique (`seq` is), so the handle never decides; the key compares as one `u128`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Earliest(Entry);

impl Ord for Earliest {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.key().cmp(&self.0.key())
    }
}

impl PartialOrd for Earliest {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A priority queue of events with in-place timer slots.
#[derive(Debug)]
pub struct EventQueue {
    /// The armed timer slots.
    heap: Vec<Entry>,
    /// Everything else, while few: a binary heap.
    few: BinaryHeap<Earliest>,
    /// Everything else, once many ([`CALENDAR_FROM`]) are queued at once. At most one of
    /// `few` and `many` holds entries.
    many: Option<CalendarQueue>,
    /// [`CALENDAR_FROM`], or lower in tests.
    many_from: usize,
    /// The time of the last event taken (nothing is queued before it).
    now: Nanos,
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
            many: None,
            many_from: CALENDAR_FROM,
            now: 0,
            slot_pos: vec![NOT_QUEUED; timer_slots],
            next_seq: 0,
            min_taken: false,
        }
    }

    /// How many events are queued (a taken minimum no longer counts).
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.min_taken)
            + self.few.len()
            + self.many.as_ref().map_or(0, |m| m.len)
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
            (Some(t), Some(r)) => Some(if t.key() < r.key() { t.time } else { r.time }),
            (t, r) => t.or(r).map(|e| e.time),
        }
    }

    /// The first of the non-timer events.
    fn peek_other(&mut self) -> Option<Entry> {
        match self.few.peek() {
            Some(&Earliest(entry)) => Some(entry),
            None => self.many.as_mut().and_then(CalendarQueue::peek),
        }
    }

    fn pop_other(&mut self) -> Option<Entry> {
        if let Some(Earliest(entry)) = self.few.pop() {
            return Some(entry);
        }
        let many = self.many.as_mut()?;
        let taken = many.pop();
        if many.len <= self.many_from / 4 {
            // Few left: back to the binary heap (until many are queued again).
            let rest = many.drain();
            self.many = None;
            self.few.extend(rest.into_iter().map(Earliest));
        }
        taken
    }

    /// A non-timer event due soon, about `ahead` after the next one, when the calendar's sorted
    /// bucket tells without work: a hint for fetching its payload before it is needed (not
    /// exactly the `ahead`-th: events pushed since for that bucket may come first).
    pub fn upcoming(&self, ahead: usize) -> Option<Entry> {
        self.many.as_ref()?.upcoming(ahead)
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
            let taken = self.pop_other();
            if let Some(entry) = taken {
                self.now = entry.time;
            }
            return taken;
        }
        let top = timer.expect("a timer is first");
        self.slot_pos[top.handle as usize] = NOT_QUEUED;
        self.min_taken = true;
        self.now = top.time;
        Some(top)
    }

    /// Queues a non-timer event at `time` and returns its entry.
    pub fn push(&mut self, time: Nanos, handle: u32) -> Entry {
        assert!(!self.is_slot(handle), "timer handles go through set_slot");
        assert!(
            time >= self.now,
            "the event queue is monotone: nothing is scheduled before what already ran"
        );
        let entry = Entry {
            time,
            seq: self.bump_seq(),
            handle,
        };
        if let Some(many) = self.many.as_mut() {
            many.push(entry);
        } else if self.few.len() < self.many_from {
            self.few.push(Earliest(entry));
        } else {
            // Many in flight: the calendar holds them until few are left.
            let mut all: Vec<Entry> = self.few.drain().map(|Earliest(e)| e).collect();
            all.push(entry);
            self.many = Some(CalendarQueue::of(self.now, all));
        }
        entry
    }

    /// Puts back an entry just taken ([`EventQueue::take_min`]), with its place in the order:
    /// the engine takes the events due at one instant to choose which goes first, and puts
    /// the others back as they were.
    pub(crate) fn requeue(&mut self, entry: Entry) {
        if self.is_slot(entry.handle) {
            self.rekey_or_insert(entry);
        } else if let Some(many) = self.many.as_mut() {
            many.push(entry);
        } else {
            self.few.push(Earliest(entry));
        }
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

    /// Every queued event that is not a timer, in no particular order (for inspecting a
    /// stopped run: O(n), never called per event).
    pub(crate) fn other_entries(&self) -> Vec<Entry> {
        let mut all: Vec<Entry> = self.few.iter().map(|Earliest(e)| *e).collect();
        if let Some(many) = &self.many {
            all.extend(many.current.iter().copied());
            all.extend(many.early.iter().map(|Earliest(e)| *e));
            all.extend(many.ring.iter().flatten().copied());
            all.extend(many.far.iter().map(|Earliest(e)| *e));
        }
        all
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

/// The queue of non-timer events while many are queued: a calendar queue (R. Brown,
/// "Calendar queues: a fast O(1) priority queue implementation for the simulation event set
/// problem", CACM 1988), keyed by `(time, seq)`.
///
/// Time is cut into buckets of `2^shift` ns; a ring of `2^k` buckets covers the near future
/// and a binary heap (`far`) holds what lies beyond the ring. A push appends to its bucket; a
/// pop takes from `current`, the bucket being consumed, sorted once when its turn comes
/// (minimum last). A discrete-event queue is monotone (nothing is scheduled before what
/// already ran), so a push lands in bucket `cur` or later, never behind what was taken; one
/// for bucket `cur` or before (a peek may have moved `cur` on over empty buckets, ahead of
/// the time a timer then runs at) goes to a small binary heap, `early`, which orders before
/// `current`. With half a million
/// messages in flight this costs an append and a share of a small sort per event, where a
/// heap sifts through cache misses; and it knows the next events in advance
/// ([`EventQueue::upcoming`]), so the engine can fetch their payloads ahead of time.
///
/// The bucket width comes from the entries queued when the calendar takes over: [`PER_BUCKET`]
/// to twice that per bucket at that density (the width is a power of two; the 1,000-node
/// Bully election: buckets of 2^16 ns, about 119 events each at the hand-over, a ring of 256
/// covering 16.8 ms of its 1-10 ms latencies, about 3,600 events to a bucket at its peak of
/// half a million in flight). Few, large buckets keep the tails
/// that pushes append to in cache; sorting a bucket once is cheap next to that.
#[derive(Debug)]
struct CalendarQueue {
    /// Bucket width: `2^shift` ns.
    shift: u32,
    /// The ring's length minus one (a power of two minus one).
    mask: u64,
    ring: Vec<Vec<Entry>>,
    /// Entries in `ring` (not counting `current`).
    in_ring: usize,
    /// The absolute number (`time >> shift`) of the bucket being consumed.
    cur: u64,
    /// Bucket `cur` as it was when its turn came, sorted by key, the minimum last.
    current: Vec<Entry>,
    /// Room for sorting a bucket.
    scratch: Vec<Entry>,
    /// Buckets radix-sorted so far (tests check the radix path is exercised).
    #[cfg(test)]
    radix_sorts: usize,
    /// Pushed since, for bucket `cur` or before: all of it orders before the ring, and what
    /// is for a bucket before `cur` before `current` too.
    early: BinaryHeap<Earliest>,
    /// Entries at or past bucket `cur + ring length`.
    far: BinaryHeap<Earliest>,
    len: usize,
}

/// Buckets are radix-sorted when their width is at most `2^RADIX_SORT_BITS` ns (two passes)
/// and they hold at least `RADIX_SORT_FROM` entries; others by comparison.
const RADIX_SORT_BITS: u32 = 16;
const RADIX_SORT_FROM: usize = 64;

/// Sorts `entries` stably by the low `bits` bits of their times (a least-significant-digit
/// radix sort, a byte per pass), using `scratch` for room.
fn radix_sort_by_time(entries: &mut Vec<Entry>, scratch: &mut Vec<Entry>, bits: u32) {
    let mut shift = 0;
    while shift < bits {
        let digit = |e: &Entry| ((e.time >> shift) & 0xff) as usize;
        let mut starts = [0usize; 256];
        for entry in entries.iter() {
            starts[digit(entry)] += 1;
        }
        let mut total = 0;
        for start in &mut starts {
            let count = *start;
            *start = total;
            total += count;
        }
        scratch.clear();
        scratch.extend_from_slice(entries);
        for entry in entries.iter() {
            let d = digit(entry);
            scratch[starts[d]] = *entry;
            starts[d] += 1;
        }
        std::mem::swap(entries, scratch);
        shift += 8;
    }
}

/// Ring lengths, in buckets.
const RING_MIN: usize = 256;
const RING_MAX: usize = 1 << 20;
/// Target entries per bucket at the density the calendar starts with.
const PER_BUCKET: u64 = 64;

impl CalendarQueue {
    /// A calendar sized for `entries` (all at or after `now`), holding them.
    fn of(now: Nanos, mut entries: Vec<Entry>) -> Self {
        let (shift, ring_len) = Self::geometry(&entries);
        let mut calendar = Self {
            shift,
            mask: ring_len as u64 - 1,
            ring: (0..ring_len).map(|_| Vec::new()).collect(),
            in_ring: 0,
            cur: now >> shift,
            current: Vec::new(),
            scratch: Vec::new(),
            #[cfg(test)]
            radix_sorts: 0,
            early: BinaryHeap::new(),
            far: BinaryHeap::new(),
            len: 0,
        };
        // In key order, so that every bucket holds equal times in `seq` order (see
        // `sort_current`).
        entries.sort_unstable_by_key(Entry::key);
        for entry in entries {
            calendar.push(entry);
        }
        calendar
    }

    /// Bucket width (as a shift) and ring length for the density of `entries`: the width
    /// puts about [`PER_BUCKET`] of them in a bucket, the ring spans twice the time that
    /// seven in eight of them cover (a few far ones, a fault a minute away, stay in `far`).
    fn geometry(entries: &[Entry]) -> (u32, usize) {
        let mut times: Vec<Nanos> = entries.iter().map(|e| e.time).collect();
        if times.len() < 2 {
            return (0, RING_MIN);
        }
        let most = times.len() * 7 / 8;
        let (_, &mut high, _) = times.select_nth_unstable(most);
        let low = *times[..most].iter().min().unwrap_or(&high);
        let span_ns = high - low;
        let per_entry_ns = span_ns / most.max(1) as u64;
        let width_ns = per_entry_ns
            .saturating_mul(PER_BUCKET)
            .max(1)
            .checked_next_power_of_two()
            .unwrap_or(1 << 63);
        let shift = width_ns.trailing_zeros();
        let buckets = (span_ns >> shift).saturating_mul(2) as usize;
        (shift, buckets.clamp(RING_MIN, RING_MAX).next_power_of_two())
    }

    fn push(&mut self, entry: Entry) {
        let bucket = entry.time >> self.shift;
        self.len += 1;
        if bucket <= self.cur {
            self.early.push(Earliest(entry));
        } else if bucket - self.cur <= self.mask {
            self.ring[(bucket & self.mask) as usize].push(entry);
            self.in_ring += 1;
        } else {
            self.far.push(Earliest(entry));
        }
    }

    /// The minimum, without taking it.
    fn peek(&mut self) -> Option<Entry> {
        if self.current.is_empty() && self.early.is_empty() {
            self.advance();
        }
        match (self.early.peek(), self.current.last()) {
            (Some(&Earliest(early)), Some(current)) if current.key() < early.key() => {
                Some(*current)
            }
            (Some(&Earliest(early)), _) => Some(early),
            (None, current) => current.copied(),
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        let taken = self.peek()?;
        if self.current.last() == Some(&taken) {
            self.current.pop();
        } else {
            self.early.pop();
        }
        self.len -= 1;
        Some(taken)
    }

    /// The `ahead`-th entry after the minimum of the bucket being consumed, if it has one.
    /// Entries in `early` may come before it: this is a hint for prefetching, not an order.
    fn upcoming(&self, ahead: usize) -> Option<Entry> {
        let index = self.current.len().checked_sub(ahead + 1)?;
        self.current.get(index).copied()
    }

    /// Moves on to the next bucket that holds anything and sorts it into `current`.
    fn advance(&mut self) {
        while self.current.is_empty() && self.len > 0 {
            if self.in_ring == 0 {
                // Nothing near: jump to the bucket of the first far entry.
                let Earliest(first) = *self.far.peek().expect("len counts far entries");
                self.cur = first.time >> self.shift;
            } else {
                self.cur += 1;
            }
            self.pull_far();
            let slot = (self.cur & self.mask) as usize;
            std::mem::swap(&mut self.current, &mut self.ring[slot]);
            self.in_ring -= self.current.len();
        }
        self.sort_current();
    }

    /// Sorts `current` by key, the minimum last.
    ///
    /// A bucket holds equal times in `seq` order: pushes come in `seq` order; what `pull_far`
    /// moves in comes in key order, and before anything is pushed to its bucket (a bucket is
    /// out of the ring's reach until `pull_far` runs for it); the entries a calendar starts
    /// with are pushed in key order. So a stable sort by time alone gives key order, and since
    /// a bucket's times differ only in their low `shift` bits, a radix sort on those bits does
    /// it in a few linear passes.
    fn sort_current(&mut self) {
        if self.shift <= RADIX_SORT_BITS && self.current.len() >= RADIX_SORT_FROM {
            radix_sort_by_time(&mut self.current, &mut self.scratch, self.shift);
            self.current.reverse();
            #[cfg(test)]
            {
                self.radix_sorts += 1;
            }
        } else {
            // Keys are unique: an unstable sort gives the one order.
            self.current.sort_unstable_by_key(|e| Reverse(e.key()));
        }
        debug_assert!(self.current.windows(2).all(|w| w[0].key() > w[1].key()));
    }

    /// Moves far entries that the ring now reaches (up to bucket `cur + mask`) into it.
    fn pull_far(&mut self) {
        while let Some(&Earliest(entry)) = self.far.peek() {
            let bucket = entry.time >> self.shift;
            if bucket - self.cur > self.mask {
                break;
            }
            self.far.pop();
            self.ring[(bucket & self.mask) as usize].push(entry);
            self.in_ring += 1;
        }
    }

    /// Everything queued, in no particular order, leaving the calendar empty.
    fn drain(&mut self) -> Vec<Entry> {
        let mut all: Vec<Entry> = std::mem::take(&mut self.current);
        all.extend(self.early.drain().map(|Earliest(e)| e));
        for bucket in &mut self.ring {
            all.append(bucket);
        }
        all.extend(self.far.drain().map(|Earliest(e)| e));
        self.in_ring = 0;
        self.len = 0;
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;
    use std::collections::BTreeMap;

    /// A queue whose calendar takes over from `many_from` events.
    fn with_many_from(timer_slots: usize, many_from: usize) -> EventQueue {
        EventQueue {
            many_from,
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

    #[test]
    fn the_calendar_sizes_its_buckets_for_the_density_it_starts_with() {
        // As the 1,000-node Bully election hands over: 16,384 messages sent at 0 with
        // latencies uniform in 1-10 ms, and one fault a minute away.
        let mut rng = SimRng::stream(7, 2);
        let mut entries: Vec<Entry> = (0..16_383)
            .map(|seq| Entry {
                time: 1_000_000 + rng.below(9_000_001),
                seq,
                handle: 0,
            })
            .collect();
        entries.push(Entry {
            time: 60_000_000_000,
            seq: 16_383,
            handle: 0,
        });
        let (shift, ring) = CalendarQueue::geometry(&entries);
        // About 550 ns between entries, 64 to a bucket: 35 us, rounded up to 2^16 ns; the
        // ring spans twice the 7.9 ms that seven in eight cover, at least 256 buckets.
        assert_eq!(shift, 16);
        assert_eq!(ring, 256);
        let calendar = CalendarQueue::of(0, entries);
        assert_eq!(calendar.far.len(), 1, "the far fault waits beyond the ring");
        assert_eq!(calendar.len, 16_384);
    }

    #[test]
    fn a_push_behind_a_calendar_that_peeked_ahead_comes_out_first() {
        // Only far events queued: a peek jumps the calendar to the first of them; a timer
        // earlier than that then runs and sends; what it sends must come out before.
        let mut queue = with_many_from(1, 0);
        queue.push(5_000_000_000, 10);
        queue.push(5_000_000_001, 11);
        queue.set_slot(0, 100);
        assert_eq!(
            queue.take_min().map(|e| e.handle),
            Some(0),
            "the timer is first"
        );
        for (time, handle) in [(300, 12), (200, 13), (5_000_000_000, 14)] {
            queue.push(time, handle);
        }
        let order: Vec<u32> = drain(&mut queue).iter().map(|e| e.handle).collect();
        assert_eq!(order, vec![13, 12, 10, 14, 11]);
    }

    /// Dense buckets with many equal times: the radix-sorted path, against the oracle.
    #[test]
    fn dense_buckets_with_equal_times_pop_in_key_order() {
        for seed in 1..=3 {
            let mut rng = SimRng::stream(seed, 3);
            let mut queue = with_many_from(0, 1000);
            let mut oracle: BTreeMap<(u64, u64), u32> = BTreeMap::new();
            let mut now = 0;
            for round in 0..40_000u32 {
                if rng.below(3) > 0 {
                    // Few distinct times, so that buckets hold runs of equal ones.
                    let time = now + 64 * rng.below(400);
                    let entry = queue.push(time, round);
                    oracle.insert((entry.time, entry.seq), round);
                } else if let Some(entry) = queue.take_min() {
                    assert_eq!(
                        oracle.pop_first(),
                        Some(((entry.time, entry.seq), entry.handle))
                    );
                    now = entry.time;
                }
            }
            let calendar = queue.many.as_ref().expect("the calendar holds them");
            assert!(calendar.radix_sorts > 0, "the radix path ran");
            while let Some(entry) = queue.take_min() {
                assert_eq!(
                    oracle.pop_first(),
                    Some(((entry.time, entry.seq), entry.handle))
                );
            }
            assert!(oracle.is_empty());
        }
    }

    #[test]
    fn the_radix_sort_is_stable_on_the_low_bits() {
        let mut rng = SimRng::stream(5, 4);
        let mut entries: Vec<Entry> = (0..3000)
            .map(|seq| Entry {
                time: (7 << 16) | rng.below(1 << 16),
                seq,
                handle: 0,
            })
            .collect();
        let mut want = entries.clone();
        want.sort_by_key(Entry::key);
        radix_sort_by_time(&mut entries, &mut Vec::new(), 16);
        assert_eq!(entries, want);
    }

    /// Differential test against a BTreeMap oracle keyed by (time, seq): with the binary
    /// heap only, the calendar only, and both taking turns.
    #[test]
    fn random_operations_match_an_ordered_map_oracle() {
        for many_from in [CALENDAR_FROM, 0, 3, 40, 1000] {
            for seed in 1..=4 {
                match_the_oracle(seed, many_from);
            }
        }
    }

    fn match_the_oracle(seed: u64, many_from: usize) {
        let slots = 8u32;
        let mut rng = SimRng::stream(seed, 1);
        let mut queue = with_many_from(slots as usize, many_from);
        let mut oracle: BTreeMap<(u64, u64), u32> = BTreeMap::new();
        let mut slot_key: Vec<Option<(u64, u64)>> = vec![None; slots as usize];
        let mut now = 0u64;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            match rng.below(5) {
                0 | 1 => {
                    // Mostly near, sometimes far: keys in the calendar's ring and past it.
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
