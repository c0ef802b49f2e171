//! rlmeta: Apache Kafka's tiered-storage metadata (`__remote_log_metadata`) as a portable engine.
//!
//! The core never reads a file, a socket or the clock: hosts push bytes in and get values back.
//! Modules, one idea each:
//! - [`wire`]: Kafka's primitive encodings (varints, compact strings and bytes, tagged fields).
//! - [`model`]: uuids, partitions, segment ids, lifecycle states and their transitions.
//! - [`record`]: the four record types and the serde frame, version 0 and KIP-1266's version 1.
//! - [`key`]: KIP-1266 record keys.
//! - [`partitioner`]: which metadata partition holds a user partition.
//! - [`json`]: the JSON form of records shared by every front end.
//! - [`cache`]: Kafka's cache of remote segments, rebuilt by replaying records.
//! - [`plan`]: the write planner: keys, value versions and tombstones for each lifecycle event.
//! - [`host`]: the store across a boundary: outcome codes, packed batches, lookups by topic id.
//! - [`tiered`]: KIP-950 disablement. [`feature`]: `remote.log.metadata.version` 0/1/2.
//! - [`compaction`]: Kafka's log cleaner and retention, in memory.
//! - [`batch`]: record batches of `.log` files. [`checkpoint`]: KRaft checkpoints, feature levels.
//! - [`format`]: kafka-dump-log text and JSON. [`inspect`]: what an operator asks of a segment file.
//! - [`index`]: a viewer's resumable columnar index of segment files (record kinds, states, flags,
//!   batches, faults, and the records in or after a corrupt batch), fed in chunks.
//! - [`partition_scan`]: one metadata partition's fetched record batches: which records a read
//!   of a live topic yields (`FetchWindow`, the operator tools' read), counted and classified for
//!   the migration tool (null keys, tombstones, undecodable values, level records).
//! - [`reconcile`]: the metadata against a listing of the remote store: what is live, dangling,
//!   abandoned, stuck, leaked or orphaned, and what is safe to delete.
//! - [`error`]: the error type and its stable codes.
//!
//! Layers, lowest first; a module uses only modules of its own or a lower layer, and no two
//! modules use each other (`tests/layering.rs` checks both):
//! 1. `error`; 2. `wire`, `model` (a segment's `LeaderEpochs` too), `partitioner`;
//! 3. the codecs: `record`, `key`, `json`, `batch`, `checkpoint`; Kafka's log: `compaction`;
//! 4. `feature`; 5. `cache` (its shared types in the leaf `cache::segment`);
//! 6. `plan` (with the JSON of lifecycle events), `tiered`, `host`, `projection`, `inspect`,
//!    `format`, `partition_scan`; 7. `index` (over `inspect`'s tables and compaction preview).
#![forbid(unsafe_code)]

pub mod batch;
pub mod cache;
pub mod checkpoint;
pub mod compaction;
pub mod error;
pub mod feature;
pub mod format;
pub mod host;
pub mod index;
pub mod inspect;
pub mod json;
pub mod key;
pub mod keyed;
pub mod model;
pub mod partition_scan;
pub mod partitioner;
pub mod plan;
pub mod projection;
pub mod reconcile;
pub mod record;
#[doc(hidden)]
pub mod testing;
pub mod tiered;
pub mod wire;

pub use error::{Error, ErrorKind, Result};
pub use key::RecordKey;
pub use model::{PartitionDeleteState, RemoteLogSegmentId, SegmentState, TopicIdPartition, Uuid};
pub use partitioner::metadata_partition;
pub use record::{ApiKey, Record, Value, decode_value, decode_value_canonical};

/// The crate version, as bindings report it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
