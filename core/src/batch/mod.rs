//! Kafka record batches (magic 2) as they lie in `.log` segment files and KRaft checkpoints.
//!
//! Owns: walking a file image batch by batch ([`batches`]), the 61-byte batch header with its
//! attributes decoded, CRC-32C verification, the records of a batch — borrowed from the file
//! when uncompressed, from one owned buffer per batch when compressed ([`Batch::records`]) — with
//! Kafka's rules for absolute offsets, timestamps (LogAppendTime) and sequences, control records
//! ([`control`]), and an encoder ([`BatchBuilder`]) that writes batches Kafka reads. Decoding
//! never panics, never copies a key, value or header, and never allocates more than the input
//! backs (decompression is capped by [`ReadOptions::max_decompressed_size`]).
//! Never: I/O, the meaning of record keys and values (that is `record`, `checkpoint`), legacy
//! message formats (magic 0 and 1 entries are detected, reported and skipped).
//!
//! How a file image is walked, like Kafka's `FileRecords` and kafka-dump-log: each entry is
//! `BaseOffset int64, Length int32` then `Length` bytes. The walk ends, with one error that says
//! how many invalid bytes are left at the end, at the first entry that is cut short, whose length
//! is impossible, whose magic is unknown, or (with [`CrcCheck::Verify`]) whose CRC is wrong. A
//! magic 0 or 1 entry is reported as an [`ErrorKind::UnsupportedVersion`] error and skipped: its
//! framing is the same, so the walk goes on after it.

pub mod compression;
pub mod control;
pub mod crc;
mod encode;

use std::cell::OnceCell;
use std::fmt;

pub use compression::Compression;
pub use control::{ControlRecord, ControlRecordType, ControlValue};
pub use encode::{BatchBuilder, NewHeader, NewRecord};

use crate::error::{Error, ErrorKind, Result};

/// `BaseOffset` and `Length`: the bytes in front of every log entry.
pub const LOG_OVERHEAD: usize = 12;
/// The fixed header of a magic-2 batch, up to and including `RecordsCount`.
pub const RECORD_BATCH_OVERHEAD: usize = 61;
/// The smallest `Length` Kafka's file reader accepts for any entry (a magic-0 message).
pub const MIN_ENTRY_LENGTH: i32 = 14;
/// The magic byte of the batch format read here.
pub const MAGIC_V2: i8 = 2;
/// Default cap on the decompressed records of one batch (Kafka's own batches stay far below:
/// `message.max.bytes` is 1 MiB by default, KRaft batches at most 8 MiB).
pub const DEFAULT_MAX_DECOMPRESSED_SIZE: usize = 64 << 20;

/// Where the header fields lie (byte offsets from the start of the batch).
mod at {
    pub const LENGTH: usize = 8;
    pub const PARTITION_LEADER_EPOCH: usize = 12;
    pub const MAGIC: usize = 16;
    pub const CRC: usize = 17;
    pub const ATTRIBUTES: usize = 21;
    pub const LAST_OFFSET_DELTA: usize = 23;
    pub const BASE_TIMESTAMP: usize = 27;
    pub const MAX_TIMESTAMP: usize = 35;
    pub const PRODUCER_ID: usize = 43;
    pub const PRODUCER_EPOCH: usize = 51;
    pub const BASE_SEQUENCE: usize = 53;
    pub const RECORDS_COUNT: usize = 57;
}

/// Which timestamp a batch's records carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimestampType {
    CreateTime,
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's name, as kafka-dump-log prints it.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// The batch attributes (int16; Kafka uses the low byte only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Attributes(pub i16);

impl Attributes {
    pub const COMPRESSION_MASK: i16 = 0x07;
    pub const TIMESTAMP_TYPE: i16 = 0x08;
    pub const TRANSACTIONAL: i16 = 0x10;
    pub const CONTROL: i16 = 0x20;
    pub const DELETE_HORIZON: i16 = 0x40;
    /// Bits 7-15, unused by Kafka.
    pub const UNUSED_MASK: i16 = !0x7f;

    /// The codec id, bits 0-2 (5-7 name no codec).
    pub fn compression_id(self) -> u8 {
        (self.0 & Self::COMPRESSION_MASK) as u8
    }

    /// The codec, or `None` for ids 5-7.
    pub fn compression(self) -> Option<Compression> {
        Compression::from_id(self.compression_id())
    }

    pub fn timestamp_type(self) -> TimestampType {
        if self.0 & Self::TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    pub fn is_transactional(self) -> bool {
        self.0 & Self::TRANSACTIONAL != 0
    }

    pub fn is_control(self) -> bool {
        self.0 & Self::CONTROL != 0
    }

    /// Bit 6: the log cleaner stored a delete horizon in `BaseTimestamp`.
    pub fn has_delete_horizon(self) -> bool {
        self.0 & Self::DELETE_HORIZON != 0
    }

    /// Bits 7-15 as they are (0 in everything Kafka writes).
    pub fn unused_bits(self) -> i16 {
        self.0 & Self::UNUSED_MASK
    }
}

/// What to do about batch CRCs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CrcCheck {
    /// Compute every CRC; a mismatch is an [`ErrorKind::Corrupt`] error that ends the walk (as a
    /// broker recovering its log stops at the first corrupt batch).
    #[default]
    Verify,
    /// Compute every CRC and yield every batch; [`Batch::crc_valid`] tells (kafka-dump-log's
    /// `isvalid:`).
    Report,
    /// Compute nothing; [`Batch::crc_valid`] is `None`.
    Skip,
}

/// How to read batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    pub crc: CrcCheck,
    /// Most bytes the records of one compressed batch may decompress to.
    pub max_decompressed_size: usize,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            crc: CrcCheck::Verify,
            max_decompressed_size: DEFAULT_MAX_DECOMPRESSED_SIZE,
        }
    }
}

/// Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap from `i32::MAX` to 0.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    i64::from_be_bytes(a)
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    i32::from_be_bytes(a)
}

fn be_i16(b: &[u8], at: usize) -> i16 {
    let mut a = [0u8; 2];
    if let Some(s) = b.get(at..at + 2) {
        a.copy_from_slice(s);
    }
    i16::from_be_bytes(a)
}

/// One magic-2 record batch, borrowed from the file image. Header fields are public and read
/// exactly as stored; derived values are methods.
#[derive(Clone)]
pub struct Batch<'a> {
    /// Byte offset of the batch in the file image.
    pub position: usize,
    pub base_offset: i64,
    /// The `Length` field: batch size − 12.
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    /// The stored CRC-32C.
    pub crc: u32,
    pub attributes: Attributes,
    pub last_offset_delta: i32,
    /// `BaseTimestamp` as stored (the delete horizon when [`Attributes::has_delete_horizon`]).
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
    bytes: &'a [u8],
    computed_crc: Option<u32>,
    max_decompressed_size: usize,
    decompressed: OnceCell<Result<Vec<u8>>>,
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("position", &self.position)
            .field("base_offset", &self.base_offset)
            .field("batch_length", &self.batch_length)
            .field("partition_leader_epoch", &self.partition_leader_epoch)
            .field("magic", &self.magic)
            .field("crc", &self.crc)
            .field("attributes", &self.attributes)
            .field("last_offset_delta", &self.last_offset_delta)
            .field("base_timestamp", &self.base_timestamp)
            .field("max_timestamp", &self.max_timestamp)
            .field("producer_id", &self.producer_id)
            .field("producer_epoch", &self.producer_epoch)
            .field("base_sequence", &self.base_sequence)
            .field("records_count", &self.records_count)
            .field("crc_valid", &self.crc_valid())
            .finish()
    }
}

impl<'a> Batch<'a> {
    /// Reads the batch at the start of `bytes` (which may hold more after it), as found at
    /// `position` of a file. Errors: fewer than 12 bytes or fewer than the declared size
    /// ([`ErrorKind::Truncated`]); a size below the minimum or a magic above 2
    /// ([`ErrorKind::Corrupt`]); magic 0 or 1 ([`ErrorKind::UnsupportedVersion`]); a CRC
    /// mismatch under [`CrcCheck::Verify`] ([`ErrorKind::Corrupt`]).
    pub fn parse(bytes: &'a [u8], position: usize, options: ReadOptions) -> Result<Batch<'a>> {
        let entry = frame_entry(bytes, position)?;
        Batch::from_entry(entry, position, options)
    }

    fn from_entry(entry: &'a [u8], position: usize, options: ReadOptions) -> Result<Batch<'a>> {
        let magic = entry.get(at::MAGIC).map_or(-1, |&m| m as i8);
        let base_offset = be_i64(entry, 0);
        let size = entry.len();
        match magic {
            MAGIC_V2 => {}
            0 | 1 => {
                return Err(Error::at(
                    ErrorKind::UnsupportedVersion,
                    position + at::MAGIC,
                    "magic",
                    format!(
                        "message format v{magic} entry (magic {magic}) at byte {position}, \
                         offset {base_offset}, {size} bytes: only magic 2 record batches are read"
                    ),
                ));
            }
            _ => {
                return Err(Error::at(
                    ErrorKind::Corrupt,
                    position + at::MAGIC,
                    "magic",
                    format!("Invalid magic found in record: {magic} (batch at byte {position})"),
                ));
            }
        }
        if size < RECORD_BATCH_OVERHEAD {
            return Err(Error::at(
                ErrorKind::Corrupt,
                position + at::LENGTH,
                "length",
                format!(
                    "Record batch is corrupt (the size {size} is smaller than the minimum allowed \
                     overhead {RECORD_BATCH_OVERHEAD})"
                ),
            ));
        }
        let crc = be_i32(entry, at::CRC) as u32;
        let computed_crc = match options.crc {
            CrcCheck::Skip => None,
            CrcCheck::Verify | CrcCheck::Report => entry.get(at::ATTRIBUTES..).map(crc::crc32c),
        };
        if options.crc == CrcCheck::Verify && computed_crc != Some(crc) {
            return Err(Error::at(
                ErrorKind::Corrupt,
                position + at::CRC,
                "crc",
                format!(
                    "Record is corrupt (stored crc = {crc}, computed crc = {}) in the batch at \
                     byte {position}, base offset {base_offset}",
                    computed_crc.unwrap_or_default()
                ),
            ));
        }
        Ok(Batch {
            position,
            base_offset,
            batch_length: be_i32(entry, at::LENGTH),
            partition_leader_epoch: be_i32(entry, at::PARTITION_LEADER_EPOCH),
            magic,
            crc,
            attributes: Attributes(be_i16(entry, at::ATTRIBUTES)),
            last_offset_delta: be_i32(entry, at::LAST_OFFSET_DELTA),
            base_timestamp: be_i64(entry, at::BASE_TIMESTAMP),
            max_timestamp: be_i64(entry, at::MAX_TIMESTAMP),
            producer_id: be_i64(entry, at::PRODUCER_ID),
            producer_epoch: be_i16(entry, at::PRODUCER_EPOCH),
            base_sequence: be_i32(entry, at::BASE_SEQUENCE),
            records_count: be_i32(entry, at::RECORDS_COUNT),
            bytes: entry,
            computed_crc,
            max_decompressed_size: options.max_decompressed_size,
            decompressed: OnceCell::new(),
        })
    }

    /// The whole batch as stored.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The records section as stored (compressed when the batch is).
    pub fn records_payload(&self) -> &'a [u8] {
        self.bytes.get(RECORD_BATCH_OVERHEAD..).unwrap_or_default()
    }

    /// Total size in bytes (`Length` + 12).
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The CRC-32C of the bytes it covers, unless CRCs were skipped.
    pub fn computed_crc(&self) -> Option<u32> {
        self.computed_crc
    }

    /// Whether the stored CRC is right (kafka-dump-log's `isvalid:`), unless CRCs were skipped.
    pub fn crc_valid(&self) -> Option<bool> {
        self.computed_crc.map(|c| c == self.crc)
    }

    /// Kafka's `ensureValid`: an error unless the stored CRC matches (computed now if needed).
    pub fn ensure_valid(&self) -> Result<()> {
        let computed = self
            .computed_crc
            .unwrap_or_else(|| crc::crc32c(self.bytes.get(at::ATTRIBUTES..).unwrap_or_default()));
        if computed == self.crc {
            Ok(())
        } else {
            Err(Error::at(
                ErrorKind::Corrupt,
                self.position + at::CRC,
                "crc",
                format!(
                    "Record is corrupt (stored crc = {}, computed crc = {computed})",
                    self.crc
                ),
            ))
        }
    }

    /// `BaseOffset + LastOffsetDelta` (Java `long` arithmetic).
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// The sequence of the last record (−1 without a producer sequence).
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence == -1 {
            -1
        } else {
            increment_sequence(self.base_sequence, self.last_offset_delta)
        }
    }

    /// The codec; ids 5-7 are an [`ErrorKind::UnsupportedVersion`] error.
    pub fn compression(&self) -> Result<Compression> {
        self.attributes.compression().ok_or_else(|| {
            Error::at(
                ErrorKind::UnsupportedVersion,
                self.position + at::ATTRIBUTES,
                "attributes",
                format!(
                    "Unknown compression type id: {}",
                    self.attributes.compression_id()
                ),
            )
        })
    }

    pub fn timestamp_type(&self) -> TimestampType {
        self.attributes.timestamp_type()
    }

    pub fn is_transactional(&self) -> bool {
        self.attributes.is_transactional()
    }

    pub fn is_control(&self) -> bool {
        self.attributes.is_control()
    }

    /// The delete horizon the log cleaner set (attribute bit 6), kept in `BaseTimestamp`.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes
            .has_delete_horizon()
            .then_some(self.base_timestamp)
    }

    /// The records. For a compressed batch the first call decompresses them into a buffer the
    /// batch keeps (later calls reuse it); errors: an unknown codec, a negative count, data that
    /// does not decompress or passes the size limit. Records themselves are checked as they are
    /// iterated.
    pub fn records(&self) -> Result<Records<'_>> {
        let codec = self.compression()?;
        if self.records_count < 0 {
            return Err(Error::at(
                ErrorKind::InvalidLength,
                self.position + at::RECORDS_COUNT,
                "recordsCount",
                format!(
                    "Found invalid record count {} in magic v2 batch",
                    self.records_count
                ),
            ));
        }
        let payload = self.records_payload();
        let payload_at = self.position + RECORD_BATCH_OVERHEAD;
        let (data, origin) = if self.records_count == 0 {
            // Kafka does not look at the records of an empty batch, compressed or not.
            (&[][..], Some(payload_at))
        } else if codec == Compression::None {
            (payload, Some(payload_at))
        } else {
            let cached = self.decompressed.get_or_init(|| {
                compression::decompress_at(codec, payload, self.max_decompressed_size, payload_at)
            });
            match cached {
                Ok(v) => (v.as_slice(), None),
                Err(e) => return Err(e.clone()),
            }
        };
        Ok(Records {
            data,
            pos: 0,
            left: self.records_count,
            ctx: RecordContext {
                base_offset: self.base_offset,
                base_timestamp: self.base_timestamp,
                base_sequence: self.base_sequence,
                log_append_time: (self.timestamp_type() == TimestampType::LogAppendTime)
                    .then_some(self.max_timestamp),
            },
            origin,
            batch_position: self.position,
            canonical: self.records_count != 0 || payload.is_empty(),
            done: false,
        })
    }

    /// The decompressed records section (the stored one when uncompressed).
    pub fn records_data(&self) -> Result<&[u8]> {
        self.records().map(|r| r.data)
    }
}

/// Checks the framing of the entry at the start of `bytes` and returns exactly its bytes.
fn frame_entry(bytes: &[u8], position: usize) -> Result<&[u8]> {
    let size = entry_extent(bytes, position, bytes.len())?;
    Ok(&bytes[..size])
}

/// The size of the entry at `position` of a file with `left` bytes from there on, of which
/// `head` holds the first (at least [`LOG_OVERHEAD`] of them when `left` has that many): the
/// framing rule of [`Batches`] for hosts that read a file in chunks and must know how many bytes
/// the next entry takes before they have them. The error is the one a walk of the whole image
/// gives there (a cut header or entry, a length below the minimum).
pub fn entry_extent(head: &[u8], position: usize, left: usize) -> Result<usize> {
    let header = head.get(..LOG_OVERHEAD).filter(|_| left >= LOG_OVERHEAD);
    let Some(header) = header else {
        return Err(Error::at(
            ErrorKind::Truncated,
            position,
            "length",
            format!(
                "{left} invalid bytes at the end: an entry needs at least {LOG_OVERHEAD} bytes"
            ),
        ));
    };
    let length = be_i32(header, at::LENGTH);
    if length < MIN_ENTRY_LENGTH {
        return Err(Error::at(
            ErrorKind::Corrupt,
            position + at::LENGTH,
            "length",
            format!(
                "Found record size {length} smaller than minimum record overhead \
                 ({MIN_ENTRY_LENGTH}) in the entry at byte {position}; {left} invalid bytes at \
                 the end"
            ),
        ));
    }
    let size = LOG_OVERHEAD + length as usize;
    if size > left {
        return Err(Error::at(
            ErrorKind::Truncated,
            position,
            "length",
            format!(
                "{left} invalid bytes at the end: the entry at byte {position} declares {size} \
                 bytes, only {left} are left"
            ),
        ));
    }
    Ok(size)
}

/// Iterates the batches of a file image with the default [`ReadOptions`] (CRCs verified).
pub fn batches(file: &[u8]) -> Batches<'_> {
    Batches::new(file, ReadOptions::default())
}

/// The batches of a file image, in order; see the module documentation for where it stops.
#[derive(Clone, Debug)]
pub struct Batches<'a> {
    file: &'a [u8],
    pos: usize,
    options: ReadOptions,
    done: bool,
}

impl<'a> Batches<'a> {
    pub fn new(file: &'a [u8], options: ReadOptions) -> Batches<'a> {
        Batches {
            file,
            pos: 0,
            options,
            done: false,
        }
    }

    /// Resumes a walk at `pos`, a position an earlier walk of the same image reached (hosts
    /// that cannot keep the borrowing iterator, such as language bindings).
    pub fn resume(file: &'a [u8], pos: usize, options: ReadOptions) -> Batches<'a> {
        Batches {
            file,
            pos: pos.min(file.len()),
            options,
            done: false,
        }
    }

    /// Whether the walk has ended (the image is used up or an error stopped it).
    pub fn is_finished(&self) -> bool {
        self.done
    }

    /// Bytes consumed so far as whole entries (batches and skipped legacy entries). After the
    /// walk, everything from here on is invalid.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not consumed as whole entries: after the walk, kafka-dump-log's "Found N invalid
    /// bytes at the end".
    pub fn invalid_bytes(&self) -> usize {
        self.file.len() - self.pos
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<Batch<'a>>;

    fn next(&mut self) -> Option<Result<Batch<'a>>> {
        if self.done {
            return None;
        }
        let rest = self.file.get(self.pos..).unwrap_or_default();
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        let entry = match frame_entry(rest, self.pos) {
            Ok(e) => e,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let position = self.pos;
        match Batch::from_entry(entry, position, self.options) {
            Ok(b) => {
                self.pos += entry.len();
                Some(Ok(b))
            }
            Err(e) if e.kind() == ErrorKind::UnsupportedVersion => {
                self.pos += entry.len();
                Some(Err(e))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for Batches<'_> {}

/// [`Batches`] over a file fed in chunks of any size: the same batches, errors and stop, in
/// memory bounded by the largest entry. `each` of [`BatchFeed::push`] gets every batch that
/// parses (or the error of an entry of an unsupported version, stepped over), in order; from the
/// first entry that does not frame or parse on, the walk stops and `rest` gets every byte from
/// there to the end, as fed.
#[derive(Clone, Debug)]
pub struct BatchFeed {
    /// The file's length when the host began reading it.
    len: usize,
    /// Position in the file of the next entry (the first byte of `pending`, if any).
    pos: usize,
    /// The start of an entry not yet whole.
    pending: Vec<u8>,
    options: ReadOptions,
    /// Where the walk stopped, and why.
    stop: Option<(usize, Error)>,
    /// Bytes fed from the stop on.
    after_stop: usize,
}

impl BatchFeed {
    /// A file `len` bytes long when its reading began (one found shorter at its end is read as
    /// cut there).
    pub fn new(len: usize, options: ReadOptions) -> BatchFeed {
        BatchFeed {
            len,
            pos: 0,
            pending: Vec::new(),
            options,
            stop: None,
            after_stop: 0,
        }
    }

    /// The next bytes of the file.
    pub fn push(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(Result<Batch<'_>>),
        mut rest: impl FnMut(&[u8]),
    ) {
        let mut chunk = chunk;
        while !chunk.is_empty() {
            if self.stop.is_some() {
                self.after_stop += chunk.len();
                rest(chunk);
                return;
            }
            let left = self
                .len
                .saturating_sub(self.pos)
                .max(self.pending.len() + chunk.len());
            // The entry's bytes: its header first, then as many as the header says.
            let head = if self.pending.is_empty() {
                chunk
            } else {
                let want = LOG_OVERHEAD
                    .saturating_sub(self.pending.len())
                    .min(chunk.len());
                self.pending.extend_from_slice(&chunk[..want]);
                chunk = &chunk[want..];
                &self.pending
            };
            if head.len() < LOG_OVERHEAD {
                if self.pending.is_empty() {
                    self.pending.extend_from_slice(chunk);
                    chunk = &[];
                }
                continue;
            }
            let size = match entry_extent(head, self.pos, left) {
                Ok(size) => size,
                Err(e) => {
                    self.stop_at(e, &[], &mut rest);
                    continue;
                }
            };
            if self.pending.is_empty() {
                if chunk.len() < size {
                    self.pending.extend_from_slice(chunk);
                    break;
                }
                let (entry, tail) = chunk.split_at(size);
                self.entry(entry, &mut each, &mut rest);
                chunk = tail;
            } else {
                let want = (size - self.pending.len()).min(chunk.len());
                self.pending.extend_from_slice(&chunk[..want]);
                chunk = &chunk[want..];
                if self.pending.len() == size {
                    let entry = std::mem::take(&mut self.pending);
                    self.entry(&entry, &mut each, &mut rest);
                }
            }
        }
    }

    /// Ends the file: bytes left that are no whole entry are its cut tail (handed to `rest`).
    /// Returns where the walk stopped and why, if it did before the end.
    pub fn end(&mut self, mut rest: impl FnMut(&[u8])) -> Option<(usize, Error)> {
        if self.stop.is_none() && (!self.pending.is_empty() || self.pos < self.len) {
            let n = self.pending.len();
            let cut = entry_extent(&self.pending, self.pos, n).err();
            let e = cut.unwrap_or_else(|| {
                Error::at(
                    ErrorKind::Truncated,
                    self.pos,
                    "length",
                    "the file ended here, before the length it had when the scan began",
                )
            });
            self.stop_at(e, &[], &mut rest);
        }
        self.stop.clone()
    }

    /// Bytes not consumed as whole entries, once ended: [`Batches::invalid_bytes`].
    pub fn invalid_bytes(&self) -> usize {
        self.after_stop + self.pending.len()
    }

    /// One whole entry of the file.
    fn entry(
        &mut self,
        entry: &[u8],
        each: &mut impl FnMut(Result<Batch<'_>>),
        rest: &mut impl FnMut(&[u8]),
    ) {
        match Batch::parse(entry, self.pos, self.options) {
            Ok(b) => {
                self.pos += entry.len();
                each(Ok(b));
            }
            Err(e) if e.kind() == ErrorKind::UnsupportedVersion => {
                self.pos += entry.len();
                each(Err(e));
            }
            Err(e) => self.stop_at(e, entry, rest),
        }
    }

    /// The walk stops at the feed's position: `entry` (not read) and the start of an entry not
    /// yet whole go to `rest`, as every later chunk will.
    fn stop_at(&mut self, why: Error, entry: &[u8], rest: &mut impl FnMut(&[u8])) {
        let pending = std::mem::take(&mut self.pending);
        self.after_stop += entry.len() + pending.len();
        rest(entry);
        rest(&pending);
        self.stop = Some((self.pos, why));
    }
}

#[derive(Clone, Copy, Debug)]
struct RecordContext {
    base_offset: i64,
    base_timestamp: i64,
    base_sequence: i32,
    log_append_time: Option<i64>,
}

/// One record of a batch; key, value and headers are borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'b> {
    /// Absolute offset: `BaseOffset + OffsetDelta`.
    pub offset: i64,
    /// The timestamp as Kafka reports it: the batch's `MaxTimestamp` under LogAppendTime, else
    /// `BaseTimestamp + TimestampDelta`.
    pub timestamp: i64,
    /// `BaseSequence` advanced by `OffsetDelta` (wrapping), or −1 without a producer sequence.
    pub sequence: i32,
    /// The record attributes byte (unused by Kafka, kept as stored).
    pub attributes: i8,
    pub timestamp_delta: i64,
    pub offset_delta: i32,
    pub key: Option<&'b [u8]>,
    pub value: Option<&'b [u8]>,
    pub headers: Headers<'b>,
    /// Byte offset of the record in the records section (decompressed, when compressed).
    pub position: usize,
    /// Size of the record including its length prefix.
    pub size: usize,
}

/// The headers of a record, checked when the record was read; iterate with [`Headers::iter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Headers<'b> {
    count: usize,
    data: &'b [u8],
}

impl<'b> Headers<'b> {
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn iter(&self) -> HeaderIter<'b> {
        HeaderIter {
            cur: Cursor::new(self.data),
            left: self.count,
        }
    }
}

impl<'b> IntoIterator for Headers<'b> {
    type Item = Header<'b>;
    type IntoIter = HeaderIter<'b>;
    fn into_iter(self) -> HeaderIter<'b> {
        self.iter()
    }
}

/// A record header: the key is UTF-8 text in everything Kafka writes (Java decodes it lossily),
/// the value any bytes or null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'b> {
    pub key: &'b [u8],
    pub value: Option<&'b [u8]>,
}

impl<'b> Header<'b> {
    /// The key as text, when it is UTF-8.
    pub fn key_str(&self) -> Option<&'b str> {
        std::str::from_utf8(self.key).ok()
    }
}

/// Iterator over [`Headers`].
#[derive(Clone, Debug)]
pub struct HeaderIter<'b> {
    cur: Cursor<'b>,
    left: usize,
}

impl<'b> Iterator for HeaderIter<'b> {
    type Item = Header<'b>;
    fn next(&mut self) -> Option<Header<'b>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Checked when the record was read, so these cannot fail; stop quietly if they do.
        let key_len = self.cur.varint().ok()?;
        let key = self.cur.take(usize::try_from(key_len).ok()?).ok()?;
        let value = self.cur.nullable_bytes().ok()?;
        Some(Header { key, value })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// The records of one batch, in order. Yields an error and stops at the first record that does
/// not parse, or after the last one if bytes remain.
#[derive(Clone, Debug)]
pub struct Records<'b> {
    data: &'b [u8],
    pos: usize,
    left: i32,
    ctx: RecordContext,
    /// File position of `data` when it is the stored (uncompressed) section.
    origin: Option<usize>,
    batch_position: usize,
    canonical: bool,
    done: bool,
}

/// What went wrong inside a record, before it is placed.
#[derive(Clone, Copy, Debug)]
enum Fault {
    Eof,
    LongVarint,
}

impl<'b> Records<'b> {
    /// The records section these records are read from.
    pub fn data(&self) -> &'b [u8] {
        self.data
    }

    /// False once anything read so far is not spelled the way Kafka writes it (a varint longer
    /// than needed, a null length other than −1, bytes after the records of an empty batch).
    /// A batch whose records were all read and stayed canonical re-encodes to the same bytes.
    pub fn is_canonical(&self) -> bool {
        self.canonical
    }

    fn error(&self, kind: ErrorKind, at: usize, field: &str, message: String) -> Error {
        match self.origin {
            Some(o) => Error::at(kind, o + at, field, message),
            None => Error::at(
                kind,
                self.batch_position,
                field,
                format!("{message} (at byte {at} of the decompressed records)"),
            ),
        }
    }

    fn fault(&self, f: Fault, at: usize, field: &str) -> Error {
        match f {
            Fault::Eof => self.error(
                ErrorKind::Truncated,
                at,
                field,
                "Incorrect declared batch size, premature EOF reached".into(),
            ),
            Fault::LongVarint => self.error(
                ErrorKind::InvalidVarint,
                at,
                field,
                "Varint is too long".into(),
            ),
        }
    }

    fn read_record(&mut self) -> Result<Record<'b>> {
        let start = self.pos;
        let mut cur = Cursor::new(self.data);
        cur.pos = start;
        let length = cur.varint().map_err(|f| self.fault(f, start, "length"))?;
        let body_at = cur.pos;
        let left = self.data.len() - body_at;
        let body_len = usize::try_from(length)
            .ok()
            .filter(|&n| n <= left)
            .ok_or_else(|| {
                self.error(
                    if length < 0 {
                        ErrorKind::InvalidLength
                    } else {
                        ErrorKind::Truncated
                    },
                    start,
                    "length",
                    format!(
                        "Invalid record size: expected {length} bytes in record payload, but \
                         only {left} bytes remain"
                    ),
                )
            })?;
        let end = body_at + body_len;
        let mut body = Cursor::new(self.data.get(..end).unwrap_or_default());
        body.pos = body_at;
        let record = self.read_body(&mut body, start, body_len)?;
        self.canonical &= cur.canonical && body.canonical;
        self.pos = end;
        Ok(record)
    }

    fn read_body(&self, c: &mut Cursor<'b>, start: usize, body_len: usize) -> Result<Record<'b>> {
        let size_err = |c: &Cursor<'b>, field: &str| {
            self.error(
                ErrorKind::InvalidLength,
                c.pos,
                field,
                format!(
                    "Invalid record size: expected {body_len} bytes in record payload, but its \
                     fields need more"
                ),
            )
        };
        let fail = |c: &Cursor<'b>, f: Fault, field: &str| match f {
            Fault::Eof => size_err(c, field),
            other => self.fault(other, c.pos, field),
        };
        let attributes = c.byte().map_err(|f| fail(c, f, "attributes"))? as i8;
        let timestamp_delta = c.varlong().map_err(|f| fail(c, f, "timestampDelta"))?;
        let offset_delta = c.varint().map_err(|f| fail(c, f, "offsetDelta"))?;
        let key = c.nullable_bytes().map_err(|f| fail(c, f, "key"))?;
        let value = c.nullable_bytes().map_err(|f| fail(c, f, "value"))?;
        let count_at = c.pos;
        let count = c.varint().map_err(|f| fail(c, f, "headersCount"))?;
        let count = usize::try_from(count)
            .ok()
            .filter(|&n| n <= c.remaining())
            .ok_or_else(|| {
                self.error(
                    ErrorKind::InvalidLength,
                    count_at,
                    "headersCount",
                    format!("Found invalid number of record headers {count}"),
                )
            })?;
        let headers_at = c.pos;
        for _ in 0..count {
            let key_at = c.pos;
            let key_len = c.varint().map_err(|f| fail(c, f, "headerKey"))?;
            let key_len = usize::try_from(key_len).map_err(|_| {
                self.error(
                    ErrorKind::InvalidLength,
                    key_at,
                    "headerKey",
                    format!("Invalid negative header key size {key_len}"),
                )
            })?;
            c.take(key_len).map_err(|f| fail(c, f, "headerKey"))?;
            c.nullable_bytes().map_err(|f| fail(c, f, "headerValue"))?;
        }
        let headers = Headers {
            count,
            data: c.buf.get(headers_at..c.pos).unwrap_or_default(),
        };
        if c.remaining() != 0 {
            return Err(self.error(
                ErrorKind::InvalidLength,
                c.pos,
                "length",
                format!(
                    "Invalid record size: expected to read {body_len} bytes in record payload, \
                     but instead read {}",
                    body_len - c.remaining()
                ),
            ));
        }
        let ctx = &self.ctx;
        Ok(Record {
            offset: ctx.base_offset.wrapping_add(i64::from(offset_delta)),
            timestamp: ctx
                .log_append_time
                .unwrap_or_else(|| ctx.base_timestamp.wrapping_add(timestamp_delta)),
            sequence: if ctx.base_sequence >= 0 {
                increment_sequence(ctx.base_sequence, offset_delta)
            } else {
                -1
            },
            attributes,
            timestamp_delta,
            offset_delta,
            key,
            value,
            headers,
            position: start,
            size: c.pos - start,
        })
    }
}

impl<'b> Iterator for Records<'b> {
    type Item = Result<Record<'b>>;

    fn next(&mut self) -> Option<Result<Record<'b>>> {
        if self.done {
            return None;
        }
        if self.left == 0 {
            self.done = true;
            if self.pos < self.data.len() {
                let extra = self.data.len() - self.pos;
                return Some(Err(self.error(
                    ErrorKind::TrailingBytes,
                    self.pos,
                    "records",
                    format!(
                        "Incorrect declared batch size, records still remaining in file \
                         ({extra} bytes after the last of the declared records)"
                    ),
                )));
            }
            return None;
        }
        self.left -= 1;
        match self.read_record() {
            Ok(r) => Some(Ok(r)),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, Some(self.left as usize + 1))
        }
    }
}

impl std::iter::FusedIterator for Records<'_> {}

/// A cursor for the varint-heavy record encoding. Failures are [`Fault`]s, placed by the caller.
#[derive(Clone, Debug)]
struct Cursor<'b> {
    buf: &'b [u8],
    pos: usize,
    canonical: bool,
}

impl<'b> Cursor<'b> {
    fn new(buf: &'b [u8]) -> Cursor<'b> {
        Cursor {
            buf,
            pos: 0,
            canonical: true,
        }
    }

    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    #[inline]
    fn byte(&mut self) -> std::result::Result<u8, Fault> {
        let b = *self.buf.get(self.pos).ok_or(Fault::Eof)?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> std::result::Result<&'b [u8], Fault> {
        let end = self.pos.checked_add(n).ok_or(Fault::Eof)?;
        let s = self.buf.get(self.pos..end).ok_or(Fault::Eof)?;
        self.pos = end;
        Ok(s)
    }

    /// Kafka's unsigned varint: at most 5 bytes, bits beyond 32 dropped like Java's shifts.
    #[inline]
    fn uvarint(&mut self) -> std::result::Result<u32, Fault> {
        let b = self.byte()?;
        if b < 0x80 {
            return Ok(u32::from(b));
        }
        let mut value = u32::from(b & 0x7f);
        let mut shift = 7;
        loop {
            let b = self.byte()?;
            value |= u32::from(b & 0x7f).wrapping_shl(shift);
            if b < 0x80 {
                if b == 0 || (shift == 28 && b > 0x0f) {
                    self.canonical = false;
                }
                return Ok(value);
            }
            shift += 7;
            if shift > 28 {
                return Err(Fault::LongVarint);
            }
        }
    }

    /// Zig-zag `int`.
    #[inline]
    fn varint(&mut self) -> std::result::Result<i32, Fault> {
        let v = self.uvarint()?;
        Ok((v >> 1) as i32 ^ -((v & 1) as i32))
    }

    /// Zig-zag `long`: at most 10 bytes, bits beyond 64 dropped.
    fn varlong(&mut self) -> std::result::Result<i64, Fault> {
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).wrapping_shl(shift);
            if b < 0x80 {
                if (shift > 0 && b == 0) || (shift == 63 && b > 1) {
                    self.canonical = false;
                }
                return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
            }
            shift += 7;
            if shift > 63 {
                return Err(Fault::LongVarint);
            }
        }
    }

    /// Length-prefixed bytes; any negative length is null (as Kafka reads it), −1 canonically.
    #[inline]
    fn nullable_bytes(&mut self) -> std::result::Result<Option<&'b [u8]>, Fault> {
        let n = self.varint()?;
        match usize::try_from(n) {
            Ok(n) => self.take(n).map(Some),
            Err(_) => {
                if n != -1 {
                    self.canonical = false;
                }
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests;
