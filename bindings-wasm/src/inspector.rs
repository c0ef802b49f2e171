//! Whole files for the browser inspector: one metadata partition's segment files, or a KRaft
//! checkpoint, opened from bytes.
//!
//! Owns: walking the files once into per-record columns (typed arrays on the JS side: offsets and
//! timestamps as exact 64-bit `BigInt64Array`s, kinds, states, sizes, indexes into small tables of
//! user partitions, segment ids and batches), every fault with where it was found, and handing
//! the core's answers (lifecycles and their marks, the summary, a compaction preview at any time,
//! migration readiness, checkpoint feature levels) to JS as plain values. One record's details
//! (key fields, headers, decoded value, Kafka's `toString`, hex) are read on demand, from the
//! stored bytes. Never: a JSON text per record, rules of its own (the core decides every count,
//! state and verdict; this module only indexes what the core decoded).

use std::collections::HashMap;
use std::fmt::Write as _;

use rlmeta::batch::{Batch, CrcCheck, DEFAULT_MAX_DECOMPRESSED_SIZE, LOG_OVERHEAD, ReadOptions};
use rlmeta::checkpoint::Checkpoint;
use rlmeta::compaction::{CleanupPolicy, TopicConfig};
use rlmeta::error::ErrorKind;
use rlmeta::feature::{
    DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS, FEATURE_NAME, NullKeyScan, Readiness,
    parse_level_record,
};
use rlmeta::format::{kafka_decode_error_text, to_kafka_string};
use rlmeta::inspect::{
    Inspection, PreviewRecord, flag, inspect, kind, preview_compaction, segment_marks,
};
use rlmeta::json::{Int64Style, to_hex, value_to_json};
use rlmeta::{Error, Record, RecordKey, TopicIdPartition, Uuid, decode_value};
use wasm_bindgen::prelude::*;

use crate::{JsResult, KeyFields, RawError};

/// Read like kafka-dump-log: a batch whose CRC is wrong is still listed (and reported).
const READ: ReadOptions = ReadOptions {
    crc: CrcCheck::Report,
    max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
};

/// A fault found in a file: its core error, the file, the byte where it was found and the
/// offset of the record (or batch) it concerns, when there is one.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    #[wasm_bindgen(readonly)]
    pub file: String,
    #[wasm_bindgen(readonly)]
    pub code: u32,
    #[wasm_bindgen(readonly)]
    pub kind: String,
    /// The whole text (kind, code, position, message).
    #[wasm_bindgen(readonly)]
    pub display: String,
    /// Byte position in the file.
    #[wasm_bindgen(readonly)]
    pub position: Option<usize>,
    /// The offset of the record (or the base offset of the batch) it concerns.
    #[wasm_bindgen(readonly, js_name = recordOffset)]
    pub record_offset: Option<i64>,
    /// Which record (index into the columns), when it concerns one.
    #[wasm_bindgen(readonly)]
    pub row: Option<u32>,
}

impl Fault {
    fn new(file: &str, e: &Error, record_offset: Option<i64>, row: Option<u32>) -> Fault {
        Fault {
            file: file.to_owned(),
            code: e.code(),
            kind: e.kind().name().to_owned(),
            display: e.to_string(),
            position: e.offset(),
            record_offset,
            row,
        }
    }
}

/// One batch's header, as kafka-dump-log lists it.
#[derive(Clone, Debug)]
struct BatchRow {
    file: u32,
    /// The row of its first record.
    first_row: u32,
    position: usize,
    base_offset: i64,
    last_offset: i64,
    count: i32,
    codec: String,
    crc_valid: bool,
    timestamp_type: &'static str,
    size: usize,
    producer_id: i64,
    producer_epoch: i16,
    partition_leader_epoch: i32,
    transactional: bool,
    control: bool,
}

/// One record's details, read on demand.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug)]
pub struct RecordDetail {
    #[wasm_bindgen(readonly)]
    pub file: String,
    #[wasm_bindgen(readonly)]
    pub offset: i64,
    #[wasm_bindgen(readonly)]
    pub timestamp: i64,
    #[wasm_bindgen(readonly, js_name = timestampType)]
    pub timestamp_type: String,
    #[wasm_bindgen(readonly)]
    pub sequence: i32,
    #[wasm_bindgen(readonly, js_name = batchPosition)]
    pub batch_position: usize,
    #[wasm_bindgen(readonly, js_name = batchBaseOffset)]
    pub batch_base_offset: i64,
    #[wasm_bindgen(readonly)]
    pub compression: String,
    #[wasm_bindgen(readonly, js_name = crcValid)]
    pub crc_valid: bool,
    #[wasm_bindgen(readonly, js_name = producerId)]
    pub producer_id: i64,
    #[wasm_bindgen(readonly, js_name = producerEpoch)]
    pub producer_epoch: i16,
    #[wasm_bindgen(readonly, js_name = partitionLeaderEpoch)]
    pub partition_leader_epoch: i32,
    #[wasm_bindgen(readonly)]
    pub transactional: bool,
    #[wasm_bindgen(readonly)]
    pub control: bool,
    /// The key as text (lossy UTF-8), `undefined` for a null key.
    #[wasm_bindgen(readonly)]
    pub key: Option<String>,
    #[wasm_bindgen(readonly, js_name = keyHex)]
    pub key_hex: Option<String>,
    /// The KIP-1266 key fields, when the key is one.
    #[wasm_bindgen(readonly, js_name = keyFields)]
    pub key_fields: Option<KeyFields>,
    #[wasm_bindgen(readonly, js_name = headerKeys)]
    pub header_keys: Vec<String>,
    /// Hex of each header's value; `null` values are empty strings, told apart by `headerNull`.
    #[wasm_bindgen(readonly, js_name = headerValuesHex)]
    pub header_values_hex: Vec<String>,
    #[wasm_bindgen(readonly, js_name = headerNull)]
    pub header_null: Vec<u8>,
    #[wasm_bindgen(readonly, js_name = valueHex)]
    pub value_hex: Option<String>,
    /// Kafka's `toString` of the decoded value (what kafka-dump-log prints as its payload), or
    /// what rlmeta's listing prints for a level record.
    #[wasm_bindgen(readonly, js_name = kafkaText)]
    pub kafka_text: Option<String>,
    /// The decoded value `{apiKey, version, record}` (64-bit integers as decimal strings), for
    /// this one record.
    #[wasm_bindgen(readonly, js_name = valueJson)]
    pub value_json: Option<String>,
    /// Why the value does not decode: rlmeta's error, and the exception Kafka's decoder throws.
    #[wasm_bindgen(readonly)]
    pub error: Option<String>,
    #[wasm_bindgen(readonly, js_name = kafkaError)]
    pub kafka_error: Option<String>,
    /// The level a level record carries.
    #[wasm_bindgen(readonly)]
    pub level: Option<i16>,
}

/// The inspection's summary, one object.
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, Default)]
pub struct SummaryView {
    pub records: u32,
    #[wasm_bindgen(js_name = nullKeyRecords)]
    pub null_key_records: u32,
    #[wasm_bindgen(js_name = keyedRecords)]
    pub keyed_records: u32,
    pub tombstones: u32,
    pub undecodable: u32,
    #[wasm_bindgen(js_name = fatalToOldBrokers)]
    pub fatal_to_old_brokers: u32,
    #[wasm_bindgen(js_name = liveSegments)]
    pub live_segments: u32,
    pub orphans: u32,
    #[wasm_bindgen(js_name = keptByCompaction)]
    pub kept_by_compaction: u32,
    #[wasm_bindgen(js_name = lostByCompaction)]
    pub lost_by_compaction: u32,
    /// The level of the last level record, -1 when there is none, -2 when it is invalid.
    pub level: i16,
    /// The offset of the last level record (0 when there is none).
    #[wasm_bindgen(js_name = levelOffset)]
    pub level_offset: i64,
    /// The newest null-key record's timestamp (0 when there is none: see `nullKeyRecords`).
    #[wasm_bindgen(js_name = lastNullKeyTimestamp)]
    pub last_null_key_timestamp: i64,
}

/// What the cleaner keeps at a moment ([`SegmentLog::preview`]).
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug, Default)]
pub struct PreviewView {
    #[wasm_bindgen(readonly, js_name = recordsBefore)]
    pub records_before: u32,
    #[wasm_bindgen(readonly, js_name = bytesBefore)]
    pub bytes_before: f64,
    #[wasm_bindgen(readonly, js_name = recordsAfter)]
    pub records_after: u32,
    #[wasm_bindgen(readonly, js_name = bytesAfter)]
    pub bytes_after: f64,
    #[wasm_bindgen(readonly, js_name = nullKeysDropped)]
    pub null_keys_dropped: u32,
    #[wasm_bindgen(readonly, js_name = liveBefore)]
    pub live_before: u32,
    /// Ids of the live segments the cleaned log loses.
    #[wasm_bindgen(readonly)]
    pub lost: Vec<String>,
    /// One byte per record: 1 when it exists at the moment and is kept.
    #[wasm_bindgen(readonly)]
    pub kept: Vec<u8>,
}

/// The migration check over these files ([`SegmentLog::readiness`]).
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug, Default)]
pub struct ReadinessView {
    #[wasm_bindgen(readonly)]
    pub ready: bool,
    #[wasm_bindgen(readonly, js_name = nullKeyRecords)]
    pub null_key_records: u32,
    #[wasm_bindgen(readonly, js_name = lastNullKeyTimestamp)]
    pub last_null_key_timestamp: Option<i64>,
    /// When the null-key records are expected to be gone under level 1's configs.
    #[wasm_bindgen(readonly, js_name = estimatedCleanupMs)]
    pub estimated_cleanup_ms: Option<i64>,
}

struct SegFile {
    name: String,
    bytes: Vec<u8>,
    /// Next byte to read, and whether the walk has ended.
    pos: usize,
    done: bool,
}

/// One metadata partition's segment files, walked into columns.
#[wasm_bindgen]
#[derive(Default)]
pub struct SegmentLog {
    files: Vec<SegFile>,
    offsets: Vec<i64>,
    timestamps: Vec<i64>,
    kinds: Vec<u8>,
    states: Vec<i8>,
    flags: Vec<u8>,
    key_sizes: Vec<i32>,
    value_sizes: Vec<i32>,
    sizes: Vec<u32>,
    batch_of: Vec<u32>,
    partition_of: Vec<i32>,
    segment_of: Vec<i32>,
    /// Index of each record within its batch.
    index_in_batch: Vec<u32>,
    batches: Vec<BatchRow>,
    partitions: Vec<TopicIdPartition>,
    /// Rows of `partitions` by topic id and partition number.
    partition_index: HashMap<(Uuid, i32), Vec<i32>>,
    segments: Vec<Uuid>,
    segment_index: HashMap<Uuid, i32>,
    faults: Vec<Fault>,
    null_key_records: u64,
    last_null_key_timestamp_ms: Option<i64>,
    inspection: Option<Inspection>,
}

#[wasm_bindgen]
impl SegmentLog {
    #[wasm_bindgen(constructor)]
    pub fn new() -> SegmentLog {
        SegmentLog::default()
    }

    /// Adds a segment file (files go in offset order: sort by name first). Nothing is read yet.
    #[wasm_bindgen(js_name = addFile)]
    pub fn add_file(&mut self, name: &str, bytes: Vec<u8>) {
        self.inspection = None;
        self.files.push(SegFile {
            name: name.to_owned(),
            bytes,
            pos: 0,
            done: false,
        });
    }

    /// Reads batches until at least `budget` more records are indexed or every file is read;
    /// returns whether every file is read. Rows indexed so far stay as they are.
    pub fn index(&mut self, budget: u32) -> bool {
        let start = self.offsets.len();
        for f in 0..self.files.len() {
            while self.offsets.len() - start < budget as usize {
                if !self.step(f) {
                    break;
                }
            }
        }
        self.files.iter().all(|f| f.done)
    }

    /// Records indexed so far.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> u32 {
        self.offsets.len() as u32
    }

    pub fn offsets(&self, from: u32, to: u32) -> Vec<i64> {
        slice(&self.offsets, from, to)
    }
    pub fn timestamps(&self, from: u32, to: u32) -> Vec<i64> {
        slice(&self.timestamps, from, to)
    }
    /// See [`kind`].
    pub fn kinds(&self, from: u32, to: u32) -> Vec<u8> {
        slice(&self.kinds, from, to)
    }
    /// The segment (or partition-delete) state id a record sets, -1 for none.
    pub fn states(&self, from: u32, to: u32) -> Vec<i8> {
        slice(&self.states, from, to)
    }
    /// See [`flag`].
    pub fn flags(&self, from: u32, to: u32) -> Vec<u8> {
        slice(&self.flags, from, to)
    }
    /// -1 for a null key (value).
    #[wasm_bindgen(js_name = keySizes)]
    pub fn key_sizes(&self, from: u32, to: u32) -> Vec<i32> {
        slice(&self.key_sizes, from, to)
    }
    #[wasm_bindgen(js_name = valueSizes)]
    pub fn value_sizes(&self, from: u32, to: u32) -> Vec<i32> {
        slice(&self.value_sizes, from, to)
    }
    /// The record's size in its batch.
    pub fn sizes(&self, from: u32, to: u32) -> Vec<u32> {
        slice(&self.sizes, from, to)
    }
    /// Index into the batch table.
    #[wasm_bindgen(js_name = batchOf)]
    pub fn batch_of(&self, from: u32, to: u32) -> Vec<u32> {
        slice(&self.batch_of, from, to)
    }
    /// Index into the user-partition table, -1 for none.
    #[wasm_bindgen(js_name = partitionOf)]
    pub fn partition_of(&self, from: u32, to: u32) -> Vec<i32> {
        slice(&self.partition_of, from, to)
    }
    /// Index into the segment-id table, -1 for none.
    #[wasm_bindgen(js_name = segmentOf)]
    pub fn segment_of(&self, from: u32, to: u32) -> Vec<i32> {
        slice(&self.segment_of, from, to)
    }

    /// The user partitions records name: topic ids, names and partition numbers.
    #[wasm_bindgen(js_name = partitionTopicIds)]
    pub fn partition_topic_ids(&self) -> Vec<String> {
        self.partitions
            .iter()
            .map(|p| p.topic_id.to_string())
            .collect()
    }
    #[wasm_bindgen(js_name = partitionTopics)]
    pub fn partition_topics(&self) -> Vec<String> {
        self.partitions.iter().map(|p| p.topic.clone()).collect()
    }
    #[wasm_bindgen(js_name = partitionNumbers)]
    pub fn partition_numbers(&self) -> Vec<i32> {
        self.partitions.iter().map(|p| p.partition).collect()
    }
    /// The segment ids records name, comma-separated (one string: hundreds of thousands of
    /// small strings cost more to cross than one; uuids hold no comma).
    #[wasm_bindgen(js_name = segmentIds)]
    pub fn segment_ids(&self) -> String {
        joined(self.segments.iter().copied())
    }

    /// The batch table: per batch its file index, byte position, base and last offsets, count,
    /// codec, CRC validity and size.
    #[wasm_bindgen(js_name = batchFiles)]
    pub fn batch_files(&self) -> Vec<u32> {
        self.batches.iter().map(|b| b.file).collect()
    }
    #[wasm_bindgen(js_name = batchPositions)]
    pub fn batch_positions(&self) -> Vec<f64> {
        self.batches.iter().map(|b| b.position as f64).collect()
    }
    #[wasm_bindgen(js_name = batchBaseOffsets)]
    pub fn batch_base_offsets(&self) -> Vec<i64> {
        self.batches.iter().map(|b| b.base_offset).collect()
    }
    #[wasm_bindgen(js_name = batchLastOffsets)]
    pub fn batch_last_offsets(&self) -> Vec<i64> {
        self.batches.iter().map(|b| b.last_offset).collect()
    }
    #[wasm_bindgen(js_name = batchCounts)]
    pub fn batch_counts(&self) -> Vec<i32> {
        self.batches.iter().map(|b| b.count).collect()
    }
    #[wasm_bindgen(js_name = batchCodecs)]
    pub fn batch_codecs(&self) -> Vec<String> {
        self.batches.iter().map(|b| b.codec.clone()).collect()
    }
    #[wasm_bindgen(js_name = batchCrcValid)]
    pub fn batch_crc_valid(&self) -> Vec<u8> {
        self.batches.iter().map(|b| u8::from(b.crc_valid)).collect()
    }
    #[wasm_bindgen(js_name = batchSizes)]
    pub fn batch_sizes(&self) -> Vec<u32> {
        self.batches.iter().map(|b| b.size as u32).collect()
    }
    #[wasm_bindgen(js_name = fileNames)]
    pub fn file_names(&self) -> Vec<String> {
        self.files.iter().map(|f| f.name.clone()).collect()
    }

    /// Every fault found so far, in the order found.
    pub fn faults(&self) -> Vec<Fault> {
        self.faults.clone()
    }

    /// Indexes of the records whose key contains `needle` (as lossy UTF-8 text).
    #[wasm_bindgen(js_name = keysContaining)]
    pub fn keys_containing(&self, needle: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.each_record(|row, r| {
            if r.key
                .is_some_and(|k| String::from_utf8_lossy(k).contains(needle))
            {
                out.push(row);
            }
        });
        out
    }

    /// The key texts of the given records (`""` for a null key: tell by `keySizes`).
    #[wasm_bindgen(js_name = keyTexts)]
    pub fn key_texts(&self, rows: Vec<u32>) -> Vec<String> {
        // Rows of one batch share one parse (and one decompression).
        let mut cached: Option<(u32, Vec<String>)> = None;
        rows.iter()
            .map(|&row| {
                let (Some(&b), Some(&nth)) = (
                    self.batch_of.get(row as usize),
                    self.index_in_batch.get(row as usize),
                ) else {
                    return String::new();
                };
                if cached.as_ref().is_none_or(|(cb, _)| *cb != b) {
                    cached = Some((b, self.batch_keys(b)));
                }
                cached
                    .as_ref()
                    .and_then(|(_, keys)| keys.get(nth as usize).cloned())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// One record's details.
    pub fn record(&self, row: u32) -> JsResult<RecordDetail> {
        let batch = self
            .batch_of
            .get(row as usize)
            .and_then(|&b| self.batches.get(b as usize))
            .ok_or_else(|| no_row(row))?;
        let file = self
            .files
            .get(batch.file as usize)
            .map(|f| f.name.clone())
            .unwrap_or_default();
        self.with_record(row, |_, r| detail(file, batch, r))
            .ok_or_else(|| no_row(row))
    }

    /// Replays every record with the core's inspector (lifecycles and summary); call once every
    /// file is indexed.
    pub fn summarize(&mut self) {
        // The replay copies every key and value: grow the heap once, up front. Growing wasm memory
        // step by step as the allocator asks costs more than the replay itself in V8 (each
        // `memory.grow` replaces the memory's ArrayBuffer; measured: 2/3 of the time in malloc
        // and the garbage collector).
        let bytes: usize = self.files.iter().map(|f| f.bytes.len()).sum();
        drop(Vec::<u8>::with_capacity(bytes.saturating_mul(3)));
        let files: Vec<(&str, &[u8])> = self
            .files
            .iter()
            .map(|f| (f.name.as_str(), f.bytes.as_slice()))
            .collect();
        self.inspection = Some(inspect(&files));
    }

    pub fn summary(&self) -> SummaryView {
        let Some(i) = &self.inspection else {
            return SummaryView::default();
        };
        let s = &i.summary;
        let (level, level_offset) = match &s.level {
            None => (-1, 0),
            Some(l) => (l.level.as_ref().map_or(-2, |l| l.level()), l.offset),
        };
        SummaryView {
            records: s.records as u32,
            null_key_records: s.null_key_records as u32,
            keyed_records: s.keyed_records as u32,
            tombstones: s.tombstones as u32,
            undecodable: s.undecodable as u32,
            fatal_to_old_brokers: s.fatal_to_old_brokers as u32,
            live_segments: s.live_segments as u32,
            orphans: s.orphans as u32,
            kept_by_compaction: s.kept_by_compaction as u32,
            lost_by_compaction: s.lost_by_compaction.len() as u32,
            level,
            level_offset,
            last_null_key_timestamp: self.last_null_key_timestamp_ms.unwrap_or(0),
        }
    }

    /// The lifecycles: per segment its id, user partition (index), offsets range (`hasRange`
    /// says whether a segment record gave it), state now (-1: gone), and marks (bit 1 stuck,
    /// 2 dangling, 4 overlapping).
    /// Comma-separated, as `segmentIds`.
    #[wasm_bindgen(js_name = lifecycleIds)]
    pub fn lifecycle_ids(&self) -> String {
        joined(self.lifecycles().iter().map(|l| l.id))
    }
    /// The user partitions of the lifecycles (`lifecyclePartitions` indexes this table), as
    /// `topicId`, topic name and partition number: independent of `index()`, so that a
    /// second instance can replay the files while the first indexes them.
    #[wasm_bindgen(js_name = lifecyclePartitionTable)]
    pub fn lifecycle_partition_table(&self) -> Vec<String> {
        self.lifecycle_partition_list()
            .0
            .iter()
            .flat_map(|p| {
                [
                    p.topic_id.to_string(),
                    p.topic.clone(),
                    p.partition.to_string(),
                ]
            })
            .collect()
    }
    #[wasm_bindgen(js_name = lifecyclePartitions)]
    pub fn lifecycle_partitions(&self) -> Vec<u32> {
        self.lifecycle_partition_list().1
    }
    #[wasm_bindgen(js_name = lifecycleRanges)]
    pub fn lifecycle_ranges(&self) -> Vec<i64> {
        self.lifecycles()
            .iter()
            .flat_map(|l| [l.start_offset.unwrap_or(-1), l.end_offset.unwrap_or(-1)])
            .collect()
    }
    #[wasm_bindgen(js_name = lifecycleHasRange)]
    pub fn lifecycle_has_range(&self) -> Vec<u8> {
        self.lifecycles()
            .iter()
            .map(|l| u8::from(l.start_offset.is_some()))
            .collect()
    }
    #[wasm_bindgen(js_name = lifecycleNow)]
    pub fn lifecycle_now(&self) -> Vec<i8> {
        self.lifecycles()
            .iter()
            .map(|l| l.now.map_or(-1, |s| s.id()))
            .collect()
    }
    #[wasm_bindgen(js_name = lifecycleMarks)]
    pub fn lifecycle_marks(&self) -> Vec<u8> {
        segment_marks(self.lifecycles())
            .iter()
            .map(|m| m.bits())
            .collect()
    }
    /// Every state step of every lifecycle, flat: the lifecycle's index, the record offset and
    /// the state id (the record's timestamp is in the `timestamps` column of its offset).
    #[wasm_bindgen(js_name = stepLifecycles)]
    pub fn step_lifecycles(&self) -> Vec<u32> {
        self.steps().map(|(i, _, _)| i).collect()
    }
    #[wasm_bindgen(js_name = stepOffsets)]
    pub fn step_offsets(&self) -> Vec<i64> {
        self.steps().map(|(_, o, _)| o).collect()
    }
    #[wasm_bindgen(js_name = stepStates)]
    pub fn step_states(&self) -> Vec<i8> {
        self.steps().map(|(_, _, s)| s).collect()
    }
    /// What Kafka's retention and cleaner keep at `now_ms` with this topic configuration
    /// (`policy`: 0 delete, 1 compact, 2 compact,delete; `segment_records` stands in for
    /// `segment.bytes`, 0: no limit), over the records before each file's first corrupt batch
    /// (a broker recovering the log truncates it there; the core's inspector stops there too).
    #[allow(clippy::too_many_arguments)]
    pub fn preview(
        &self,
        policy: u8,
        retention_ms: i64,
        min_compaction_lag_ms: i64,
        delete_retention_ms: i64,
        segment_ms: i64,
        segment_records: u32,
        now_ms: i64,
    ) -> JsResult<PreviewView> {
        let Some(cleanup_policy) = CleanupPolicy::from_id(policy) else {
            return Err(RawError::from(Error::field(
                ErrorKind::InvalidArgument,
                "cleanup.policy",
                format!("unknown cleanup policy {policy} (0 delete, 1 compact, 2 compact,delete)"),
            )));
        };
        let config = TopicConfig {
            cleanup_policy,
            retention_ms,
            min_compaction_lag_ms,
            delete_retention_ms,
            segment_ms,
            segment_records: if segment_records == 0 {
                usize::MAX
            } else {
                segment_records as usize
            },
        };
        // The batches stay parsed (a compressed one keeps its records decompressed) so that the
        // records borrow their keys and values instead of copying them.
        let mut corrupt_file = None;
        let mut parsed = Vec::new();
        for b in &self.batches {
            if !b.crc_valid {
                corrupt_file = Some(b.file);
            }
            if corrupt_file == Some(b.file) {
                continue;
            }
            let bytes = self
                .files
                .get(b.file as usize)
                .and_then(|f| f.bytes.get(b.position..));
            if let Some(batch) = bytes.and_then(|bytes| Batch::parse(bytes, b.position, READ).ok())
            {
                parsed.push((b.first_row, batch));
            }
        }
        let mut rows = Vec::new();
        let mut records = Vec::new();
        for (first, batch) in &parsed {
            let Ok(rs) = batch.records() else { continue };
            for (row, r) in (*first..).zip(rs) {
                let Ok(r) = r else { break };
                rows.push(row as usize);
                records.push(PreviewRecord::of(&r));
            }
        }
        // The cleaner's log copies every key and value (see summarize).
        let bytes: usize = records.iter().map(|r| r.size).sum();
        drop(Vec::<u8>::with_capacity(bytes.saturating_mul(2)));
        let p = preview_compaction(&records, config, now_ms);
        Ok(PreviewView {
            records_before: p.records_before as u32,
            bytes_before: p.bytes_before as f64,
            records_after: p.records_after as u32,
            bytes_after: p.bytes_after as f64,
            null_keys_dropped: p.null_keys_dropped as u32,
            live_before: p.live_before as u32,
            lost: p.lost.iter().map(Uuid::to_string).collect(),
            kept: {
                let mut kept = vec![0u8; self.offsets.len()];
                for (&row, &k) in rows.iter().zip(&p.kept) {
                    if let Some(slot) = kept.get_mut(row) {
                        *slot = u8::from(k);
                    }
                }
                kept
            },
        })
    }

    /// [`SegmentLog::readiness`] under the level-1 configs the KIP's tool sets by default
    /// (`segment.ms` 1 day, `retention.ms` 14 days).
    #[wasm_bindgen(js_name = readinessAtLevel1)]
    pub fn readiness_at_level1(&self) -> ReadinessView {
        self.readiness(DEFAULT_V1_SEGMENT_MS, DEFAULT_V1_RETENTION_MS)
    }

    /// Whether level 2 is safe for this partition (no null-key record), and when under level 1's
    /// configs (`segment_ms`, `retention_ms`) the remaining ones should be gone.
    pub fn readiness(&self, segment_ms: i64, retention_ms: i64) -> ReadinessView {
        let s = NullKeyScan {
            null_key_records: self.null_key_records,
            last_null_key_timestamp_ms: self.last_null_key_timestamp_ms,
        };
        match s.readiness(segment_ms, retention_ms) {
            Readiness::Ready => ReadinessView {
                ready: true,
                ..ReadinessView::default()
            },
            Readiness::Wait {
                null_key_records,
                estimated_cleanup_ms,
            } => ReadinessView {
                ready: false,
                null_key_records: null_key_records as u32,
                last_null_key_timestamp: s.last_null_key_timestamp_ms,
                estimated_cleanup_ms,
            },
        }
    }
}

fn joined(ids: impl Iterator<Item = Uuid>) -> String {
    let mut out = String::new();
    for (i, id) in ids.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{id}");
    }
    out
}

fn slice<T: Copy>(v: &[T], from: u32, to: u32) -> Vec<T> {
    let to = (to as usize).min(v.len());
    let from = (from as usize).min(to);
    v.get(from..to).map(<[T]>::to_vec).unwrap_or_default()
}

fn no_row(row: u32) -> RawError {
    RawError::from(Error::new(
        ErrorKind::NotFound,
        format!("no record at row {row}"),
    ))
}

fn detail(file: String, b: &BatchRow, r: &rlmeta::batch::Record<'_>) -> RecordDetail {
    let level = parse_level_record(r.key, r.value);
    let decoded = r.value.map(decode_value);
    let (kafka_text, value_json, error, kafka_error, level_value) = match (&level, &decoded) {
        (Some(Ok(l)), _) => (
            Some(format!("{FEATURE_NAME} level {}", l.level())),
            None,
            None,
            None,
            Some(l.level()),
        ),
        (Some(Err(e)), _) => (None, None, Some(e.to_string()), None, None),
        (None, None) => (None, None, None, None, None),
        (None, Some(Ok(v))) => (
            Some(to_kafka_string(v)),
            Some(value_to_json(v, Int64Style::String).to_string()),
            v.validate().err().map(|e| e.to_string()),
            None,
            None,
        ),
        (None, Some(Err(e))) => (
            None,
            None,
            Some(e.to_string()),
            r.value.map(|v| kafka_decode_error_text(v, e)),
            None,
        ),
    };
    RecordDetail {
        file,
        offset: r.offset,
        timestamp: r.timestamp,
        timestamp_type: b.timestamp_type.to_owned(),
        sequence: r.sequence,
        batch_position: b.position,
        batch_base_offset: b.base_offset,
        compression: b.codec.clone(),
        crc_valid: b.crc_valid,
        producer_id: b.producer_id,
        producer_epoch: b.producer_epoch,
        partition_leader_epoch: b.partition_leader_epoch,
        transactional: b.transactional,
        control: b.control,
        key: r.key.map(|k| String::from_utf8_lossy(k).into_owned()),
        key_hex: r.key.map(to_hex),
        key_fields: r
            .key
            .and_then(|k| RecordKey::parse_bytes(k).ok())
            .map(KeyFields::from),
        header_keys: r
            .headers
            .iter()
            .map(|h| String::from_utf8_lossy(h.key).into_owned())
            .collect(),
        header_values_hex: r
            .headers
            .iter()
            .map(|h| h.value.map(to_hex).unwrap_or_default())
            .collect(),
        header_null: r
            .headers
            .iter()
            .map(|h| u8::from(h.value.is_none()))
            .collect(),
        value_hex: r.value.map(to_hex),
        kafka_text,
        value_json,
        error,
        kafka_error,
        level: level_value,
    }
}

impl SegmentLog {
    fn lifecycles(&self) -> &[rlmeta::inspect::SegmentLifecycle] {
        self.inspection
            .as_ref()
            .map_or(&[][..], |i| i.segments.as_slice())
    }

    /// The distinct user partitions of the lifecycles, and each lifecycle's index among them.
    fn lifecycle_partition_list(&self) -> (Vec<&TopicIdPartition>, Vec<u32>) {
        let mut table: Vec<&TopicIdPartition> = Vec::new();
        let mut index: HashMap<&TopicIdPartition, u32> = HashMap::new();
        let of = self
            .lifecycles()
            .iter()
            .map(|l| {
                *index.entry(&l.partition).or_insert_with(|| {
                    table.push(&l.partition);
                    table.len() as u32 - 1
                })
            })
            .collect();
        (table, of)
    }

    fn steps(&self) -> impl Iterator<Item = (u32, i64, i8)> + '_ {
        self.lifecycles()
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.states.iter().map(move |(o, s)| (i as u32, *o, s.id())))
    }

    /// Calls `f` with each indexed record, in row order.
    fn each_record(&self, f: impl FnMut(u32, &rlmeta::batch::Record<'_>)) {
        self.records_where(false, f);
    }

    /// The same, with `verified_only` up to each file's first batch whose CRC is wrong only (as
    /// a broker recovering its log, and the core's inspector, stop there).
    fn records_where(
        &self,
        verified_only: bool,
        mut f: impl FnMut(u32, &rlmeta::batch::Record<'_>),
    ) {
        let mut corrupt_file = None;
        for b in &self.batches {
            if verified_only && !b.crc_valid {
                corrupt_file = Some(b.file);
            }
            if corrupt_file == Some(b.file) {
                continue;
            }

            let Some(file) = self.files.get(b.file as usize) else {
                continue;
            };
            let Some(bytes) = file.bytes.get(b.position..) else {
                continue;
            };
            let Ok(batch) = Batch::parse(bytes, b.position, READ) else {
                continue;
            };
            let Ok(records) = batch.records() else {
                continue;
            };
            for (row, r) in (b.first_row..).zip(records) {
                let Ok(r) = r else { break };
                f(row, &r);
            }
        }
    }

    /// The key texts of every record of batch `b` ('' for a null key).
    fn batch_keys(&self, b: u32) -> Vec<String> {
        let Some(row) = self.batches.get(b as usize) else {
            return Vec::new();
        };
        let bytes = self
            .files
            .get(row.file as usize)
            .and_then(|f| f.bytes.get(row.position..));
        let Some(batch) = bytes.and_then(|bytes| Batch::parse(bytes, row.position, READ).ok())
        else {
            return Vec::new();
        };
        let Ok(records) = batch.records() else {
            return Vec::new();
        };
        records
            .map_while(|r| r.ok())
            .map(|r| {
                r.key
                    .map(|k| String::from_utf8_lossy(k).into_owned())
                    .unwrap_or_default()
            })
            .collect()
    }

    fn with_record<T>(
        &self,
        row: u32,
        f: impl FnOnce(u32, &rlmeta::batch::Record<'_>) -> T,
    ) -> Option<T> {
        let b = self
            .batches
            .get(*self.batch_of.get(row as usize)? as usize)?;
        let nth = *self.index_in_batch.get(row as usize)? as usize;
        let bytes = self.files.get(b.file as usize)?.bytes.get(b.position..)?;
        let batch = Batch::parse(bytes, b.position, READ).ok()?;
        let r = batch.records().ok()?.nth(nth)?.ok()?;
        Some(f(row, &r))
    }

    fn partition(&mut self, t: &rlmeta::record::TopicIdPartitionEntry<'_>) -> i32 {
        // By id and number first, then the name (no allocation per record).
        let same = self.partition_index.entry((t.id, t.partition)).or_default();
        if let Some(&i) = same.iter().find(|&&i| {
            self.partitions
                .get(i as usize)
                .is_some_and(|p| p.topic == t.name)
        }) {
            return i;
        }
        let i = self.partitions.len() as i32;
        self.partitions.push(t.to_topic_id_partition());
        same.push(i);
        i
    }

    fn segment(&mut self, id: Uuid) -> i32 {
        *self.segment_index.entry(id).or_insert_with(|| {
            self.segments.push(id);
            self.segments.len() as i32 - 1
        })
    }

    /// Reads the next batch of file `f`; false when the file is done.
    fn step(&mut self, f: usize) -> bool {
        let Some(file) = self.files.get(f) else {
            return false;
        };
        if file.done {
            return false;
        }
        let (name, pos) = (file.name.clone(), file.pos);
        let len = file.bytes.len();
        if pos >= len {
            self.end_file(f, None);
            return false;
        }
        // Moved out for the walk so that the columns can grow while its bytes are borrowed.
        let bytes = std::mem::take(&mut self.files[f].bytes);
        let next = self.walk_batch(f as u32, &name, &bytes, pos);
        if let Some(file) = self.files.get_mut(f) {
            file.bytes = bytes;
        }
        match next {
            Ok(next) => {
                if let Some(file) = self.files.get_mut(f) {
                    file.pos = next;
                }
                true
            }
            Err(e) => {
                self.end_file(f, Some(e));
                false
            }
        }
    }

    fn end_file(&mut self, f: usize, e: Option<Error>) {
        let Some(file) = self.files.get_mut(f) else {
            return;
        };
        file.done = true;
        if let Some(e) = e {
            let name = file.name.clone();
            self.faults.push(Fault::new(&name, &e, None, None));
        }
    }

    /// Indexes the batch at `pos`; the next position, or the error that ends the walk.
    fn walk_batch(&mut self, f: u32, name: &str, bytes: &[u8], pos: usize) -> Result<usize, Error> {
        let rest = bytes.get(pos..).unwrap_or_default();
        let b = match Batch::parse(rest, pos, READ) {
            Ok(b) => b,
            // A legacy entry: reported and stepped over, as Kafka's reader does.
            Err(e) if e.kind() == ErrorKind::UnsupportedVersion => {
                self.faults.push(Fault::new(name, &e, None, None));
                let length = rest
                    .get(8..12)
                    .and_then(|l| <[u8; 4]>::try_from(l).ok())
                    .map_or(0, i32::from_be_bytes);
                return Ok(pos + LOG_OVERHEAD + length.max(0) as usize);
            }
            Err(e) => return Err(e),
        };
        let next = pos + b.size_in_bytes();
        let crc_valid = b.crc_valid().unwrap_or(false);
        if !crc_valid {
            let e = Error::at(
                ErrorKind::Corrupt,
                pos,
                "crc",
                format!(
                    "Record batch at byte {pos} (offsets {}..{}) is corrupt: stored CRC {} but computed {}",
                    b.base_offset,
                    b.last_offset(),
                    b.crc,
                    b.computed_crc().unwrap_or(0)
                ),
            );
            self.faults
                .push(Fault::new(name, &e, Some(b.base_offset), None));
        }
        let batch = self.batches.len() as u32;
        self.batches.push(BatchRow {
            file: f,
            first_row: self.offsets.len() as u32,
            position: pos,
            base_offset: b.base_offset,
            last_offset: b.last_offset(),
            count: b.records_count,
            codec: b.compression().map_or_else(
                |_| format!("unknown({})", b.attributes.compression_id()),
                |c| c.name().to_owned(),
            ),
            crc_valid,
            timestamp_type: b.timestamp_type().name(),
            size: b.size_in_bytes(),
            producer_id: b.producer_id,
            producer_epoch: b.producer_epoch,
            partition_leader_epoch: b.partition_leader_epoch,
            transactional: b.is_transactional(),
            control: b.is_control(),
        });
        let records = match b.records() {
            Ok(r) => r,
            Err(e) => {
                self.faults
                    .push(Fault::new(name, &e, Some(b.base_offset), None));
                return Ok(next);
            }
        };
        for (nth, r) in records.enumerate() {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    self.faults
                        .push(Fault::new(name, &e, Some(b.base_offset), None));
                    break;
                }
            };
            let row = self.offsets.len() as u32;
            self.push_record(name, batch, nth as u32, &r, b.is_control(), crc_valid, row);
        }
        Ok(next)
    }

    #[allow(clippy::too_many_arguments)]
    fn push_record(
        &mut self,
        name: &str,
        batch: u32,
        nth: u32,
        r: &rlmeta::batch::Record<'_>,
        control: bool,
        crc_valid: bool,
        row: u32,
    ) {
        let mut flags = 0u8;
        if !crc_valid {
            flags |= flag::BAD_CRC;
        }
        if !r.headers.is_empty() {
            flags |= flag::HEADERS;
        }
        let level = parse_level_record(r.key, r.value);
        match r.key {
            None => {
                flags |= flag::NULL_KEY;
                self.null_key_records += 1;
                self.last_null_key_timestamp_ms = Some(
                    self.last_null_key_timestamp_ms
                        .map_or(r.timestamp, |t| t.max(r.timestamp)),
                );
            }
            Some(k) if level.is_none() && !control => {
                if RecordKey::parse_bytes(k).is_ok() {
                    flags |= flag::KIP1266_KEY;
                } else {
                    flags |= flag::BAD_KEY;
                }
            }
            Some(_) => {}
        }
        let (mut kind, mut state, mut partition, mut segment) = (kind::UNDECODABLE, -1i8, -1, -1);
        if control {
            kind = kind::CONTROL;
        } else if let Some(level) = &level {
            kind = kind::LEVEL_RECORD;
            if let Err(e) = level {
                flags |= flag::ERROR;
                self.faults
                    .push(Fault::new(name, e, Some(r.offset), Some(row)));
            }
        } else {
            match r.value.map(decode_value) {
                None => {
                    kind = kind::TOMBSTONE;
                    flags |= flag::TOMBSTONE;
                }
                Some(Err(e)) => {
                    flags |= flag::ERROR;
                    let e = Error::at(
                        e.kind(),
                        r.position,
                        e.field_name().unwrap_or("value"),
                        format!(
                            "the value of the record at offset {} does not decode: {}",
                            r.offset,
                            e.message()
                        ),
                    );
                    self.faults
                        .push(Fault::new(name, &e, Some(r.offset), Some(row)));
                }
                Some(Ok(v)) => match &v.record {
                    Record::Segment(s) => {
                        kind = kind::SEGMENT;
                        state = s.remote_log_segment_state;
                        partition = self.partition(&s.remote_log_segment_id.topic_id_partition);
                        segment = self.segment(s.remote_log_segment_id.id);
                    }
                    Record::Update(u) => {
                        kind = kind::UPDATE;
                        state = u.remote_log_segment_state;
                        partition = self.partition(&u.remote_log_segment_id.topic_id_partition);
                        segment = self.segment(u.remote_log_segment_id.id);
                    }
                    Record::PartitionDelete(d) => {
                        kind = kind::PARTITION_DELETE;
                        state = d.remote_partition_delete_state;
                        partition = self.partition(&d.topic_id_partition);
                    }
                    Record::Snapshot(s) => {
                        kind = kind::SNAPSHOT;
                        state = s.remote_log_segment_state;
                        segment = self.segment(s.segment_id);
                    }
                },
            }
        }
        self.offsets.push(r.offset);
        self.timestamps.push(r.timestamp);
        self.kinds.push(kind);
        self.states.push(state);
        self.flags.push(flags);
        self.key_sizes.push(r.key.map_or(-1, |k| k.len() as i32));
        self.value_sizes
            .push(r.value.map_or(-1, |v| v.len() as i32));
        self.sizes.push(r.size as u32);
        self.batch_of.push(batch);
        self.partition_of.push(partition);
        self.segment_of.push(segment);
        self.index_in_batch.push(nth);
    }
}

/// A KRaft checkpoint (`.checkpoint`) opened from bytes: its finalized feature levels.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug)]
pub struct CheckpointView {
    #[wasm_bindgen(readonly, js_name = featureNames)]
    pub feature_names: Vec<String>,
    #[wasm_bindgen(readonly, js_name = featureLevels)]
    pub feature_levels: Vec<i16>,
    /// The offset of each feature's record.
    #[wasm_bindgen(readonly, js_name = featureOffsets)]
    pub feature_offsets: Vec<i64>,
    #[wasm_bindgen(readonly, js_name = kraftVersion)]
    pub kraft_version: Option<i16>,
    #[wasm_bindgen(readonly, js_name = metadataVersion)]
    pub metadata_version: Option<i16>,
    /// `remote.log.metadata.version` when the checkpoint finalizes it (a Kafka with KIP-1266);
    /// absent on stock Kafka 4.4.0, where each metadata partition's level record says the level.
    #[wasm_bindgen(readonly, js_name = remoteLogMetadataVersion)]
    pub remote_log_metadata_version: Option<i16>,
    #[wasm_bindgen(readonly)]
    pub voters: Option<Vec<i32>>,
    #[wasm_bindgen(readonly)]
    pub batches: u32,
    #[wasm_bindgen(readonly)]
    pub records: u32,
    /// Header and footer both present.
    #[wasm_bindgen(readonly)]
    pub complete: bool,
    #[wasm_bindgen(readonly, js_name = lastContainedLogTimestamp)]
    pub last_contained_log_timestamp: Option<i64>,
}

/// Opens a KRaft checkpoint file.
#[wasm_bindgen(js_name = openCheckpoint)]
pub fn open_checkpoint(bytes: &[u8]) -> JsResult<CheckpointView> {
    let c = Checkpoint::parse(bytes)?;
    let levels = c.feature_levels();
    Ok(CheckpointView {
        feature_names: c.features.iter().map(|f| f.name.clone()).collect(),
        feature_levels: c.features.iter().map(|f| f.level).collect(),
        feature_offsets: c.features.iter().map(|f| f.offset).collect(),
        kraft_version: c.kraft_version,
        metadata_version: levels.metadata_version(),
        remote_log_metadata_version: levels.remote_log_metadata_version(),
        voters: c.voters.clone(),
        batches: c.batches as u32,
        records: c.records.len() as u32,
        complete: c.is_complete(),
        last_contained_log_timestamp: c.header.as_ref().map(|h| h.last_contained_log_timestamp),
    })
}
