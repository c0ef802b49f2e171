//! The segments of a partition's epochs that serve none of the epoch's offsets (started, being
//! deleted, displaced), each with the order in which it became so.
//!
//! Owns: that set and its order. A replay has a few in flight at a time (a segment's epochs
//! between its copy starting and finishing, or its deletion starting and finishing), so they sit
//! in a short list scanned in place: no hashing, and no tombstones left by removals. Past
//! [`SHORT`] entries (a backlog of abandoned uploads) they move to a hash map, so that an event
//! never costs more than a hash operation. Never: why a segment is unreferenced (the epochs
//! decide), or its metadata.

use hashbrown::HashMap;

use super::hash::UuidHash;
use crate::model::Uuid;

/// An epoch and a segment of it.
pub(crate) type Key = (i32, Uuid);

/// The most entries the short list holds; a scan of these costs less than one hash operation.
const SHORT: usize = 16;

#[derive(Clone, Debug)]
enum Held {
    Short(Vec<(Key, u64)>),
    Hashed(HashMap<Key, u64, UuidHash>),
}

#[derive(Clone, Debug)]
pub(crate) struct Unreferenced {
    held: Held,
    next_order: u64,
}

impl Default for Unreferenced {
    fn default() -> Self {
        Unreferenced {
            held: Held::Short(Vec::new()),
            next_order: 0,
        }
    }
}

impl Unreferenced {
    /// Adds `key` unless it is there already (it then keeps its place in the order).
    #[inline(always)]
    pub(crate) fn add(&mut self, key: Key) {
        let order = self.next_order;
        match &mut self.held {
            Held::Short(list) => {
                if list.iter().any(|(k, _)| *k == key) {
                    return;
                }
                if list.len() < SHORT {
                    // One more at a time: a replay has one or two in flight, and a Vec's first
                    // room for four would cost more than they do (issue 30).
                    list.reserve_exact(1);
                    list.push((key, order));
                } else {
                    let mut map: HashMap<Key, u64, UuidHash> = list.drain(..).collect();
                    map.insert(key, order);
                    self.held = Held::Hashed(map);
                }
            }
            Held::Hashed(map) => {
                if let hashbrown::hash_map::Entry::Vacant(v) = map.entry(key) {
                    v.insert(order);
                } else {
                    return;
                }
            }
        }
        self.next_order += 1;
    }

    #[inline(always)]
    pub(crate) fn remove(&mut self, key: Key) {
        match &mut self.held {
            Held::Short(list) => {
                if let Some(i) = list.iter().position(|(k, _)| *k == key) {
                    // Keeps the rest in place: the order is in the entries, not the list.
                    list.swap_remove(i);
                }
            }
            Held::Hashed(map) => {
                if !map.is_empty() {
                    map.remove(&key);
                }
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.held {
            Held::Short(list) => super::memory::vec_bytes(list),
            Held::Hashed(map) => map.allocation_size(),
        }
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        match &self.held {
            Held::Short(list) => list.is_empty(),
            Held::Hashed(map) => map.is_empty(),
        }
    }

    /// The segments of `epoch`, in the order they became unreferenced.
    pub(crate) fn of_epoch(&self, epoch: i32) -> Vec<Uuid> {
        let mut ids: Vec<(u64, Uuid)> = match &self.held {
            Held::Short(list) => list
                .iter()
                .filter(|((e, _), _)| *e == epoch)
                .map(|&((_, id), order)| (order, id))
                .collect(),
            Held::Hashed(map) => map
                .iter()
                .filter(|((e, _), _)| *e == epoch)
                .map(|(&(_, id), &order)| (order, id))
                .collect(),
        };
        ids.sort_unstable();
        ids.into_iter().map(|(_, id)| id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain model (a map from key to order, counting only new keys) through the move
    /// from the short list to the hash map and well past it.
    #[test]
    fn the_short_list_and_the_map_keep_the_same_set_and_order() {
        use proptest::prelude::*;
        let ops = proptest::collection::vec((any::<bool>(), 0i32..3, 0i64..40), 0..400);
        proptest!(|(ops in ops)| {
            let mut u = Unreferenced::default();
            let mut model: std::collections::BTreeMap<Key, u64> = Default::default();
            let mut next = 0;
            for (add, epoch, n) in ops {
                let key = (epoch, Uuid::new(n, -n));
                if add {
                    u.add(key);
                    if let std::collections::btree_map::Entry::Vacant(v) = model.entry(key) {
                        v.insert(next);
                        next += 1;
                    }
                } else {
                    u.remove(key);
                    model.remove(&key);
                }
                prop_assert_eq!(u.is_empty(), model.is_empty());
                for e in 0..3 {
                    let mut want: Vec<(u64, Uuid)> = model
                        .iter()
                        .filter(|((me, _), _)| *me == e)
                        .map(|(&(_, id), &o)| (o, id))
                        .collect();
                    want.sort_unstable();
                    let want: Vec<Uuid> = want.into_iter().map(|(_, id)| id).collect();
                    prop_assert_eq!(u.of_epoch(e), want);
                }
            }
        });
    }
}
