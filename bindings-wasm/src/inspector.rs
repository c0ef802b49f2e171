//! Files for the browser inspector: one metadata partition's segment files, or a KRaft
//! checkpoint, opened from bytes.
//!
//! Owns: holding the files' bytes (whole files added with `addFile`), or, for a host that streams
//! its files (`beginFile`/`push`/`endFile`, `beginReplay`/`replayFile`/`replayPush`/`endReplay`),
//! only the byte ranges it read back for a view (`addWindow`, ranges from `rowRanges`/`allRanges`);
//! feeding them in chunks to the core's record index ([`rlmeta::index`]) and inspector, and handing the core's answers to JS as plain values and typed arrays
//! (the index's columns, batch table, faults and counts; lifecycles and their marks, the summary,
//! a compaction preview at any time, migration readiness, checkpoint feature levels; offsets and
//! timestamps as exact 64-bit `BigInt64Array`s). One record's details (key fields, headers,
//! decoded value, Kafka's `toString`, hex) are read on demand. Never: a JSON text per record,
//! rules of its own (which record is what, which are read after a corrupt batch, every count,
//! state and verdict are the core's; each function here converts types and calls it).

use std::collections::HashMap;
use std::fmt::Write as _;

use rlmeta::checkpoint::Checkpoint;
use rlmeta::compaction::{CleanupPolicy, TopicConfig};
use rlmeta::error::ErrorKind;
use rlmeta::feature::{DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS, Readiness};
use rlmeta::index::{BatchInfo, FileWindow, RecordIndex, value_view};
use rlmeta::inspect::{Inspection, Inspector, ScanOptions, inspect, segment_marks};
use rlmeta::json::{Int64Style, to_hex};
use rlmeta::{Error, RecordKey, TopicIdPartition, Uuid};
use wasm_bindgen::prelude::*;

use crate::{JsResult, KeyFields, RawError};

/// Bytes of a file handed to the core's index at a time.
const CHUNK: usize = 256 << 10;

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
}

/// The index's counts ([`SegmentLog::counts`]): every record is read or in or after the
/// partition's first corrupt batch (`unread`, of which `unlisted` are counted by a batch header
/// but have no row); the other counts are of read records.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug, Default)]
pub struct CountsView {
    #[wasm_bindgen(readonly)]
    pub records: u32,
    #[wasm_bindgen(readonly)]
    pub unread: u32,
    #[wasm_bindgen(readonly)]
    pub unlisted: u32,
    #[wasm_bindgen(readonly, js_name = nullKeyRecords)]
    pub null_key_records: u32,
    #[wasm_bindgen(readonly, js_name = keyedRecords)]
    pub keyed_records: u32,
    #[wasm_bindgen(readonly)]
    pub tombstones: u32,
    #[wasm_bindgen(readonly, js_name = levelRecords)]
    pub level_records: u32,
    #[wasm_bindgen(readonly, js_name = lastNullKeyTimestamp)]
    pub last_null_key_timestamp: Option<i64>,
    /// The first corrupt batch, if any: its file's index, its byte, base offset and first row.
    #[wasm_bindgen(readonly, js_name = corruptFiles)]
    pub corrupt_files: Vec<u32>,
    #[wasm_bindgen(readonly, js_name = corruptPositions)]
    pub corrupt_positions: Vec<f64>,
    #[wasm_bindgen(readonly, js_name = corruptBaseOffsets)]
    pub corrupt_base_offsets: Vec<i64>,
    #[wasm_bindgen(readonly, js_name = corruptRows)]
    pub corrupt_rows: Vec<u32>,
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
    /// The whole file (`addFile`), or nothing (a streamed file: `beginFile`).
    bytes: Vec<u8>,
}

/// One metadata partition's segment files, indexed by the core ([`RecordIndex`]).
#[wasm_bindgen]
#[derive(Default)]
pub struct SegmentLog {
    files: Vec<SegFile>,
    /// Byte ranges of streamed files a host read back for a view: file, start, bytes.
    windows: Vec<(u32, usize, Vec<u8>)>,
    /// A replay fed in chunks ([`SegmentLog::begin_replay`]).
    replay: Option<Inspector>,
    /// The file being fed to the index, and how many of its bytes it has.
    feeding: usize,
    fed: usize,
    index: RecordIndex,
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
        });
    }

    /// Feeds the index until at least `budget` more records are indexed or every file is read;
    /// returns whether every file is read. Rows indexed so far stay as they are.
    pub fn index(&mut self, budget: u32) -> bool {
        let goal = self.index.rows().saturating_add(budget as usize);
        while let Some(f) = self
            .files
            .get(self.feeding)
            .filter(|_| self.index.rows() < goal)
        {
            if self.fed == 0 {
                self.index.begin_file();
            }
            let end = (self.fed + CHUNK).min(f.bytes.len());
            self.index
                .push(f.bytes.get(self.fed..end).unwrap_or_default());
            self.fed = end;
            if end == f.bytes.len() {
                self.index.end_file();
                (self.feeding, self.fed) = (self.feeding + 1, 0);
            }
        }
        self.feeding >= self.files.len()
    }

    /// Records indexed so far.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> u32 {
        self.index.rows() as u32
    }

    /// Begins a streamed segment file (files go in offset order): its bytes come with `push`,
    /// and none is kept. Not with `addFile`/`index` on the same log.
    #[wasm_bindgen(js_name = beginFile)]
    pub fn begin_file(&mut self, name: &str) {
        self.inspection = None;
        self.files.push(SegFile {
            name: name.to_owned(),
            bytes: Vec::new(),
        });
        self.feeding = self.files.len();
        self.index.begin_file();
    }
    /// The next bytes of the streamed file; whole entries are indexed now.
    pub fn push(&mut self, chunk: &[u8]) {
        self.index.push(chunk);
    }
    /// Ends the streamed file (a cut tail is its fault).
    #[wasm_bindgen(js_name = endFile)]
    pub fn end_file(&mut self) {
        self.index.end_file();
    }
    /// Forgets the columns of the rows indexed so far (the host took them): the column getters
    /// then answer for later rows only; every view still finds every row.
    #[wasm_bindgen(js_name = forgetColumns)]
    pub fn forget_columns(&mut self) {
        self.index.forget_columns();
    }

    /// The byte ranges of the streamed files that hold these rows' batches, flat
    /// `[file, start, end, ...]`, runs of at most `max_bytes` merged.
    #[wasm_bindgen(js_name = rowRanges)]
    pub fn row_ranges(&self, rows: Vec<u32>, max_bytes: u32) -> Vec<f64> {
        flat(
            self.index
                .byte_ranges(self.index.batches_of(&rows), max_bytes as usize),
        )
    }
    /// The byte ranges that hold every batch, as `rowRanges`.
    #[wasm_bindgen(js_name = allRanges)]
    pub fn all_ranges(&self, max_bytes: u32) -> Vec<f64> {
        let all = 0..self.index.batches().len() as u32;
        flat(self.index.byte_ranges(all, max_bytes as usize))
    }
    /// Hands over bytes of a streamed file, from byte `start`, for the views (`record`,
    /// `keyTexts`, `keysContaining`, `preview`) until `clearWindows`.
    #[wasm_bindgen(js_name = addWindow)]
    pub fn add_window(&mut self, file: u32, start: u32, bytes: Vec<u8>) {
        self.windows.push((file, start as usize, bytes));
    }
    #[wasm_bindgen(js_name = clearWindows)]
    pub fn clear_windows(&mut self) {
        self.windows = Vec::new();
    }

    /// Begins a replay by the core's inspector fed in chunks (`replayFile`, `replayPush` of each
    /// file in offset order, then `endReplay`); `lean`: counts, live segments and level only
    /// ([`Inspector::for_scan`]: no lifecycles and no compaction what-if, which hold every
    /// segment's history and every record's key), in memory that does not grow with the files.
    #[wasm_bindgen(js_name = beginReplay)]
    pub fn begin_replay(&mut self, lean: bool, total_bytes: f64) {
        if !lean {
            // The replay copies every value: grow the heap once, up front (see summarize).
            drop(Vec::<u8>::with_capacity(
                (total_bytes as usize).saturating_mul(2),
            ));
        }
        self.inspection = None;
        self.replay = Some(if lean {
            Inspector::for_scan()
        } else {
            Inspector::new()
        });
    }
    /// Begins the replay's next file, `len` bytes long.
    #[wasm_bindgen(js_name = replayFile)]
    pub fn replay_file(&mut self, len: u32) {
        let options = ScanOptions {
            each_null_key: false,
            list_limit: 0,
        };
        if let Some(r) = &mut self.replay {
            r.scan_begin(len as usize, options);
        }
    }
    #[wasm_bindgen(js_name = replayPush)]
    pub fn replay_push(&mut self, chunk: &[u8]) {
        if let Some(r) = &mut self.replay {
            r.scan_push(chunk);
        }
    }
    /// Ends the replay: `summary` and `lifecycles` answer from it.
    #[wasm_bindgen(js_name = endReplay)]
    pub fn end_replay(&mut self) {
        self.inspection = self.replay.take().map(Inspector::finish);
    }

    pub fn offsets(&self, from: u32, to: u32) -> Vec<i64> {
        self.column(|c| &c.offsets, from, to)
    }
    pub fn timestamps(&self, from: u32, to: u32) -> Vec<i64> {
        self.column(|c| &c.timestamps, from, to)
    }
    /// See [`rlmeta::inspect::kind`].
    pub fn kinds(&self, from: u32, to: u32) -> Vec<u8> {
        self.column(|c| &c.kinds, from, to)
    }
    /// The segment (or partition-delete) state id a record sets, -1 for none.
    pub fn states(&self, from: u32, to: u32) -> Vec<i8> {
        self.column(|c| &c.states, from, to)
    }
    /// See [`rlmeta::inspect::flag`].
    pub fn flags(&self, from: u32, to: u32) -> Vec<u8> {
        self.column(|c| &c.flags, from, to)
    }
    /// -1 for a null key (value).
    #[wasm_bindgen(js_name = keySizes)]
    pub fn key_sizes(&self, from: u32, to: u32) -> Vec<i32> {
        self.column(|c| &c.key_sizes, from, to)
    }
    #[wasm_bindgen(js_name = valueSizes)]
    pub fn value_sizes(&self, from: u32, to: u32) -> Vec<i32> {
        self.column(|c| &c.value_sizes, from, to)
    }
    /// The record's size in its batch.
    pub fn sizes(&self, from: u32, to: u32) -> Vec<u32> {
        self.column(|c| &c.sizes, from, to)
    }
    /// Index into the batch table.
    #[wasm_bindgen(js_name = batchOf)]
    pub fn batch_of(&self, from: u32, to: u32) -> Vec<u32> {
        self.column(|c| &c.batch_of, from, to)
    }
    /// Index into the user-partition table, -1 for none.
    #[wasm_bindgen(js_name = partitionOf)]
    pub fn partition_of(&self, from: u32, to: u32) -> Vec<i32> {
        self.column(|c| &c.partition_of, from, to)
    }
    /// Index into the segment-id table, -1 for none.
    #[wasm_bindgen(js_name = segmentOf)]
    pub fn segment_of(&self, from: u32, to: u32) -> Vec<i32> {
        self.column(|c| &c.segment_of, from, to)
    }

    /// The user partitions records name: topic ids, names and partition numbers.
    #[wasm_bindgen(js_name = partitionTopicIds)]
    pub fn partition_topic_ids(&self) -> Vec<String> {
        let p = self.index.partitions();
        p.iter().map(|p| p.topic_id.to_string()).collect()
    }
    #[wasm_bindgen(js_name = partitionTopics)]
    pub fn partition_topics(&self) -> Vec<String> {
        self.index
            .partitions()
            .iter()
            .map(|p| p.topic.clone())
            .collect()
    }
    #[wasm_bindgen(js_name = partitionNumbers)]
    pub fn partition_numbers(&self) -> Vec<i32> {
        self.index
            .partitions()
            .iter()
            .map(|p| p.partition)
            .collect()
    }
    /// The segment ids records name, comma-separated (one string: hundreds of thousands of
    /// small strings cost more to cross than one; uuids hold no comma).
    #[wasm_bindgen(js_name = segmentIds)]
    pub fn segment_ids(&self) -> String {
        joined(self.index.segments().iter().copied())
    }

    /// Indexes into the segment-id table of the ids that contain `needle`.
    #[wasm_bindgen(js_name = segmentsContaining)]
    pub fn segments_containing(&self, needle: &str) -> Vec<u32> {
        self.index.segments_containing(needle)
    }

    /// The batch table: per batch its file index, byte position, base and last offsets, count,
    /// codec, CRC validity and size.
    #[wasm_bindgen(js_name = batchFiles)]
    pub fn batch_files(&self) -> Vec<u32> {
        self.index.batches().iter().map(|b| b.file).collect()
    }
    #[wasm_bindgen(js_name = batchPositions)]
    pub fn batch_positions(&self) -> Vec<f64> {
        self.index
            .batches()
            .iter()
            .map(|b| b.position as f64)
            .collect()
    }
    #[wasm_bindgen(js_name = batchBaseOffsets)]
    pub fn batch_base_offsets(&self) -> Vec<i64> {
        self.index.batches().iter().map(|b| b.base_offset).collect()
    }
    #[wasm_bindgen(js_name = batchLastOffsets)]
    pub fn batch_last_offsets(&self) -> Vec<i64> {
        self.index.batches().iter().map(|b| b.last_offset).collect()
    }
    #[wasm_bindgen(js_name = batchCounts)]
    pub fn batch_counts(&self) -> Vec<i32> {
        self.index.batches().iter().map(|b| b.count).collect()
    }
    #[wasm_bindgen(js_name = batchCodecs)]
    pub fn batch_codecs(&self) -> Vec<String> {
        self.index
            .batches()
            .iter()
            .map(|b| b.codec.clone())
            .collect()
    }
    #[wasm_bindgen(js_name = batchCrcValid)]
    pub fn batch_crc_valid(&self) -> Vec<u8> {
        self.index
            .batches()
            .iter()
            .map(|b| u8::from(b.crc_valid))
            .collect()
    }
    #[wasm_bindgen(js_name = batchSizes)]
    pub fn batch_sizes(&self) -> Vec<u32> {
        self.index.batches().iter().map(|b| b.size as u32).collect()
    }
    #[wasm_bindgen(js_name = fileNames)]
    pub fn file_names(&self) -> Vec<String> {
        self.files.iter().map(|f| f.name.clone()).collect()
    }

    /// Every fault found so far, in the order found.
    pub fn faults(&self) -> Vec<Fault> {
        let name = |f: u32| self.files.get(f as usize).map_or("", |f| f.name.as_str());
        let faults = self.index.faults().iter();
        faults
            .map(|f| Fault::new(name(f.file), &f.error, f.record_offset, f.row))
            .collect()
    }

    /// The index's counts: read records and those in or after a corrupt batch, by kind.
    pub fn counts(&self) -> CountsView {
        let n = self.index.counts();
        CountsView {
            records: n.records as u32,
            unread: n.unread as u32,
            unlisted: n.unlisted as u32,
            null_key_records: n.null_key_records as u32,
            keyed_records: n.keyed_records as u32,
            tombstones: n.tombstones as u32,
            level_records: n.level_records as u32,
            last_null_key_timestamp: n.last_null_key_timestamp_ms,
            corrupt_files: n.corrupt.iter().map(|c| c.file).collect(),
            corrupt_positions: n.corrupt.iter().map(|c| c.position as f64).collect(),
            corrupt_base_offsets: n.corrupt.iter().map(|c| c.base_offset).collect(),
            corrupt_rows: n.corrupt.iter().map(|c| c.row).collect(),
        }
    }

    /// Indexes of the records whose key contains `needle` (as lossy UTF-8 text).
    #[wasm_bindgen(js_name = keysContaining)]
    pub fn keys_containing(&self, needle: &str) -> Vec<u32> {
        self.index.keys_containing_in(&self.bytes(), needle)
    }

    /// The key texts of the given records (`""` for a null key: tell by `keySizes`).
    #[wasm_bindgen(js_name = keyTexts)]
    pub fn key_texts(&self, rows: Vec<u32>) -> Vec<String> {
        self.index.key_texts_in(&self.bytes(), &rows)
    }

    /// One record's details.
    pub fn record(&self, row: u32) -> JsResult<RecordDetail> {
        let name = |b: &BatchInfo| self.files.get(b.file as usize).map(|f| f.name.clone());
        self.index
            .with_record_in(&self.bytes(), row, |b, r| {
                detail(name(b).unwrap_or_default(), b, r)
            })
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
        let config = topic_config(
            policy,
            [
                retention_ms,
                min_compaction_lag_ms,
                delete_retention_ms,
                segment_ms,
            ],
            segment_records,
        )?;
        // The cleaner's log copies every key and value (see summarize).
        let bytes: usize = self.bytes().iter().map(|w| w.bytes.len()).sum();
        drop(Vec::<u8>::with_capacity(bytes.saturating_mul(2)));
        let (p, kept) = rlmeta::inspect::preview_index(&self.index, &self.bytes(), config, now_ms);
        Ok(PreviewView {
            records_before: p.records_before as u32,
            bytes_before: p.bytes_before as f64,
            records_after: p.records_after as u32,
            bytes_after: p.bytes_after as f64,
            null_keys_dropped: p.null_keys_dropped as u32,
            live_before: p.live_before as u32,
            lost: p.lost.iter().map(Uuid::to_string).collect(),
            kept,
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
        let counts = self.index.counts();
        match counts.readiness(segment_ms, retention_ms) {
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
                last_null_key_timestamp: counts.last_null_key_timestamp_ms,
                estimated_cleanup_ms,
            },
        }
    }
}

impl SegmentLog {
    /// The bytes the views read records from: each whole file, then the windows of streamed
    /// files.
    fn bytes(&self) -> Vec<FileWindow<'_>> {
        let whole = (0u32..)
            .zip(&self.files)
            .filter(|(_, f)| !f.bytes.is_empty());
        let whole = whole.map(|(file, f)| FileWindow {
            file,
            start: 0,
            bytes: &f.bytes,
        });
        let windows = self.windows.iter().map(|(file, start, bytes)| FileWindow {
            file: *file,
            start: *start,
            bytes,
        });
        whole.chain(windows).collect()
    }

    /// Rows `from..to` of a column (of the rows the index still holds columns of).
    fn column<T: Copy>(
        &self,
        col: impl Fn(&rlmeta::index::Columns) -> &Vec<T>,
        from: u32,
        to: u32,
    ) -> Vec<T> {
        let start = self.index.columns_start() as u32;
        slice(
            col(self.index.columns()),
            from.saturating_sub(start),
            to.saturating_sub(start),
        )
    }
}

fn flat(ranges: Vec<(u32, usize, usize)>) -> Vec<f64> {
    ranges
        .into_iter()
        .flat_map(|(f, a, b)| [f64::from(f), a as f64, b as f64])
        .collect()
}

/// A topic configuration from the page's fields (`policy`: 0 delete, 1 compact, 2
/// compact,delete; times in ms: retention, min compaction lag, delete retention, segment;
/// `segment_records` stands in for `segment.bytes`, 0: no limit).
fn topic_config(policy: u8, ms: [i64; 4], segment_records: u32) -> JsResult<TopicConfig> {
    let Some(cleanup_policy) = CleanupPolicy::from_id(policy) else {
        return Err(RawError::from(Error::field(
            ErrorKind::InvalidArgument,
            "cleanup.policy",
            format!("unknown cleanup policy {policy} (0 delete, 1 compact, 2 compact,delete)"),
        )));
    };
    let [
        retention_ms,
        min_compaction_lag_ms,
        delete_retention_ms,
        segment_ms,
    ] = ms;
    Ok(TopicConfig {
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
    })
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

fn detail(file: String, b: &BatchInfo, r: &rlmeta::batch::Record<'_>) -> RecordDetail {
    let v = value_view(r.key, r.value, Int64Style::String);
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
        kafka_text: v.kafka_text,
        value_json: v.json,
        error: v.error,
        kafka_error: v.kafka_error,
        level: v.level,
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
