//! A resumable columnar index of one metadata partition's segment files, for viewers.
//!
//! Owns: walking segment file images fed in chunks of any size (a browser reads a file in
//! slices) into per-record columns (offset, timestamp, batch, kind, state, flags, user partition,
//! segment id, key and value sizes) and a batch table (position, offsets, codec, CRC); the record
//! classification those columns carry; every fault with where it was found; and the rule for a
//! partition with a corrupt batch, once: the records before the first batch whose CRC is wrong
//! are read (a broker recovering its log truncates it there, and [`crate::inspect`] replays just
//! those), the ones in or after it are listed, flagged [`flag::UNREAD`] and counted apart. The
//! counts a viewer shows ([`Counts`]), the migration check over them, and each record's bytes and
//! value texts on demand are views of this index; the record kinds and flags ([`kind`], [`flag`])
//! are its tables.
//!
//! A host that streams its files keeps none of their bytes: it hands the index each file in
//! chunks, takes the columns as they grow and lets the index forget them
//! ([`RecordIndex::forget_columns`]: the batch table alone places every row), and for a view reads
//! back only the byte ranges of the batches the view needs ([`RecordIndex::byte_ranges`], handed
//! over as [`FileWindow`]s).
//!
//! Never: I/O, keeping a file's bytes (hosts keep them, or the ranges a view needs, and hand them
//! back for the views that read records), replaying the records into a store or modelling compaction (that is
//! [`crate::inspect`], which sits above this module: `inspect::preview_index` previews
//! compaction over an index, and the inspector counts what it did not read by this rule).

use std::collections::HashMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::batch::{
    Batch, CrcCheck, DEFAULT_MAX_DECOMPRESSED_SIZE, LOG_OVERHEAD, MIN_ENTRY_LENGTH, ReadOptions,
    Record as BatchRecord,
};
use crate::cache::hash::UuidHash;
use crate::error::{Error, ErrorKind};
use crate::feature::{FEATURE_NAME, NullKeyScan, Readiness, parse_level_record};
use crate::format::{kafka_decode_error_text, to_kafka_string};
use crate::json::{Int64Style, value_to_json};
use crate::key::RecordKey;
use crate::model::{TopicIdPartition, Uuid};
use crate::record::{Record, decode_value};

/// What a record holds, one byte per record in a viewer's `kinds` column, with its name for
/// people ([`kind::NAMES`], by code). The numbers never change (hosts store them).
pub mod kind {
    pub const SEGMENT: u8 = 0;
    pub const UPDATE: u8 = 1;
    pub const PARTITION_DELETE: u8 = 2;
    pub const SNAPSHOT: u8 = 3;
    pub const TOMBSTONE: u8 = 4;
    pub const LEVEL_RECORD: u8 = 5;
    pub const UNDECODABLE: u8 = 6;
    pub const CONTROL: u8 = 7;
    /// Every kind by code: its constant's name and its name for people.
    pub const TABLE: [(u8, &str, &str); 8] = [
        (SEGMENT, "SEGMENT", "segment"),
        (UPDATE, "UPDATE", "update"),
        (PARTITION_DELETE, "PARTITION_DELETE", "partition delete"),
        (SNAPSHOT, "SNAPSHOT", "snapshot"),
        (TOMBSTONE, "TOMBSTONE", "tombstone"),
        (LEVEL_RECORD, "LEVEL_RECORD", "level record"),
        (UNDECODABLE, "UNDECODABLE", "undecodable"),
        (CONTROL, "CONTROL", "control"),
    ];
}

/// Bits of a viewer's per-record `flags` column.
pub mod flag {
    pub const NULL_KEY: u8 = 1;
    /// The key parses as a KIP-1266 key.
    pub const KIP1266_KEY: u8 = 2;
    pub const TOMBSTONE: u8 = 4;
    /// The value does not decode (or is an invalid level record).
    pub const ERROR: u8 = 8;
    /// The record's batch fails its CRC.
    pub const BAD_CRC: u8 = 16;
    pub const HEADERS: u8 = 32;
    /// A key that is neither a KIP-1266 key nor the level record key.
    pub const BAD_KEY: u8 = 64;
    /// In or after the partition's first corrupt batch (in any earlier file too): listed, not read (a broker recovering the log
    /// truncates it there; this module decides it).
    pub const UNREAD: u8 = 128;
    /// Every bit with its constant's name.
    pub const TABLE: [(u8, &str); 8] = [
        (NULL_KEY, "NULL_KEY"),
        (KIP1266_KEY, "KIP1266_KEY"),
        (TOMBSTONE, "TOMBSTONE"),
        (ERROR, "ERROR"),
        (BAD_CRC, "BAD_CRC"),
        (HEADERS, "HEADERS"),
        (BAD_KEY, "BAD_KEY"),
        (UNREAD, "UNREAD"),
    ];
}

/// Read like kafka-dump-log: a batch whose CRC is wrong is still listed (and reported).
pub const READ: ReadOptions = ReadOptions {
    crc: CrcCheck::Report,
    max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
};

/// A fault found in a file: the error, the file (its number in feeding order), and the offset
/// and row of the record it concerns, when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub file: u32,
    pub error: Error,
    pub record_offset: Option<i64>,
    pub row: Option<u32>,
}

/// One batch's header, as kafka-dump-log lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchInfo {
    pub file: u32,
    /// The row of its first record.
    pub first_row: u32,
    /// Byte position in its file.
    pub position: usize,
    pub base_offset: i64,
    pub last_offset: i64,
    pub count: i32,
    /// The codec's name, `unknown(id)` for an id Kafka does not know.
    pub codec: String,
    pub crc_valid: bool,
    pub timestamp_type: &'static str,
    pub size: usize,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub partition_leader_epoch: i32,
    pub transactional: bool,
    pub control: bool,
}

/// Where the partition's first corrupt batch is: no record from `row` on is read, in that file or
/// any later one (no consumer reads past it; a broker recovering the log truncates it there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorruptAt {
    pub file: u32,
    pub batch: u32,
    pub position: usize,
    pub base_offset: i64,
    /// The row of the batch's first record.
    pub row: u32,
}

/// The per-record columns, row by row in file and log order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    pub offsets: Vec<i64>,
    pub timestamps: Vec<i64>,
    /// See [`kind`].
    pub kinds: Vec<u8>,
    /// The segment (or partition-delete) state id a record sets, -1 for none.
    pub states: Vec<i8>,
    /// See [`flag`].
    pub flags: Vec<u8>,
    /// -1 for a null key (value).
    pub key_sizes: Vec<i32>,
    pub value_sizes: Vec<i32>,
    /// The record's size in its batch.
    pub sizes: Vec<u32>,
    /// Index into the batch table.
    pub batch_of: Vec<u32>,
    /// Index into the user-partition table, -1 for none.
    pub partition_of: Vec<i32>,
    /// Index into the segment-id table, -1 for none.
    pub segment_of: Vec<i32>,
    /// The record's place within its batch.
    pub index_in_batch: Vec<u32>,
}

/// The counts a viewer shows, over the columns: every record is either read or in or after its
/// partition's first corrupt batch (`records + unread` is every row, plus the unlisted records
/// of undecodable unread batches); the rest count read records only,
/// as [`crate::inspect::Summary`] does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Records read: before the first corrupt batch.
    pub records: usize,
    /// Records in or after the first corrupt batch: its rows, and the records the batch headers
    /// there count that cannot be listed ([`Counts::unlisted`]).
    pub unread: usize,
    /// Of those, the records no row shows: a batch header counts them but its records do not
    /// decompress or decode (`records + unread` is every row plus these).
    pub unlisted: usize,
    pub null_key_records: usize,
    /// A key and a value (KIP-1266 keys, level records, control records).
    pub keyed_records: usize,
    /// A key and no value.
    pub tombstones: usize,
    pub level_records: usize,
    /// The newest read null-key record's timestamp.
    pub last_null_key_timestamp_ms: Option<i64>,
    /// The first corrupt batch, if any (at most one).
    pub corrupt: Vec<CorruptAt>,
}

impl Counts {
    /// Whether level 2 is safe for this partition (no read null-key record remains), and when
    /// under level 1's `segment_ms` and `retention_ms` the remaining ones should be gone.
    pub fn readiness(&self, segment_ms: i64, retention_ms: i64) -> Readiness {
        self.null_keys().readiness(segment_ms, retention_ms)
    }

    pub fn null_keys(&self) -> NullKeyScan {
        NullKeyScan {
            null_key_records: self.null_key_records as u64,
            last_null_key_timestamp_ms: self.last_null_key_timestamp_ms,
        }
    }
}

/// Bytes of one file that a view reads records from: the file's bytes from byte `start` on. A
/// whole image is the window at 0; a host that streams its files hands over the ranges it read
/// back ([`RecordIndex::byte_ranges`]). A view reads the batches that lie whole in a window and
/// skips the others.
#[derive(Clone, Copy, Debug)]
pub struct FileWindow<'a> {
    /// The file's number in feeding order.
    pub file: u32,
    /// The byte of the file `bytes` starts at.
    pub start: usize,
    pub bytes: &'a [u8],
}

impl<'a> FileWindow<'a> {
    /// Every file's whole image (`files`, in feeding order).
    pub fn whole(files: &[&'a [u8]]) -> Vec<FileWindow<'a>> {
        (0u32..)
            .zip(files)
            .map(|(file, bytes)| FileWindow {
                file,
                start: 0,
                bytes,
            })
            .collect()
    }

    /// The bytes of batch `b`, from its first byte on, if the window holds it whole.
    fn batch(&self, b: &BatchInfo) -> Option<&'a [u8]> {
        let from = b.position.checked_sub(self.start)?;
        let end = from.checked_add(b.size)?;
        (self.file == b.file && end <= self.bytes.len()).then(|| self.bytes.get(from..))?
    }
}

/// The walk of the file being fed.
#[derive(Clone, Debug, Default)]
struct Walk {
    /// Position in the file of the first byte of `pending`.
    pos: usize,
    /// The start of an entry not yet whole.
    pending: Vec<u8>,
    /// An error ended the walk: later bytes of the file are not read.
    ended: bool,
}

/// The index, fed file by file ([`RecordIndex::begin_file`], [`RecordIndex::push`] any number
/// of times, [`RecordIndex::end_file`]); files go in offset order.
#[derive(Clone, Debug, Default)]
pub struct RecordIndex {
    /// The columns of the rows from `columns_start` on (the earlier ones were forgotten).
    columns: Columns,
    columns_start: usize,
    batches: Vec<BatchInfo>,
    partitions: Vec<TopicIdPartition>,
    /// Rows of `partitions` by topic id and partition number.
    partition_index: HashMap<(Uuid, i32), Vec<i32>>,
    segments: Vec<Uuid>,
    /// Rows of `segments` by id: 4 bytes a segment (a map would hold each 16-byte id again; a
    /// large file names millions of segments).
    segment_index: HashTable<u32>,
    faults: Vec<Fault>,
    counts: Counts,
    /// Files begun so far; the last one is being fed while `walk` is set.
    files: u32,
    walk: Option<Walk>,
    /// Rows so far (the columns' length, also when they are not kept).
    row_count: usize,
    /// Made by [`RecordIndex::counting`]: only [`Counts`] are kept.
    counting: bool,
}

/// Bytes the entry starting `bytes` needs: its header first, then the whole entry; `usize::MAX`
/// for a length that cannot be an entry (the rest of the file then goes to the error).
fn entry_size(bytes: &[u8]) -> usize {
    let Some(length) = bytes
        .get(8..LOG_OVERHEAD)
        .and_then(|l| <[u8; 4]>::try_from(l).ok())
        .map(i32::from_be_bytes)
    else {
        return LOG_OVERHEAD;
    };
    if length < MIN_ENTRY_LENGTH {
        return usize::MAX;
    }
    LOG_OVERHEAD + length as usize
}

impl RecordIndex {
    pub fn new() -> RecordIndex {
        RecordIndex::default()
    }

    /// An index that keeps only its [`Counts`] (no columns, batches, faults, partitions or
    /// segments): what a host that streams a file needs to count what it did not read, in memory
    /// that does not grow with the file.
    pub fn counting() -> RecordIndex {
        RecordIndex {
            counting: true,
            ..RecordIndex::default()
        }
    }

    /// Starts the next file (ending the one being fed); returns its number.
    pub fn begin_file(&mut self) -> u32 {
        self.end_file();
        self.files += 1;
        self.walk = Some(Walk::default());
        self.files - 1
    }

    /// The next bytes of the file being fed (nothing happens without one). Whole entries are
    /// indexed now; the start of one cut by the chunk's end waits for the next chunk.
    pub fn push(&mut self, chunk: &[u8]) {
        let Some(mut walk) = self.walk.take() else {
            return;
        };
        let mut chunk = chunk;
        while !walk.ended && !walk.pending.is_empty() && !chunk.is_empty() {
            let want = entry_size(&walk.pending);
            let take = want.saturating_sub(walk.pending.len()).min(chunk.len());
            walk.pending.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            // Whole once its header, read now, says so.
            if walk.pending.len() == entry_size(&walk.pending) {
                let entry = std::mem::take(&mut walk.pending);
                self.entry(&mut walk, &entry);
            }
        }
        while !walk.ended && walk.pending.is_empty() && !chunk.is_empty() {
            let want = entry_size(chunk);
            if chunk.len() < want {
                walk.pending.extend_from_slice(chunk);
                break;
            }
            let (entry, rest) = chunk.split_at(want);
            self.entry(&mut walk, entry);
            chunk = rest;
        }
        self.walk = Some(walk);
    }

    /// Ends the file being fed: bytes left that are no whole entry are its torn tail.
    pub fn end_file(&mut self) {
        let Some(mut walk) = self.walk.take() else {
            return;
        };
        if !walk.ended && !walk.pending.is_empty() {
            let tail = std::mem::take(&mut walk.pending);
            self.entry(&mut walk, &tail);
        }
    }

    /// Indexes one entry (or, at a file's end, what is left of one).
    fn entry(&mut self, walk: &mut Walk, bytes: &[u8]) {
        let file = self.files.saturating_sub(1);
        let pos = walk.pos;
        walk.pos += bytes.len();
        let b = match Batch::parse(bytes, pos, READ) {
            Ok(b) => b,
            Err(e) => {
                // A legacy entry is reported and stepped over, as Kafka's reader does; any other
                // error ends the walk.
                walk.ended = e.kind() != ErrorKind::UnsupportedVersion;
                self.fault(file, e, None, None);
                return;
            }
        };
        let crc_valid = b.crc_valid().unwrap_or(false);
        let batch = self.batches.len() as u32;
        let first_row = self.row_count as u32;
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
            self.fault(file, e, Some(b.base_offset), None);
            if self.counts.corrupt.is_empty() {
                self.counts.corrupt.push(CorruptAt {
                    file,
                    batch,
                    position: pos,
                    base_offset: b.base_offset,
                    row: first_row,
                });
            }
        }
        let unread = !self.counts.corrupt.is_empty();
        if self.counting {
            self.list_records(file, batch, &b, crc_valid, unread);
            self.count_unlisted(&b, first_row, unread);
            return;
        }
        self.batches.push(BatchInfo {
            file,
            first_row,
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
        self.list_records(file, batch, &b, crc_valid, unread);
        self.count_unlisted(&b, first_row, unread);
    }

    /// A record its header counts but that cannot be listed (its batch does not decompress or
    /// decode) is unread all the same.
    fn count_unlisted(&mut self, b: &Batch<'_>, first_row: u32, unread: bool) {
        if unread {
            let listed = self.row_count - first_row as usize;
            let unlisted = usize::try_from(b.records_count)
                .unwrap_or(0)
                .saturating_sub(listed);
            self.counts.unread += unlisted;
            self.counts.unlisted += unlisted;
        }
    }

    /// Lists the records of one batch as rows, up to the first that does not decode.
    fn list_records(
        &mut self,
        file: u32,
        batch: u32,
        b: &Batch<'_>,
        crc_valid: bool,
        unread: bool,
    ) {
        let records = match b.records() {
            Ok(r) => r,
            Err(e) => {
                self.fault(file, e, Some(b.base_offset), None);
                return;
            }
        };
        for (nth, r) in records.enumerate() {
            match r {
                Ok(r) => self.record(
                    file,
                    batch,
                    nth as u32,
                    &r,
                    b.is_control(),
                    crc_valid,
                    unread,
                ),
                Err(e) => {
                    self.fault(file, e, Some(b.base_offset), None);
                    break;
                }
            }
        }
    }

    fn fault(&mut self, file: u32, error: Error, record_offset: Option<i64>, row: Option<u32>) {
        if self.counting {
            return;
        }
        self.faults.push(Fault {
            file,
            error,
            record_offset,
            row,
        });
    }

    /// Classifies one record into the columns.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        file: u32,
        batch: u32,
        nth: u32,
        r: &BatchRecord<'_>,
        control: bool,
        crc_valid: bool,
        unread: bool,
    ) {
        let row = self.row_count as u32;
        self.row_count += 1;
        if self.counting {
            let level = parse_level_record(r.key, r.value).is_some() && !control;
            self.count(r, unread, level);
            return;
        }
        let mut flags = 0u8;
        if !crc_valid {
            flags |= flag::BAD_CRC;
        }
        if unread {
            flags |= flag::UNREAD;
        }
        if !r.headers.is_empty() {
            flags |= flag::HEADERS;
        }
        let level = parse_level_record(r.key, r.value);
        match r.key {
            None => flags |= flag::NULL_KEY,
            Some(k) if level.is_none() && !control => {
                flags |= if RecordKey::parse_bytes(k).is_ok() {
                    flag::KIP1266_KEY
                } else {
                    flag::BAD_KEY
                };
            }
            Some(_) => {}
        }
        let (mut kind, mut state, mut partition, mut segment) = (kind::UNDECODABLE, -1i8, -1, -1);
        if control {
            kind = kind::CONTROL;
        } else if let Some(level) = level {
            kind = kind::LEVEL_RECORD;
            if let Err(e) = level {
                flags |= flag::ERROR;
                self.fault(file, e, Some(r.offset), Some(row));
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
                    self.fault(file, e, Some(r.offset), Some(row));
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
        self.count(r, unread, kind == kind::LEVEL_RECORD);
        let c = &mut self.columns;
        c.offsets.push(r.offset);
        c.timestamps.push(r.timestamp);
        c.kinds.push(kind);
        c.states.push(state);
        c.flags.push(flags);
        c.key_sizes.push(r.key.map_or(-1, |k| k.len() as i32));
        c.value_sizes.push(r.value.map_or(-1, |v| v.len() as i32));
        c.sizes.push(r.size as u32);
        c.batch_of.push(batch);
        c.partition_of.push(partition);
        c.segment_of.push(segment);
        c.index_in_batch.push(nth);
    }

    /// Counts one record: read, or in or after the first corrupt batch.
    fn count(&mut self, r: &BatchRecord<'_>, unread: bool, level_record: bool) {
        let n = &mut self.counts;
        if unread {
            n.unread += 1;
            return;
        }
        n.records += 1;
        match (r.key, r.value) {
            (None, _) => {
                n.null_key_records += 1;
                n.last_null_key_timestamp_ms = Some(
                    n.last_null_key_timestamp_ms
                        .map_or(r.timestamp, |t| t.max(r.timestamp)),
                );
            }
            (Some(_), Some(_)) => n.keyed_records += 1,
            (Some(_), None) => n.tombstones += 1,
        }
        if level_record {
            n.level_records += 1;
        }
    }

    fn partition(&mut self, t: &crate::record::TopicIdPartitionEntry<'_>) -> i32 {
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
        let hash = |id: &Uuid| UuidHash::default().hash_one(id);
        let segments = &self.segments;
        if let Some(&i) = self
            .segment_index
            .find(hash(&id), |&i| segments.get(i as usize) == Some(&id))
        {
            return i as i32;
        }
        let i = self.segments.len() as u32;
        self.segments.push(id);
        let segments = &self.segments;
        self.segment_index
            .insert_unique(hash(&id), i, |&r| segments.get(r as usize).map_or(0, hash));
        i as i32
    }

    /// Rows indexed so far.
    pub fn rows(&self) -> usize {
        self.columns_start + self.columns.offsets.len()
    }
    /// The columns of the rows from [`RecordIndex::columns_start`] on.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }
    /// The first row [`RecordIndex::columns`] holds (0 until columns are forgotten).
    pub fn columns_start(&self) -> usize {
        self.columns_start
    }
    /// Forgets the columns of the rows indexed so far (a host that took them keeps them): the
    /// index then holds its batch table, tables, faults and counts, whatever the files' size.
    /// Every view still places every row, by the batch table.
    pub fn forget_columns(&mut self) {
        self.columns_start = self.rows();
        self.columns = Columns::default();
    }
    pub fn batches(&self) -> &[BatchInfo] {
        &self.batches
    }
    /// The user partitions records name (`partition_of` indexes this table).
    pub fn partitions(&self) -> &[TopicIdPartition] {
        &self.partitions
    }
    /// The segment ids records name (`segment_of` indexes this table).
    pub fn segments(&self) -> &[Uuid] {
        &self.segments
    }
    /// The entries of the segment-id table ([`RecordIndex::segments`]) whose id, as text,
    /// contains `needle` (a viewer's segment filter, without the table crossing to it).
    pub fn segments_containing(&self, needle: &str) -> Vec<u32> {
        (0u32..)
            .zip(&self.segments)
            .filter(|(_, id)| id.to_string().contains(needle))
            .map(|(i, _)| i)
            .collect()
    }
    /// Every fault found so far, in the order found.
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }
    /// The counts over the rows indexed so far.
    pub fn counts(&self) -> &Counts {
        &self.counts
    }

    /// Whether row `row` was read (lies before the first corrupt batch).
    pub fn is_read(&self, row: u32) -> bool {
        // The rows from the first corrupt batch's first on are the ones flagged UNREAD.
        (row as usize) < self.rows() && self.counts.corrupt.first().is_none_or(|c| row < c.row)
    }

    /// The batch that holds row `row` (its index and info) and the row's place in it: the last
    /// batch whose first row is at or before it (a batch none of whose records decode has no
    /// row, and the next batch starts at the same row).
    fn locate(&self, row: u32) -> Option<(u32, &BatchInfo, usize)> {
        if row as usize >= self.rows() {
            return None;
        }
        let i = self
            .batches
            .partition_point(|b| b.first_row <= row)
            .checked_sub(1)?;
        let b = self.batches.get(i)?;
        Some((i as u32, b, (row - b.first_row) as usize))
    }

    /// The byte ranges `(file, start, end)` that hold the given batches (indexes into the batch
    /// table), in file and position order: a run of batches of one file is one range while it
    /// spans at most `max_bytes` (bytes between them included; a larger batch is a range of its
    /// own). What a host that streams its files reads back for a view, as [`FileWindow`]s.
    pub fn byte_ranges(
        &self,
        batches: impl IntoIterator<Item = u32>,
        max_bytes: usize,
    ) -> Vec<(u32, usize, usize)> {
        let mut want: Vec<&BatchInfo> = batches
            .into_iter()
            .filter_map(|i| self.batches.get(i as usize))
            .collect();
        want.sort_by_key(|b| (b.file, b.position));
        want.dedup_by_key(|b| (b.file, b.position));
        let mut out: Vec<(u32, usize, usize)> = Vec::new();
        for b in want {
            let end = b.position.saturating_add(b.size);
            match out.last_mut() {
                Some((file, start, last)) if *file == b.file && end - *start <= max_bytes => {
                    *last = (*last).max(end);
                }
                _ => out.push((b.file, b.position, end)),
            }
        }
        out
    }

    /// The batches (indexes into the batch table) that hold the given rows; rows that do not
    /// exist are left out.
    pub fn batches_of(&self, rows: &[u32]) -> Vec<u32> {
        rows.iter()
            .filter_map(|&r| self.locate(r).map(|(i, _, _)| i))
            .collect()
    }

    /// Whether batch `batch` was read (lies before the first corrupt batch).
    pub fn is_batch_read(&self, batch: u32) -> bool {
        self.batches.get(batch as usize).is_some()
            && !self.counts.corrupt.iter().any(|c| c.batch <= batch)
    }

    /// Parses batch `b` again from the first window that holds it whole.
    fn parse<'a>(&self, files: &[FileWindow<'a>], b: &BatchInfo) -> Option<Batch<'a>> {
        let bytes = files.iter().find_map(|w| w.batch(b))?;
        Batch::parse(bytes, b.position, READ).ok()
    }

    /// Calls `f` with each record of the batches `want` picks (and its row), in row order;
    /// batches no window holds are skipped.
    fn each(
        &self,
        files: &[FileWindow<'_>],
        want: impl Fn(u32, &BatchInfo) -> bool,
        mut f: impl FnMut(u32, &BatchRecord<'_>),
    ) {
        for (i, b) in self.batches.iter().enumerate() {
            if !want(i as u32, b) {
                continue;
            }
            let Some(batch) = self.parse(files, b) else {
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

    /// One record, read again from `files` (whole images, in feeding order), handed to `f` with
    /// its batch.
    pub fn with_record<T>(
        &self,
        files: &[&[u8]],
        row: u32,
        f: impl FnOnce(&BatchInfo, &BatchRecord<'_>) -> T,
    ) -> Option<T> {
        self.with_record_in(&FileWindow::whole(files), row, f)
    }

    /// [`RecordIndex::with_record`] from windows of the files (`None` also when none holds the
    /// record's batch).
    pub fn with_record_in<T>(
        &self,
        files: &[FileWindow<'_>],
        row: u32,
        f: impl FnOnce(&BatchInfo, &BatchRecord<'_>) -> T,
    ) -> Option<T> {
        let (_, b, nth) = self.locate(row)?;
        let batch = self.parse(files, b)?;
        let r = batch.records().ok()?.nth(nth)?.ok()?;
        Some(f(b, &r))
    }

    /// Rows whose key, as lossy UTF-8 text, contains `needle`.
    pub fn keys_containing(&self, files: &[&[u8]], needle: &str) -> Vec<u32> {
        self.keys_containing_in(&FileWindow::whole(files), needle)
    }

    /// [`RecordIndex::keys_containing`] over the batches the windows hold.
    pub fn keys_containing_in(&self, files: &[FileWindow<'_>], needle: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.each(
            files,
            |_, _| true,
            |row, r| {
                if r.key
                    .is_some_and(|k| String::from_utf8_lossy(k).contains(needle))
                {
                    out.push(row);
                }
            },
        );
        out
    }

    /// The key texts of `rows` (lossy UTF-8; `""` for a null key or a row that does not exist).
    pub fn key_texts(&self, files: &[&[u8]], rows: &[u32]) -> Vec<String> {
        self.key_texts_in(&FileWindow::whole(files), rows)
    }

    /// [`RecordIndex::key_texts`] from windows of the files (`""` also for a row whose batch no
    /// window holds).
    pub fn key_texts_in(&self, files: &[FileWindow<'_>], rows: &[u32]) -> Vec<String> {
        // Rows of one batch share one parse (and one decompression).
        let mut cached: Option<(u32, Vec<String>)> = None;
        rows.iter()
            .map(|&row| {
                let Some((b, _, nth)) = self.locate(row) else {
                    return String::new();
                };
                if cached.as_ref().is_none_or(|(cb, _)| *cb != b) {
                    let mut keys = Vec::new();
                    self.each(
                        files,
                        |i, _| i == b,
                        |_, r| {
                            keys.push(
                                r.key
                                    .map(String::from_utf8_lossy)
                                    .unwrap_or_default()
                                    .into_owned(),
                            )
                        },
                    );
                    cached = Some((b, keys));
                }
                cached
                    .as_ref()
                    .and_then(|(_, keys)| keys.get(nth).cloned())
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The read batches, parsed from `files` (a compressed one keeps its records decompressed,
    /// so records borrow their keys and values), each with its first row.
    pub fn read_batches<'a>(&self, files: &[&'a [u8]]) -> Vec<(u32, Batch<'a>)> {
        self.read_batches_in(&FileWindow::whole(files))
    }

    /// [`RecordIndex::read_batches`] the windows hold.
    pub fn read_batches_in<'a>(&self, files: &[FileWindow<'a>]) -> Vec<(u32, Batch<'a>)> {
        self.batches
            .iter()
            .enumerate()
            .filter(|&(i, _)| self.is_batch_read(i as u32))
            .filter_map(|(_, b)| Some((b.first_row, self.parse(files, b)?)))
            .collect()
    }
}

/// What a viewer shows of one record's value: Kafka's `toString` (kafka-dump-log's payload; for
/// a level record, the level it sets), the decoded value as JSON, why it does not decode or fails
/// Kafka's checks, the exception Kafka's own decoder throws, and a level record's level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueView {
    pub kafka_text: Option<String>,
    pub json: Option<String>,
    pub error: Option<String>,
    pub kafka_error: Option<String>,
    pub level: Option<i16>,
}

/// The [`ValueView`] of a record's key and value, 64-bit integers of the JSON as `style` says.
pub fn value_view(key: Option<&[u8]>, value: Option<&[u8]>, style: Int64Style) -> ValueView {
    match (parse_level_record(key, value), value.map(decode_value)) {
        (Some(Ok(l)), _) => ValueView {
            kafka_text: Some(format!("{FEATURE_NAME} level {}", l.level())),
            level: Some(l.level()),
            ..ValueView::default()
        },
        (Some(Err(e)), _) => ValueView {
            error: Some(e.to_string()),
            ..ValueView::default()
        },
        (None, None) => ValueView::default(),
        (None, Some(Ok(v))) => ValueView {
            kafka_text: Some(to_kafka_string(&v)),
            json: Some(value_to_json(&v, style).to_string()),
            error: v.validate().err().map(|e| e.to_string()),
            ..ValueView::default()
        },
        (None, Some(Err(e))) => ValueView {
            error: Some(e.to_string()),
            kafka_error: value.map(|v| kafka_decode_error_text(v, &e)),
            ..ValueView::default()
        },
    }
}

/// Indexes whole file images in one go (each fed as one chunk).
pub fn index_files(files: &[&[u8]]) -> RecordIndex {
    let mut index = RecordIndex::new();
    for f in files {
        index.begin_file();
        index.push(f);
    }
    index.end_file();
    index
}

#[cfg(test)]
mod tests;
