//! Tiered-storage disablement of a topic (KIP-950) and what it means for remote metadata.
//!
//! Owns: the tiered state machine ENABLED -> DISABLING -> DISABLED with its tiered epoch (each
//! move to a new state takes a new epoch; a step carrying a stale epoch is refused; tiering is
//! re-enabled only from DISABLED), and, for `remote.log.disable.policy`, which remote segments
//! must be deleted. Deleting a segment goes through the planner like any deletion, so its keys
//! are tombstoned exactly when its own DELETE_SEGMENT_FINISHED is written. Never: I/O, time.

use crate::cache::Store;
use crate::error::{Error, ErrorKind, Result};
use crate::model::{SegmentState, TopicIdPartition, Uuid};

/// `remote.log.disable.policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisablePolicy {
    /// Remote data stays readable; nothing is deleted or tombstoned.
    Retain,
    /// Remote data is deleted asynchronously; each segment's keys go with its deletion.
    Delete,
}

/// The tiered state of a topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieredState {
    Enabled,
    Disabling,
    Disabled,
}

/// A topic's tiered state and the epoch of its latest move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiering {
    pub state: TieredState,
    pub tiered_epoch: i32,
    pub policy: Option<DisablePolicy>,
}

fn refuse(why: String) -> Error {
    Error::new(ErrorKind::InvalidState, why)
}

impl Tiering {
    /// A topic with tiering enabled for the first time.
    pub fn enabled() -> Tiering {
        Tiering {
            state: TieredState::Enabled,
            tiered_epoch: 0,
            policy: None,
        }
    }

    /// ENABLED -> DISABLING under a new tiered epoch, which every step of the disablement carries.
    pub fn disable(&mut self, policy: DisablePolicy) -> Result<i32> {
        if self.state != TieredState::Enabled {
            return Err(refuse(format!(
                "cannot disable tiered storage in state {:?}",
                self.state
            )));
        }
        *self = Tiering {
            state: TieredState::Disabling,
            tiered_epoch: self.tiered_epoch + 1,
            policy: Some(policy),
        };
        Ok(self.tiered_epoch)
    }

    /// DISABLING -> DISABLED, once every segment the policy deletes is deleted. A step with
    /// another epoch belongs to an older or newer disablement and is refused.
    pub fn finish_disable(&mut self, tiered_epoch: i32, remaining_segments: usize) -> Result<()> {
        if self.state != TieredState::Disabling || tiered_epoch != self.tiered_epoch {
            return Err(refuse(format!(
                "no disablement with tiered epoch {tiered_epoch} is in progress (state {:?}, epoch {})",
                self.state, self.tiered_epoch
            )));
        }
        if self.policy == Some(DisablePolicy::Delete) && remaining_segments > 0 {
            return Err(refuse(format!(
                "{remaining_segments} remote segment(s) are not deleted yet"
            )));
        }
        self.state = TieredState::Disabled;
        Ok(())
    }

    /// DISABLED -> ENABLED under a new epoch; refused while a disablement is in progress.
    pub fn enable(&mut self) -> Result<i32> {
        if self.state != TieredState::Disabled {
            return Err(refuse(format!(
                "tiered storage can be re-enabled only once DISABLED, not in {:?}",
                self.state
            )));
        }
        *self = Tiering {
            state: TieredState::Enabled,
            tiered_epoch: self.tiered_epoch + 1,
            policy: None,
        };
        Ok(self.tiered_epoch)
    }
}

/// The remote segments a disablement with `policy` must delete: every segment the store holds
/// that is not already gone (none for `retain`). Each is deleted through the planner's
/// DELETE_SEGMENT_STARTED / FINISHED, which tombstones its keys at its own FINISHED.
pub fn segments_to_delete(
    store: &Store,
    tp: &TopicIdPartition,
    policy: DisablePolicy,
) -> Vec<Uuid> {
    if policy == DisablePolicy::Retain {
        return Vec::new();
    }
    let mut ids: Vec<Uuid> = store
        .partition_cache(tp)
        .map(|c| {
            c.segments()
                .into_iter()
                .filter(|m| m.state != SegmentState::DeleteSegmentFinished)
                .map(|m| m.id)
                .collect()
        })
        .unwrap_or_default();
    ids.extend(store.orphans(tp).into_iter().map(|o| o.segment_id));
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_machine_with_tiered_epochs() {
        let mut t = Tiering::enabled();
        assert!(t.enable().is_err(), "already enabled");
        let epoch = t.disable(DisablePolicy::Delete).unwrap_or_default();
        assert_eq!((t.state, epoch), (TieredState::Disabling, 1));
        assert!(
            t.disable(DisablePolicy::Retain).is_err(),
            "a disablement is in progress"
        );
        assert!(t.enable().is_err(), "re-enabling only from DISABLED");
        assert!(t.finish_disable(0, 0).is_err(), "stale epoch");
        assert!(t.finish_disable(1, 2).is_err(), "segments left to delete");
        assert!(t.finish_disable(1, 0).is_ok());
        assert_eq!(t.enable().ok(), Some(2));
        assert_eq!(t.state, TieredState::Enabled);
    }

    #[test]
    fn retain_deletes_nothing() {
        let mut r = Tiering::enabled();
        assert!(r.disable(DisablePolicy::Retain).is_ok());
        assert!(r.finish_disable(1, 5).is_ok(), "retain keeps the segments");
        let tp = TopicIdPartition {
            topic_id: Uuid::new(1, 1),
            topic: "t".into(),
            partition: 0,
        };
        assert!(segments_to_delete(&Store::new(), &tp, DisablePolicy::Retain).is_empty());
    }
}
