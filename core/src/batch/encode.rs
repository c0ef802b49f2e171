//! Writing record batches: what a producer (or the log cleaner, or a KRaft snapshot writer)
//! puts in a `.log` or `.checkpoint` file, with a correct length and CRC-32C.

use std::borrow::Cow;

use super::compression::{self, Compression};
use super::control::ControlRecord;
use super::{Attributes, Batch, Record, TimestampType, at, crc};
use crate::error::{Error, ErrorKind, Result};

/// A record header to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewHeader<'r> {
    pub key: Cow<'r, [u8]>,
    pub value: Option<Cow<'r, [u8]>>,
}

/// A record to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRecord<'r> {
    pub offset_delta: i32,
    /// Absolute timestamp; the batch stores it relative to its base timestamp.
    pub timestamp: i64,
    /// The record attributes byte (0 in everything Kafka writes).
    pub attributes: i8,
    pub key: Option<Cow<'r, [u8]>>,
    pub value: Option<Cow<'r, [u8]>>,
    pub headers: Vec<NewHeader<'r>>,
}

impl<'r> NewRecord<'r> {
    pub fn new(
        offset_delta: i32,
        timestamp: i64,
        key: Option<&'r [u8]>,
        value: Option<&'r [u8]>,
    ) -> NewRecord<'r> {
        NewRecord {
            offset_delta,
            timestamp,
            attributes: 0,
            key: key.map(Cow::Borrowed),
            value: value.map(Cow::Borrowed),
            headers: Vec::new(),
        }
    }

    /// The same record with one more header.
    pub fn with_header(mut self, key: &'r [u8], value: Option<&'r [u8]>) -> NewRecord<'r> {
        self.headers.push(NewHeader {
            key: Cow::Borrowed(key),
            value: value.map(Cow::Borrowed),
        });
        self
    }

    /// A control record (goes in a batch with `control` set).
    pub fn control(
        offset_delta: i32,
        timestamp: i64,
        record: &ControlRecord<'_>,
    ) -> Result<NewRecord<'static>> {
        Ok(NewRecord {
            offset_delta,
            timestamp,
            attributes: 0,
            key: Some(Cow::Owned(record.encode_key().to_vec())),
            value: record.encode_value()?.map(Cow::Owned),
            headers: Vec::new(),
        })
    }

    /// A record exactly as read from a batch whose base timestamp is `base_timestamp`, so that
    /// writing it again gives the same bytes.
    pub fn from_record(record: &Record<'r>, base_timestamp: i64) -> NewRecord<'r> {
        NewRecord {
            offset_delta: record.offset_delta,
            timestamp: base_timestamp.wrapping_add(record.timestamp_delta),
            attributes: record.attributes,
            key: record.key.map(Cow::Borrowed),
            value: record.value.map(Cow::Borrowed),
            headers: record
                .headers
                .iter()
                .map(|h| NewHeader {
                    key: Cow::Borrowed(h.key),
                    value: h.value.map(Cow::Borrowed),
                })
                .collect(),
        }
    }
}

/// A batch to write. Fields left `None` are computed the way Kafka's `MemoryRecordsBuilder`
/// computes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchBuilder<'r> {
    pub base_offset: i64,
    /// −1 (none) until a leader stamps it; a log file holds the leader's epoch.
    pub partition_leader_epoch: i32,
    pub compression: Compression,
    pub timestamp_type: TimestampType,
    pub transactional: bool,
    pub control: bool,
    /// Sets attribute bit 6 and stores the horizon as `BaseTimestamp` (what the cleaner does).
    pub delete_horizon_ms: Option<i64>,
    /// Attribute bits 7-15 (0 for Kafka; kept for byte-exact re-encoding).
    pub unused_attribute_bits: i16,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    /// Default: the delete horizon if any, else the first record's timestamp, else −1.
    pub base_timestamp: Option<i64>,
    /// Default: the largest record timestamp, else −1.
    pub max_timestamp: Option<i64>,
    /// Default: the last record's offset delta, else 0.
    pub last_offset_delta: Option<i32>,
    pub records: Vec<NewRecord<'r>>,
}

impl<'r> BatchBuilder<'r> {
    /// An empty, uncompressed, non-transactional CreateTime batch with no producer.
    pub fn new(base_offset: i64) -> BatchBuilder<'r> {
        BatchBuilder {
            base_offset,
            partition_leader_epoch: -1,
            compression: Compression::None,
            timestamp_type: TimestampType::CreateTime,
            transactional: false,
            control: false,
            delete_horizon_ms: None,
            unused_attribute_bits: 0,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            base_timestamp: None,
            max_timestamp: None,
            last_offset_delta: None,
            records: Vec::new(),
        }
    }

    /// A builder with every header field of `batch` as stored (no records yet): with the
    /// batch's records added through [`NewRecord::from_record`] it writes the same bytes.
    pub fn from_batch(batch: &Batch<'_>) -> BatchBuilder<'r> {
        let a = batch.attributes;
        BatchBuilder {
            base_offset: batch.base_offset,
            partition_leader_epoch: batch.partition_leader_epoch,
            compression: a.compression().unwrap_or(Compression::None),
            timestamp_type: a.timestamp_type(),
            transactional: a.is_transactional(),
            control: a.is_control(),
            delete_horizon_ms: batch.delete_horizon_ms(),
            unused_attribute_bits: a.unused_bits(),
            producer_id: batch.producer_id,
            producer_epoch: batch.producer_epoch,
            base_sequence: batch.base_sequence,
            base_timestamp: Some(batch.base_timestamp),
            max_timestamp: Some(batch.max_timestamp),
            last_offset_delta: Some(batch.last_offset_delta),
            records: Vec::new(),
        }
    }

    pub fn push(&mut self, record: NewRecord<'r>) -> &mut BatchBuilder<'r> {
        self.records.push(record);
        self
    }

    /// The attributes this batch is written with.
    pub fn attributes(&self) -> Attributes {
        let mut a = i16::from(self.compression.id())
            | (self.unused_attribute_bits & Attributes::UNUSED_MASK);
        if self.timestamp_type == TimestampType::LogAppendTime {
            a |= Attributes::TIMESTAMP_TYPE;
        }
        if self.transactional {
            a |= Attributes::TRANSACTIONAL;
        }
        if self.control {
            a |= Attributes::CONTROL;
        }
        if self.delete_horizon_ms.is_some() {
            a |= Attributes::DELETE_HORIZON;
        }
        Attributes(a)
    }

    /// The batch's bytes.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the batch to `out` (a file image being built); on error `out` is unchanged.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        let result = self.write(out, start);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn write(&self, out: &mut Vec<u8>, start: usize) -> Result<()> {
        let base_timestamp = self
            .delete_horizon_ms
            .or(self.base_timestamp)
            .or_else(|| self.records.first().map(|r| r.timestamp))
            .unwrap_or(-1);
        let max_timestamp = self
            .max_timestamp
            .or_else(|| self.records.iter().map(|r| r.timestamp).max())
            .unwrap_or(-1);
        let last_offset_delta = self
            .last_offset_delta
            .or_else(|| self.records.last().map(|r| r.offset_delta))
            .unwrap_or(0);
        let count = i32::try_from(self.records.len())
            .map_err(|_| Error::field(ErrorKind::InvalidLength, "records", "too many records"))?;

        out.resize(start + super::RECORD_BATCH_OVERHEAD, 0);
        if self.compression == Compression::None {
            for r in &self.records {
                write_record(out, r, base_timestamp)?;
            }
        } else {
            let mut plain = Vec::new();
            for r in &self.records {
                write_record(&mut plain, r, base_timestamp)?;
            }
            out.extend_from_slice(&compression::compress(self.compression, &plain)?);
        }
        let length = i32::try_from(out.len() - start - super::LOG_OVERHEAD).map_err(|_| {
            Error::field(
                ErrorKind::InvalidLength,
                "length",
                "batch larger than 2 GiB",
            )
        })?;
        let header = out
            .get_mut(start..start + super::RECORD_BATCH_OVERHEAD)
            .unwrap_or_default();
        let mut put = |pos: usize, bytes: &[u8]| {
            if let Some(dst) = header.get_mut(pos..pos + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        };
        put(0, &self.base_offset.to_be_bytes());
        put(at::LENGTH, &length.to_be_bytes());
        put(
            at::PARTITION_LEADER_EPOCH,
            &self.partition_leader_epoch.to_be_bytes(),
        );
        put(at::MAGIC, &[super::MAGIC_V2 as u8]);
        put(at::ATTRIBUTES, &self.attributes().0.to_be_bytes());
        put(at::LAST_OFFSET_DELTA, &last_offset_delta.to_be_bytes());
        put(at::BASE_TIMESTAMP, &base_timestamp.to_be_bytes());
        put(at::MAX_TIMESTAMP, &max_timestamp.to_be_bytes());
        put(at::PRODUCER_ID, &self.producer_id.to_be_bytes());
        put(at::PRODUCER_EPOCH, &self.producer_epoch.to_be_bytes());
        put(at::BASE_SEQUENCE, &self.base_sequence.to_be_bytes());
        put(at::RECORDS_COUNT, &count.to_be_bytes());
        let crc = crc::crc32c(out.get(start + at::ATTRIBUTES..).unwrap_or_default());
        if let Some(dst) = out.get_mut(start + at::CRC..start + at::CRC + 4) {
            dst.copy_from_slice(&crc.to_be_bytes());
        }
        Ok(())
    }
}

fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn uvarint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_uvarint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_varint(out: &mut Vec<u8>, v: i32) {
    put_uvarint(out, u64::from(zigzag32(v)));
}

fn len_i32(n: usize, field: &str) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::field(ErrorKind::InvalidLength, field, "longer than 2 GiB"))
}

fn bytes_size(b: Option<&[u8]>, field: &str) -> Result<usize> {
    Ok(match b {
        None => 1,
        Some(b) => uvarint_len(u64::from(zigzag32(len_i32(b.len(), field)?))) + b.len(),
    })
}

fn put_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => put_varint(out, -1),
        Some(b) => {
            put_varint(out, b.len() as i32);
            out.extend_from_slice(b);
        }
    }
}

/// Appends one record (`Length` varint, then its body) the way `DefaultRecord.writeTo` does.
fn write_record(out: &mut Vec<u8>, r: &NewRecord<'_>, base_timestamp: i64) -> Result<()> {
    let ts_delta = r.timestamp.wrapping_sub(base_timestamp);
    let mut body = 1
        + uvarint_len(zigzag64(ts_delta))
        + uvarint_len(u64::from(zigzag32(r.offset_delta)))
        + bytes_size(r.key.as_deref(), "key")?
        + bytes_size(r.value.as_deref(), "value")?
        + uvarint_len(u64::from(zigzag32(len_i32(r.headers.len(), "headers")?)));
    for h in &r.headers {
        body +=
            bytes_size(Some(&h.key), "headerKey")? + bytes_size(h.value.as_deref(), "headerValue")?;
    }
    let body_len = len_i32(body, "record")?;
    out.reserve(body + 5);
    put_varint(out, body_len);
    out.push(r.attributes as u8);
    put_uvarint(out, zigzag64(ts_delta));
    put_varint(out, r.offset_delta);
    put_bytes(out, r.key.as_deref());
    put_bytes(out, r.value.as_deref());
    put_varint(out, r.headers.len() as i32);
    for h in &r.headers {
        put_bytes(out, Some(&h.key));
        put_bytes(out, h.value.as_deref());
    }
    Ok(())
}
