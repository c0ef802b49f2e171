//! KRaft checkpoint (snapshot) files and the feature levels they finalize.
//!
//! Owns: checkpoint file names (`<endOffset, 20 digits>-<epoch, 10 digits>.checkpoint`, their
//! `.checkpoint.part` and `.checkpoint.deleted` forms, and `bootstrap.checkpoint`); the content of
//! a checkpoint image — record batches (see [`crate::batch`]) holding a SNAPSHOT_HEADER control
//! record, optional KRAFT_VERSION / KRAFT_VOTERS control records, data batches of metadata
//! records framed like `MetadataRecordSerde` writes them (frame version 1, api key, version,
//! body), and a SNAPSHOT_FOOTER; decoding of `FeatureLevelRecord` (api key 12), every other api
//! key reported by number and version only; and [`finalized_features`]: the feature levels a
//! complete checkpoint holds. Works the same on the post-KIP-1170 zero checkpoint
//! (`00000000000000000000-0000000000.checkpoint`, bootstrap records included) and on the older
//! `bootstrap.checkpoint` (same format).
//! Never: I/O (the host reads the file), deciding what an absent feature means (a feature no
//! record names is `None`, never level 0: Kafka's bootstrap writes only features above level 0,
//! and an unknown level is not level 0), applying any other metadata record.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use crate::batch::{self, Batches, ControlRecord, ControlValue, ReadOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::wire::{RawTaggedField, Reader, Writer};

/// The api key of `FeatureLevelRecord` in the cluster metadata log.
pub const FEATURE_LEVEL_RECORD_API_KEY: u16 = 12;
/// The feature that carries the metadata version.
pub const METADATA_VERSION: &str = "metadata.version";
/// The feature KIP-1266 adds.
pub const REMOTE_LOG_METADATA_VERSION: &str = "remote.log.metadata.version";
/// The name `kafka-storage format` gives the legacy bootstrap file.
pub const BOOTSTRAP_FILE_NAME: &str = "bootstrap.checkpoint";

const SUFFIX: &str = ".checkpoint";
const PARTIAL_SUFFIX: &str = ".checkpoint.part";
const DELETED_SUFFIX: &str = ".checkpoint.deleted";
const OFFSET_WIDTH: usize = 20;
const EPOCH_WIDTH: usize = 10;
/// Frame and header numbers above this are refused, as Kafka's serde refuses them.
const MAX_HEADER_VALUE: u32 = i16::MAX as u32;

/// A snapshot's id: the offset it ends at (exclusive) and the epoch of that offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SnapshotId {
    pub end_offset: i64,
    pub epoch: i32,
}

impl SnapshotId {
    /// The bootstrap ("zero") snapshot id, offset 0 and epoch 0.
    pub const ZERO: SnapshotId = SnapshotId {
        end_offset: 0,
        epoch: 0,
    };

    pub fn is_zero(&self) -> bool {
        *self == SnapshotId::ZERO
    }

    /// The file name Kafka gives this snapshot, e.g. `00000000000000000000-0000000000.checkpoint`.
    /// Negative numbers (never written by Kafka) are padded after their sign, like Java's
    /// `NumberFormat`.
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}{SUFFIX}",
            pad(self.end_offset.into(), OFFSET_WIDTH),
            pad(self.epoch.into(), EPOCH_WIDTH)
        )
    }
}

fn pad(v: i128, width: usize) -> String {
    if v < 0 {
        format!("-{:0width$}", v.unsigned_abs())
    } else {
        format!("{v:0width$}")
    }
}

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OffsetAndEpoch(offset={}, epoch={})",
            self.end_offset, self.epoch
        )
    }
}

/// Which stage of its life a snapshot file is in, by its suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SnapshotFileState {
    /// `.checkpoint`: complete and immutable.
    Complete,
    /// `-<random>.checkpoint.part`: being written.
    Partial,
    /// `.checkpoint.deleted`: marked for deletion.
    Deleted,
}

/// What a checkpoint file's name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckpointFileName {
    /// A snapshot of the `__cluster_metadata` log (the zero checkpoint when its id is zero).
    Snapshot {
        id: SnapshotId,
        state: SnapshotFileState,
    },
    /// The legacy `bootstrap.checkpoint` of `kafka-storage format` (before KIP-1170).
    Bootstrap,
}

/// Reads a checkpoint file name (a path is fine: only its last component counts). `None` for
/// anything else. Stricter than Kafka's `Snapshots.parse`, which only slices the digits: here
/// the digits, the dash and the suffix must be exactly where Kafka writes them, and the numbers
/// must fit Kafka's types (`long` offset, `int` epoch).
pub fn parse_checkpoint_file_name(path: &str) -> Option<CheckpointFileName> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if name == BOOTSTRAP_FILE_NAME {
        return Some(CheckpointFileName::Bootstrap);
    }
    let offset = name.get(..OFFSET_WIDTH)?;
    let dash = name.get(OFFSET_WIDTH..OFFSET_WIDTH + 1)?;
    let epoch = name.get(OFFSET_WIDTH + 1..OFFSET_WIDTH + 1 + EPOCH_WIDTH)?;
    let rest = name.get(OFFSET_WIDTH + 1 + EPOCH_WIDTH..)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if dash != "-" || !digits(offset) || !digits(epoch) {
        return None;
    }
    let state = if rest == SUFFIX {
        SnapshotFileState::Complete
    } else if rest == DELETED_SUFFIX {
        SnapshotFileState::Deleted
    } else if rest == PARTIAL_SUFFIX
        || rest
            .strip_suffix(PARTIAL_SUFFIX)
            .is_some_and(|r| r.starts_with('-') && r.len() > 1)
    {
        SnapshotFileState::Partial
    } else {
        return None;
    };
    let id = SnapshotId {
        end_offset: offset.parse().ok()?,
        epoch: epoch.parse().ok()?,
    };
    Some(CheckpointFileName::Snapshot { id, state })
}

/// The snapshot id of a complete snapshot's file name (`<20 digits>-<10 digits>.checkpoint`).
pub fn snapshot_id_from_file_name(path: &str) -> Option<SnapshotId> {
    match parse_checkpoint_file_name(path)? {
        CheckpointFileName::Snapshot {
            id,
            state: SnapshotFileState::Complete,
        } => Some(id),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Metadata records

/// `FeatureLevelRecord` (api key 12, version 0): a feature and its finalized level.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FeatureLevelRecord<'b> {
    pub name: Cow<'b, str>,
    /// 0 means the feature is not enabled.
    pub feature_level: i16,
    pub unknown_tagged_fields: Vec<RawTaggedField<'b>>,
}

impl FeatureLevelRecord<'_> {
    /// The framed record as `MetadataRecordSerde` writes it (frame 1, api key 12, version 0).
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut w = Writer::with_capacity(self.name.len() + 8);
        w.uvarint(1);
        w.uvarint(u32::from(FEATURE_LEVEL_RECORD_API_KEY));
        w.uvarint(0);
        w.compact_str(&self.name, "name")?;
        w.bytes(&self.feature_level.to_be_bytes());
        w.uvarint(self.unknown_tagged_fields.len() as u32);
        for t in &self.unknown_tagged_fields {
            w.uvarint(t.tag);
            let n = u32::try_from(t.data.len()).map_err(|_| {
                Error::field(ErrorKind::InvalidLength, "_tagged_fields", "too long")
            })?;
            w.uvarint(n);
            w.bytes(&t.data);
        }
        Ok(w.into_bytes())
    }
}

/// The body of a metadata record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MetadataBody<'b> {
    FeatureLevel(FeatureLevelRecord<'b>),
    /// Any other api key: the body, not decoded.
    Other(&'b [u8]),
}

/// One metadata record (the value of a record in a data batch of the metadata log).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MetadataRecord<'b> {
    pub api_key: u16,
    pub version: u16,
    pub body: MetadataBody<'b>,
}

fn header_number(r: &mut Reader<'_>, field: &str, too_large: ErrorKind, what: &str) -> Result<u16> {
    let at = r.position();
    let v = r.uvarint(field)?;
    if v > MAX_HEADER_VALUE {
        return Err(Error::at(
            too_large,
            at,
            field,
            format!("Value for {what} was too large."),
        ));
    }
    Ok(v as u16)
}

/// Decodes a framed metadata record: frame version 1, api key, version, then the body. The body
/// of `FeatureLevelRecord` is decoded (version 0 only, as Kafka reads it, the whole value
/// consumed); other bodies are returned as they are.
pub fn decode_metadata_record(value: &[u8]) -> Result<MetadataRecord<'_>> {
    let mut r = Reader::new(value);
    let frame = header_number(
        &mut r,
        "frameVersion",
        ErrorKind::BadFrameVersion,
        "frame version",
    )?;
    match frame {
        1 => {}
        0 => {
            return Err(Error::at(
                ErrorKind::BadFrameVersion,
                0,
                "frameVersion",
                "Could not deserialize metadata record with frame version 0. Note that upgrades \
                 from the preview release of KRaft in 2.8 to newer versions are not supported.",
            ));
        }
        n => {
            return Err(Error::at(
                ErrorKind::BadFrameVersion,
                0,
                "frameVersion",
                format!(
                    "Could not deserialize metadata record due to unknown frame version {n}(only \
                     frame version 1 is supported)"
                ),
            ));
        }
    }
    let api_key = header_number(&mut r, "apiKey", ErrorKind::UnknownApiKey, "type")?;
    let version = header_number(&mut r, "version", ErrorKind::UnsupportedVersion, "version")?;
    if api_key != FEATURE_LEVEL_RECORD_API_KEY {
        let body = r.take(r.remaining(), "body")?;
        return Ok(MetadataRecord {
            api_key,
            version,
            body: MetadataBody::Other(body),
        });
    }
    if version != 0 {
        return Err(Error::at(
            ErrorKind::UnsupportedVersion,
            r.position(),
            "version",
            format!("Can't read version {version} of FeatureLevelRecord"),
        ));
    }
    let name = r.compact_str("name")?;
    let level = r.take(2, "featureLevel")?;
    let feature_level = i16::from_be_bytes([level[0], level[1]]);
    let mut unknown_tagged_fields = Vec::new();
    let n = r.uvarint("_tagged_fields")?;
    for _ in 0..n {
        let tag = r.uvarint("_tagged_fields")?;
        let size = r.uvarint("_tagged_fields")?;
        let data = r.tagged_data(size, "_tagged_fields")?;
        unknown_tagged_fields.push(RawTaggedField {
            tag,
            data: Cow::Borrowed(data),
        });
    }
    if r.remaining() != 0 {
        return Err(Error::at(
            ErrorKind::TrailingBytes,
            r.position(),
            "body",
            format!(
                "Found {} byte(s) of garbage after {FEATURE_LEVEL_RECORD_API_KEY}",
                r.remaining()
            ),
        ));
    }
    Ok(MetadataRecord {
        api_key,
        version,
        body: MetadataBody::FeatureLevel(FeatureLevelRecord {
            name: Cow::Borrowed(name),
            feature_level,
            unknown_tagged_fields,
        }),
    })
}

// ---------------------------------------------------------------------------------------------
// Checkpoint files

/// The SNAPSHOT_HEADER control record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SnapshotHeader {
    pub version: i16,
    pub last_contained_log_timestamp: i64,
}

/// A metadata record of a checkpoint, by number (features are listed in
/// [`Checkpoint::features`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MetadataEntry {
    pub offset: i64,
    pub api_key: u16,
    pub version: u16,
}

/// A `FeatureLevelRecord` of a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FeatureLevel {
    pub offset: i64,
    pub name: String,
    pub level: i16,
}

/// What a checkpoint file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// The first SNAPSHOT_HEADER record.
    pub header: Option<SnapshotHeader>,
    /// The version of the last SNAPSHOT_FOOTER record.
    pub footer: Option<i16>,
    /// The KRaft protocol version of the last KRAFT_VERSION record.
    pub kraft_version: Option<i16>,
    /// Voter ids of the last KRAFT_VOTERS record.
    pub voters: Option<Vec<i32>>,
    /// Number of batches (control and data).
    pub batches: usize,
    /// Every metadata record, in order.
    pub records: Vec<MetadataEntry>,
    /// Every `FeatureLevelRecord`, in order.
    pub features: Vec<FeatureLevel>,
    /// The file starts with a SNAPSHOT_HEADER record and ends with a SNAPSHOT_FOOTER record.
    complete: bool,
}

impl Checkpoint {
    /// Reads a whole checkpoint image. Every batch must be whole and CRC-valid, every record
    /// must parse, every data record must be a framed metadata record and every control record
    /// must decode; a missing header or footer is not an error here (see
    /// [`Checkpoint::is_complete`]).
    pub fn parse(file: &[u8]) -> Result<Checkpoint> {
        Checkpoint::parse_with(file, ReadOptions::default())
    }

    /// [`Checkpoint::parse`] with other batch options (e.g. a larger decompression limit).
    pub fn parse_with(file: &[u8], options: ReadOptions) -> Result<Checkpoint> {
        let mut cp = Checkpoint::default();
        let mut first = true;
        let mut last_is_footer = false;
        for batch in Batches::new(file, options) {
            let batch = batch?;
            cp.batches += 1;
            for record in batch.records()? {
                let record = record?;
                last_is_footer = false;
                if batch.is_control() {
                    let at = |e: Error| place(e, batch.position, record.offset);
                    let control = ControlRecord::parse(record.key, record.value).map_err(at)?;
                    match control.value {
                        ControlValue::SnapshotHeader {
                            version,
                            last_contained_log_timestamp,
                        } => {
                            if first {
                                cp.complete = true;
                            }
                            cp.header.get_or_insert(SnapshotHeader {
                                version,
                                last_contained_log_timestamp,
                            });
                        }
                        ControlValue::SnapshotFooter { version } => {
                            cp.footer = Some(version);
                            last_is_footer = true;
                        }
                        ControlValue::KRaftVersion { kraft_version, .. } => {
                            cp.kraft_version = Some(kraft_version);
                        }
                        ControlValue::Voters(v) => {
                            cp.voters = Some(v.voters.iter().map(|v| v.voter_id).collect());
                        }
                        _ => {}
                    }
                } else {
                    let value = record.value.ok_or_else(|| {
                        Error::at(
                            ErrorKind::InvalidRecord,
                            batch.position,
                            "value",
                            format!(
                                "metadata record at offset {} has a null value",
                                record.offset
                            ),
                        )
                    })?;
                    let m = decode_metadata_record(value)
                        .map_err(|e| place(e, batch.position, record.offset))?;
                    cp.records.push(MetadataEntry {
                        offset: record.offset,
                        api_key: m.api_key,
                        version: m.version,
                    });
                    if let MetadataBody::FeatureLevel(f) = m.body {
                        cp.features.push(FeatureLevel {
                            offset: record.offset,
                            name: f.name.into_owned(),
                            level: f.feature_level,
                        });
                    }
                }
                first = false;
            }
        }
        cp.complete &= last_is_footer;
        Ok(cp)
    }

    /// Whether the file starts with a snapshot header and ends with a snapshot footer, as every
    /// checkpoint Kafka finishes (snapshots and `bootstrap.checkpoint` alike) does.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// The feature levels the records set, in file order (a later record for a feature wins).
    pub fn feature_levels(&self) -> FeatureLevels {
        let mut levels = FeatureLevels {
            kraft_version: self.kraft_version,
            ..FeatureLevels::default()
        };
        for f in &self.features {
            levels.levels.insert(f.name.clone(), f.level);
        }
        levels
    }
}

/// Puts an error found inside a record value in context: the batch position and the offset.
fn place(e: Error, batch_position: usize, offset: i64) -> Error {
    Error::at(
        e.kind(),
        batch_position,
        e.field_name().unwrap_or("value"),
        format!(
            "in the record at offset {offset} (batch at byte {batch_position}): {}{}",
            e.message(),
            e.offset()
                .map(|o| format!(" (byte {o} of the value)"))
                .unwrap_or_default()
        ),
    )
}

/// Finalized feature levels as a checkpoint states them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureLevels {
    levels: BTreeMap<String, i16>,
    /// From the KRAFT_VERSION control record (`kraft.version` is never a `FeatureLevelRecord`).
    pub kraft_version: Option<i16>,
}

impl FeatureLevels {
    /// The level a `FeatureLevelRecord` set for `name`; `None` when no record names it (which
    /// is not level 0: see the module documentation). A record with level 0 gives `Some(0)`.
    pub fn get(&self, name: &str) -> Option<i16> {
        self.levels.get(name).copied()
    }

    /// The `metadata.version` feature level, when a record sets it.
    pub fn metadata_version(&self) -> Option<i16> {
        self.get(METADATA_VERSION)
    }

    /// The `remote.log.metadata.version` feature level (KIP-1266), when a record sets it.
    pub fn remote_log_metadata_version(&self) -> Option<i16> {
        self.get(REMOTE_LOG_METADATA_VERSION)
    }

    /// Every feature a record set, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i16)> {
        self.levels.iter().map(|(k, v)| (k.as_str(), *v))
    }

    pub fn len(&self) -> usize {
        self.levels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

/// The feature levels a checkpoint file finalizes: the zero checkpoint of KIP-1170, a legacy
/// `bootstrap.checkpoint`, or any later snapshot. The file must parse entirely (see
/// [`Checkpoint::parse`]) and be complete (header first, footer last): a cut file could have
/// lost the very record asked about. Errors: as [`Checkpoint::parse`], and
/// [`ErrorKind::Truncated`] for a file without its header or footer.
pub fn finalized_features(file: &[u8]) -> Result<FeatureLevels> {
    let cp = Checkpoint::parse(file)?;
    if !cp.is_complete() {
        let what = if cp.header.is_none() {
            "does not start with a snapshot header"
        } else {
            "does not end with a snapshot footer"
        };
        return Err(Error::at(
            ErrorKind::Truncated,
            file.len(),
            "snapshotFooter",
            format!("checkpoint {what}: it is incomplete, so its feature levels are unknown"),
        ));
    }
    Ok(cp.feature_levels())
}

/// Writes a checkpoint image the way Kafka's snapshot writer and `BatchFileWriter` do: a control
/// batch (SNAPSHOT_HEADER, then KRAFT_VERSION when given), one data batch of `records` (framed
/// metadata records), and a control batch with SNAPSHOT_FOOTER; base offsets consecutive from 0,
/// every batch at `epoch`, timestamps `append_time`, no producer, uncompressed. For tests and
/// fixtures.
pub fn write_checkpoint(
    epoch: i32,
    append_time: i64,
    last_contained_log_timestamp: i64,
    kraft_version: Option<i16>,
    records: &[Vec<u8>],
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut offset = 0i64;
    let mut control = vec![ControlRecord::new(
        ControlValue::SnapshotHeader {
            version: 0,
            last_contained_log_timestamp,
        },
        false,
    )];
    if let Some(v) = kraft_version {
        control.push(ControlRecord::new(
            ControlValue::KRaftVersion {
                version: 0,
                kraft_version: v,
            },
            false,
        ));
    }
    let mut write = |recs: Vec<batch::NewRecord<'_>>, is_control: bool, out: &mut Vec<u8>| {
        let mut b = batch::BatchBuilder::new(offset);
        b.partition_leader_epoch = epoch;
        b.control = is_control;
        offset += recs.len() as i64;
        b.records = recs;
        b.encode_into(out)
    };
    let header: Result<Vec<_>> = control
        .iter()
        .enumerate()
        .map(|(i, c)| batch::NewRecord::control(i as i32, append_time, c))
        .collect();
    write(header?, true, &mut out)?;
    if !records.is_empty() {
        let data = records
            .iter()
            .enumerate()
            .map(|(i, v)| batch::NewRecord::new(i as i32, append_time, None, Some(v)))
            .collect();
        write(data, false, &mut out)?;
    }
    let footer = ControlRecord::new(ControlValue::SnapshotFooter { version: 0 }, false);
    write(
        vec![batch::NewRecord::control(0, append_time, &footer)?],
        true,
        &mut out,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §9.2's framed FeatureLevelRecord for `remote.log.metadata.version` = 2.
    const SPEC_FEATURE_LEVEL: &str =
        "010c001c72656d6f74652e6c6f672e6d657461646174612e76657273696f6e000200";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn feature(name: &str, level: i16) -> Vec<u8> {
        FeatureLevelRecord {
            name: name.into(),
            feature_level: level,
            unknown_tagged_fields: vec![],
        }
        .encode()
        .unwrap()
    }

    #[test]
    fn spec_feature_level_record_decodes_and_encodes() {
        let bytes = hex(SPEC_FEATURE_LEVEL);
        let m = decode_metadata_record(&bytes).unwrap();
        assert_eq!((m.api_key, m.version), (12, 0));
        let MetadataBody::FeatureLevel(f) = &m.body else {
            panic!("{m:?}")
        };
        assert_eq!(
            (f.name.as_ref(), f.feature_level),
            ("remote.log.metadata.version", 2)
        );
        assert_eq!(f.encode().unwrap(), bytes);
    }

    #[test]
    fn metadata_frame_errors() {
        let kind = |b: &[u8]| decode_metadata_record(b).err().map(|e| e.kind());
        assert_eq!(kind(&[0x00]), Some(ErrorKind::BadFrameVersion));
        assert_eq!(kind(b"corrupted"), Some(ErrorKind::BadFrameVersion));
        assert_eq!(kind(&[0x01, 0x05]), Some(ErrorKind::Truncated));
        assert_eq!(
            kind(&[0x01, 0x0c, 0x01, 0x01, 0, 0, 0]),
            Some(ErrorKind::UnsupportedVersion)
        );
        let mut extra = hex(SPEC_FEATURE_LEVEL);
        extra.push(0);
        assert_eq!(kind(&extra), Some(ErrorKind::TrailingBytes));
        // Other api keys are reported, not decoded.
        let m = decode_metadata_record(&[0x01, 0x02, 0x01, 0xaa, 0xbb]).unwrap();
        assert_eq!(
            (m.api_key, m.version, m.body),
            (2, 1, MetadataBody::Other(&[0xaa, 0xbb][..]))
        );
    }

    #[test]
    fn file_names() {
        let zero = "00000000000000000000-0000000000.checkpoint";
        assert_eq!(snapshot_id_from_file_name(zero), Some(SnapshotId::ZERO));
        assert_eq!(SnapshotId::ZERO.file_name(), zero);
        let id = SnapshotId {
            end_offset: 12345,
            epoch: 7,
        };
        assert_eq!(id.file_name(), "00000000000000012345-0000000007.checkpoint");
        assert_eq!(
            snapshot_id_from_file_name(
                "/var/kafka/__cluster_metadata-0/00000000000000012345-0000000007.checkpoint"
            ),
            Some(id)
        );
        assert_eq!(
            parse_checkpoint_file_name(
                "00000000000000012345-0000000007-3141592653.checkpoint.part"
            ),
            Some(CheckpointFileName::Snapshot {
                id,
                state: SnapshotFileState::Partial
            })
        );
        assert_eq!(
            parse_checkpoint_file_name("00000000000000012345-0000000007.checkpoint.deleted"),
            Some(CheckpointFileName::Snapshot {
                id,
                state: SnapshotFileState::Deleted
            })
        );
        assert_eq!(
            parse_checkpoint_file_name("bootstrap.checkpoint"),
            Some(CheckpointFileName::Bootstrap)
        );
        for bad in [
            "0000000000000001234-0000000007.checkpoint",
            "00000000000000012345_0000000007.checkpoint",
            "00000000000000012345-000000007.checkpoint",
            "00000000000000012345-0000000007.checkpoint.tmp",
            "00000000000000012345-0000000007.log",
            "99999999999999999999-0000000007.checkpoint",
            "00000000000000012345-9999999999.checkpoint",
            "+0000000000000012345-0000000007.checkpoint",
            "00000000000000012345-0000000007-.checkpoint.part",
            "bootstrap.checkpoint.tmp",
            "",
        ] {
            assert_eq!(parse_checkpoint_file_name(bad), None, "{bad}");
        }
        assert_eq!(
            snapshot_id_from_file_name("00000000000000012345-0000000007.checkpoint.deleted"),
            None
        );
    }

    #[test]
    fn zero_checkpoint_finalizes_features_and_absent_is_none() {
        let file = write_checkpoint(
            0,
            1_700_000_000_000,
            0,
            Some(1),
            &[
                feature(METADATA_VERSION, 27),
                feature("group.version", 1),
                feature(REMOTE_LOG_METADATA_VERSION, 2),
                feature("transaction.version", 0),
                vec![0x01, 0x15, 0x00, 0x00],
            ],
        )
        .unwrap();
        let cp = Checkpoint::parse(&file).unwrap();
        assert!(cp.is_complete());
        assert_eq!(cp.batches, 3);
        assert_eq!(cp.kraft_version, Some(1));
        assert_eq!(cp.header.map(|h| h.last_contained_log_timestamp), Some(0));
        assert_eq!(cp.records.len(), 5);
        assert_eq!(
            cp.records[4],
            MetadataEntry {
                offset: 6,
                api_key: 21,
                version: 0
            }
        );
        let f = finalized_features(&file).unwrap();
        assert_eq!(f.metadata_version(), Some(27));
        assert_eq!(f.remote_log_metadata_version(), Some(2));
        assert_eq!(f.get("transaction.version"), Some(0));
        assert_eq!(f.get("share.version"), None);
        assert_eq!(f.kraft_version, Some(1));
        assert_eq!(f.len(), 4);
    }

    #[test]
    fn checkpoint_without_features_says_none() {
        // A pre-KIP-1170 zero checkpoint holds control records only.
        let file = write_checkpoint(0, 0, 0, Some(1), &[]).unwrap();
        let f = finalized_features(&file).unwrap();
        assert!(f.is_empty());
        assert_eq!(f.remote_log_metadata_version(), None);
        assert_eq!(f.metadata_version(), None);
    }

    #[test]
    fn incomplete_or_corrupt_checkpoints_are_errors() {
        let file = write_checkpoint(0, 0, 0, None, &[feature(METADATA_VERSION, 27)]).unwrap();
        // Cut inside the footer batch, and exactly before it.
        let footer_len = batch::batches(&file)
            .last()
            .unwrap()
            .unwrap()
            .size_in_bytes();
        let e = finalized_features(&file[..file.len() - 3]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        let cut = &file[..file.len() - footer_len];
        let cp = Checkpoint::parse(cut).unwrap();
        assert!(!cp.is_complete());
        assert_eq!(
            finalized_features(cut).unwrap_err().kind(),
            ErrorKind::Truncated
        );
        let mut bad = file.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert_eq!(
            finalized_features(&bad).unwrap_err().kind(),
            ErrorKind::Corrupt
        );
    }
}
