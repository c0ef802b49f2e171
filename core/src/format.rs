//! Text and JSON renderings shared by every front end.
//!
//! Owns: Kafka's `toString` forms of the metadata objects a record value decodes to (what
//! `kafka-dump-log --remote-log-metadata-decoder` prints as a payload), the dump-log listing of a
//! `__remote_log_metadata` segment file (byte for byte Kafka 4.4.0's, with the record key and
//! tombstones added only when asked), and the same listing as JSON. Never: I/O (the host passes
//! the file's name and bytes), decisions about records.
//!
//! Where the text cannot be Kafka's: for a value Kafka cannot decode, Kafka prints "Error at
//! offset N, skipping." followed by a Java exception message; rlmeta prints the same prefix with
//! its own typed error, whose wording differs.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::batch::{Batch, Batches, CrcCheck, ReadOptions};
use crate::error::{Error, ErrorKind};
use crate::feature::{FEATURE_NAME, MetadataLevel, parse_level_record};
use crate::json::{Int64Style, i64_json, record_to_json_with, to_hex};
use crate::key::RecordKey;
use crate::model::{PartitionDeleteState, SegmentState};
use crate::record::{
    LeaderEpochEntry, Record, SegmentIdEntry, TopicIdPartitionEntry, Value, decode_value,
};
use crate::wire::Reader;

fn tip(t: &TopicIdPartitionEntry<'_>) -> String {
    format!("{}:{}-{}", t.id, t.name, t.partition)
}

fn segment_id(s: &SegmentIdEntry<'_>) -> String {
    format!(
        "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
        tip(&s.topic_id_partition),
        s.id
    )
}

/// Java's sorted map form of the leader epochs (`{0=0, 1=20}`), duplicate epochs: the last wins.
fn epochs(e: &[LeaderEpochEntry<'_>]) -> String {
    let mut sorted: Vec<(i32, i64)> = e.iter().rev().map(|e| (e.leader_epoch, e.offset)).collect();
    sorted.sort_by_key(|(epoch, _)| *epoch);
    sorted.dedup_by_key(|(epoch, _)| *epoch);
    let inner: Vec<String> = sorted
        .iter()
        .map(|(epoch, offset)| format!("{epoch}={offset}"))
        .collect();
    format!("{{{}}}", inner.join(", "))
}

fn custom(c: Option<&[u8]>) -> String {
    c.map_or_else(
        || "Optional.empty".to_owned(),
        |c| format!("Optional[CustomMetadata{{{} bytes}}]", c.len()),
    )
}

fn segment_state(id: i8) -> String {
    SegmentState::from_id(id).map_or_else(|| format!("UNKNOWN({id})"), |s| s.name().to_owned())
}

/// Kafka's `toString` of the object a record value decodes to.
pub fn to_kafka_string(v: &Value<'_>) -> String {
    match &v.record {
        Record::Segment(s) => format!(
            "RemoteLogSegmentMetadata{{remoteLogSegmentId={}, startOffset={}, endOffset={}, brokerId={}, maxTimestampMs={}, \
             eventTimestampMs={}, segmentLeaderEpochs={}, segmentSizeInBytes={}, customMetadata={}, state={}, txnIdxEmpty={}}}",
            segment_id(&s.remote_log_segment_id),
            s.start_offset,
            s.end_offset,
            s.broker_id,
            s.max_timestamp_ms,
            s.event_timestamp_ms,
            epochs(&s.segment_leader_epochs),
            s.segment_size_in_bytes,
            custom(s.custom_metadata.as_deref()),
            segment_state(s.remote_log_segment_state),
            s.txn_index_empty
        ),
        Record::Update(u) => format!(
            "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={}, customMetadata={}, state={}, eventTimestampMs={}, brokerId={}}}",
            segment_id(&u.remote_log_segment_id),
            custom(u.custom_metadata.as_deref()),
            segment_state(u.remote_log_segment_state),
            u.event_timestamp_ms,
            u.broker_id
        ),
        Record::PartitionDelete(d) => format!(
            "RemotePartitionDeleteMetadata{{topicPartition={}, state={}, eventTimestampMs={}, brokerId={}}}",
            tip(&d.topic_id_partition),
            PartitionDeleteState::from_id(d.remote_partition_delete_state).map_or_else(
                || format!("UNKNOWN({})", d.remote_partition_delete_state),
                |s| s.name().to_owned()
            ),
            d.event_timestamp_ms,
            d.broker_id
        ),
        Record::Snapshot(s) => format!(
            "RemoteLogSegmentMetadataSnapshot{{segmentId={}, startOffset={}, endOffset={}, maxTimestampMs={}, segmentLeaderEpochs={}, \
             segmentSizeInBytes={}, customMetadata={}, state={}, txnIdxEmpty={}}}",
            s.segment_id,
            s.start_offset,
            s.end_offset,
            s.max_timestamp_ms,
            epochs(&s.segment_leader_epochs),
            s.segment_size_in_bytes,
            custom(s.custom_metadata.as_deref()),
            segment_state(s.remote_log_segment_state),
            s.txn_index_empty
        ),
    }
}

/// What the dump adds to Kafka's listing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DumpOptions {
    /// Print each record's key (` key: <text>` before the payload, as kafka-dump-log does for
    /// other decoders) and tombstones as `<tombstone>`. Off: Kafka 4.4.0's text exactly.
    pub keys: bool,
}

/// The base offset in a segment file name (`00000000000000000042.log` -> 42), as Kafka's tool
/// prints it in "Log starting offset".
pub fn base_offset_from_file_name(name: &str) -> Option<i64> {
    let file = name.rsplit('/').next()?;
    let stem = file.strip_suffix(".log")?;
    stem.parse().ok()
}

/// The message of the exception Kafka's `RemoteLogMetadataSerde` throws for bytes that rlmeta's
/// decoder refused with `e` (spec §1.2), so that dump lines match Kafka's. Faults found after the
/// bytes decode (Kafka's object checks) keep rlmeta's own text.
pub fn kafka_decode_error_text(value: &[u8], e: &Error) -> String {
    let mut r = Reader::new(value);
    let mut header = [None; 3];
    for slot in &mut header {
        *slot = r.uvarint("header").ok().map(|v| v as i32);
        if slot.is_none() {
            break;
        }
    }
    let too_large = e.message().contains("too large");
    let reading = matches!(e.kind(), ErrorKind::Truncated | ErrorKind::InvalidVarint);
    match (e.field_name(), header) {
        (Some("frameVersion"), _) if reading => "Error while reading frame version".to_owned(),
        (Some("frameVersion"), _) if too_large => {
            "Value for frame version was too large.".to_owned()
        }
        (Some("frameVersion"), [Some(0), ..]) => {
            "Could not deserialize metadata record with frame version 0. Note that upgrades \
             from the preview release of KRaft in 2.8 to newer versions are not supported."
                .to_owned()
        }
        (Some("frameVersion"), [Some(v), ..]) => format!(
            "Could not deserialize metadata record due to unknown frame version {}(only frame version 1 is supported)",
            v as i16
        ),
        (Some("apiKey"), _) if reading => "Error while reading type".to_owned(),
        (Some("apiKey"), _) if too_large => "Value for type was too large.".to_owned(),
        (Some("apiKey"), [_, Some(k), _]) => {
            format!(
                "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {}",
                k as i16
            )
        }
        (Some("version"), _) if reading => "Error while reading version".to_owned(),
        (Some("version"), _) if too_large => "Value for version was too large.".to_owned(),
        (_, [_, Some(k), _]) if e.kind() == ErrorKind::TrailingBytes => format!(
            "Found {} byte(s) of garbage after {}",
            value.len().saturating_sub(e.offset().unwrap_or(0)),
            k as i16
        ),
        (_, [_, Some(k), Some(_)]) if e.kind() != ErrorKind::InvalidRecord => {
            format!("Failed to deserialize record with type {}", k as i16)
        }
        _ => e.to_string(),
    }
}

/// What Kafka 4.4.0's decoder prints for a null value (its deserializer dereferences it).
const KAFKA_NULL_VALUE_TEXT: &str = "Cannot invoke \"java.nio.ByteBuffer.remaining()\" because the return value of \
     \"org.apache.kafka.common.record.internal.Record.value()\" is null";

fn payload(v: Option<&[u8]>, offset: i64) -> Result<String, String> {
    let Some(v) = v else {
        return Err("<tombstone>".to_owned());
    };
    let value = decode_value(v).map_err(|e| {
        format!(
            "Error at offset {offset}, skipping. {}",
            kafka_decode_error_text(v, &e)
        )
    })?;
    value
        .validate()
        .map_err(|e| format!("Error at offset {offset}, skipping. {e}"))?;
    Ok(to_kafka_string(&value))
}

/// How rlmeta's own listing shows a level record (Kafka's tool can only fail to decode it).
fn level_text(level: Option<crate::Result<MetadataLevel>>) -> String {
    match level {
        Some(Ok(l)) => format!("{FEATURE_NAME} level {}", l.level()),
        Some(Err(e)) => format!("{FEATURE_NAME} level record, invalid: {e}"),
        None => String::new(),
    }
}

/// The dump reports CRC mismatches instead of stopping at them.
const DUMP_READ: ReadOptions = ReadOptions {
    crc: CrcCheck::Report,
    max_decompressed_size: crate::batch::DEFAULT_MAX_DECOMPRESSED_SIZE,
};

fn batch_line(out: &mut String, b: &Batch<'_>) {
    let delete_horizon = b.delete_horizon_ms().map_or_else(
        || "OptionalLong.empty".to_owned(),
        |h| format!("OptionalLong[{h}]"),
    );
    let codec = b.compression().map_or_else(
        |_| format!("unknown({})", b.attributes.compression_id()),
        |c| c.name().to_owned(),
    );
    let _ = writeln!(
        out,
        "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} \
         partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {delete_horizon} position: {} {}: {} \
         size: {} magic: {} compresscodec: {codec} crc: {} isvalid: {}",
        b.base_offset,
        b.last_offset(),
        b.records_count,
        b.base_sequence,
        b.last_sequence(),
        b.producer_id,
        b.producer_epoch,
        b.partition_leader_epoch,
        b.is_transactional(),
        b.is_control(),
        b.position,
        b.timestamp_type().name(),
        b.max_timestamp,
        b.size_in_bytes(),
        b.magic,
        b.crc,
        b.crc_valid().unwrap_or(false)
    );
}

/// One record's line of rlmeta's listing with keys, for a record read from a live topic (no
/// batch around it): `| offset: O CreateTime: T keySize: K valueSize: V key: ... payload: ...`.
pub fn record_line(
    offset: i64,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> String {
    let mut out = format!(
        "| offset: {offset} CreateTime: {timestamp} keySize: {} valueSize: {}",
        key.map_or(-1, |k| k.len() as i64),
        value.map_or(-1, |v| v.len() as i64)
    );
    if let Some(k) = key {
        let _ = write!(out, " key: {}", String::from_utf8_lossy(k));
    }
    let level = parse_level_record(key, value);
    let text = match payload(value, offset) {
        _ if level.is_some() => level_text(level),
        Ok(t) | Err(t) => t,
    };
    let _ = write!(out, " payload: {text}");
    out
}

/// The listing `kafka-dump-log --remote-log-metadata-decoder --files <name>` prints for a
/// segment file of `__remote_log_metadata` (the first line names the file as given). Like
/// Kafka's tool it goes on past a batch whose CRC is wrong, printing `isvalid: false`.
pub fn dump_log(name: &str, file: &[u8], options: DumpOptions) -> String {
    let mut out = String::new();
    let mut dump = DumpFeed::new(name, file.len(), options, &mut out);
    dump.push(file, &mut out);
    dump.end(&mut out);
    out
}

/// [`dump_log`] of a file fed in chunks of any size: each piece of the listing is written to
/// `out` as the batches it lists are whole (the host empties `out` when it likes), in memory
/// bounded by the largest batch, not the file.
#[derive(Clone, Debug)]
pub struct DumpFeed {
    name: String,
    options: DumpOptions,
    batches: crate::batch::BatchFeed,
}

impl DumpFeed {
    /// Begins the listing of the file `name`, `len` bytes long: its first lines go to `out`.
    pub fn new(name: &str, len: usize, options: DumpOptions, out: &mut String) -> DumpFeed {
        let _ = writeln!(out, "Dumping {name}");
        let _ = writeln!(
            out,
            "Log starting offset: {}",
            base_offset_from_file_name(name).unwrap_or(0)
        );
        DumpFeed {
            name: name.to_string(),
            options,
            batches: crate::batch::BatchFeed::new(len, DUMP_READ),
        }
    }

    /// The next bytes of the file: the lines of every batch now whole go to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut String) {
        let options = self.options;
        self.batches.push(
            chunk,
            |batch| {
                if let Ok(b) = batch {
                    batch_lines(out, &b, options);
                }
            },
            |_| {},
        );
    }

    /// Ends the listing: what was no whole entry is counted in its last line.
    pub fn end(mut self, out: &mut String) {
        self.batches.end(|_| {});
        let invalid = self.batches.invalid_bytes();
        if invalid > 0 {
            let name = &self.name;
            let file_name = name.rsplit('/').next().unwrap_or(name);
            let _ = writeln!(
                out,
                "Found {invalid} invalid bytes at the end of {file_name}"
            );
        }
    }
}

/// The lines of one batch of the listing: its header, then each record.
fn batch_lines(out: &mut String, b: &Batch<'_>, options: DumpOptions) {
    batch_line(out, b);
    let records = match b.records() {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(
                out,
                "Error reading the records of the batch at position {}: {e}",
                b.position
            );
            return;
        }
    };
    for r in records {
        let Ok(r) = r else {
            let _ = writeln!(
                out,
                "Error reading a record of the batch at position {}",
                b.position
            );
            break;
        };
        let header_keys: Vec<String> = r
            .headers
            .iter()
            .map(|h| String::from_utf8_lossy(h.key).into_owned())
            .collect();
        let _ = write!(
            out,
            "| offset: {} {}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}]",
            r.offset,
            b.timestamp_type().name(),
            r.timestamp,
            r.key.map_or(-1, |k| k.len() as i64),
            r.value.map_or(-1, |v| v.len() as i64),
            r.sequence,
            header_keys.join(",")
        );
        if b.is_control() {
            let _ = writeln!(out, " controlRecord");
            continue;
        }
        if options.keys {
            if let Some(k) = r.key {
                let _ = write!(out, " key: {}", String::from_utf8_lossy(k));
            }
        }
        let level = parse_level_record(r.key, r.value);
        match payload(r.value, r.offset) {
            _ if options.keys && level.is_some() => {
                let _ = writeln!(out, " payload: {}", level_text(level));
            }
            Ok(text) => {
                let _ = writeln!(out, " payload: {text}");
            }
            Err(tomb) if r.value.is_none() && options.keys => {
                let _ = writeln!(out, " payload: {tomb}");
            }
            Err(_) if r.value.is_none() => {
                let _ = writeln!(
                    out,
                    " payload: Error at offset {}, skipping. {KAFKA_NULL_VALUE_TEXT}",
                    r.offset
                );
            }
            Err(err) => {
                let _ = writeln!(out, " payload: {err}");
            }
        }
    }
}

/// The same listing as JSON: every batch with its header fields, every record with its key
/// (text and parsed KIP-1266 fields when it is one), its value decoded (or `null` for a
/// tombstone, or an error), its headers (key text, value hex or `null`), 64-bit values as
/// `style` says.
pub fn dump_log_json(name: &str, file: &[u8], style: Int64Style) -> Json {
    let big = |v: i64| i64_json(v, style);
    let mut batches_json = Vec::new();
    let mut batches = Batches::new(file, DUMP_READ);
    let mut errors = Vec::new();
    for batch in batches.by_ref() {
        let b = match batch {
            Ok(b) => b,
            Err(e) => {
                errors.push(
                    json!({"code": e.code(), "kind": e.kind().name(), "message": e.to_string()}),
                );
                continue;
            }
        };
        let mut records = Vec::new();
        match b.records() {
            Ok(rs) => {
                for r in rs.flatten() {
                    let key = r.key.map(|k| String::from_utf8_lossy(k).into_owned());
                    let parsed = r.key.and_then(|k| RecordKey::parse_bytes(k).ok());
                    let level = parse_level_record(r.key, r.value);
                    let value = match r.value.map(decode_value) {
                        _ if level.is_some() => json!({"levelRecord": match level {
                            Some(Ok(l)) => json!({"level": l.level()}),
                            Some(Err(e)) => json!({"error": {"code": e.code(), "kind": e.kind().name(), "message": e.to_string()}}),
                            None => Json::Null,
                        }}),
                        None => json!({"tombstone": true}),
                        Some(Ok(v)) => {
                            json!({"apiKey": v.record.api_key().id(), "version": v.version,
                                              "record": record_to_json_with(&v, style), "text": to_kafka_string(&v)})
                        }
                        Some(Err(e)) => {
                            json!({"error": {"code": e.code(), "kind": e.kind().name(), "message": e.to_string()}})
                        }
                    };
                    records.push(json!({
                        "offset": big(r.offset), "timestamp": big(r.timestamp), "sequence": r.sequence,
                        "key": key, "keyFields": parsed.map(|k| json!({"topicId": k.topic_id.to_string(), "topic": k.topic,
                            "partition": k.partition, "endOffset": big(k.end_offset), "brokerLeaderEpoch": k.broker_leader_epoch, "update": k.update})),
                        "keySize": r.key.map_or(-1, |k| k.len() as i64), "valueSize": r.value.map_or(-1, |v| v.len() as i64),
                        "valueHex": r.value.map(to_hex), "value": value,
                        "headers": r.headers.iter().map(|h| json!({"key": String::from_utf8_lossy(h.key), "valueHex": h.value.map(to_hex)})).collect::<Vec<_>>(),
                    }));
                }
            }
            Err(e) => errors
                .push(json!({"position": b.position, "code": e.code(), "message": e.to_string()})),
        }
        batches_json.push(json!({
            "position": b.position, "baseOffset": big(b.base_offset), "lastOffset": big(b.last_offset()), "count": b.records_count,
            "baseSequence": b.base_sequence, "lastSequence": b.last_sequence(), "producerId": big(b.producer_id),
            "producerEpoch": b.producer_epoch, "partitionLeaderEpoch": b.partition_leader_epoch,
            "isTransactional": b.is_transactional(), "isControl": b.is_control(),
            "deleteHorizonMs": b.delete_horizon_ms().map(big), "timestampType": b.timestamp_type().name(),
            "maxTimestamp": big(b.max_timestamp), "size": b.size_in_bytes(), "magic": b.magic,
            "compression": b.compression().map(|c| c.name()).ok(), "crc": b.crc, "crcValid": b.crc_valid(),
            "records": records,
        }));
    }
    json!({"file": name, "logStartOffset": base_offset_from_file_name(name).map(big),
           "batches": batches_json, "invalidBytesAtEnd": batches.invalid_bytes(), "errors": errors})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_fed_in_chunks_is_the_listing_of_the_whole_file() {
        let mut checked = 0;
        for (d, data) in crate::testing::fixtures::metadata_partitions() {
            for f in &data {
                let mut inputs = vec![f.clone(), f[..f.len() / 2].to_vec()];
                if f.len() > 100 {
                    let mut flipped = f.clone();
                    flipped[f.len() / 3] ^= 0x5a;
                    inputs.push(flipped);
                    let mut bad = f.clone();
                    bad[8..12].copy_from_slice(&3i32.to_be_bytes());
                    inputs.push(bad);
                }
                for file in inputs {
                    let name = "dir/00000000000000000007.log";
                    let options = DumpOptions { keys: true };
                    let whole = dump_log(name, &file, options);
                    for chunk in [1, 11, 4096] {
                        let mut out = String::new();
                        let mut dump = DumpFeed::new(name, file.len(), options, &mut out);
                        for c in file.chunks(chunk) {
                            dump.push(c, &mut out);
                        }
                        dump.end(&mut out);
                        assert_eq!(out, whole, "{d:?} in chunks of {chunk}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
