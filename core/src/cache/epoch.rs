//! The leader epochs of a user partition: Kafka's `RemoteLogLeaderEpochState` for every epoch
//! of the partition at once (spec §6.1), displacement rules and all.
//!
//! Owns: which finished segment serves each start offset of each epoch, the segments of an epoch
//! that serve nothing (started, being deleted, displaced), and each epoch's highest offset, which
//! never decreases. The serving entries of all epochs are one array sorted by (epoch, start):
//! offsets grow with epochs, so a lookup guesses its place from the start offset (`hints`, once
//! the partition serves lookups; a straight line through the entries before) and reads a few
//! entries around the guess, and an epoch with no segment left costs only its highest offset
//! (Kafka keeps the whole state). Never: segment metadata itself (the partition's segment
//! table holds it; an entry names a finished segment by its row there).

use std::collections::VecDeque;

use super::hints::Hints;
use super::segment::Row;
use super::serving::ServingEntries;
pub(crate) use super::serving::{Entry, Serving};
use super::unreferenced::Unreferenced;
use crate::model::Uuid;

/// What a lookup finds: the serving segment's row and the last offset its epoch wrote in it.
/// The end is kept with the entry, not only in the row, so that a lookup decides without the
/// row's leader epochs (on the heap when there are several: a cache miss more); `None` when it
/// was too wide to keep, and the row's epochs answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Floor {
    pub(crate) row: Row,
    pub(crate) end: Option<i64>,
}

/// What happens to a segment in one of its epochs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum EpochEvent {
    CopyStarted,
    /// The segment now serves from `start` to `end` of the epoch.
    CopyFinished {
        start: i64,
        end: i64,
    },
    DeleteStarted {
        start: i64,
    },
    DeleteFinished,
}

/// Every leader epoch of a partition.
#[derive(Clone, Debug, Default)]
pub(crate) struct Epochs {
    /// Finished segments serving an epoch, ascending by (epoch, start). A deque: segments finish
    /// at the end and are deleted from the front.
    serving: ServingEntries,
    /// (epoch, segment) for the segments that serve none of the epoch's offsets.
    unreferenced: Unreferenced,
    /// Parallel, ascending by epoch: every epoch that ever had a finished segment and its highest
    /// offset.
    highest_epochs: Vec<i32>,
    highest_offsets: Vec<i64>,
    /// Where a start offset's entry probably is, rebuilt after `HINTS_STALE` of the entries'
    /// worth of edits.
    hints: Hints,
    /// Entries removed less entries inserted at the front of `serving`, ever: what moves every
    /// entry's position at once.
    front: i64,
    /// Changes to `serving` since `hints` was built.
    edits: usize,
    /// Whether lookups are served, so hints are kept: not while the partition is replayed,
    /// whose edits are at the ends and never search.
    hinting: bool,
}

/// The share of the entries (1 / HINTS_STALE) changed before the hints are rebuilt: a rebuild
/// reads every entry, so it costs a few reads per change.
const HINTS_STALE: usize = 4;
/// Fewer entries are searched from a straight-line guess alone.
const HINTED_FROM: usize = 64;

impl Epochs {
    /// How many entries come before `(epoch, start)` or are it.
    fn through(&self, epoch: i32, start: i64) -> usize {
        let key = (epoch, start);
        count_at_or_below(
            self.serving.entries(),
            |s| s.key() <= key,
            self.guess(start),
        )
    }

    /// How many entries come before `(epoch, start)`.
    fn before(&self, epoch: i32, start: i64) -> usize {
        let key = (epoch, start);
        count_at_or_below(self.serving.entries(), |s| s.key() < key, self.guess(start))
    }

    /// Where the entry of `start` probably is: from the hints, or past what they cover, on a
    /// straight line through the entries they do not.
    fn guess(&self, start: i64) -> usize {
        let n = self.serving.len();
        if let Some(at) = self.hints.guess(start, n, self.front) {
            return at;
        }
        let from = self.hints.end(n, self.front);
        interpolate(self.serving.entries(), from, start, |s| s.start)
    }

    pub(crate) fn add_memory(&self, m: &mut super::memory::MemoryUse) {
        m.serving += self.serving.heap_bytes();
        m.hints += self.hints.heap_bytes();
        m.epochs += self.unreferenced.heap_bytes()
            + super::memory::vec_bytes(&self.highest_epochs)
            + super::memory::vec_bytes(&self.highest_offsets);
    }

    /// From now on, keeps hints for lookups (the partition's cache is initialized).
    pub(crate) fn keep_hints(&mut self) {
        if !self.hinting {
            self.hinting = true;
            self.rebuild_hints();
        }
    }

    /// Counts a change to the entries, and rebuilds the hints when enough have changed.
    fn edited(&mut self) {
        if !self.hinting {
            return;
        }
        self.edits += 1;
        if self.edits >= (self.serving.len() / HINTS_STALE).max(HINTED_FROM) {
            self.rebuild_hints();
        }
    }

    fn rebuild_hints(&mut self) {
        self.edits = 0;
        self.hints = if self.serving.len() >= HINTED_FROM {
            Hints::build(self.serving.iter().map(|s| s.start), self.front)
        } else {
            Hints::default()
        };
    }

    /// Where the entry of `(epoch, start)` is, or would go.
    fn position(&self, epoch: i32, start: i64) -> Result<usize, usize> {
        // Segments are deleted oldest first: the one asked for is most often the first.
        if self
            .serving
            .front()
            .is_some_and(|f| f.key() == (epoch, start))
        {
            return Ok(0);
        }
        let n = self.through(epoch, start);
        match n.checked_sub(1).and_then(|i| self.serving.get(i)) {
            Some(s) if s.key() == (epoch, start) => Ok(n - 1),
            _ => Err(n),
        }
    }

    /// The segment serving the greatest start offset at or below `offset` in `epoch` (which may
    /// end before `offset`).
    pub(crate) fn floor(&self, epoch: i32, offset: i64) -> Option<Floor> {
        let i = self.through(epoch, offset).checked_sub(1)?;
        let s = self.serving.get(i)?;
        (s.epoch == epoch).then(|| Floor {
            row: s.row,
            end: self.serving.end(i),
        })
    }

    /// The segments serving `epoch`, by start offset.
    pub(crate) fn serving(&self, epoch: i32) -> impl Iterator<Item = &Entry> {
        let from = self.before(epoch, i64::MIN);
        self.serving
            .range(from)
            .take_while(move |s| s.epoch == epoch)
    }

    /// The segments of `epoch` serving none of its offsets, in the order they became so.
    pub(crate) fn unreferenced(&self, epoch: i32) -> Vec<Uuid> {
        self.unreferenced.of_epoch(epoch)
    }

    /// The row of the first serving entry: the oldest finished segment, most often the next
    /// one deleted.
    pub(crate) fn oldest_row(&self) -> Option<Row> {
        self.serving.front().map(|s| s.row)
    }

    pub(crate) fn highest(&self, epoch: i32) -> Option<i64> {
        let i = self.highest_epochs.binary_search(&epoch).ok()?;
        self.highest_offsets.get(i).copied()
    }

    /// Applies one event of segment `id` (at `row`) to `epoch`.
    pub(crate) fn apply(
        &mut self,
        epoch: i32,
        row: Row,
        id: Uuid,
        event: EpochEvent,
        id_of: impl Fn(Row) -> Uuid,
    ) {
        match event {
            EpochEvent::CopyStarted => self.unreferenced.add((epoch, id)),
            EpochEvent::CopyFinished { start, end } => {
                let s = Serving {
                    start,
                    end,
                    epoch,
                    row,
                };
                self.on_copy_finished(s, id, id_of)
            }
            EpochEvent::DeleteStarted { start } => {
                if let Ok(i) = self.position(epoch, start) {
                    if self.serving.get(i).is_some_and(|s| s.row == row) {
                        self.remove_at(i);
                    }
                }
                self.unreferenced.add((epoch, id));
            }
            EpochEvent::DeleteFinished => self.unreferenced.remove((epoch, id)),
        }
    }

    /// Kafka's `handleSegmentWithCopySegmentFinishedState`: the epoch's segments starting at or
    /// after `s.start` are displaced while this one (serving up to `end`) reaches at least as
    /// far as the epoch ever did; then a plain put (which silently forgets a same-key segment
    /// when nothing was displaced).
    fn on_copy_finished(&mut self, s: Serving, id: Uuid, id_of: impl Fn(Row) -> Uuid) {
        let (epoch, end) = (s.epoch, s.end);
        let h = match self.highest_epochs.last() {
            Some(&last) if last == epoch => Ok(self.highest_epochs.len() - 1),
            Some(&last) if last < epoch => Err(self.highest_epochs.len()),
            _ => self.highest_epochs.binary_search(&epoch),
        };
        let highest = h.ok().and_then(|h| self.highest_offsets.get(h).copied());
        if self
            .serving
            .back()
            .is_none_or(|last| last.key() < (s.epoch, s.start))
        {
            // After every entry (as segments finish, in order): nothing of the epoch starts at
            // or after it, so nothing is displaced and no entry has its key.
            self.serving.push_back(s);
            self.edited();
        } else {
            self.displace_and_put(s, highest, id_of);
        }
        self.unreferenced.remove((epoch, id));
        match h {
            Ok(h) if highest.is_some_and(|old| end > old) => {
                if let Some(slot) = self.highest_offsets.get_mut(h) {
                    *slot = end;
                }
            }
            Ok(_) => {}
            Err(h) => {
                self.highest_epochs.insert(h, epoch);
                self.highest_offsets.insert(h, end);
            }
        }
    }

    /// The segments of the epoch starting at or after `s` are displaced when `s` reaches at
    /// least as far as the epoch ever did (`highest`, before this segment: Kafka evaluates it
    /// once); then `s` is put in, over an entry of the same key if there is one.
    fn displace_and_put(&mut self, s: Serving, highest: Option<i64>, id_of: impl Fn(Row) -> Uuid) {
        let epoch = s.epoch;
        if highest.is_none_or(|h| h <= s.end) {
            let (from, to) = (self.before(epoch, s.start), self.through(epoch, i64::MAX));
            // Displaced newest first, as Kafka's loop over the tail map finds them.
            for i in (from..to).rev() {
                if let Some(old) = self.serving.get(i) {
                    self.unreferenced.add((epoch, id_of(old.row)));
                }
            }
            if from < to {
                self.serving.remove_range(from..to);
                if from == 0 {
                    self.front += (to - from) as i64;
                }
                self.edited();
            }
        }
        match self.position(epoch, s.start) {
            Ok(i) => self.serving.set(i, s),
            Err(i) => self.insert_at(i, s),
        }
    }

    /// Inserts at `i`, taking the cheap way at either end (where nearly every insert happens).
    fn insert_at(&mut self, i: usize, s: Serving) {
        let d = &mut self.serving;
        if i >= d.len() {
            d.push_back(s);
        } else if i == 0 {
            d.push_front(s);
            self.front -= 1;
        } else {
            d.insert(i, s);
        }
        self.edited();
    }

    /// Removes at `i`, taking the cheap way at either end.
    fn remove_at(&mut self, i: usize) {
        let d = &mut self.serving;
        if i == 0 {
            d.pop_front();
            self.front += 1;
        } else if i + 1 == d.len() {
            d.pop_back();
        } else {
            d.remove(i);
        }
        self.edited();
    }
}

/// Where `target` falls on a straight line through the keys (`key`) of items `from..` of `d`:
/// start offsets grow about evenly.
fn interpolate<T>(d: &VecDeque<T>, from: usize, target: i64, key: impl Fn(&T) -> i64) -> usize {
    let n = d.len();
    let (Some(first), Some(last)) = (d.get(from), d.back()) else {
        return n / 2;
    };
    let (low, high) = (key(first), key(last));
    if target >= high {
        n - 1
    } else if target <= low {
        from
    } else {
        // low < target < high.
        let span = (i128::from(high) - i128::from(low)).unsigned_abs();
        let above = (i128::from(target) - i128::from(low)).unsigned_abs();
        let steps = (n - 1 - from) as u128;
        from + usize::try_from(above * steps / span).unwrap_or(0)
    }
}

/// How many items of `d` satisfy `at_or_below` (true for a prefix of `d`, at most the items
/// whose key is at or below the target): `partition_point`, found with few reads of `d`. The
/// first read is at `guess`, where the answer probably is; from there the answer is galloped
/// to, so that a bad guess (or keys that are not ascending at all) costs O(log n) reads, never
/// more. A random lookup pays a cache miss per read. (Reading the 16 entries around the guess
/// at once, with no branch on what they hold, was slower: more lines read, as many misses.)
fn count_at_or_below<T>(d: &VecDeque<T>, at_or_below: impl Fn(&T) -> bool, guess: usize) -> usize {
    let n = d.len();
    let below = |i: usize| d.get(i).is_some_and(&at_or_below);
    let (Some(first), Some(last)) = (d.front(), d.back()) else {
        return 0;
    };
    if !at_or_below(first) {
        return 0;
    }
    if at_or_below(last) {
        return n;
    }
    // Here n >= 2 and the answer is in 1..n.
    let guess = guess.min(n - 1);
    // Gallop to a window lo..hi holding the answer: below(lo - 1) and !below(hi).
    let (mut lo, mut hi);
    if below(guess) {
        lo = guess + 1;
        hi = n;
        let mut step = 1;
        while guess + step < n {
            if !below(guess + step) {
                hi = guess + step;
                break;
            }
            lo = guess + step + 1;
            step *= 2;
        }
    } else {
        lo = 0;
        hi = guess;
        let mut step = 1;
        while step <= guess {
            if below(guess - step) {
                lo = guess - step + 1;
                break;
            }
            hi = guess - step;
            step *= 2;
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    //! Kafka's RemoteLogLeaderEpochStateTest (spec §7.2), case by case, in epoch 0 (and others
    //! beside it). Segment `n` has row `n`.
    use super::*;

    fn s(n: i64) -> Uuid {
        Uuid::new(n, n)
    }

    fn id_of(r: Row) -> Uuid {
        s(i64::from(r))
    }

    fn started(e: &mut Epochs, n: u32) {
        e.apply(0, n, id_of(n), EpochEvent::CopyStarted, id_of);
    }

    fn finished(e: &mut Epochs, start: i64, n: u32, end: i64) {
        let event = EpochEvent::CopyFinished { start, end };
        e.apply(0, n, id_of(n), event, id_of);
    }

    fn floor(e: &Epochs, offset: i64) -> Option<Uuid> {
        e.floor(0, offset).map(|o| id_of(o.row))
    }

    fn serving(e: &Epochs) -> usize {
        e.serving(0).count()
    }

    #[test]
    fn copy_started_is_unreferenced() {
        let mut e = Epochs::default();
        started(&mut e, 1);
        assert_eq!(e.unreferenced(0), vec![s(1)]);
    }

    #[test]
    fn finished_segments_are_served() {
        let mut e = Epochs::default();
        finished(&mut e, 10, 1, 100);
        finished(&mut e, 101, 2, 200);
        assert_eq!(serving(&e), 2);
        assert_eq!((floor(&e, 90), floor(&e, 150)), (Some(s(1)), Some(s(2))));
        assert!(e.unreferenced(0).is_empty());
        assert_eq!(e.highest(0), Some(200));
    }

    #[test]
    fn overlapping_segments_displace() {
        let mut e = Epochs::default();
        finished(&mut e, 10, 1, 100);
        finished(&mut e, 5, 2, 150);
        assert_eq!((serving(&e), floor(&e, 11)), (1, Some(s(2))));
        assert_eq!(e.unreferenced(0), vec![s(1)]);
        assert_eq!(e.highest(0), Some(150));
        finished(&mut e, 148, 3, 155);
        finished(&mut e, 4, 4, 200);
        assert_eq!((serving(&e), floor(&e, 11)), (1, Some(s(4))));
        let mut u = e.unreferenced(0);
        u.sort();
        assert_eq!(u, vec![s(1), s(2), s(3)]);
        assert_eq!(e.highest(0), Some(200));
    }

    #[test]
    fn displacement_stays_within_its_epoch() {
        let mut e = Epochs::default();
        e.apply(
            1,
            7,
            s(7),
            EpochEvent::CopyFinished { start: 0, end: 9 },
            id_of,
        );
        finished(&mut e, 10, 1, 100);
        e.apply(
            1,
            8,
            s(8),
            EpochEvent::CopyFinished { start: 50, end: 60 },
            id_of,
        );
        e.apply(
            -1,
            9,
            s(9),
            EpochEvent::CopyFinished { start: 90, end: 99 },
            id_of,
        );
        finished(&mut e, 5, 2, 150);
        assert_eq!((floor(&e, 11), e.unreferenced(0)), (Some(s(2)), vec![s(1)]));
        let e1: Vec<_> = e.serving(1).map(|x| x.row).collect();
        assert_eq!(e1, vec![7, 8], "epoch 1 keeps both");
        assert_eq!(e.serving(-1).map(|x| x.row).collect::<Vec<_>>(), vec![9]);
        assert_eq!(e.floor(1, 55).map(|x| x.row), Some(8));
        assert_eq!(e.floor(2, 55), None);
    }

    #[test]
    fn duplicates_and_same_start_offsets() {
        let mut e = Epochs::default();
        finished(&mut e, 10, 1, 100);
        finished(&mut e, 10, 2, 100);
        assert_eq!(
            (floor(&e, 11), e.unreferenced(0), e.highest(0)),
            (Some(s(2)), vec![s(1)], Some(100))
        );
        let mut e = Epochs::default();
        finished(&mut e, 10, 1, 100);
        finished(&mut e, 10, 2, 150);
        assert_eq!(
            (floor(&e, 11), floor(&e, 111), e.unreferenced(0).len()),
            (Some(s(2)), Some(s(2)), 1)
        );
        assert_eq!(e.highest(0), Some(150));
    }

    #[test]
    fn a_shorter_same_start_segment_is_forgotten_by_the_plain_put() {
        let mut e = Epochs::default();
        finished(&mut e, 10, 1, 150);
        finished(&mut e, 10, 2, 100);
        assert_eq!(floor(&e, 10), Some(s(2)));
        assert!(
            e.unreferenced(0).is_empty(),
            "Kafka drops s1 from the epoch's indexes entirely"
        );
        assert_eq!(e.highest(0), Some(150));
    }

    #[test]
    fn delete_started_and_finished() {
        let mut e = Epochs::default();
        finished(&mut e, 10, 1, 100);
        finished(&mut e, 101, 2, 200);
        e.apply(0, 1, s(1), EpochEvent::DeleteStarted { start: 10 }, id_of);
        e.apply(0, 2, s(2), EpochEvent::DeleteStarted { start: 101 }, id_of);
        assert_eq!(serving(&e), 0);
        assert_eq!(e.unreferenced(0), vec![s(1), s(2)]);
        let mut e = Epochs::default();
        started(&mut e, 3);
        e.apply(0, 3, s(3), EpochEvent::DeleteFinished, id_of);
        assert!(e.unreferenced(0).is_empty() && e.unreferenced.is_empty());
    }

    #[test]
    fn a_drained_epoch_keeps_only_its_highest_offset() {
        let mut e = Epochs::default();
        e.apply(3, 1, s(1), EpochEvent::CopyStarted, id_of);
        let finished = EpochEvent::CopyFinished {
            start: 10,
            end: 100,
        };
        e.apply(3, 1, s(1), finished, id_of);
        e.apply(3, 1, s(1), EpochEvent::DeleteStarted { start: 10 }, id_of);
        assert_eq!(e.unreferenced(3), vec![s(1)]);
        e.apply(3, 1, s(1), EpochEvent::DeleteFinished, id_of);
        assert!(e.serving.is_empty() && e.unreferenced.is_empty());
        assert_eq!((e.highest(3), e.highest(2)), (Some(100), None));
    }

    #[test]
    fn searches_stay_exact_while_the_hints_go_stale() {
        use proptest::prelude::*;
        // Segments finishing in order (now and then over others), deleted oldest first or from
        // the middle, in a few epochs: every edit moves entries under the hints, which are
        // rebuilt now and then. Every search must still equal a plain partition point.
        let op = prop_oneof![
            6 => (1i64..400).prop_map(Op::Finish),
            1 => (0i64..5000, 1i64..3000).prop_map(|(back, len)| Op::Over { back, len }),
            3 => Just(Op::DeleteOldest),
            1 => any::<prop::sample::Index>().prop_map(Op::Delete),
            1 => Just(Op::NextEpoch),
        ];
        proptest!(ProptestConfig::with_cases(64), |(ops in proptest::collection::vec(op, 1..1500), probes in proptest::collection::vec(any::<prop::sample::Index>(), 16))| {
            let mut e = Epochs::default();
            let (mut epoch, mut next, mut row) = (0i32, 0i64, 0u32);
            for (k, op) in ops.iter().enumerate() {
                // Replayed first, then serving lookups.
                if k == ops.len() / 3 {
                    e.keep_hints();
                }
                row += 1;
                let event = match *op {
                    Op::Finish(len) => {
                        let start = next;
                        next += len;
                        Some((epoch, EpochEvent::CopyFinished { start, end: next - 1 }))
                    }
                    Op::Over { back, len } => {
                        let start = (next - back).max(0);
                        next = next.max(start + len);
                        Some((epoch, EpochEvent::CopyFinished { start, end: start + len - 1 }))
                    }
                    Op::DeleteOldest => e.serving.front().map(|s| (s.epoch, EpochEvent::DeleteStarted { start: s.start })),
                    Op::Delete(i) => (!e.serving.is_empty())
                        .then(|| i.index(e.serving.len()))
                        .and_then(|k| e.serving.get(k))
                        .map(|s| (s.epoch, EpochEvent::DeleteStarted { start: s.start })),
                    Op::NextEpoch => {
                        epoch += 1;
                        None
                    }
                };
                if let Some((at, event)) = event {
                    let r = match event {
                        EpochEvent::DeleteStarted { start } => e.serving.iter().find(|s| s.key() == (at, start)).map_or(row, |s| s.row),
                        _ => row,
                    };
                    e.apply(at, r, id_of(r), event, id_of);
                }
                if k % 50 == 0 || k + 1 == ops.len() {
                    let keys: Vec<(i32, i64)> = e.serving.iter().map(Entry::key).collect();
                    prop_assert!(keys.windows(2).all(|w| w[0] < w[1]), "entries ascending");
                    let mut targets: Vec<(i32, i64)> = probes.iter().filter(|_| !keys.is_empty()).map(|i| keys[i.index(keys.len())]).collect();
                    targets.extend(targets.clone().iter().flat_map(|&(ep, st)| [(ep, st - 1), (ep, st + 1), (ep + 1, 0), (ep, i64::MAX)]));
                    targets.extend([(0, 0), (epoch, next), (epoch + 1, i64::MIN)]);
                    for (ep, st) in targets {
                        prop_assert_eq!(e.through(ep, st), keys.partition_point(|&k| k <= (ep, st)), "through {:?}", (ep, st));
                        prop_assert_eq!(e.before(ep, st), keys.partition_point(|&k| k < (ep, st)), "before {:?}", (ep, st));
                    }
                }
            }
        });
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Finish(i64),
        Over { back: i64, len: i64 },
        DeleteOldest,
        Delete(proptest::sample::Index),
        NextEpoch,
    }

    #[test]
    fn counting_matches_partition_point_on_any_spread() {
        use proptest::prelude::*;
        let spread = prop_oneof![
            proptest::collection::vec(any::<i64>(), 0..200),
            proptest::collection::vec(-1000i64..1000, 0..200),
            // Even offsets with a few far jumps: the interpolation guess lands far off.
            proptest::collection::vec(
                prop_oneof![9 => 1i64..100, 1 => 1i64..i64::MAX / 512],
                0..200
            )
            .prop_map(|steps| steps
                .iter()
                .scan(0i64, |at, s| {
                    *at = at.saturating_add(*s);
                    Some(*at)
                })
                .collect()),
        ];
        // Entries of a few epochs: sorted by (epoch, start), the starts not ascending overall
        // (an unclean election), interpolated on start all the same.
        let entries = (spread, proptest::collection::vec(0i32..4, 0..200));
        proptest!(|((mut starts, epochs) in entries, targets in proptest::collection::vec((0i32..4, any::<i64>()), 8))| {
            let mut keys: Vec<(i32, i64)> = epochs.into_iter().zip(starts.drain(..)).collect();
            keys.sort_unstable();
            keys.dedup();
            let d: VecDeque<(i32, i64)> = keys.iter().copied().collect();
            let mut probes = targets;
            for &(e, k) in &keys {
                probes.extend([(e, k), (e, k.saturating_sub(1)), (e, k.saturating_add(1)), (e + 1, k)]);
            }
            probes.extend([(0, i64::MIN), (4, i64::MAX)]);
            let hints = Hints::build(d.iter().map(|k| k.1), 0);
            for t in probes {
                let want = d.partition_point(|k| *k <= t);
                let hinted = hints.guess(t.1, d.len(), 0);
                let from_line = interpolate(&d, 0, t.1, |k| k.1);
                // Any guess gives the answer: the hints', the line's, and far-off ones.
                for guess in [hinted.unwrap_or(0), from_line, 0, d.len() / 3, d.len(), usize::MAX] {
                    prop_assert_eq!(count_at_or_below(&d, |k| *k <= t, guess), want, "guess {}", guess);
                }
            }
        });
    }
}
