//! The serving entries of a partition's leader epochs, as they lie in memory.
//!
//! Owns: the layout. An entry's key and row, 16 bytes, sit in one deque that searches read (four
//! entries to a cache line); the span it serves (its last offset less its start) sits at the
//! same position of a second deque, read once a lookup has found its entry, beside the row it
//! reads next, so the two reads overlap. A span too wide for 32 bits (no broker writes one: a
//! segment's offsets are 32-bit relative offsets) is left to the row to answer. Never: what the
//! entries mean, their order or displacement (`epoch`).

use std::collections::vec_deque::{Iter, VecDeque};
use std::ops::Range;

use super::segment::Row;

/// A finished segment serving `epoch` from `start` to `end`, the last offset the epoch wrote in
/// it: what is put in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Serving {
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) epoch: i32,
    pub(crate) row: Row,
}

/// What a search reads of an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) start: i64,
    pub(crate) epoch: i32,
    pub(crate) row: Row,
}

impl Entry {
    pub(crate) fn key(&self) -> (i32, i64) {
        (self.epoch, self.start)
    }
}

/// How far past its start an entry serves; `WIDE` when that does not fit.
type Span = u32;
const WIDE: Span = Span::MAX;

fn split(s: Serving) -> (Entry, Span) {
    let span = s
        .end
        .checked_sub(s.start)
        .and_then(|d| Span::try_from(d).ok())
        .filter(|&d| d != WIDE)
        .unwrap_or(WIDE);
    let entry = Entry {
        start: s.start,
        epoch: s.epoch,
        row: s.row,
    };
    (entry, span)
}

/// The entries, with positions as in a `VecDeque`: both deques see the same edits.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServingEntries {
    entries: VecDeque<Entry>,
    spans: VecDeque<Span>,
}

impl ServingEntries {
    pub(crate) fn heap_bytes(&self) -> usize {
        super::memory::deque_bytes(&self.entries) + super::memory::deque_bytes(&self.spans)
    }

    /// What searches read.
    pub(crate) fn entries(&self) -> &VecDeque<Entry> {
        &self.entries
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn get(&self, i: usize) -> Option<Entry> {
        self.entries.get(i).copied()
    }

    pub(crate) fn front(&self) -> Option<&Entry> {
        self.entries.front()
    }

    pub(crate) fn back(&self) -> Option<&Entry> {
        self.entries.back()
    }

    pub(crate) fn iter(&self) -> Iter<'_, Entry> {
        self.entries.iter()
    }

    pub(crate) fn range(&self, from: usize) -> Iter<'_, Entry> {
        self.entries.range(from.min(self.len())..)
    }

    /// The last offset entry `i` serves; `None` when its span was too wide to keep (the row's
    /// leader epochs say it) or there is no entry `i`.
    pub(crate) fn end(&self, i: usize) -> Option<i64> {
        let start = self.entries.get(i)?.start;
        let span = *self.spans.get(i)?;
        (span != WIDE).then(|| start + i64::from(span))
    }

    /// Room for one more entry in both deques: an eighth more when full, not twice as much (a
    /// broker hosts thousands of partitions of a few dozen entries each; issue 30).
    fn room(&mut self) {
        let n = self.entries.len();
        if n == self.entries.capacity() {
            let more = (n / 8).max(2);
            self.entries.reserve_exact(more);
            self.spans.reserve_exact(more);
        }
    }

    pub(crate) fn push_back(&mut self, s: Serving) {
        self.room();
        let (entry, span) = split(s);
        self.entries.push_back(entry);
        self.spans.push_back(span);
    }

    pub(crate) fn push_front(&mut self, s: Serving) {
        self.room();
        let (entry, span) = split(s);
        self.entries.push_front(entry);
        self.spans.push_front(span);
    }

    /// Inserts `s` at `i`, or at the end if `i` is past it.
    pub(crate) fn insert(&mut self, i: usize, s: Serving) {
        self.room();
        let (entry, span) = split(s);
        let i = i.min(self.len());
        self.entries.insert(i, entry);
        self.spans.insert(i, span);
    }

    /// Puts `s` in place of entry `i`, if there is one.
    pub(crate) fn set(&mut self, i: usize, s: Serving) {
        let (entry, span) = split(s);
        if let (Some(e), Some(w)) = (self.entries.get_mut(i), self.spans.get_mut(i)) {
            *e = entry;
            *w = span;
        }
    }

    pub(crate) fn pop_front(&mut self) {
        self.entries.pop_front();
        self.spans.pop_front();
    }

    pub(crate) fn pop_back(&mut self) {
        self.entries.pop_back();
        self.spans.pop_back();
    }

    pub(crate) fn remove(&mut self, i: usize) {
        self.entries.remove(i);
        self.spans.remove(i);
    }

    /// Removes the entries at `r` (clamped to the entries).
    pub(crate) fn remove_range(&mut self, r: Range<usize>) {
        let n = self.len();
        let r = r.start.min(n)..r.end.min(n);
        if r.start < r.end {
            self.entries.drain(r.clone());
            self.spans.drain(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(start: i64, end: i64, row: Row) -> Serving {
        Serving {
            start,
            end,
            epoch: 0,
            row,
        }
    }

    #[test]
    fn ends_come_back_or_are_left_to_the_row_when_too_wide() {
        let mut d = ServingEntries::default();
        let cases = [
            (s(10, 10, 0), Some(10)),
            (s(10, 4_000_000_009, 1), Some(4_000_000_009)),
            (
                s(0, i64::from(u32::MAX) - 1, 2),
                Some(i64::from(u32::MAX) - 1),
            ),
            // From here on, the span does not fit 32 bits (or is negative).
            (s(0, i64::from(u32::MAX), 3), None),
            (s(-5, i64::MAX, 4), None),
            (s(i64::MIN, i64::MAX, 5), None),
            (s(100, 99, 6), None),
        ];
        for (serving, _) in cases {
            d.push_back(serving);
        }
        for (i, (serving, end)) in cases.iter().enumerate() {
            assert_eq!(d.end(i), *end, "entry {i}");
            assert_eq!(
                d.get(i).map(|e| (e.start, e.row)),
                Some((serving.start, serving.row))
            );
        }
        assert_eq!(d.end(cases.len()), None);
    }

    #[test]
    fn spans_follow_their_entries_through_every_edit() {
        let mut d = ServingEntries::default();
        for n in 0..8 {
            d.push_back(s(n * 10, n * 10 + n, n as Row));
        }
        d.push_front(s(-10, -1, 100));
        d.insert(3, s(15, 17, 101));
        d.set(5, s(30, 39, 102));
        d.remove(1);
        d.remove_range(5..7);
        d.remove_range(20..30);
        d.insert(99, s(80, 88, 103));
        d.pop_back();
        d.pop_front();
        d.pop_back();
        let got: Vec<(i64, Row, Option<i64>)> = (0..d.len())
            .filter_map(|i| d.get(i).map(|e| (e.start, e.row, d.end(i))))
            .collect();
        assert_eq!(
            got,
            vec![
                (10, 1, Some(11)),
                (15, 101, Some(17)),
                (20, 2, Some(22)),
                (30, 102, Some(39)),
                (60, 6, Some(66)),
            ]
        );
        assert_eq!(d.entries().len(), d.spans.len());
    }
}
