//! Kafka's cache of remote segment metadata, rebuilt by replaying `__remote_log_metadata`.
//!
//! - `segment`: the shared types (segment metadata, a state change, a table row); a leaf.
//! - `buried`: the deletions a broker's store remembers (a set that only grows, packed).
//! - `epoch`: the leader epochs of a partition (Kafka's `RemoteLogLeaderEpochState`, all at once).
//! - `hints`: where a start offset probably is among a partition's serving entries.
//! - `serving`: how a partition's serving entries lie in memory.
//! - `partition`: one user partition (Kafka's `RemoteLogMetadataCache`).
//! - `table`: a partition's segment metadata by row.
//! - `unreferenced`: the segments of a partition's epochs that serve nothing.
//! - `keys`: a partition's KIP-1266 keys: what each key pair holds, each segment's upload key.
//! - `memory`: the account of what a store holds on the heap, by structure.
//! - `store`: all user partitions of a metadata partition, fed `(offset, key, value)` records.

mod buried;
mod epoch;
pub(crate) mod hash;
mod hints;
mod keys;
mod memory;
mod partition;
mod segment;
mod serving;
mod store;
mod table;
mod unreferenced;

pub use keys::{Holder, KeyHolders};
pub use memory::MemoryUse;
pub use partition::{Dropped, PartitionCache};
pub use segment::{LeaderEpochs, SegmentMetadata, SegmentUpdate};
pub(crate) use store::Seen;
pub use store::{Applied, Orphan, PartitionDelete, Skip, Store};

#[cfg(test)]
mod tests;
