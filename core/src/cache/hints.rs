//! Where among a partition's serving entries an offset probably falls: a table of offset
//! buckets, each holding the position of the first entry starting in or after it.
//!
//! A straight line through the first and last entries misses by the wander of segment sizes,
//! which grows with the square root of their number (in the race's histories, up to 31 entries
//! off with one epoch a segment and up to 127 with three): a search from there reads several
//! cache lines one after another. Buckets of about four entries cost about a byte per entry and
//! are read from cache; the bucket's middle landed within 7 entries (one epoch) and 15 (three),
//! and a straight line through the bucket lands closer still (on uneven segment sizes, 0.6
//! entries off on average against 2.1 from the middle), so the search mostly reads one line.
//!
//! Owns: the table and its guesses. It is built from the entries as they were and grows stale as
//! they change: removals at the front are counted and subtracted, others shift a guess by a
//! few entries until the owner rebuilds it. Never: a decision. A guess is only where a search
//! starts; the search is correct from any start.

/// Entries per bucket, about: the table's size against the guess's spread.
const ENTRIES_PER_BUCKET: usize = 4;

#[derive(Clone, Debug, Default)]
pub(crate) struct Hints {
    /// The first bucket's lowest offset: the first entry's start when built.
    base: i64,
    /// A bucket spans 2^shift offsets.
    shift: u32,
    /// Per bucket, the position (when built) of the first entry starting at or after its lowest
    /// offset; one more at the end: the number of entries.
    first: Box<[u32]>,
    /// The owner's count of removals less insertions at the front, when the table was built.
    front_at_build: i64,
}

impl Hints {
    /// The table of entries whose starts (in entry order, ascending but for unclean elections)
    /// are `starts`, `front` being the owner's count of removals less insertions at the front
    /// so far. Empty for fewer than two entries, or more than `u32::MAX`, or no span.
    pub(crate) fn build(
        starts: impl ExactSizeIterator<Item = i64> + DoubleEndedIterator + Clone,
        front: i64,
    ) -> Hints {
        let n = starts.len();
        let (Some(low), Some(high)) = (starts.clone().next(), starts.clone().next_back()) else {
            return Hints::default();
        };
        if n < 2 || high <= low || u32::try_from(n).is_err() {
            return Hints::default();
        }
        let span = high.abs_diff(low);
        let buckets = (n / ENTRIES_PER_BUCKET).max(1) as u64;
        // The narrowest power-of-two width putting the span in at most `buckets` buckets.
        let shift = (span / buckets)
            .checked_ilog2()
            .map_or(0, |l| (l + 1).min(63));
        let count = usize::try_from((span >> shift) + 1).unwrap_or(0);
        let mut first = Vec::with_capacity(count + 1);
        let mut at = 0u32;
        let mut rest = starts.peekable();
        for b in 0..count as u64 {
            let lowest = low.saturating_add_unsigned(b << shift);
            while rest.next_if(|&s| s < lowest).is_some() {
                at += 1;
            }
            first.push(at);
        }
        first.push(u32::try_from(n).unwrap_or(u32::MAX));
        Hints {
            base: low,
            shift,
            first: first.into_boxed_slice(),
            front_at_build: front,
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val::<[u32]>(&self.first)
    }

    /// Where the entry at or below `offset` probably is, in `len` entries with the owner's front
    /// count at `front`; `None` past the table's last bucket (entries added since).
    pub(crate) fn guess(&self, offset: i64, len: usize, front: i64) -> Option<usize> {
        let last = self.first.len().checked_sub(2)?;
        if offset < self.base {
            return Some(self.now(0, len, front));
        }
        let b = usize::try_from(offset.abs_diff(self.base) >> self.shift).unwrap_or(usize::MAX);
        if b > last {
            return None;
        }
        // The bucket's entries are first[b]..first[b + 1]; the one at or below `offset` is among
        // them or just before: guessed on a straight line through the bucket.
        let (lo, hi) = (self.first[b], self.first[b + 1]);
        let into = offset.abs_diff(self.base) & ((1u64 << self.shift) - 1);
        let ahead = (u128::from(hi.saturating_sub(lo)) * u128::from(into)) >> self.shift;
        let at = i64::from(lo) + i64::try_from(ahead).unwrap_or(0);
        Some(self.now(at, len, front))
    }

    /// Where the entry past the last the table covers is now, if it is still there.
    pub(crate) fn end(&self, len: usize, front: i64) -> usize {
        let built = self.first.last().map_or(0, |&n| i64::from(n));
        self.now(built, len, front)
    }

    /// A position when built, now: shifted by the front's changes, within `len` entries.
    fn now(&self, at: i64, len: usize, front: i64) -> usize {
        let shifted = at.saturating_sub(front.saturating_sub(self.front_at_build));
        usize::try_from(shifted.max(0))
            .unwrap_or(usize::MAX)
            .min(len.saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition_point(starts: &[i64], offset: i64) -> usize {
        starts.partition_point(|&s| s <= offset)
    }

    #[test]
    fn fresh_guesses_land_in_the_bucket_of_the_answer() {
        // Uneven segment sizes: 1 to 500 offsets each.
        let mut at = 0i64;
        let starts: Vec<i64> = (0..5000u64)
            .map(|i| {
                let s = at;
                at += 1 + (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 55) as i64;
                s
            })
            .collect();
        let h = Hints::build(starts.iter().copied(), 0);
        assert_eq!(h.end(usize::MAX, 0), starts.len());
        assert!(
            h.first.len() <= starts.len() / ENTRIES_PER_BUCKET + 2,
            "about a u32 per 4 entries"
        );
        let (mut worst, mut total, mut n) = (0, 0, 0);
        for offset in (0..at).step_by(7) {
            let want = partition_point(&starts, offset).saturating_sub(1);
            let got = h.guess(offset, starts.len(), 0).unwrap();
            worst = worst.max(got.abs_diff(want));
            total += got.abs_diff(want);
            n += 1;
        }
        let mean = total as f64 / f64::from(n);
        assert!(
            worst <= 4 && mean < 1.0,
            "a fresh guess lands on its bucket's line: {worst} entries off at worst, {mean} on average"
        );
        assert_eq!(
            h.guess(at + 1_000_000, starts.len(), 0),
            None,
            "past the last bucket"
        );
        assert_eq!(
            h.guess(-5, starts.len(), 0),
            Some(0),
            "before the first entry"
        );
        assert_eq!(h.guess(i64::MIN, starts.len(), 0), Some(0));
    }

    #[test]
    fn removals_at_the_front_are_subtracted() {
        let starts: Vec<i64> = (0..1000).map(|i| i * 10).collect();
        let h = Hints::build(starts.iter().copied(), 5);
        // 100 more removed at the front since: the entry of offset 5000 moved from 500 to 400.
        let got = h.guess(5000, 900, 105).unwrap();
        assert!(got.abs_diff(400) <= 4, "{got}");
        assert_eq!(h.guess(0, 900, 2000), Some(0), "never before the first");
        assert_eq!(h.end(900, 105), 899, "the end, within the entries");
        assert_eq!(
            h.guess(5000, 1000, 4).map(|g| g.abs_diff(501) <= 4),
            Some(true),
            "one inserted at the front"
        );
        assert_eq!(h.guess(9990, 10, 105), Some(9), "never past the last");
    }

    #[test]
    fn degenerate_entries_build_no_table() {
        for starts in [vec![], vec![7], vec![7, 7, 7], vec![9, 3]] {
            let h = Hints::build(starts.iter().copied(), 0);
            assert_eq!(h.guess(7, starts.len(), 0), None, "{starts:?}");
        }
        // The widest span there is: one bucket per four entries all the same.
        let h = Hints::build([i64::MIN, 0, i64::MAX].into_iter(), 0);
        assert!(h.guess(i64::MAX, 3, 0).is_some_and(|g| g < 3));
        assert!(h.guess(i64::MIN, 3, 0) == Some(0));
    }
}
