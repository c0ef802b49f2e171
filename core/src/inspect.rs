//! Inspection of `__remote_log_metadata` segment files: what an operator asks of them.
//!
//! Owns: replaying the records of one metadata partition's files into a store, each segment's
//! folded lifecycle (every state its records went through, and where it stands now), and a
//! summary: records by kind (null key, KIP-1266 key, tombstone, undecodable), live segments,
//! orphans, and what Kafka's cleaner would keep if the topic were compacted now, with the live
//! segments that compacted log would no longer know. Text and JSON renderings of it. Also the
//! marks a viewer puts on a lifecycle (stuck, dangling, overlapping) and a compaction preview at
//! any moment with any topic configuration, and the tables a viewer's columns use (record kinds,
//! flags, mark bits). A scan's inspector ([`Inspector::for_scan`]) keeps the counts and the store
//! alone. Never: I/O.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::batch::{Batch, Batches, ReadOptions};
use crate::cache::{Applied, Seen, Skip, Store};
use crate::compaction::{Log, Round, TopicConfig};
use crate::feature::MetadataLevel;
use crate::index::RecordIndex;
use crate::model::{SegmentState, TopicIdPartition, Uuid};
use crate::partition_scan::FetchWindow;
use crate::record::{Plain, PlainPartition, Record, TopicIdPartitionEntry, decode_value};

// The record kinds and flags are the index's columns ([`crate::index`] decides them); they stay
// reachable here, where viewers and the tables generator have always found them.
pub use crate::index::{flag, kind};

/// Bits of a lifecycle's marks ([`SegmentMarks::bits`]).
pub mod mark {
    pub const STUCK: u8 = 1;
    pub const DANGLING: u8 = 2;
    pub const OVERLAPPING: u8 = 4;
    /// Every bit with its constant's name.
    pub const TABLE: [(u8, &str); 3] = [
        (STUCK, "STUCK"),
        (DANGLING, "DANGLING"),
        (OVERLAPPING, "OVERLAPPING"),
    ];
}

/// One segment's lifecycle as the records tell it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentLifecycle {
    pub partition: TopicIdPartition,
    pub id: Uuid,
    pub start_offset: Option<i64>,
    pub end_offset: Option<i64>,
    /// Every state a record set, in log order, with the record's offset.
    pub states: Vec<(i64, SegmentState)>,
    /// Where it stands after replay: live in this state, or gone (`None`).
    pub now: Option<SegmentState>,
}

/// Counts over the inspected records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Records read and replayed: every record before each file's first batch a consumer cannot
    /// read.
    pub records: usize,
    /// Records in or after such a batch (a bad CRC), by [`crate::index`]'s rule: not replayed,
    /// so `records + unread_records` is every record of the files.
    pub unread_records: usize,
    /// Where reading each file stopped short of its end, in file order.
    pub stops: Vec<FileStop>,
    pub null_key_records: usize,
    pub keyed_records: usize,
    pub tombstones: usize,
    pub undecodable: usize,
    /// Records a broker predating KIP-1266 could not consume (its consumer thread would stop).
    pub fatal_to_old_brokers: usize,
    pub live_segments: usize,
    pub orphans: usize,
    /// When the summary's compaction ran: [`COMPACTION_HORIZON_MS`] after the last record.
    pub compacted_at_ms: i64,
    /// Records Kafka's cleaner would keep if the topic were compacted at `compacted_at_ms`
    /// ([`summary_compaction`]).
    pub kept_by_compaction: usize,
    /// Live segments a broker replaying that compacted log would no longer know.
    pub lost_by_compaction: Vec<Uuid>,
    /// The last level record of `remote.log.metadata.version` (docs/FEATURE-LEVEL.md), if any.
    pub level: Option<LevelSeen>,
}

/// Where reading one file stopped before its end: the first batch a consumer cannot read (a bad
/// CRC), or a torn tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStop {
    /// The file's place among the files given, from 0.
    pub file: usize,
    /// Its byte position in the file.
    pub position: usize,
    /// Records from there to the file's end (0 for a torn tail).
    pub unread: usize,
    /// Why: the error that stopped the read.
    pub why: crate::Error,
}

/// A level record found in the files: its offset and the level it carries (or why none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelSeen {
    pub offset: i64,
    pub level: crate::Result<MetadataLevel>,
}

/// The inspection of one metadata partition.
#[derive(Clone, Debug, Default)]
pub struct Inspection {
    pub segments: Vec<SegmentLifecycle>,
    pub summary: Summary,
}

impl Inspection {
    /// The summary's compaction what-if of an inspection by [`Inspector::for_files`]: `preview`
    /// is the [`PreviewStream`]'s of the same files at `at` ([`Inspector::compaction_moment`]).
    pub fn with_compaction(mut self, at: i64, preview: &CompactionPreview) -> Inspection {
        self.summary.compacted_at_ms = at;
        self.summary.kept_by_compaction = preview.records_after;
        self.summary.lost_by_compaction = preview.lost.clone();
        self
    }
}

fn live_ids(store: &Store) -> Vec<(Uuid, SegmentState)> {
    let mut out = Vec::new();
    for tp in store.partitions() {
        if let Some(cache) = store.partition_cache(tp) {
            out.extend(cache.segments().into_iter().map(|m| (m.id, m.state)));
        }
    }
    out
}

/// A lifecycle's place in the inspection: its partition's rank, start offset, id.
type SortKey = (usize, Option<i64>, Uuid);

/// Inspects the segment files (name, bytes) of one metadata partition, in offset order.
pub fn inspect(files: &[(&str, &[u8])]) -> Inspection {
    let mut inspector = Inspector::new();
    for (_, bytes) in files {
        inspector.push_file(bytes);
    }
    inspector.finish()
}

/// An inspection fed record by record (a live topic read by a host) or file by file.
///
/// Each record is read once: replay shows the inspector the value it read
/// ([`Store::apply_seen`]), and the summary's compaction model ([`summary_compaction_config`])
/// takes the record as it arrives. The model decides by keys, timestamps and whether a value is
/// there, so it holds the keys; the value bytes wait for the replay of what the cleaner keeps, in
/// the file images handed over with [`Inspector::push_file_owned`] or else, end to end, in one
/// buffer. Nothing else is copied: [`Inspector::finish`] cleans the log and
/// replays only the kept records (the store replayed before cleaning is the inspector's own).
#[derive(Clone, Debug)]
pub struct Inspector {
    store: Store,
    /// The summary's compaction model, fed every record in log order (an empty value stands for
    /// each value: the model reads only whether there is one).
    log: Log,
    /// The values of records not read from an owned file image, end to end, in log order.
    values: Vec<u8>,
    /// The file images handed over with [`Inspector::push_file_owned`].
    files: Vec<Vec<u8>>,
    /// By record of `log` (which numbers them from 0): its offset in the metadata partition and
    /// where its value lies.
    places: Vec<Place>,
    summary: Summary,
    null_keys: Option<NullKeySpan>,
    lifecycles: BTreeMap<Uuid, SegmentLifecycle>,
    last_ts: i64,
    /// Files read so far (each `push_file*`/`scan_file` is one).
    files_read: usize,
    /// A corrupt batch was met: no later record is read.
    stopped: bool,
    /// Made by [`Inspector::for_scan`]: no lifecycles and no compaction what-if are kept, so
    /// nothing of a record outlives its replay.
    scan_only: bool,
    /// The summary's compaction model holds the records (not made by [`Inspector::for_files`]).
    holds_log: bool,
    /// The file a scan is being fed in chunks, if any.
    feed: Option<Feed>,
}

/// A record of the inspector's log: its offset in the metadata partition, and where its value
/// lies: `values[start..end]`, or `files[source][start..end]`.
#[derive(Clone, Copy, Debug)]
struct Place {
    offset: i64,
    source: u32,
    start: usize,
    end: usize,
}

/// [`Place::source`] of a value in the inspector's own buffer.
const OWN_BUFFER: u32 = u32::MAX;

/// Where the null-key records of an inspection lie: the first and last one's offsets, the
/// smallest and largest timestamp (their count is [`Summary::null_key_records`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NullKeySpan {
    pub first_offset: i64,
    pub last_offset: i64,
    pub min_timestamp: i64,
    pub max_timestamp: i64,
}

/// What [`Inspector::scan_file`] reports of one file beyond the summary's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileScan {
    /// `(offset, timestamp)` of each null-key record, when asked for.
    pub null_keys: Vec<(i64, i64)>,
    /// `(offset, timestamp, outcome, outcome code)` of each record a scan lists ([`scan_kind`]),
    /// the first [`ScanOptions::list_limit`] of each kind; the code is
    /// [`Applied::outcome_code`] of the record's value.
    pub findings: Vec<(i64, i64, Applied, u8)>,
    /// How many records of each [`ScanKind`] the file has, listed or past the limit.
    pub found: [u64; ScanKind::COUNT],
    /// The file's largest record timestamp (0 when it has none).
    pub last_timestamp: i64,
}

/// What a scan reports of each file: each null-key record or only their span, and how many
/// records of each [`ScanKind`] it lists (the rest are counted in [`FileScan::found`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    pub each_null_key: bool,
    pub list_limit: usize,
}

impl ScanOptions {
    /// Every null-key record (when asked) and every finding.
    pub fn all(each_null_key: bool) -> ScanOptions {
        ScanOptions {
            each_null_key,
            list_limit: usize::MAX,
        }
    }
}

/// The kinds of record a scan lists, by the outcome replay gave them. The numbers never change
/// (hosts index [`FileScan::found`] by them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ScanKind {
    Tombstone = 0,
    Undecodable = 1,
    LevelRecord = 2,
    /// A key refused, or not matching the value applied.
    BadKey = 3,
}

impl ScanKind {
    pub const COUNT: usize = 4;
}

/// Which kind of record a scan lists this outcome as, if any: tombstones, undecodable values,
/// level records and keys that are bad (refused, or not matching the value applied). What else
/// replay did not simply apply (drops, re-deliveries, orphans) the summary and the store account
/// for.
pub fn scan_kind(applied: &Applied) -> Option<ScanKind> {
    match applied {
        Applied::AppliedWithBadKey(_) | Applied::Skipped(Skip::BadKey { .. }) => {
            Some(ScanKind::BadKey)
        }
        Applied::Skipped(Skip::Tombstone { .. }) => Some(ScanKind::Tombstone),
        Applied::Skipped(Skip::Undecodable(_)) => Some(ScanKind::Undecodable),
        Applied::Skipped(Skip::LevelRecord(_)) => Some(ScanKind::LevelRecord),
        _ => None,
    }
}

/// Whether a scan lists a record replay gave this outcome ([`scan_kind`]).
pub fn scan_lists(applied: &Applied) -> bool {
    scan_kind(applied).is_some()
}

/// A file a scan is being fed in chunks ([`Inspector::scan_begin`]).
#[derive(Clone, Debug)]
struct Feed {
    file: FileFeed,
    options: ScanOptions,
    scan: FileScan,
}

/// One segment file read from chunks of any size, as a consumer reads it: each batch that
/// parses, in order (entries of an unsupported version stepped over), up to the first that does
/// not (a bad CRC, a torn tail), from which the rest is only counted ([`crate::batch::BatchFeed`]
/// walks the entries). Memory: the largest entry, not the file. [`Inspector`]'s scans read files
/// so; hosts read a partition's files for other models so too ([`PartitionFeed`]).
#[derive(Clone, Debug)]
pub struct FileFeed {
    batches: crate::batch::BatchFeed,
    /// Where reading stopped and why, and the count of the records from there on.
    stop: Option<(usize, crate::Error, RecordIndex)>,
    /// The tail's count, from the stop on.
    tail: Option<RecordIndex>,
}

impl FileFeed {
    /// A file `len` bytes long; `unread` when an earlier file of the partition had a corrupt
    /// batch (no consumer reads past it: the file is only counted).
    pub fn new(len: usize, unread: bool) -> FileFeed {
        FileFeed {
            batches: crate::batch::BatchFeed::new(len, ReadOptions::default()),
            stop: unread.then(|| (0, earlier_corrupt(), counting_file())),
            tail: None,
        }
    }

    /// The next bytes of the file: `each` gets every batch now whole; the start of one cut by the
    /// chunk's end waits for the next chunk.
    pub fn push(&mut self, chunk: &[u8], mut each: impl FnMut(Batch<'_>)) {
        if let Some((_, _, tail)) = &mut self.stop {
            tail.push(chunk);
            return;
        }
        let tail = &mut self.tail;
        self.batches.push(
            chunk,
            |b| {
                if let Ok(b) = b {
                    each(b);
                }
            },
            |rest| tail.get_or_insert_with(counting_file).push(rest),
        );
    }

    /// Ends the file: bytes left that are no whole entry are its cut tail. Returns where reading
    /// stopped, why, and the index of what lies from there on, if it did.
    pub fn end(self) -> Option<(usize, crate::Error, RecordIndex)> {
        let FileFeed {
            mut batches,
            stop,
            mut tail,
        } = self;
        let stop = stop.or_else(|| {
            let (position, why) =
                batches.end(|rest| tail.get_or_insert_with(counting_file).push(rest))?;
            Some((position, why, tail.unwrap_or_else(counting_file)))
        });
        stop.map(|(position, why, mut tail)| {
            tail.end_file();
            (position, why, tail)
        })
    }
}

/// A metadata partition's files read one after the other through [`FileFeed`]s, with the rule
/// of [`crate::index`]: no record in or after the first corrupt batch is read. `each` of
/// [`PartitionFeed::push`] gets the records [`Inspector::push_file`] replays, in order.
#[derive(Clone, Debug, Default)]
pub struct PartitionFeed {
    file: Option<FileFeed>,
    /// A corrupt batch was met: no later record is read.
    stopped: bool,
}

impl PartitionFeed {
    pub fn new() -> PartitionFeed {
        PartitionFeed::default()
    }

    /// Begins the next file, `len` bytes long (ending the one before, if not ended).
    pub fn begin(&mut self, len: usize) {
        self.end();
        self.file = Some(FileFeed::new(len, self.stopped));
    }

    /// The next bytes of the file begun: `each` gets every record now read.
    pub fn push(&mut self, chunk: &[u8], mut each: impl FnMut(&crate::batch::Record<'_>)) {
        if let Some(f) = &mut self.file {
            f.push(chunk, |batch| {
                if let Ok(records) = batch.records() {
                    for r in records.flatten() {
                        each(&r);
                    }
                }
            });
        }
    }

    /// Ends the file begun; a corrupt batch in what was not read stops the partition.
    pub fn end(&mut self) {
        if let Some((_, _, tail)) = self.file.take().and_then(FileFeed::end) {
            self.stopped |= !tail.counts().corrupt.is_empty();
        }
    }
}

impl Default for Inspector {
    fn default() -> Self {
        Inspector::new()
    }
}

impl Inspector {
    pub fn new() -> Inspector {
        Inspector {
            store: Store::new(),
            log: Log::new(summary_compaction_config()),
            values: Vec::new(),
            files: Vec::new(),
            places: Vec::new(),
            summary: Summary::default(),
            null_keys: None,
            lifecycles: BTreeMap::new(),
            last_ts: 0,
            files_read: 0,
            stopped: false,
            scan_only: false,
            holds_log: true,
            feed: None,
        }
    }

    /// An inspector for a scan: the store, the summary's counts, the null-key span and the file
    /// stops, as [`Inspector::new`] keeps them, but no lifecycles and no compaction what-if (a scan
    /// shows neither). Its [`Inspector::finish`] has no segments, and the summary's compaction
    /// fields (`compacted_at_ms`, `kept_by_compaction`, `lost_by_compaction`) keep their defaults
    /// (a host that reads the files again fills them with [`Inspection::with_compaction`]).
    pub fn for_scan() -> Inspector {
        Inspector {
            scan_only: true,
            holds_log: false,
            ..Inspector::new()
        }
    }

    /// An inspector for files of any size that the host can read twice more: the store, the
    /// counts and the lifecycles, as [`Inspector::new`] keeps them, but not the records for the
    /// summary's compaction what-if. The host feeds the files again to a [`PreviewStream`] with
    /// [`summary_compaction_config`] at [`Inspector::compaction_moment`] and hands its answer to
    /// [`Inspection::with_compaction`]: the inspection [`Inspector::new`] gives.
    pub fn for_files() -> Inspector {
        Inspector {
            holds_log: false,
            ..Inspector::new()
        }
    }

    /// When the summary compacts the log: [`COMPACTION_HORIZON_MS`] after the last record so far.
    pub fn compaction_moment(&self) -> i64 {
        self.last_ts.saturating_add(COMPACTION_HORIZON_MS)
    }

    /// Every record of a segment file image (batches that do not read are skipped, as
    /// kafka-dump-log skips them).
    pub fn push_file(&mut self, bytes: &[u8]) {
        if !self.begin_file(bytes) {
            return;
        }
        self.values.reserve(bytes.len());
        let stop = read_file(bytes, |batch| {
            let Ok(records) = batch.records() else {
                return;
            };
            for r in records.flatten() {
                self.push(r.offset, r.timestamp, r.key, r.value);
            }
        });
        self.end_file(bytes, stop);
    }

    /// Whether the next file is read at all: not after an earlier file's corrupt batch (no
    /// consumer reads past it; [`crate::index`]'s rule); such a file is counted unread whole.
    fn begin_file(&mut self, bytes: &[u8]) -> bool {
        if !self.stopped {
            return true;
        }
        self.end_file(bytes, Some((0, earlier_corrupt())));
        false
    }

    /// Counts a file read, and what lies from where its read stopped (if it did) to its end; a
    /// corrupt batch there stops the partition ([`crate::index`] decides both).
    fn end_file(&mut self, bytes: &[u8], stop: Option<(usize, crate::Error)>) {
        let stop = stop.map(|(position, why)| {
            let tail = crate::index::index_files(&[bytes.get(position..).unwrap_or_default()]);
            (position, why, tail)
        });
        self.end_file_counted(stop);
    }

    /// [`Inspector::end_file`] with the index of what lies from where reading stopped, if it did.
    fn end_file_counted(&mut self, stop: Option<(usize, crate::Error, RecordIndex)>) {
        let file = self.files_read;
        self.files_read += 1;
        let Some((position, why, tail)) = stop else {
            return;
        };
        let corrupt = !tail.counts().corrupt.is_empty();
        self.stopped |= corrupt;
        // Every record from there on, by the index's count: the rows before a corrupt batch in
        // the tail (a file not read at all), then the rows and unlisted records from it on.
        let unread = tail.counts().records + tail.counts().unread;
        self.summary.unread_records += unread;
        self.summary.stops.push(FileStop {
            file,
            position,
            unread,
            why,
        });
    }

    /// [`Inspector::push_file`] of a file image the inspector keeps until [`Inspector::finish`]:
    /// the values of its uncompressed batches are not copied.
    pub fn push_file_owned(&mut self, bytes: Vec<u8>) {
        if !self.begin_file(&bytes) {
            return;
        }
        let image = u32::try_from(self.files.len())
            .ok()
            .filter(|&i| i != OWN_BUFFER)
            .map(|i| (i, bytes.as_slice()));
        let stop = read_file(&bytes, |batch| {
            let Ok(records) = batch.records() else {
                return;
            };
            for r in records.flatten() {
                self.push_from(r.offset, r.timestamp, r.key, r.value, image);
            }
        });
        self.end_file(&bytes, stop);
        if image.is_some() {
            self.files.push(bytes);
        }
    }

    /// [`Inspector::push_file`], reporting what a scan shows of the file: each null-key record
    /// (only when `each_null_key`), the records [`scan_lists`], the last timestamp.
    pub fn scan_file(&mut self, bytes: &[u8], each_null_key: bool) -> FileScan {
        self.scan_file_with(bytes, ScanOptions::all(each_null_key))
    }

    /// [`Inspector::scan_file`] with the given options.
    pub fn scan_file_with(&mut self, bytes: &[u8], options: ScanOptions) -> FileScan {
        self.scan_begin(bytes.len(), options);
        self.scan_push(bytes);
        self.scan_end()
    }

    /// Begins a scan of the next file, `len` bytes long, which the host then feeds in chunks of
    /// any size ([`Inspector::scan_push`]) and ends ([`Inspector::scan_end`]): the answer is the
    /// one [`Inspector::scan_file_with`] gives for the whole image, in memory bounded by the
    /// largest entry, not the file. A file found shorter than `len` at its end is read as cut
    /// there.
    pub fn scan_begin(&mut self, len: usize, options: ScanOptions) {
        self.scan_end_feed();
        self.feed = Some(Feed {
            file: FileFeed::new(len, self.stopped),
            options,
            scan: FileScan::default(),
        });
    }

    /// The next bytes of the file a scan began (nothing happens without one). Whole entries are
    /// read now; the start of one cut by the chunk's end waits for the next chunk.
    pub fn scan_push(&mut self, chunk: &[u8]) {
        let Some(mut feed) = self.feed.take() else {
            return;
        };
        let (scan, options) = (&mut feed.scan, feed.options);
        feed.file.push(chunk, |batch| {
            let Ok(records) = batch.records() else {
                return;
            };
            for r in records.flatten() {
                self.scan_record(scan, options, r.offset, r.timestamp, r.key, r.value);
            }
        });
        self.feed = Some(feed);
    }

    /// Ends the file a scan was fed: bytes left that are no whole entry are its cut tail.
    pub fn scan_end(&mut self) -> FileScan {
        self.scan_end_feed().unwrap_or_default()
    }

    fn scan_end_feed(&mut self) -> Option<FileScan> {
        let feed = self.feed.take()?;
        let stop = feed.file.end();
        self.end_file_counted(stop);
        Some(feed.scan)
    }

    /// Records not read from a file (a topic's, as a consumer hands them over), in offset order:
    /// what [`Inspector::scan_file_with`] reports of a file's records.
    pub fn scan_records<'r>(
        &mut self,
        records: impl IntoIterator<Item = (i64, i64, Option<&'r [u8]>, Option<&'r [u8]>)>,
        options: ScanOptions,
    ) -> FileScan {
        let mut out = FileScan::default();
        for (offset, timestamp, key, value) in records {
            self.scan_record(&mut out, options, offset, timestamp, key, value);
        }
        out
    }

    /// [`Inspector::scan_records`] of the records one fetch of a live topic holds, as `window`
    /// reads them ([`FetchWindow::push`]: whole batches only, the partition's start and end
    /// offsets respected). A batch that does not read is a typed error (what Kafka's consumer
    /// raises), not a file's stop.
    pub fn scan_fetched(
        &mut self,
        window: &mut FetchWindow,
        bytes: &[u8],
        options: ScanOptions,
    ) -> crate::Result<FileScan> {
        let mut out = FileScan::default();
        window.push(bytes, |r| {
            self.scan_record(&mut out, options, r.offset, r.timestamp, r.key, r.value);
        })?;
        Ok(out)
    }

    /// [`Inspector::push`] of every record one fetch of a live topic holds, as `window` reads
    /// them ([`Inspector::scan_fetched`]); `each` sees each record after its replay (a listing).
    pub fn push_fetched(
        &mut self,
        window: &mut FetchWindow,
        bytes: &[u8],
        mut each: impl FnMut(&crate::batch::Record<'_>),
    ) -> crate::Result<()> {
        window.push(bytes, |r| {
            self.push(r.offset, r.timestamp, r.key, r.value);
            each(r);
        })?;
        Ok(())
    }

    fn scan_record(
        &mut self,
        out: &mut FileScan,
        options: ScanOptions,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) {
        out.last_timestamp = out.last_timestamp.max(timestamp);
        if options.each_null_key && key.is_none() {
            out.null_keys.push((offset, timestamp));
        }
        let applied = self.push(offset, timestamp, key, value);
        if let Some(kind) = scan_kind(&applied) {
            let found = &mut out.found[kind as usize];
            if (*found as usize) < options.list_limit {
                let code = applied.outcome_code(value);
                out.findings.push((offset, timestamp, applied, code));
            }
            *found += 1;
        }
    }

    /// One record of the metadata partition, in offset order; returns what replay did with it.
    pub fn push(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Applied {
        self.push_from(offset, timestamp, key, value, None)
    }

    /// [`Inspector::push`] of a record read from a file image the inspector will keep
    /// (`image`: its index in `files`, and its bytes).
    fn push_from(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        image: Option<(u32, &[u8])>,
    ) -> Applied {
        let summary = &mut self.summary;
        summary.records += 1;
        self.last_ts = self.last_ts.max(timestamp);
        match (key, value) {
            (None, _) => {
                summary.null_key_records += 1;
                self.null_keys = Some(match self.null_keys {
                    None => NullKeySpan {
                        first_offset: offset,
                        last_offset: offset,
                        min_timestamp: timestamp,
                        max_timestamp: timestamp,
                    },
                    Some(s) => NullKeySpan {
                        last_offset: offset,
                        min_timestamp: s.min_timestamp.min(timestamp),
                        max_timestamp: s.max_timestamp.max(timestamp),
                        ..s
                    },
                });
            }
            (Some(_), Some(_)) => summary.keyed_records += 1,
            (Some(_), None) => summary.tombstones += 1,
        }
        let lifecycles = &mut self.lifecycles;
        let fold_lifecycles = !self.scan_only;
        let applied = self.store.apply_seen(offset, key, value, |seen| {
            if fold_lifecycles {
                fold(lifecycles, seen, offset);
            }
        });
        if let Applied::Skipped(skip) = &applied {
            match skip {
                Skip::Undecodable(_) => summary.undecodable += 1,
                Skip::LevelRecord(level) => {
                    summary.level = Some(LevelSeen {
                        offset,
                        level: level.clone(),
                    });
                    // Replay does not read a value under the level record key; a lifecycle
                    // still shows one that decodes.
                    if let Some(Ok(v)) = value.filter(|_| fold_lifecycles).map(decode_value) {
                        fold(lifecycles, Seen::Value(&v), offset);
                    }
                }
                _ => {}
            }
        }
        // The one rule of what stops an older broker (core/src/host.rs): its skip, or a value of a
        // KIP-1266 version.
        if applied.fatal_to_kafka(value) {
            summary.fatal_to_old_brokers += 1;
        }
        if !self.holds_log {
            return applied;
        }
        self.log.append(
            timestamp,
            key.map(<[u8]>::to_vec),
            value.map(|_| Vec::new()),
        );
        let in_image = image.zip(value).and_then(|((i, file), v)| {
            // A value of an uncompressed batch lies in the file image itself.
            let start = (v.as_ptr() as usize).checked_sub(file.as_ptr() as usize)?;
            (start + v.len() <= file.len()).then_some((i, start, start + v.len()))
        });
        let (source, start, end) = in_image.unwrap_or_else(|| {
            let start = self.values.len();
            if let Some(v) = value {
                self.values.extend_from_slice(v);
            }
            (OWN_BUFFER, start, self.values.len())
        });
        self.places.push(Place {
            offset,
            source,
            start,
            end,
        });
        applied
    }

    /// The replayed store so far.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Where the null-key records so far lie (`None` before the first).
    pub fn null_keys(&self) -> Option<NullKeySpan> {
        self.null_keys
    }

    /// The lifecycles and the summary, with what the cleaner would keep
    /// [`COMPACTION_HORIZON_MS`] after the last record (the model of [`summary_compaction`],
    /// on the records the inspector's log holds: every record is at or before that moment).
    pub fn finish(mut self) -> Inspection {
        self.scan_end_feed(); // a scan not ended is ended here
        let Inspector {
            store,
            mut log,
            values,
            files,
            places,
            mut summary,
            null_keys: _,
            lifecycles,
            last_ts,
            files_read: _,
            stopped: _,
            scan_only,
            holds_log,
            feed: _,
        } = self;
        let mut lifecycles = lifecycles;
        let live = live_ids(&store);
        summary.live_segments = live.len();
        summary.orphans = store
            .partitions()
            .iter()
            .map(|tp| store.orphans(tp).len())
            .sum();
        let now: std::collections::HashMap<Uuid, SegmentState> = live.iter().copied().collect();
        for l in lifecycles.values_mut() {
            l.now = now.get(&l.id).copied();
        }
        if scan_only {
            // Nothing was kept for lifecycles or the compaction what-if: the counts alone.
            return Inspection {
                segments: Vec::new(),
                summary,
            };
        }
        let at = last_ts.saturating_add(COMPACTION_HORIZON_MS);
        let mut after = Store::new();
        let mut kept = 0;
        let held = if holds_log {
            Some(clean_at(&mut log, at))
        } else {
            None
        };
        for lr in held.into_iter().flatten() {
            let Some(i) = usize::try_from(lr.offset)
                .ok()
                .filter(|&i| i < places.len())
            else {
                continue;
            };
            let p = places[i];
            let bytes = match p.source {
                OWN_BUFFER => Some(&values),
                file => usize::try_from(file).ok().and_then(|f| files.get(f)),
            };
            let value = lr.value.as_ref().and_then(|_| bytes?.get(p.start..p.end));
            let offset = p.offset;
            kept += 1;
            after.apply(offset, lr.key.as_deref(), value);
        }
        drop(log);
        drop(values);
        drop(files);
        if holds_log {
            summary.compacted_at_ms = at;
            summary.kept_by_compaction = kept;
            summary.lost_by_compaction = lost(live, &after);
        }
        // Ordered by (partition, start offset, id). The few distinct partitions are ranked first so
        // that the sort compares integers, not topic names (a third of the time on large logs).
        let mut distinct: Vec<&TopicIdPartition> = {
            let set: std::collections::HashSet<&TopicIdPartition> =
                lifecycles.values().map(|l| &l.partition).collect();
            set.into_iter().collect()
        };
        distinct.sort();
        let rank: std::collections::HashMap<TopicIdPartition, usize> = distinct
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        let mut keyed: Vec<(SortKey, SegmentLifecycle)> = lifecycles
            .into_values()
            .map(|l| {
                (
                    (
                        rank.get(&l.partition).copied().unwrap_or(0),
                        l.start_offset,
                        l.id,
                    ),
                    l,
                )
            })
            .collect();
        keyed.sort_unstable_by_key(|(k, _)| *k);
        let segments = keyed.into_iter().map(|(_, l)| l).collect();
        Inspection { segments, summary }
    }
}

/// The model's moment of a preview: a record arrives at `now_ms` (so the active segment rolls
/// when `segment.ms` has passed, as Kafka rolls it on an append), retention and the cleaner run,
/// and the records they keep remain, in log order (the arriving record left out).
fn clean_at(log: &mut Log, now_ms: i64) -> impl Iterator<Item = &crate::compaction::LogRecord> {
    let roll = log.append(
        now_ms,
        Some(b"rlmeta-preview-roll".to_vec()),
        Some(Vec::new()),
    );
    log.clean(now_ms);
    log.records().filter(move |lr| lr.offset != roll)
}

/// The live segments (`live`, as [`live_ids`] lists them before cleaning) that a store
/// replaying the cleaned log (`after`) no longer knows, in `live`'s order.
fn lost(live: Vec<(Uuid, SegmentState)>, after: &Store) -> Vec<Uuid> {
    let still: std::collections::HashSet<Uuid> =
        live_ids(after).into_iter().map(|(id, _)| id).collect();
    live.into_iter()
        .map(|(id, _)| id)
        .filter(|id| !still.contains(id))
        .collect()
}

/// A live segment stuck in a transient state: its copy or deletion started and has not
/// finished for longer than the threshold the host asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    pub partition: TopicIdPartition,
    pub id: Uuid,
    pub state: SegmentState,
    pub since_ms: i64,
}

/// Live segments in COPY_SEGMENT_STARTED or DELETE_SEGMENT_STARTED whose last event is older
/// than `now_ms - threshold_ms` (an upload or deletion that died; remote data may be dangling).
pub fn stuck_segments(store: &Store, now_ms: i64, threshold_ms: i64) -> Vec<Stuck> {
    let limit = now_ms.saturating_sub(threshold_ms);
    let mut out = Vec::new();
    for tp in store.partitions() {
        let Some(cache) = store.partition_cache(tp) else {
            continue;
        };
        for m in cache.segments() {
            if is_stuck(Some(m.state)) && m.event_timestamp_ms < limit {
                out.push(Stuck {
                    partition: tp.clone(),
                    id: m.id,
                    state: m.state,
                    since_ms: m.event_timestamp_ms,
                });
            }
        }
    }
    out
}

/// Two live segments of one user partition whose offset ranges overlap (uploads by two leaders
/// of the same data, or a retried upload whose first attempt was never deleted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overlap {
    pub partition: TopicIdPartition,
    pub first: (Uuid, i64, i64),
    pub second: (Uuid, i64, i64),
}

/// Segment health, defined once (scan's lists and a viewer's marks are views of it):
/// - stuck: live in a state a finished step should have followed (`COPY_SEGMENT_STARTED`, a copy
///   that never finished; `DELETE_SEGMENT_STARTED`, a delete that never finished); a host shows
///   those whose last event is older than its threshold;
/// - overlapping: two live copied (`COPY_SEGMENT_FINISHED`) segments of one user partition whose
///   offset ranges overlap (Kafka keeps both; which serves a fetch depends on leader epochs);
/// - dangling: updates with no segment record in the records given.
pub fn is_stuck(now: Option<SegmentState>) -> bool {
    matches!(
        now,
        Some(SegmentState::CopySegmentStarted | SegmentState::DeleteSegmentStarted)
    )
}

/// A live copied segment: `(partition, start, end, id)`.
type Copied<'p> = (&'p TopicIdPartition, i64, i64, Uuid);
/// Two overlapping copied segments of a partition, each `(id, start, end)`.
type OverlapPair<'p> = (&'p TopicIdPartition, (Uuid, i64, i64), (Uuid, i64, i64));

/// Every overlapping pair of `(partition, start, end, id)` copied segments (see [`is_stuck`] for
/// the definition), by partition and start offset.
fn overlapping_pairs(mut copied: Vec<Copied<'_>>) -> Vec<OverlapPair<'_>> {
    copied.sort();
    let mut out = Vec::new();
    for (i, &(tp, start, end, id)) in copied.iter().enumerate() {
        // Sorted by start offset: only the segments starting before this one ends can overlap it.
        for &(_, s, e, other) in copied
            .iter()
            .skip(i + 1)
            .take_while(|(p, s, _, _)| *p == tp && *s <= end)
        {
            out.push((tp, (id, start, end), (other, s, e)));
        }
    }
    out
}

/// Every overlapping pair of live copied segments in the store, by start offset.
pub fn overlapping_segments(store: &Store) -> Vec<Overlap> {
    let partitions = store.partitions();
    let mut copied = Vec::new();
    for tp in &partitions {
        let Some(cache) = store.partition_cache(tp) else {
            continue;
        };
        for m in cache.segments() {
            if m.state == SegmentState::CopySegmentFinished {
                copied.push((*tp, m.start_offset, m.end_offset, m.id));
            }
        }
    }
    overlapping_pairs(copied)
        .into_iter()
        .map(|(tp, first, second)| Overlap {
            partition: tp.clone(),
            first,
            second,
        })
        .collect()
}

/// Adds what one value tells to its segment's lifecycle (segment and update values; others tell
/// none); returns the value's version.
fn fold(lifecycles: &mut BTreeMap<Uuid, SegmentLifecycle>, seen: Seen<'_, '_>, offset: i64) -> i16 {
    let (version, part, id, state, range) = match seen {
        Seen::Plain(Plain::Segment {
            part,
            version,
            id,
            state,
            start_offset,
            end_offset,
            ..
        }) => (
            *version,
            PartOf::Plain(part),
            *id,
            *state,
            Some((*start_offset, *end_offset)),
        ),
        Seen::Plain(Plain::Update {
            part,
            version,
            id,
            state,
            ..
        }) => (*version, PartOf::Plain(part), *id, *state, None),
        Seen::Value(v) => match &v.record {
            Record::Segment(s) => (
                v.version,
                PartOf::Entry(&s.remote_log_segment_id.topic_id_partition),
                s.remote_log_segment_id.id,
                s.remote_log_segment_state,
                Some((s.start_offset, s.end_offset)),
            ),
            Record::Update(u) => (
                v.version,
                PartOf::Entry(&u.remote_log_segment_id.topic_id_partition),
                u.remote_log_segment_id.id,
                u.remote_log_segment_state,
                None,
            ),
            _ => return v.version,
        },
    };
    let l = lifecycles.entry(id).or_insert_with(|| SegmentLifecycle {
        partition: match part {
            PartOf::Plain(p) => TopicIdPartition {
                topic_id: p.topic_id,
                topic: p.name.to_owned(),
                partition: p.partition,
            },
            PartOf::Entry(e) => e.to_topic_id_partition(),
        },
        id,
        start_offset: None,
        end_offset: None,
        states: Vec::new(),
        now: None,
    });
    if let Some((start, end)) = range {
        l.start_offset = l.start_offset.or(Some(start));
        l.end_offset = l.end_offset.or(Some(end));
    }
    if let Some(state) = SegmentState::from_id(state) {
        l.states.push((offset, state));
    }
    version
}

/// The user partition a segment or update value names, as the reader that read it holds it.
enum PartOf<'v, 'a> {
    Plain(&'v PlainPartition<'a>),
    Entry(&'v TopicIdPartitionEntry<'a>),
}

/// A count for people: `1234567` -> `1,234,567` (the text form only; JSON keeps numbers).
fn thousands(v: usize) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Inspection {
    /// The per-segment lifecycle and the summary, as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_text(usize::MAX, |piece| out.push_str(piece));
        out
    }

    /// [`Inspection::to_text`] handed to `each` a piece at a time, each the lines of at most
    /// `lines` lifecycles (the summary is the last piece): a host writes a large inspection out
    /// without holding its whole text.
    pub fn write_text(&self, lines: usize, mut each: impl FnMut(&str)) {
        let mut out = String::new();
        let _ = writeln!(out, "Segments ({}):", self.segments.len());
        for chunk in self.segments.chunks(lines.max(1)) {
            for l in chunk {
                let path: Vec<String> = l
                    .states
                    .iter()
                    .map(|(o, s)| format!("{}@{o}", s.name()))
                    .collect();
                let range = match (l.start_offset, l.end_offset) {
                    (Some(s), Some(e)) => format!("[{s}..{e}]"),
                    _ => "[segment record missing]".to_owned(),
                };
                let now = l
                    .now
                    .map_or_else(|| "gone".to_owned(), |s| format!("live, {}", s.name()));
                let _ = writeln!(
                    out,
                    "  {} {} {range}: {} -> {now}",
                    l.partition,
                    l.id,
                    path.join(" -> ")
                );
            }
            each(&out);
            out.clear();
        }
        out.push_str(&self.summary_text());
        each(&out);
    }

    /// The summary alone, as [`Inspection::to_text`] ends.
    pub fn summary_text(&self) -> String {
        let mut out = String::new();
        let s = &self.summary;
        let n = thousands;
        let _ = writeln!(out, "Summary:");
        let _ = writeln!(
            out,
            "  records: {} ({} null-key, {} keyed, {} tombstones, {} undecodable){}",
            n(s.records),
            n(s.null_key_records),
            n(s.keyed_records),
            n(s.tombstones),
            n(s.undecodable),
            if s.unread_records > 0 {
                format!(
                    "; {} more NOT READ (in or after a corrupt batch)",
                    n(s.unread_records)
                )
            } else {
                String::new()
            }
        );
        for stop in &s.stops {
            let _ = writeln!(
                out,
                "  file {}: NOT READ from byte {} on ({} records): {}",
                stop.file + 1,
                n(stop.position),
                n(stop.unread),
                stop.why
            );
        }
        let _ = writeln!(
            out,
            "  records that would stop a pre-KIP-1266 broker's metadata consumer: {}",
            n(s.fatal_to_old_brokers)
        );
        let _ = writeln!(
            out,
            "  live segments: {}, orphaned updates: {}",
            n(s.live_segments),
            n(s.orphans)
        );
        let _ = writeln!(
            out,
            "  if compacted {} days after the last record: {} of {} records kept; live segments lost: {}",
            COMPACTION_HORIZON_MS / 86_400_000,
            n(s.kept_by_compaction),
            n(s.records),
            n(s.lost_by_compaction.len())
        );
        let _ = match &s.level {
            None => writeln!(
                out,
                "  remote.log.metadata.version: no level record (a topic written by stock Kafka is at level 0)"
            ),
            Some(LevelSeen {
                offset,
                level: Ok(l),
            }) => writeln!(
                out,
                "  remote.log.metadata.version: level {} (level record at offset {offset})",
                l.level()
            ),
            Some(LevelSeen {
                offset,
                level: Err(e),
            }) => writeln!(
                out,
                "  remote.log.metadata.version: unknown, the level record at offset {offset} is invalid: {e}"
            ),
        };
        if !s.lost_by_compaction.is_empty() {
            let _ = writeln!(
                out,
                "  (null-key records are discarded by the cleaner: a log written before KIP-1266 must not be compacted)"
            );
        }
        out
    }

    pub fn to_json(&self) -> Json {
        json!({
            "segments": self.segments.iter().map(|l| json!({
                "topicIdPartition": {"id": l.partition.topic_id.to_string(), "name": l.partition.topic, "partition": l.partition.partition},
                "id": l.id.to_string(), "startOffset": l.start_offset, "endOffset": l.end_offset,
                "states": l.states.iter().map(|(o, st)| json!({"offset": o, "state": st.name()})).collect::<Vec<_>>(),
                "now": l.now.map(|st| st.name()),
            })).collect::<Vec<_>>(),
            "summary": self.summary_json(),
        })
    }

    /// The summary alone, as [`Inspection::to_json`] holds it under `summary`.
    pub fn summary_json(&self) -> Json {
        let s = &self.summary;
        json!({
                "records": s.records, "unreadRecords": s.unread_records,
                "stops": s.stops.iter().map(|t| json!({"file": t.file, "position": t.position, "unread": t.unread,
                    "error": {"code": t.why.code(), "kind": t.why.kind().name(), "message": t.why.to_string()}})).collect::<Vec<_>>(),
                "nullKeyRecords": s.null_key_records, "keyedRecords": s.keyed_records,
                "tombstones": s.tombstones, "undecodable": s.undecodable, "fatalToOldBrokers": s.fatal_to_old_brokers,
                "liveSegments": s.live_segments, "orphans": s.orphans, "compactedAtMs": s.compacted_at_ms, "keptByCompaction": s.kept_by_compaction,
                "lostByCompaction": s.lost_by_compaction.iter().map(Uuid::to_string).collect::<Vec<_>>(),
                "level": s.level.as_ref().map(|l| match &l.level {
                    Ok(level) => json!({"offset": l.offset, "level": level.level()}),
                    Err(e) => json!({"offset": l.offset, "error": {"code": e.code(), "kind": e.kind().name(), "message": e.to_string()}}),
                }),
        })
    }
}

/// What a viewer flags on one segment's lifecycle ([`segment_marks`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegmentMarks {
    /// Still live in a state that a finished step should have followed: `COPY_SEGMENT_STARTED`
    /// (a copy that never finished) or `DELETE_SEGMENT_STARTED` (a delete that never finished).
    pub stuck: bool,
    /// Updates with no segment record in these files: the cache cannot place them (orphans, or
    /// a segment record in an earlier file that was not given).
    pub dangling: bool,
    /// Live and copied, with an offset range that overlaps another live copied segment of the
    /// same user partition (Kafka keeps both; which one serves a fetch depends on leader epochs).
    pub overlapping: bool,
}

impl SegmentMarks {
    /// The marks as [`mark`] bits.
    pub fn bits(self) -> u8 {
        (if self.stuck { mark::STUCK } else { 0 })
            | (if self.dangling { mark::DANGLING } else { 0 })
            | (if self.overlapping {
                mark::OVERLAPPING
            } else {
                0
            })
    }
}

/// The marks of each lifecycle, in the same order as `segments`.
pub fn segment_marks(segments: &[SegmentLifecycle]) -> Vec<SegmentMarks> {
    let copied: Vec<Copied<'_>> = segments
        .iter()
        .filter(|l| l.now == Some(SegmentState::CopySegmentFinished))
        .filter_map(|l| Some((&l.partition, l.start_offset?, l.end_offset?, l.id)))
        .collect();
    let overlapping: std::collections::HashSet<Uuid> = overlapping_pairs(copied)
        .into_iter()
        .flat_map(|(_, a, b)| [a.0, b.0])
        .collect();
    segments
        .iter()
        .map(|l| SegmentMarks {
            stuck: is_stuck(l.now),
            dangling: l.start_offset.is_none(),
            overlapping: l.now == Some(SegmentState::CopySegmentFinished)
                && l.start_offset.is_some()
                && overlapping.contains(&l.id),
        })
        .collect()
}

/// One record of the log as [`preview_compaction`] takes it (in log order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreviewRecord<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The record's size in its batch, in bytes.
    pub size: usize,
}

impl<'a> PreviewRecord<'a> {
    /// A record of a batch as the model takes it.
    pub fn of(r: &crate::batch::Record<'a>) -> PreviewRecord<'a> {
        PreviewRecord {
            offset: r.offset,
            timestamp: r.timestamp,
            key: r.key,
            value: r.value,
            size: r.size,
        }
    }
}

impl<'a> PreviewRecord<'a> {
    /// A record read from a live topic, as a consumer hands it over: its size is its key and
    /// value bytes (a consumer does not see batch sizes).
    pub fn consumed(
        offset: i64,
        timestamp: i64,
        key: Option<&'a [u8]>,
        value: Option<&'a [u8]>,
    ) -> PreviewRecord<'a> {
        PreviewRecord {
            offset,
            timestamp,
            key,
            value,
            size: key.map_or(0, <[u8]>::len) + value.map_or(0, <[u8]>::len),
        }
    }
}

/// One metadata partition of a live topic kept from its fetches for the compaction what-if at
/// several moments: the whole record batches of each fetch, as fetched (a compressed batch stays
/// compressed), read again through a fresh [`FetchWindow`] for every pass of a [`PreviewStream`]
/// ([`FetchedLog::previews`]), so that the records read are those the first read yielded, each
/// sized as a consumer sees it ([`PreviewRecord::consumed`]). Memory: the partition's record
/// batches (its size in the log, about 60 bytes a record on a stock topic) and one moment's model
/// at a time (the stores of the live segments before and after, the keys the cleaner maps);
/// never a decoded record, a copied value or the topic (before, each record was held decoded and
/// copied again into [`preview_compaction`]'s log for each moment; docs/BENCHMARKS.md).
#[derive(Clone, Debug)]
pub struct FetchedLog {
    window: FetchWindow,
    /// Where the window began and ends (a replay's fresh window).
    start: i64,
    end: i64,
    /// The whole batches of each fetch that held any, in fetch order.
    chunks: Vec<Vec<u8>>,
}

impl FetchedLog {
    /// The records from `start` up to (not including) `end`.
    pub fn new(start: i64, end: i64) -> FetchedLog {
        FetchedLog {
            window: FetchWindow::new(start, end),
            start,
            end,
            chunks: Vec::new(),
        }
    }

    /// The window the records are read through (the offset to fetch from, whether done).
    pub fn window(&self) -> &FetchWindow {
        &self.window
    }

    /// The next fetched bytes ([`FetchWindow::push`]); their whole batches are kept.
    pub fn push(&mut self, bytes: &[u8]) -> crate::Result<u64> {
        let (seen, whole) = self.window.push_whole(bytes, |_| {})?;
        if let Some(kept) = bytes.get(..whole).filter(|b| !b.is_empty()) {
            self.chunks.push(kept.to_vec());
        }
        Ok(seen)
    }

    /// Bytes of record batches kept.
    pub fn kept_bytes(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// Hands `each` the records the window read, in the same order, read again from the kept
    /// batches (they read the first time, so they read again).
    fn replay(&self, mut each: impl FnMut(&crate::batch::Record<'_>)) {
        let mut window = FetchWindow::new(self.start, self.end);
        for c in &self.chunks {
            if window.push(c, &mut each).is_err() {
                break;
            }
        }
    }

    /// The compaction what-if of the records kept at each of `moments`: [`preview_compaction`]'s
    /// answer but for [`CompactionPreview::kept`], which is left empty ([`PreviewStream`], fed
    /// the kept batches pass after pass, one moment at a time).
    pub fn previews(&self, config: TopicConfig, moments: &[i64]) -> Vec<CompactionPreview> {
        moments
            .iter()
            .map(|&at| {
                let mut stream = PreviewStream::new(config, at);
                loop {
                    self.replay(|r| {
                        stream.push(&PreviewRecord::consumed(
                            r.offset,
                            r.timestamp,
                            r.key,
                            r.value,
                        ))
                    });
                    if !stream.end_pass() {
                        break;
                    }
                }
                stream.finish()
            })
            .collect()
    }
}

/// What Kafka's cleaner and retention keep of a log at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactionPreview {
    /// Records that exist at the moment (timestamp not after it), and their bytes.
    pub records_before: usize,
    pub bytes_before: u64,
    /// Of those, what remains after retention and the cleaner ran at the moment.
    pub records_after: usize,
    pub bytes_after: u64,
    /// Per input record: it exists at the moment and is kept.
    pub kept: Vec<bool>,
    /// Null-key records the cleaner discarded (a log written before KIP-1266 loses them).
    pub null_keys_dropped: usize,
    /// Live segments at the moment, replaying the records that exist then.
    pub live_before: usize,
    /// Live segments a broker replaying the cleaned log would no longer know.
    pub lost: Vec<Uuid>,
}

/// Runs Kafka's retention and cleaner, configured as `config`, at `now_ms` over the records that
/// exist then (timestamp <= `now_ms`, in log order), as if a record arrived at `now_ms` (so the
/// active segment rolls when `segment.ms` has passed, as Kafka rolls it on an append), and says
/// what is kept and which live segments a replay of the cleaned log loses.
pub fn preview_compaction(
    records: &[PreviewRecord<'_>],
    config: TopicConfig,
    now_ms: i64,
) -> CompactionPreview {
    let mut log = Log::new(config);
    let mut before = Store::new();
    let mut out = CompactionPreview {
        kept: vec![false; records.len()],
        ..CompactionPreview::default()
    };
    // Log offsets count the appended records: index into `present`.
    let mut present = Vec::new();
    for (i, r) in records.iter().enumerate() {
        if r.timestamp > now_ms {
            continue;
        }
        present.push(i);
        out.records_before += 1;
        out.bytes_before += r.size as u64;
        log.append(
            r.timestamp,
            r.key.map(<[u8]>::to_vec),
            r.value.map(<[u8]>::to_vec),
        );
        before.apply(r.offset, r.key, r.value);
    }
    let mut after = Store::new();
    for lr in clean_at(&mut log, now_ms) {
        let Some(&i) = usize::try_from(lr.offset).ok().and_then(|o| present.get(o)) else {
            continue;
        };
        let r = &records[i];
        out.kept[i] = true;
        out.records_after += 1;
        out.bytes_after += r.size as u64;
        after.apply(r.offset, r.key, r.value);
    }
    out.null_keys_dropped = present
        .iter()
        .filter(|&&i| records[i].key.is_none() && !out.kept[i])
        .count();
    let live = live_ids(&before);
    out.live_before = live.len();
    out.lost = lost(live, &after);
    out
}

/// [`preview_compaction`] fed the records instead of holding them: the host hands every record
/// over in log order ([`PreviewStream::push`]), ends the pass ([`PreviewStream::end_pass`]) and,
/// while that says so, hands them over again, the same records in the same order; then
/// [`PreviewStream::finish`] answers as [`preview_compaction`] does, but for
/// [`CompactionPreview::kept`], which it leaves empty. Memory: the stores of the live segments
/// before and after, and what [`Round`] holds (the keys of the dirty range), never a record or a
/// value.
#[derive(Clone, Debug)]
pub struct PreviewStream {
    round: Round,
    before: Store,
    after: Store,
    out: CompactionPreview,
    /// Present records seen in this pass (the model's log offset of the next one).
    next: i64,
    /// 1 while the model is being laid out, 2 while the kept records are replayed, 3 when done.
    pass: u8,
}

impl PreviewStream {
    pub fn new(config: TopicConfig, now_ms: i64) -> PreviewStream {
        PreviewStream {
            round: Round::new(config, now_ms),
            before: Store::new(),
            after: Store::new(),
            out: CompactionPreview::default(),
            next: 0,
            pass: 1,
        }
    }

    /// The next record of the log, in this pass.
    pub fn push(&mut self, r: &PreviewRecord<'_>) {
        if !self.round.present(r.timestamp) {
            return;
        }
        let o = self.next;
        self.next += 1;
        match self.pass {
            1 => {
                self.out.records_before += 1;
                self.out.bytes_before += r.size as u64;
                self.round.append(r.timestamp, r.key);
                self.before.apply(r.offset, r.key, r.value);
            }
            2 if self.round.keeps(o, r.key) => {
                self.out.records_after += 1;
                self.out.bytes_after += r.size as u64;
                self.after.apply(r.offset, r.key, r.value);
            }
            2 if r.key.is_none() => self.out.null_keys_dropped += 1,
            _ => {}
        }
    }

    /// Ends a pass; returns whether the records are wanted once more (a second pass, unless
    /// nothing is dropped: then the first pass is the answer).
    pub fn end_pass(&mut self) -> bool {
        self.next = 0;
        if self.pass == 1 {
            self.round.plan();
            if self.round.drops_any() {
                self.pass = 2;
                return true;
            }
            self.out.records_after = self.out.records_before;
            self.out.bytes_after = self.out.bytes_before;
        }
        self.pass = 3;
        false
    }

    /// The preview (a first pass not ended is ended here; `kept` is empty). Called before a
    /// second pass [`PreviewStream::end_pass`] asked for was fed, it answers for no kept record.
    pub fn finish(mut self) -> CompactionPreview {
        if self.pass == 1 {
            self.end_pass();
        }
        let live = live_ids(&self.before);
        self.out.live_before = live.len();
        self.out.lost = if self.round.drops_any() {
            lost(live, &self.after)
        } else {
            Vec::new()
        };
        self.out
    }
}

/// How long after the last record the inspection's summary compacts the log: past every
/// default horizon (`delete.retention.ms` 1 day, `segment.ms` 7 days), as the cleaner of a topic
/// switched to `compact` would find it.
pub const COMPACTION_HORIZON_MS: i64 = 30 * 86_400_000;

/// The topic configuration of the inspection's summary: Kafka's defaults for a compacted topic
/// (the level-2 preset), segments of 1,000 records standing in for `segment.bytes`.
pub fn summary_compaction_config() -> TopicConfig {
    TopicConfig {
        segment_records: 1000,
        ..MetadataLevel::V2.cleaner_config(
            crate::feature::DEFAULT_V1_RETENTION_MS,
            crate::feature::DEFAULT_V1_SEGMENT_MS,
        )
    }
}

/// The summary's "if compacted" answer: [`preview_compaction`] with
/// [`summary_compaction_config`] at [`COMPACTION_HORIZON_MS`] after `last_timestamp`. Returns
/// the moment and the preview.
pub fn summary_compaction(
    records: &[PreviewRecord<'_>],
    last_timestamp: i64,
) -> (i64, CompactionPreview) {
    let at = last_timestamp.saturating_add(COMPACTION_HORIZON_MS);
    (
        at,
        preview_compaction(records, summary_compaction_config(), at),
    )
}

/// Hands `each` every batch of a file image a consumer reads, in order (legacy entries are
/// stepped over, as Kafka's reader does); returns where and why the read stopped before the
/// file's end, if it did.
/// Why a file after one with a corrupt batch is not read.
fn earlier_corrupt() -> crate::Error {
    crate::Error::at(
        crate::error::ErrorKind::Corrupt,
        0,
        "file",
        "not read: an earlier file of this partition has a corrupt batch, and no consumer reads past it",
    )
}

/// A counting index with one file begun, for what a scan does not read.
fn counting_file() -> RecordIndex {
    let mut index = RecordIndex::counting();
    index.begin_file();
    index
}

fn read_file<'b>(
    bytes: &'b [u8],
    mut each: impl FnMut(crate::batch::Batch<'b>),
) -> Option<(usize, crate::Error)> {
    let mut batches = Batches::new(bytes, ReadOptions::default());
    let mut stop = None;
    for b in batches.by_ref() {
        match b {
            Ok(b) => each(b),
            Err(e) if e.kind() == crate::error::ErrorKind::UnsupportedVersion => {}
            Err(e) => stop = Some(e),
        }
    }
    stop.map(|e| (batches.position(), e))
}

/// [`preview_compaction`] over the read records of an index ([`RecordIndex`]) of files, read
/// from `files` (windows that must hold every read batch: the files' whole images, or ranges a
/// streaming host read back), with one byte per row: 1 when the record exists at `now_ms` and is
/// kept.
pub fn preview_index(
    index: &RecordIndex,
    files: &[crate::index::FileWindow<'_>],
    config: TopicConfig,
    now_ms: i64,
) -> (CompactionPreview, Vec<u8>) {
    // The batches stay parsed (a compressed one keeps its records decompressed) so that the
    // records borrow their keys and values instead of copying them.
    let parsed = index.read_batches_in(files);
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
    let p = preview_compaction(&records, config, now_ms);
    let mut kept = vec![0u8; index.rows()];
    for (&row, &k) in rows.iter().zip(&p.kept) {
        if let Some(slot) = kept.get_mut(row) {
            *slot = u8::from(k);
        }
    }
    (p, kept)
}

/// [`preview_compaction`] over segment file images of one metadata partition, in offset order,
/// each record with its size in its batch: the records [`Inspector::push_file`] reads, up to the
/// partition's first corrupt batch ([`crate::index`]'s rule, through [`preview_index`]).
pub fn preview_compaction_files(
    files: &[&[u8]],
    config: TopicConfig,
    now_ms: i64,
) -> CompactionPreview {
    let windows = crate::index::FileWindow::whole(files);
    preview_index(&crate::index::index_files(files), &windows, config, now_ms).0
}

#[cfg(test)]
mod preview_tests {
    use super::*;
    use crate::batch::{Batches, LOG_OVERHEAD, ReadOptions};

    const BROKER_P0: &[u8] = include_bytes!(
        "../../tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0/00000000000000000000.log"
    );

    type Owned = (i64, i64, Option<Vec<u8>>, Option<Vec<u8>>, usize);

    fn owned(file: &[u8]) -> Vec<Owned> {
        let mut out = Vec::new();
        for b in Batches::new(file, ReadOptions::default()).flatten() {
            if let Ok(rs) = b.records() {
                for r in rs.flatten() {
                    out.push((
                        r.offset,
                        r.timestamp,
                        r.key.map(<[u8]>::to_vec),
                        r.value.map(<[u8]>::to_vec),
                        r.size,
                    ));
                }
            }
        }
        out
    }

    fn view(o: &[Owned]) -> Vec<PreviewRecord<'_>> {
        o.iter()
            .map(|(offset, timestamp, k, v, size)| PreviewRecord {
                offset: *offset,
                timestamp: *timestamp,
                key: k.as_deref(),
                value: v.as_deref(),
                size: *size,
            })
            .collect()
    }

    #[test]
    fn the_summary_and_the_files_preview_are_one_model_on_every_fixture() {
        let (mut checked, mut kept) = (0, 0);
        for (d, data) in crate::testing::fixtures::metadata_partitions() {
            let files: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            let named: Vec<(&str, &[u8])> = files.iter().map(|f| ("x.log", *f)).collect();
            let report = inspect(&named);
            let s = &report.summary;
            let p =
                preview_compaction_files(&files, summary_compaction_config(), s.compacted_at_ms);
            assert_eq!(p.records_before, s.records, "{d:?}");
            assert_eq!(p.records_after, s.kept_by_compaction, "{d:?}");
            assert_eq!(p.lost, s.lost_by_compaction, "{d:?}");
            assert_eq!(p.live_before, s.live_segments, "{d:?}");
            // Files handed over (values read in place, compressed ones copied): the same report.
            let mut owned = Inspector::new();
            for f in &data {
                owned.push_file_owned(f.clone());
            }
            let o = owned.finish();
            assert_eq!(o.summary, report.summary, "{d:?}");
            assert_eq!(o.segments, report.segments, "{d:?}");
            // A scan's inspector: the same counts, stops, store and file scans, without the
            // lifecycles and the compaction what-if.
            let (mut full, mut scan) = (Inspector::new(), Inspector::for_scan());
            for f in &files {
                assert_eq!(full.scan_file(f, true), scan.scan_file(f, true), "{d:?}");
            }
            assert_eq!(full.null_keys(), scan.null_keys(), "{d:?}");
            assert_eq!(live_ids(full.store()), live_ids(scan.store()), "{d:?}");
            let scanned = scan.finish();
            assert!(scanned.segments.is_empty(), "{d:?}");
            let expected = Summary {
                compacted_at_ms: 0,
                kept_by_compaction: 0,
                lost_by_compaction: Vec::new(),
                ..report.summary.clone()
            };
            assert_eq!(scanned.summary, expected, "{d:?}");
            kept += usize::from(s.kept_by_compaction > 0 && s.keyed_records > 0);
            checked += 1;
        }
        assert!(checked >= 10, "{checked} fixtures");
        assert!(
            kept >= 1,
            "no fixture keeps keyed records through compaction"
        );
    }

    /// [`PreviewStream`] fed `records` pass after pass, as a host feeds it.
    fn streamed(records: &[PreviewRecord<'_>], config: TopicConfig, now: i64) -> CompactionPreview {
        let mut s = PreviewStream::new(config, now);
        let mut passes = 0;
        loop {
            for r in records {
                s.push(r);
            }
            passes += 1;
            if !s.end_pass() {
                break;
            }
        }
        assert!(passes <= 2, "{passes} passes");
        s.finish()
    }

    /// The in-memory model's answer, but for the per-record `kept` the stream does not give.
    fn held(records: &[PreviewRecord<'_>], config: TopicConfig, now: i64) -> CompactionPreview {
        CompactionPreview {
            kept: Vec::new(),
            ..preview_compaction(records, config, now)
        }
    }

    fn configs() -> Vec<TopicConfig> {
        use crate::compaction::CleanupPolicy;
        let mut out = vec![summary_compaction_config()];
        for policy in CleanupPolicy::ALL {
            for (retention_ms, lag, segment_ms, segment_records) in [
                (-1, 0, 604_800_000, 1000),
                (50, 0, 10, 3),
                (1_000, 30, 7, 2),
                (5, 100, 1, 1),
                (0, 1, 0, usize::MAX),
                (200, -5, i64::MAX, 4),
            ] {
                out.push(TopicConfig {
                    cleanup_policy: policy,
                    retention_ms,
                    min_compaction_lag_ms: lag,
                    delete_retention_ms: 86_400_000,
                    segment_ms,
                    segment_records,
                });
            }
        }
        out
    }

    #[test]
    fn the_streamed_preview_answers_as_the_held_log_on_every_fixture() {
        let mut checked = 0;
        for (d, data) in crate::testing::fixtures::metadata_partitions() {
            let recs: Vec<Owned> = data.iter().flat_map(|f| owned(f)).collect();
            let records = view(&recs);
            let last = records.iter().map(|r| r.timestamp).max().unwrap_or(0);
            let first = records.iter().map(|r| r.timestamp).min().unwrap_or(0);
            for config in configs() {
                for now in [
                    first - 1,
                    first,
                    (first + last) / 2,
                    last,
                    last + 1,
                    last + COMPACTION_HORIZON_MS,
                ] {
                    assert_eq!(
                        streamed(&records, config, now),
                        held(&records, config, now),
                        "{d:?} {config:?} at {now}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 500, "{checked}");
    }

    #[test]
    fn the_streamed_preview_answers_as_the_held_log_on_generated_logs() {
        use proptest::prelude::*;
        // Real metadata values (so that replay has live segments to lose) under few keys.
        let pool: Vec<Owned> = crate::testing::fixtures::metadata_partitions()
            .into_iter()
            .flat_map(|(_, data)| data.iter().flat_map(|f| owned(f)).collect::<Vec<_>>())
            .filter(|r| r.3.is_some())
            .take(400)
            .collect();
        assert!(pool.len() > 50, "{}", pool.len());
        let record = (0usize..pool.len(), 0u8..8, 0u8..10, -3i64..40);
        let logs = proptest::collection::vec(record, 0..120);
        let config = (0usize..3, -1i64..60, -2i64..40, 0i64..30, 1usize..6);
        proptest!(ProptestConfig::with_cases(400), |(log in logs, c in config, now in 0i64..80)| {
            let mut ts = 0i64;
            let recs: Vec<Owned> = log.iter().enumerate().map(|(i, &(v, key, kind, step))| {
                ts += step.max(-1);
                let (_, _, k, value, size) = &pool[v];
                let key = match key {
                    0 => None,
                    1 => k.clone(),
                    n => Some(format!("k{n}").into_bytes()),
                };
                let value = if kind == 0 { None } else { value.clone() };
                (i as i64, ts, key, value, *size)
            }).collect();
            let records = view(&recs);
            let config = TopicConfig {
                cleanup_policy: crate::compaction::CleanupPolicy::ALL[c.0],
                retention_ms: c.1,
                min_compaction_lag_ms: c.2,
                delete_retention_ms: 10,
                segment_ms: c.3,
                segment_records: c.4,
            };
            prop_assert_eq!(streamed(&records, config, now), held(&records, config, now));
        });
    }

    #[test]
    fn the_streamed_preview_of_files_fed_in_chunks_answers_as_the_files_preview() {
        let (mut checked, mut lost) = (0, 0);
        for (name, data) in scan_inputs() {
            let files: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            let last = data
                .iter()
                .flat_map(|f| owned(f))
                .map(|r| r.1)
                .max()
                .unwrap_or(0);
            for config in [configs()[0], configs()[5]] {
                let at = last + COMPACTION_HORIZON_MS;
                let expected = CompactionPreview {
                    kept: Vec::new(),
                    ..preview_compaction_files(&files, config, at)
                };
                for chunk in [1, 13, 64, 4096] {
                    let mut s = PreviewStream::new(config, at);
                    loop {
                        let mut feed = PartitionFeed::new();
                        for f in &files {
                            feed.begin(f.len());
                            for c in f.chunks(chunk) {
                                feed.push(c, |r| s.push(&PreviewRecord::of(r)));
                            }
                            feed.end();
                        }
                        if !s.end_pass() {
                            break;
                        }
                    }
                    assert_eq!(s.finish(), expected, "{name} in chunks of {chunk}");
                    checked += 1;
                }
                lost += usize::from(!expected.lost.is_empty() && expected.records_after > 0);
            }
        }
        assert!(
            checked > 100 && lost > 0,
            "{checked} inputs, {lost} losing live segments"
        );
    }

    #[test]
    fn an_inspection_of_files_read_in_chunks_with_the_streamed_what_if_is_the_held_one() {
        let mut checked = 0;
        for (name, data) in scan_inputs() {
            let named: Vec<(&str, &[u8])> = data.iter().map(|f| ("x.log", f.as_slice())).collect();
            let expected = inspect(&named);
            for chunk in [7, 4096] {
                let mut ins = Inspector::for_files();
                for f in &data {
                    ins.scan_begin(
                        f.len(),
                        ScanOptions {
                            each_null_key: false,
                            list_limit: 0,
                        },
                    );
                    for c in f.chunks(chunk) {
                        ins.scan_push(c);
                    }
                    ins.scan_end();
                }
                let at = ins.compaction_moment();
                let mut s = PreviewStream::new(summary_compaction_config(), at);
                loop {
                    let mut feed = PartitionFeed::new();
                    for f in &data {
                        feed.begin(f.len());
                        feed.push(f, |r| s.push(&PreviewRecord::of(r)));
                        feed.end();
                    }
                    if !s.end_pass() {
                        break;
                    }
                }
                let p = s.finish();
                let got = ins.finish().with_compaction(at, &p);
                // A scan's inspector with the same what-if: the summary alone, the same.
                let mut scan = Inspector::for_scan();
                for f in &data {
                    scan.scan_file(f, false);
                }
                assert_eq!(scan.compaction_moment(), at, "{name}");
                let summary = scan.finish().with_compaction(at, &p);
                assert!(summary.segments.is_empty(), "{name}");
                assert_eq!(summary.summary, expected.summary, "{name}");
                assert_eq!(got.summary, expected.summary, "{name}");
                assert_eq!(got.segments, expected.segments, "{name}");
                assert_eq!(got.to_text(), expected.to_text(), "{name}");
                let mut pieces = String::new();
                got.write_text(2, |p| pieces.push_str(p));
                assert_eq!(pieces, expected.to_text(), "{name}");
                checked += 1;
            }
        }
        assert!(checked > 50, "{checked}");
    }

    /// Every fixture, whole and damaged (cut short, a byte flipped, an entry's length made
    /// impossible), fed to a scan in chunks of many sizes.
    fn scan_inputs() -> Vec<(String, Vec<Vec<u8>>)> {
        let mut out = Vec::new();
        for (d, data) in crate::testing::fixtures::metadata_partitions() {
            let name = format!("{d:?}");
            out.push((name.clone(), data.clone()));
            let Some(first) = data.first().filter(|f| f.len() > 40) else {
                continue;
            };
            let damaged = |f: Vec<u8>| {
                let mut files = data.clone();
                files[0] = f;
                files
            };
            for cut in [5, first.len() / 2, first.len() - 1] {
                out.push((
                    format!("{name} cut at {cut}"),
                    damaged(first[..cut].to_vec()),
                ));
            }
            let mut flipped = first.clone();
            flipped[first.len() / 2] ^= 0x5a;
            out.push((format!("{name} flipped"), damaged(flipped)));
            // The second entry's length field, if there is one.
            let size = crate::batch::entry_extent(first, 0, first.len()).unwrap_or(first.len());
            if first.len() > size + LOG_OVERHEAD {
                let mut bad = first.clone();
                bad[size + 8..size + 12].copy_from_slice(&3i32.to_be_bytes());
                out.push((format!("{name} bad length"), damaged(bad)));
            }
        }
        out
    }

    #[test]
    fn a_scan_fed_in_chunks_answers_as_the_whole_file_read_does() {
        let mut checked = 0;
        for (name, data) in scan_inputs() {
            let named: Vec<(&str, &[u8])> = data.iter().map(|f| ("x.log", f.as_slice())).collect();
            let report = inspect(&named);
            let expected = Summary {
                compacted_at_ms: 0,
                kept_by_compaction: 0,
                lost_by_compaction: Vec::new(),
                ..report.summary.clone()
            };
            let mut whole = Inspector::for_scan();
            let scans: Vec<FileScan> = data.iter().map(|f| whole.scan_file(f, true)).collect();
            for chunk in [1, 5, 12, 13, 64, 1000] {
                let mut fed = Inspector::for_scan();
                for (f, scan) in data.iter().zip(&scans) {
                    fed.scan_begin(f.len(), ScanOptions::all(true));
                    for c in f.chunks(chunk) {
                        fed.scan_push(c);
                    }
                    assert_eq!(&fed.scan_end(), scan, "{name}, chunks of {chunk}");
                }
                assert_eq!(fed.finish().summary, expected, "{name}, chunks of {chunk}");
            }
            // Listing at most one of each kind: the same counts.
            let mut limited = Inspector::for_scan();
            for (f, scan) in data.iter().zip(&scans) {
                let options = ScanOptions {
                    each_null_key: false,
                    list_limit: 1,
                };
                let l = limited.scan_file_with(f, options);
                assert_eq!(l.found, scan.found, "{name}");
                let mut listed = [0u64; ScanKind::COUNT];
                for (_, _, a, _) in &scan.findings {
                    listed[scan_kind(a).unwrap() as usize] += 1;
                }
                assert_eq!(
                    listed, scan.found,
                    "{name}: every finding listed without a limit"
                );
                assert_eq!(
                    l.findings.len(),
                    scan.found.iter().filter(|&&n| n > 0).count(),
                    "{name}"
                );
                assert!(l.null_keys.is_empty(), "{name}");
            }
            checked += 1;
        }
        assert!(checked >= 40, "{checked} inputs");
    }

    #[test]
    fn a_file_shorter_than_when_its_scan_began_is_read_as_cut_there() {
        let mut short = Inspector::for_scan();
        short.scan_begin(BROKER_P0.len() + 100, ScanOptions::all(false));
        short.scan_push(BROKER_P0);
        short.scan_end();
        let s = short.finish().summary;
        assert_eq!(s.stops.len(), 1);
        assert_eq!(s.stops[0].position, BROKER_P0.len());
        assert_eq!(s.unread_records, 0);
        assert_eq!(s.records, inspect(&[("x.log", BROKER_P0)]).summary.records);
    }

    #[test]
    fn preview_agrees_with_inspect_for_a_pre_kip_log() {
        let o = owned(BROKER_P0);
        let records = view(&o);
        let report = inspect(&[("00000000000000000000.log", BROKER_P0)]);
        let last = records.iter().map(|r| r.timestamp).max().unwrap_or(0);
        let config = TopicConfig {
            segment_records: 1000,
            ..TopicConfig::compacted()
        };
        let p = preview_compaction(&records, config, last + 30 * 86_400_000);
        assert_eq!(p.records_before, report.summary.records);
        assert_eq!(p.records_after, report.summary.kept_by_compaction);
        assert_eq!(p.lost, report.summary.lost_by_compaction);
        assert_eq!(p.live_before, report.summary.live_segments);
        assert_eq!(
            p.null_keys_dropped,
            records.len(),
            "every null-key record goes"
        );
        assert_eq!(p.bytes_after, 0);
        // Before anything existed nothing is there; with the delete policy nothing expires yet.
        let first = records.iter().map(|r| r.timestamp).min().unwrap_or(0);
        assert_eq!(
            preview_compaction(&records, config, first - 1).records_before,
            0
        );
        let delete = TopicConfig {
            cleanup_policy: crate::compaction::CleanupPolicy::Delete,
            ..config
        };
        let d = preview_compaction(&records, delete, last);
        assert_eq!((d.records_after, d.lost.len()), (records.len(), 0));
        assert_eq!(
            d.bytes_after,
            records.iter().map(|r| r.size as u64).sum::<u64>()
        );
    }

    #[test]
    fn counts_in_text_have_thousands_separators() {
        assert_eq!(
            [0, 999, 1000, 1_234_567].map(thousands),
            ["0", "999", "1,000", "1,234,567"]
        );
    }

    #[test]
    fn scan_lists_and_marks_are_one_definition_of_health() {
        use crate::plan::{Event, SegmentEvent};
        let tp = TopicIdPartition {
            topic_id: Uuid::from_bytes([1; 16]),
            topic: "t".into(),
            partition: 0,
        };
        // two finished copies whose ranges overlap, one next to them (finished, no overlap), one
        // still copying (stuck), written by the planner and replayed.
        let mut store = Store::new();
        let mut offset = 0;
        let mut apply = |store: &mut Store, e: Event| {
            for p in store.plan(&e, MetadataLevel::V2).unwrap_or_default() {
                let key = p.key.format();
                store.apply(offset, Some(key.as_bytes()), p.value.as_deref());
                offset += 1;
            }
        };
        let seg = |n: u8, start: i64, end: i64, epoch: i32| crate::cache::SegmentMetadata {
            id: Uuid::from_bytes([n; 16]),
            start_offset: start,
            end_offset: end,
            broker_id: 1,
            max_timestamp_ms: 10,
            event_timestamp_ms: 10,
            leader_epochs: smallvec::smallvec![(epoch, start)],
            segment_size_in_bytes: 1,
            custom_metadata: None,
            state: SegmentState::CopySegmentStarted,
            txn_index_empty: true,
            broker_leader_epoch: epoch,
        };
        let fin = |n: u8, epoch: i32| {
            Event::CopyFinished(SegmentEvent {
                partition: tp.clone(),
                segment_id: Uuid::from_bytes([n; 16]),
                broker_id: 1,
                event_timestamp_ms: 20,
                custom_metadata: None,
                broker_leader_epoch: epoch,
            })
        };
        for (n, start, end, epoch, finish) in [
            (1, 0, 99, 1, true),
            (2, 50, 149, 2, true),
            (3, 200, 299, 3, true),
            (4, 300, 399, 4, false),
            // a retried upload of part of 3's range, still copying: stuck, not overlapping
            (5, 220, 260, 5, false),
        ] {
            apply(
                &mut store,
                Event::CopyStarted {
                    partition: tp.clone(),
                    segment: seg(n, start, end, epoch),
                },
            );
            if finish {
                apply(&mut store, fin(n, epoch));
            }
        }
        let lifecycles: Vec<SegmentLifecycle> = store
            .partition_cache(&tp)
            .map(|c| c.segments())
            .unwrap_or_default()
            .into_iter()
            .map(|m| SegmentLifecycle {
                partition: tp.clone(),
                id: m.id,
                start_offset: Some(m.start_offset),
                end_offset: Some(m.end_offset),
                states: vec![],
                now: Some(m.state),
            })
            .collect();
        assert_eq!(lifecycles.len(), 5);
        let marks = segment_marks(&lifecycles);
        let marked = |f: fn(&SegmentMarks) -> bool| -> Vec<Uuid> {
            let mut v: Vec<Uuid> = lifecycles
                .iter()
                .zip(&marks)
                .filter(|(_, m)| f(m))
                .map(|(l, _)| l.id)
                .collect();
            v.sort();
            v
        };
        let mut stuck: Vec<Uuid> = stuck_segments(&store, i64::MAX, 0)
            .iter()
            .map(|s| s.id)
            .collect();
        stuck.sort();
        assert_eq!(marked(|m| m.stuck), stuck);
        assert_eq!(
            stuck,
            vec![Uuid::from_bytes([4; 16]), Uuid::from_bytes([5; 16])]
        );
        let mut over: Vec<Uuid> = overlapping_segments(&store)
            .iter()
            .flat_map(|o| [o.first.0, o.second.0])
            .collect();
        over.sort();
        over.dedup();
        assert_eq!(marked(|m| m.overlapping), over);
        assert_eq!(
            over,
            vec![Uuid::from_bytes([1; 16]), Uuid::from_bytes([2; 16])]
        );
    }

    #[test]
    fn marks_flag_stuck_dangling_and_overlapping() {
        let report = inspect(&[("00000000000000000000.log", BROKER_P0)]);
        let marks = segment_marks(&report.segments);
        assert_eq!(marks.len(), report.segments.len());
        for (l, m) in report.segments.iter().zip(&marks) {
            assert_eq!(m.dangling, l.start_offset.is_none());
            let started = matches!(
                l.now,
                Some(SegmentState::CopySegmentStarted | SegmentState::DeleteSegmentStarted)
            );
            assert_eq!(m.stuck, started);
        }
        let mut two = report.segments.clone();
        two.retain(|l| l.start_offset.is_some());
        if let Some(first) = two.first().cloned() {
            let mut a = first.clone();
            a.now = Some(SegmentState::CopySegmentFinished);
            let mut b = a.clone();
            b.id = Uuid::from_bytes([7; 16]);
            let mut c = a.clone();
            c.id = Uuid::from_bytes([8; 16]);
            c.start_offset = a.end_offset.map(|e| e + 1);
            c.end_offset = a.end_offset.map(|e| e + 10);
            let m = segment_marks(&[a, b, c]);
            assert_eq!(
                m.iter().map(|m| m.overlapping).collect::<Vec<_>>(),
                vec![true, true, false]
            );
        }
    }
}
