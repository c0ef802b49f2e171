//! One leader epoch's view of a user partition's remote segments: Kafka's
//! `RemoteLogLeaderEpochState` (spec §6.1), displacement rules and all.
//!
//! Owns: which finished segment serves each start offset of the epoch, the segments of the epoch
//! that serve nothing (started, being deleted, displaced), and the epoch's highest offset, which
//! never decreases. Never: segment metadata itself (the partition cache holds it).

use std::collections::BTreeMap;

use crate::model::Uuid;

#[derive(Clone, Debug, Default)]
pub(crate) struct EpochState {
    /// Start offset of this epoch within a finished segment -> that segment.
    pub(crate) offset_to_id: BTreeMap<i64, Uuid>,
    /// Segments of this epoch that serve no offset, in the order they became unreferenced.
    pub(crate) unreferenced: Vec<Uuid>,
    /// Highest epoch end offset ever seen among finished segments; never decreases.
    pub(crate) highest_log_offset: Option<i64>,
}

impl EpochState {
    fn add_unreferenced(&mut self, id: Uuid) {
        if !self.unreferenced.contains(&id) {
            self.unreferenced.push(id);
        }
    }

    fn remove_unreferenced(&mut self, id: Uuid) {
        self.unreferenced.retain(|u| *u != id);
    }

    pub(crate) fn on_copy_started(&mut self, id: Uuid) {
        self.add_unreferenced(id);
    }

    /// Kafka's `handleSegmentWithCopySegmentFinishedState`: segments starting at or after
    /// `start` are displaced while this one reaches at least as far as the epoch ever did; then
    /// a plain put (which silently forgets a same-key segment when nothing was displaced).
    pub(crate) fn on_copy_finished(&mut self, start: i64, id: Uuid, epoch_end: i64) {
        // Kafka evaluates "reaches as far" once, against the highest offset before this call.
        if self.highest_log_offset.is_none_or(|h| h <= epoch_end) {
            while let Some((&k, &old)) = self
                .offset_to_id
                .last_key_value()
                .filter(|(k, _)| **k >= start)
            {
                self.offset_to_id.remove(&k);
                self.add_unreferenced(old);
            }
        }
        self.offset_to_id.insert(start, id);
        self.remove_unreferenced(id);
        if self.highest_log_offset.is_none_or(|h| epoch_end > h) {
            self.highest_log_offset = Some(epoch_end);
        }
    }

    pub(crate) fn on_delete_started(&mut self, start: i64, id: Uuid) {
        if self.offset_to_id.get(&start) == Some(&id) {
            self.offset_to_id.remove(&start);
        }
        self.add_unreferenced(id);
    }

    pub(crate) fn on_delete_finished(&mut self, id: Uuid) {
        self.remove_unreferenced(id);
    }

    /// The segment serving the greatest start offset at or below `offset`.
    pub(crate) fn floor(&self, offset: i64) -> Option<Uuid> {
        self.offset_to_id
            .range(..=offset)
            .next_back()
            .map(|(_, id)| *id)
    }

    /// Every segment of the epoch: serving ones by start offset, then unreferenced ones; the
    /// caller stable-sorts by segment start offset when there are unreferenced ones (as Kafka).
    pub(crate) fn ids(&self) -> impl Iterator<Item = Uuid> + '_ {
        self.offset_to_id
            .values()
            .copied()
            .chain(self.unreferenced.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    //! Kafka's RemoteLogLeaderEpochStateTest (spec §7.2), case by case.
    use super::*;

    fn s(n: i64) -> Uuid {
        Uuid::new(n, n)
    }

    #[test]
    fn copy_started_is_unreferenced() {
        let mut e = EpochState::default();
        e.on_copy_started(s(1));
        assert_eq!(e.unreferenced, vec![s(1)]);
    }

    #[test]
    fn finished_segments_are_served() {
        let mut e = EpochState::default();
        e.on_copy_finished(10, s(1), 100);
        e.on_copy_finished(101, s(2), 200);
        assert_eq!(e.offset_to_id.len(), 2);
        assert_eq!((e.floor(90), e.floor(150)), (Some(s(1)), Some(s(2))));
        assert!(e.unreferenced.is_empty());
        assert_eq!(e.highest_log_offset, Some(200));
    }

    #[test]
    fn overlapping_segments_displace() {
        let mut e = EpochState::default();
        e.on_copy_finished(10, s(1), 100);
        e.on_copy_finished(5, s(2), 150);
        assert_eq!((e.offset_to_id.len(), e.floor(11)), (1, Some(s(2))));
        assert_eq!(e.unreferenced, vec![s(1)]);
        assert_eq!(e.highest_log_offset, Some(150));
        e.on_copy_finished(148, s(3), 155);
        e.on_copy_finished(4, s(4), 200);
        assert_eq!((e.offset_to_id.len(), e.floor(11)), (1, Some(s(4))));
        let mut u = e.unreferenced.clone();
        u.sort();
        assert_eq!(u, vec![s(1), s(2), s(3)]);
        assert_eq!(e.highest_log_offset, Some(200));
    }

    #[test]
    fn duplicates_and_same_start_offsets() {
        let mut e = EpochState::default();
        e.on_copy_finished(10, s(1), 100);
        e.on_copy_finished(10, s(2), 100);
        assert_eq!(
            (e.floor(11), e.unreferenced.clone(), e.highest_log_offset),
            (Some(s(2)), vec![s(1)], Some(100))
        );
        let mut e = EpochState::default();
        e.on_copy_finished(10, s(1), 100);
        e.on_copy_finished(10, s(2), 150);
        assert_eq!(
            (
                e.floor(11),
                e.floor(111),
                e.unreferenced.len(),
                e.highest_log_offset
            ),
            (Some(s(2)), Some(s(2)), 1, Some(150))
        );
    }

    #[test]
    fn a_shorter_same_start_segment_is_forgotten_by_the_plain_put() {
        let mut e = EpochState::default();
        e.on_copy_finished(10, s(1), 150);
        e.on_copy_finished(10, s(2), 100);
        assert_eq!(e.floor(10), Some(s(2)));
        assert!(
            e.unreferenced.is_empty(),
            "Kafka drops s1 from the epoch's indexes entirely"
        );
        assert_eq!(e.highest_log_offset, Some(150));
    }

    #[test]
    fn delete_started_and_finished() {
        let mut e = EpochState::default();
        e.on_copy_finished(10, s(1), 100);
        e.on_copy_finished(101, s(2), 200);
        e.on_delete_started(10, s(1));
        e.on_delete_started(101, s(2));
        assert!(e.offset_to_id.is_empty());
        assert_eq!(e.unreferenced, vec![s(1), s(2)]);
        let mut e = EpochState::default();
        e.on_copy_started(s(3));
        e.on_delete_finished(s(3));
        assert!(e.unreferenced.is_empty());
    }
}
