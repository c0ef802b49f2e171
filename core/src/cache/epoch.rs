//! One leader epoch's view of a user partition's remote segments: Kafka's
//! `RemoteLogLeaderEpochState` (spec §6.1), displacement rules and all, and the table of every
//! epoch of a partition.
//!
//! Owns: which finished segment serves each start offset of the epoch, the segments of the epoch
//! that serve nothing (started, being deleted, displaced), and the epoch's highest offset, which
//! never decreases. An epoch none of whose segments is left costs only its highest offset (Kafka
//! keeps the whole state). Never: segment metadata itself (the partition cache's segment table
//! holds it; an epoch names a finished segment by its row there).

use std::collections::VecDeque;

use crate::model::Uuid;

/// A segment's row in its partition's segment table.
pub(crate) type Row = u32;

/// A finished segment serving the epoch from `start` (up to its epoch end offset, which its row
/// gives: a lookup reads the row anyway).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Serving {
    pub(crate) start: i64,
    pub(crate) row: Row,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct EpochState {
    /// Finished segments by the start offset of this epoch within them, ascending. A deque:
    /// segments finish at the end and are deleted from the front.
    pub(crate) serving: VecDeque<Serving>,
    /// Segments of this epoch that serve no offset, in the order they became unreferenced.
    pub(crate) unreferenced: Vec<Uuid>,
}

impl EpochState {
    fn add_unreferenced(&mut self, id: Uuid) {
        if !self.unreferenced.contains(&id) {
            // Usually the only one: room for one, not four.
            self.unreferenced.reserve_exact(1);
            self.unreferenced.push(id);
        }
    }

    fn remove_unreferenced(&mut self, id: Uuid) {
        if !self.unreferenced.is_empty() {
            self.unreferenced.retain(|u| *u != id);
        }
    }

    fn is_empty(&self) -> bool {
        self.serving.is_empty() && self.unreferenced.is_empty()
    }

    fn on_copy_started(&mut self, id: Uuid) {
        self.add_unreferenced(id);
    }

    /// Kafka's `handleSegmentWithCopySegmentFinishedState`: segments starting at or after
    /// `start` are displaced while this one (serving up to `end`) reaches at least as far as the
    /// epoch ever did; then a plain put (which silently forgets a same-key segment when nothing
    /// was displaced).
    fn on_copy_finished(
        &mut self,
        highest: &mut Option<i64>,
        s: Serving,
        end: i64,
        id: Uuid,
        id_of: impl Fn(Row) -> Uuid,
    ) {
        // Kafka evaluates "reaches as far" once, against the highest offset before this call.
        if highest.is_none_or(|h| h <= end) {
            while let Some(old) = self.serving.back().filter(|o| o.start >= s.start).copied() {
                self.serving.pop_back();
                self.add_unreferenced(id_of(old.row));
            }
        }
        match self.position(s.start) {
            Ok(i) => {
                if let Some(slot) = self.serving.get_mut(i) {
                    *slot = s;
                }
            }
            Err(i) => insert_at(&mut self.serving, i, s),
        }
        self.remove_unreferenced(id);
        if highest.is_none_or(|h| end > h) {
            *highest = Some(end);
        }
    }

    fn on_delete_started(&mut self, start: i64, row: Row, id: Uuid) {
        if let Ok(i) = self.position(start) {
            if self.serving.get(i).is_some_and(|o| o.row == row) {
                remove_at(&mut self.serving, i);
            }
        }
        self.add_unreferenced(id);
    }

    fn on_delete_finished(&mut self, id: Uuid) {
        self.remove_unreferenced(id);
    }

    /// Where a segment serving from `start` is, or would go.
    fn position(&self, start: i64) -> Result<usize, usize> {
        let n = count_at_or_below(&self.serving, start, |o| o.start);
        match n.checked_sub(1).and_then(|i| self.serving.get(i)) {
            Some(o) if o.start == start => Ok(n - 1),
            _ => Err(n),
        }
    }

    /// The segment serving the greatest start offset at or below `offset`.
    pub(crate) fn floor(&self, offset: i64) -> Option<Serving> {
        let n = count_at_or_below(&self.serving, offset, |o| o.start);
        n.checked_sub(1).and_then(|i| self.serving.get(i)).copied()
    }
}

/// How many items of `d` (ascending by `key`) have a key at or below `target`: `partition_point`,
/// found with few reads of `d`. Start offsets within an epoch, and epochs within a partition,
/// grow about evenly, so the first read is where `target` falls between the two ends (an
/// interpolation); from there the answer is galloped to, so that an uneven spread costs
/// O(log n) reads, never more. A random lookup pays a cache miss per read.
fn count_at_or_below<T>(d: &VecDeque<T>, target: i64, key: impl Fn(&T) -> i64) -> usize {
    let n = d.len();
    let at = |i: usize| d.get(i).map_or(i64::MAX, &key);
    let (Some(low), Some(high)) = (d.front().map(&key), d.back().map(&key)) else {
        return 0;
    };
    if target < low {
        return 0;
    }
    if target >= high {
        return n;
    }
    // Here low <= target < high, so n >= 2 and the guess is in 0..n - 1.
    let span = (i128::from(high) - i128::from(low)).unsigned_abs();
    let above = (i128::from(target) - i128::from(low)).unsigned_abs();
    let guess = usize::try_from(above * (n as u128 - 1) / span).unwrap_or(0);
    // Gallop to a window lo..hi holding the answer: at(lo - 1) <= target < at(hi).
    let (mut lo, mut hi);
    if at(guess) <= target {
        lo = guess + 1;
        hi = n;
        let mut step = 1;
        while guess + step < n {
            if at(guess + step) > target {
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
            if at(guess - step) <= target {
                lo = guess - step + 1;
                break;
            }
            hi = guess - step;
            step *= 2;
        }
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if at(mid) <= target {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Inserts at `i`, taking the cheap way at either end (where nearly every insert happens).
fn insert_at<T>(d: &mut VecDeque<T>, i: usize, v: T) {
    if i >= d.len() {
        d.push_back(v);
    } else if i == 0 {
        d.push_front(v);
    } else {
        d.insert(i, v);
    }
}

/// Removes at `i`, taking the cheap way at either end.
fn remove_at<T>(d: &mut VecDeque<T>, i: usize) {
    if i == 0 {
        d.pop_front();
    } else if i + 1 == d.len() {
        d.pop_back();
    } else {
        d.remove(i);
    }
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

/// Every leader epoch of a partition: the states of those with a segment left, and the highest
/// offset of every epoch that ever had a finished segment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Epochs {
    /// Epochs with a segment left, ascending (searched apart from their states, so that a search
    /// reads 4 bytes an epoch); an epoch whose state becomes empty is removed from both.
    active: VecDeque<i32>,
    states: VecDeque<EpochState>,
    /// Parallel, ascending by epoch: the epoch and its highest offset.
    highest_epochs: Vec<i32>,
    highest_offsets: Vec<i64>,
}

/// Where `epoch` is or would go in an ascending deque. Events mostly touch the newest epochs
/// (copies) or the oldest (retention), so the front and the last few are tried first.
fn find(epochs: &VecDeque<i32>, epoch: i32) -> Result<usize, usize> {
    const NEAR_BACK: usize = 4;
    match epochs.front() {
        Some(&first) if epoch == first => return Ok(0),
        Some(&first) if epoch < first => return Err(0),
        None => return Err(0),
        _ => {}
    }
    let n = epochs.len();
    for (k, &e) in epochs.iter().rev().take(NEAR_BACK).enumerate() {
        if e == epoch {
            return Ok(n - 1 - k);
        }
        if e < epoch {
            return Err(n - k);
        }
    }
    let n = count_at_or_below(epochs, i64::from(epoch), |&e| i64::from(e));
    match n.checked_sub(1).and_then(|i| epochs.get(i)) {
        Some(&e) if e == epoch => Ok(n - 1),
        _ => Err(n),
    }
}

impl Epochs {
    pub(crate) fn get(&self, epoch: i32) -> Option<&EpochState> {
        self.states.get(find(&self.active, epoch).ok()?)
    }

    pub(crate) fn highest(&self, epoch: i32) -> Option<i64> {
        let i = self.highest_epochs.binary_search(&epoch).ok()?;
        self.highest_offsets.get(i).copied()
    }

    /// Applies one event of segment `id` (at `row`) to `epoch`'s state, creating the state if
    /// needed and dropping it once it holds no segment.
    pub(crate) fn apply(
        &mut self,
        epoch: i32,
        row: Row,
        id: Uuid,
        event: EpochEvent,
        id_of: impl Fn(Row) -> Uuid,
    ) {
        let i = match find(&self.active, epoch) {
            Ok(i) => i,
            Err(i) => {
                insert_at(&mut self.active, i, epoch);
                insert_at(&mut self.states, i, EpochState::default());
                i
            }
        };
        let Some(state) = self.states.get_mut(i) else {
            return;
        };
        match event {
            EpochEvent::CopyStarted => state.on_copy_started(id),
            EpochEvent::CopyFinished { start, end } => {
                let h = match self.highest_epochs.last() {
                    Some(&last) if last == epoch => Ok(self.highest_epochs.len() - 1),
                    Some(&last) if last < epoch => Err(self.highest_epochs.len()),
                    _ => self.highest_epochs.binary_search(&epoch),
                };
                let mut highest = h.ok().and_then(|h| self.highest_offsets.get(h).copied());
                // Most epochs serve one or two segments: no room for four on the first one.
                if state.serving.capacity() == 0 {
                    state.serving.reserve_exact(1);
                }
                state.on_copy_finished(&mut highest, Serving { start, row }, end, id, id_of);
                match (h, highest) {
                    (Ok(h), Some(new)) => {
                        if let Some(slot) = self.highest_offsets.get_mut(h) {
                            *slot = new;
                        }
                    }
                    (Err(h), Some(new)) => {
                        self.highest_epochs.insert(h, epoch);
                        self.highest_offsets.insert(h, new);
                    }
                    _ => {}
                }
            }
            EpochEvent::DeleteStarted { start } => state.on_delete_started(start, row, id),
            EpochEvent::DeleteFinished => state.on_delete_finished(id),
        }
        if state.is_empty() {
            remove_at(&mut self.active, i);
            remove_at(&mut self.states, i);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Kafka's RemoteLogLeaderEpochStateTest (spec §7.2), case by case. Segment `n` has row `n`.
    use super::*;

    fn s(n: i64) -> Uuid {
        Uuid::new(n, n)
    }

    fn id_of(r: Row) -> Uuid {
        s(i64::from(r))
    }

    fn finished(e: &mut EpochState, h: &mut Option<i64>, start: i64, n: u32, end: i64) {
        let serving = Serving { start, row: n };
        e.on_copy_finished(h, serving, end, id_of(n), id_of);
    }

    fn floor(e: &EpochState, offset: i64) -> Option<Uuid> {
        e.floor(offset).map(|o| id_of(o.row))
    }

    #[test]
    fn copy_started_is_unreferenced() {
        let mut e = EpochState::default();
        e.on_copy_started(s(1));
        assert_eq!(e.unreferenced, vec![s(1)]);
    }

    #[test]
    fn finished_segments_are_served() {
        let (mut e, mut h) = (EpochState::default(), None);
        finished(&mut e, &mut h, 10, 1, 100);
        finished(&mut e, &mut h, 101, 2, 200);
        assert_eq!(e.serving.len(), 2);
        assert_eq!((floor(&e, 90), floor(&e, 150)), (Some(s(1)), Some(s(2))));
        assert!(e.unreferenced.is_empty());
        assert_eq!(h, Some(200));
    }

    #[test]
    fn overlapping_segments_displace() {
        let (mut e, mut h) = (EpochState::default(), None);
        finished(&mut e, &mut h, 10, 1, 100);
        finished(&mut e, &mut h, 5, 2, 150);
        assert_eq!((e.serving.len(), floor(&e, 11)), (1, Some(s(2))));
        assert_eq!(e.unreferenced, vec![s(1)]);
        assert_eq!(h, Some(150));
        finished(&mut e, &mut h, 148, 3, 155);
        finished(&mut e, &mut h, 4, 4, 200);
        assert_eq!((e.serving.len(), floor(&e, 11)), (1, Some(s(4))));
        let mut u = e.unreferenced.clone();
        u.sort();
        assert_eq!(u, vec![s(1), s(2), s(3)]);
        assert_eq!(h, Some(200));
    }

    #[test]
    fn duplicates_and_same_start_offsets() {
        let (mut e, mut h) = (EpochState::default(), None);
        finished(&mut e, &mut h, 10, 1, 100);
        finished(&mut e, &mut h, 10, 2, 100);
        assert_eq!(
            (floor(&e, 11), e.unreferenced.clone(), h),
            (Some(s(2)), vec![s(1)], Some(100))
        );
        let (mut e, mut h) = (EpochState::default(), None);
        finished(&mut e, &mut h, 10, 1, 100);
        finished(&mut e, &mut h, 10, 2, 150);
        assert_eq!(
            (floor(&e, 11), floor(&e, 111), e.unreferenced.len(), h),
            (Some(s(2)), Some(s(2)), 1, Some(150))
        );
    }

    #[test]
    fn a_shorter_same_start_segment_is_forgotten_by_the_plain_put() {
        let (mut e, mut h) = (EpochState::default(), None);
        finished(&mut e, &mut h, 10, 1, 150);
        finished(&mut e, &mut h, 10, 2, 100);
        assert_eq!(floor(&e, 10), Some(s(2)));
        assert!(
            e.unreferenced.is_empty(),
            "Kafka drops s1 from the epoch's indexes entirely"
        );
        assert_eq!(h, Some(150));
    }

    #[test]
    fn delete_started_and_finished() {
        let (mut e, mut h) = (EpochState::default(), None);
        finished(&mut e, &mut h, 10, 1, 100);
        finished(&mut e, &mut h, 101, 2, 200);
        e.on_delete_started(10, 1, s(1));
        e.on_delete_started(101, 2, s(2));
        assert!(e.serving.is_empty());
        assert_eq!(e.unreferenced, vec![s(1), s(2)]);
        let mut e = EpochState::default();
        e.on_copy_started(s(3));
        e.on_delete_finished(s(3));
        assert!(e.unreferenced.is_empty());
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
        proptest!(|(mut keys in spread, targets in proptest::collection::vec(any::<i64>(), 8))| {
            keys.sort_unstable();
            keys.dedup();
            let d: VecDeque<i64> = keys.iter().copied().collect();
            let mut probes: Vec<i64> = targets;
            for &k in &keys {
                probes.extend([k, k.saturating_sub(1), k.saturating_add(1)]);
            }
            probes.extend([i64::MIN, i64::MAX]);
            for t in probes {
                prop_assert_eq!(count_at_or_below(&d, t, |&k| k), d.partition_point(|&k| k <= t));
            }
        });
    }

    #[test]
    fn a_drained_epoch_keeps_only_its_highest_offset() {
        let mut epochs = Epochs::default();
        epochs.apply(3, 1, s(1), EpochEvent::CopyStarted, id_of);
        let finished = EpochEvent::CopyFinished {
            start: 10,
            end: 100,
        };
        epochs.apply(3, 1, s(1), finished, id_of);
        epochs.apply(3, 1, s(1), EpochEvent::DeleteStarted { start: 10 }, id_of);
        assert!(epochs.get(3).is_some());
        epochs.apply(3, 1, s(1), EpochEvent::DeleteFinished, id_of);
        assert!(epochs.get(3).is_none() && epochs.active.is_empty() && epochs.states.is_empty());
        assert_eq!((epochs.highest(3), epochs.highest(2)), (Some(100), None));
    }
}
