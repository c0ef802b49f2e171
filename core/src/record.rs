//! The four `__remote_log_metadata` record types and the serde frame around them.
//!
//! Owns: decoding and encoding of record values exactly as Kafka's `RemoteLogMetadataSerde`
//! (frame version, api key, version, then the generated-message body) writes and reads them, at
//! version 0 (Kafka 4.4.0) and version 1 (KIP-1266: `BrokerLeaderEpoch`, `EndOffset`), with
//! unknown tagged fields kept so that decode then encode gives the same bytes. Decoding borrows
//! strings and bytes from the input and never allocates more than the input backs.
//! Never: the object-model checks Kafka's transforms add (see [`Value::validate`]), keys, I/O.
//!
//! Kafka's read rules kept here (spec §1.2, §2.1): the top-level body has no version check, nested
//! structs refuse versions above 1, a known tag used below its first version is an error, a known
//! tag is read with its own fixed width whatever its declared size, and unknown tags are kept raw.

use std::borrow::Cow;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;
use crate::wire::{RawTaggedField, Reader, Writer};

/// The only serde frame version Kafka writes and reads.
pub const FRAME_VERSION: i16 = 1;
/// The highest record version rlmeta reads and writes (KIP-1266's version 1).
pub const HIGHEST_VERSION: i16 = 1;
/// The highest record version a broker that predates KIP-1266 reads (Kafka 4.4.0's schemas have
/// version 0 only; its serde throws on anything newer, and its metadata consumer stops).
pub const PRE_KIP1266_HIGHEST_VERSION: i16 = 0;
/// Kafka 4.4.0 refuses a tagged-field section claiming more fields than this.
const MAX_TAGGED_FIELDS: u32 = 10_000;
/// Frame header numbers above this are refused ("Value for ... was too large").
const MAX_HEADER_VALUE: i32 = i16::MAX as i32;

/// The record type, written as the frame's api key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ApiKey {
    RemoteLogSegmentMetadata = 0,
    RemoteLogSegmentMetadataUpdate = 1,
    RemotePartitionDeleteMetadata = 2,
    RemoteLogSegmentMetadataSnapshot = 3,
}

impl ApiKey {
    pub fn from_id(id: i16) -> Option<ApiKey> {
        match id {
            0 => Some(ApiKey::RemoteLogSegmentMetadata),
            1 => Some(ApiKey::RemoteLogSegmentMetadataUpdate),
            2 => Some(ApiKey::RemotePartitionDeleteMetadata),
            3 => Some(ApiKey::RemoteLogSegmentMetadataSnapshot),
            _ => None,
        }
    }

    pub fn id(self) -> i16 {
        self as i16
    }

    /// The generated message class name, as Kafka's errors and tools name it.
    pub fn record_name(self) -> &'static str {
        match self {
            ApiKey::RemoteLogSegmentMetadata => "RemoteLogSegmentMetadataRecord",
            ApiKey::RemoteLogSegmentMetadataUpdate => "RemoteLogSegmentMetadataUpdateRecord",
            ApiKey::RemotePartitionDeleteMetadata => "RemotePartitionDeleteMetadataRecord",
            ApiKey::RemoteLogSegmentMetadataSnapshot => "RemoteLogSegmentMetadataSnapshotRecord",
        }
    }
}

/// Unknown tagged fields of one struct, in the order they were read.
pub type TaggedFields<'a> = Vec<RawTaggedField<'a>>;

/// `TopicIdPartitionEntry`: Name, Id, Partition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopicIdPartitionEntry<'a> {
    pub name: Cow<'a, str>,
    pub id: Uuid,
    pub partition: i32,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

impl TopicIdPartitionEntry<'_> {
    /// The user partition this entry names.
    pub fn to_topic_id_partition(&self) -> crate::model::TopicIdPartition {
        crate::model::TopicIdPartition {
            topic_id: self.id,
            topic: self.name.to_string(),
            partition: self.partition,
        }
    }
}

/// `RemoteLogSegmentIdEntry`: the user partition and the segment's uuid.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SegmentIdEntry<'a> {
    pub topic_id_partition: TopicIdPartitionEntry<'a>,
    pub id: Uuid,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

/// A segment's `segmentLeaderEpochs` as written, used as a slice. A single entry is held
/// inline: nearly every segment has one, and decoding it should not allocate.
#[derive(Clone)]
pub enum LeaderEpochEntries<'a> {
    One(LeaderEpochEntry<'a>),
    Many(Vec<LeaderEpochEntry<'a>>),
}

impl<'a> std::ops::Deref for LeaderEpochEntries<'a> {
    type Target = [LeaderEpochEntry<'a>];
    fn deref(&self) -> &Self::Target {
        match self {
            LeaderEpochEntries::One(e) => std::slice::from_ref(e),
            LeaderEpochEntries::Many(v) => v,
        }
    }
}

impl<'a> From<Vec<LeaderEpochEntry<'a>>> for LeaderEpochEntries<'a> {
    fn from(mut v: Vec<LeaderEpochEntry<'a>>) -> Self {
        match v.pop() {
            Some(e) if v.is_empty() => LeaderEpochEntries::One(e),
            Some(e) => {
                v.push(e);
                LeaderEpochEntries::Many(v)
            }
            None => LeaderEpochEntries::Many(v),
        }
    }
}

impl<'a> FromIterator<LeaderEpochEntry<'a>> for LeaderEpochEntries<'a> {
    fn from_iter<I: IntoIterator<Item = LeaderEpochEntry<'a>>>(it: I) -> Self {
        it.into_iter().collect::<Vec<_>>().into()
    }
}

impl<'a> IntoIterator for LeaderEpochEntries<'a> {
    type Item = LeaderEpochEntry<'a>;
    type IntoIter = std::vec::IntoIter<LeaderEpochEntry<'a>>;
    fn into_iter(self) -> Self::IntoIter {
        match self {
            LeaderEpochEntries::One(e) => vec![e].into_iter(),
            LeaderEpochEntries::Many(v) => v.into_iter(),
        }
    }
}

// Compared, hashed and shown as the slice they hold, however held.
impl PartialEq for LeaderEpochEntries<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for LeaderEpochEntries<'_> {}

impl std::hash::Hash for LeaderEpochEntries<'_> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self).hash(h);
    }
}

impl std::fmt::Debug for LeaderEpochEntries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// `SegmentLeaderEpochEntry`: a leader epoch and the first offset it wrote in the segment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeaderEpochEntry<'a> {
    pub leader_epoch: i32,
    pub offset: i64,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

/// `RemoteLogSegmentMetadataRecord` (api key 0): a segment's full metadata, written when its copy
/// starts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SegmentMetadataRecord<'a> {
    pub remote_log_segment_id: SegmentIdEntry<'a>,
    pub start_offset: i64,
    pub end_offset: i64,
    pub broker_id: i32,
    pub max_timestamp_ms: i64,
    pub event_timestamp_ms: i64,
    pub segment_leader_epochs: LeaderEpochEntries<'a>,
    pub segment_size_in_bytes: i32,
    pub custom_metadata: Option<Cow<'a, [u8]>>,
    pub remote_log_segment_state: i8,
    /// Tag 0 at every version (KIP-1058), default false.
    pub txn_index_empty: bool,
    /// Tag 1 from version 1 (KIP-1266), default 0.
    pub broker_leader_epoch: i32,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

/// `RemoteLogSegmentMetadataUpdateRecord` (api key 1): a segment's state change.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SegmentMetadataUpdateRecord<'a> {
    pub remote_log_segment_id: SegmentIdEntry<'a>,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    pub custom_metadata: Option<Cow<'a, [u8]>>,
    pub remote_log_segment_state: i8,
    /// Tag 0 from version 1, default -1.
    pub broker_leader_epoch: i32,
    /// Tag 1 from version 1, default -1.
    pub end_offset: i64,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

/// `RemotePartitionDeleteMetadataRecord` (api key 2): a user partition's deletion state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartitionDeleteMetadataRecord<'a> {
    pub topic_id_partition: TopicIdPartitionEntry<'a>,
    pub broker_id: i32,
    pub event_timestamp_ms: i64,
    pub remote_partition_delete_state: i8,
    /// Tag 0 from version 1, default 0.
    pub broker_leader_epoch: i32,
    /// Tag 1 from version 1, default 0.
    pub end_offset: i64,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

/// `RemoteLogSegmentMetadataSnapshotRecord` (api key 3): a segment in a snapshot file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SegmentMetadataSnapshotRecord<'a> {
    pub segment_id: Uuid,
    pub start_offset: i64,
    pub end_offset: i64,
    pub broker_id: i32,
    pub max_timestamp_ms: i64,
    pub event_timestamp_ms: i64,
    pub segment_leader_epochs: LeaderEpochEntries<'a>,
    pub segment_size_in_bytes: i32,
    pub custom_metadata: Option<Cow<'a, [u8]>>,
    pub remote_log_segment_state: i8,
    pub txn_index_empty: bool,
    pub broker_leader_epoch: i32,
    pub unknown_tagged_fields: TaggedFields<'a>,
}

/// One record body, by type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Record<'a> {
    Segment(SegmentMetadataRecord<'a>),
    Update(SegmentMetadataUpdateRecord<'a>),
    PartitionDelete(PartitionDeleteMetadataRecord<'a>),
    Snapshot(SegmentMetadataSnapshotRecord<'a>),
}

impl Record<'_> {
    pub fn api_key(&self) -> ApiKey {
        match self {
            Record::Segment(_) => ApiKey::RemoteLogSegmentMetadata,
            Record::Update(_) => ApiKey::RemoteLogSegmentMetadataUpdate,
            Record::PartitionDelete(_) => ApiKey::RemotePartitionDeleteMetadata,
            Record::Snapshot(_) => ApiKey::RemoteLogSegmentMetadataSnapshot,
        }
    }
}

/// A whole record value of `__remote_log_metadata`: the record and the version its body uses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value<'a> {
    pub version: i16,
    pub record: Record<'a>,
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Decodes one record value. Fails, like Kafka, on a bad frame, an unknown api key, a version a
/// nested struct cannot read, truncation, bad lengths and trailing bytes.
///
/// Nearly every value on the topic is a plain segment or update value (see [`read_plain`]): it
/// is read by that fixed-layout reader and built straight into its `Value`. Anything else, and
/// everything invalid, takes the full reader, which alone decides what an error says.
pub fn decode_value(bytes: &[u8]) -> Result<Value<'_>> {
    match read_plain_as::<LeaderEpochEntries<'_>>(bytes) {
        Some(plain) => Ok(plain.into_value()),
        None => decode_with(&mut Reader::new(bytes)),
    }
}

/// Decodes like [`decode_value`] and also tells whether the bytes are exactly what Kafka's
/// writer would produce for the value; then, and only then, [`Value::encode`] gives them back.
pub fn decode_value_canonical(bytes: &[u8]) -> Result<(Value<'_>, bool)> {
    let mut r = Reader::new(bytes);
    let value = decode_with(&mut r)?;
    Ok((value, r.is_canonical()))
}

/// The decoder behind both entry points, inlined into each so that the value is built in the
/// caller's slot (it is large; every move is a copy).
#[inline(always)]
fn decode_with<'a>(r: &mut Reader<'a>) -> Result<Value<'a>> {
    let r = &mut *r;
    let frame = header_number(r, "frameVersion", ErrorKind::BadFrameVersion)?;
    if frame != FRAME_VERSION {
        let why = if frame == 0 {
            "frame version 0 (the KRaft 2.8 preview) is not supported".to_owned()
        } else {
            format!("unknown frame version {frame} (only frame version 1 is supported)")
        };
        return Err(Error::at(
            ErrorKind::BadFrameVersion,
            0,
            "frameVersion",
            why,
        ));
    }
    let key_at = r.position();
    let api_key = header_number(r, "apiKey", ErrorKind::UnknownApiKey)?;
    let version = header_number(r, "version", ErrorKind::UnsupportedVersion)?;
    let api_key = ApiKey::from_id(api_key).ok_or_else(|| {
        Error::at(
            ErrorKind::UnknownApiKey,
            key_at,
            "apiKey",
            format!("unknown metadata record api key {api_key}"),
        )
    })?;
    let record = match api_key {
        ApiKey::RemoteLogSegmentMetadata => Record::Segment(read_segment(r, version)?),
        ApiKey::RemoteLogSegmentMetadataUpdate => Record::Update(read_update(r, version)?),
        ApiKey::RemotePartitionDeleteMetadata => {
            Record::PartitionDelete(read_partition_delete(r, version)?)
        }
        ApiKey::RemoteLogSegmentMetadataSnapshot => Record::Snapshot(read_snapshot(r, version)?),
    };
    if r.remaining() > 0 {
        return Err(Error::at_offset(
            ErrorKind::TrailingBytes,
            r.position(),
            format!(
                "{} byte(s) of garbage after a complete {} value",
                r.remaining(),
                api_key.record_name()
            ),
        ));
    }
    Ok(Value { version, record })
}

#[cold]
#[inline(never)]
fn header_too_large(kind: ErrorKind, at: usize, field: &str, v: i32) -> Error {
    Error::at(
        kind,
        at,
        field,
        format!("value {v} for {field} is too large"),
    )
}

/// A frame header number: an unsigned varint read as Java's `int`, refused above 0x7fff and
/// then narrowed to `short` as Kafka does (so a 5-byte varint can wrap to a small value).
#[inline]
fn header_number(r: &mut Reader<'_>, field: &str, too_large: ErrorKind) -> Result<i16> {
    let at = r.position();
    let v = r.uvarint(field)? as i32;
    if v > MAX_HEADER_VALUE {
        return Err(header_too_large(too_large, at, field, v));
    }
    let narrowed = v as i16;
    if i32::from(narrowed) != v {
        // A negative Java int that Kafka narrows to a short: accepted, but not its own spelling.
        r.mark_noncanonical();
    }
    Ok(narrowed)
}

#[inline]
fn check_nested_version(
    r: &Reader<'_>,
    version: i16,
    field: &str,
    struct_name: &str,
) -> Result<()> {
    if version > HIGHEST_VERSION {
        return Err(nested_version_error(r, version, field, struct_name));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn nested_version_error(r: &Reader<'_>, version: i16, field: &str, struct_name: &str) -> Error {
    Error::at(
        ErrorKind::UnsupportedVersion,
        r.position(),
        field,
        format!("can't read version {version} of {struct_name}"),
    )
}

#[cold]
fn tag_not_valid(r: &Reader<'_>, tag: u32, version: i16, field: &str) -> Error {
    Error::at(
        ErrorKind::UnsupportedVersion,
        r.position(),
        field,
        format!("tag {tag} is not valid for version {version}"),
    )
}

/// What a tag-section reader does with the tags the schema does not know.
trait UnknownTags<'a>: Default {
    fn keep(&mut self, tag: RawTaggedField<'a>);
}

/// The full reader keeps them, in the order read.
impl<'a> UnknownTags<'a> for TaggedFields<'a> {
    #[inline(always)]
    fn keep(&mut self, tag: RawTaggedField<'a>) {
        self.push(tag);
    }
}

/// The plain reader only notes that there was one: the value is then not plain.
#[derive(Default)]
struct AnyUnknown(bool);

impl UnknownTags<'_> for AnyUnknown {
    #[inline(always)]
    fn keep(&mut self, _: RawTaggedField<'_>) {
        self.0 = true;
    }
}

/// Reads a tagged-field section. `known` reads a tag the schema defines (returning `Ok(true)`),
/// or returns `Ok(false)` for one it does not know, which is then given to `U`.
#[inline(always)]
fn read_tags<'a, U: UnknownTags<'a>>(
    r: &mut Reader<'a>,
    field: &str,
    mut known: impl FnMut(&mut Reader<'a>, u32) -> Result<bool>,
) -> Result<U> {
    let at = r.position();
    let count = r.uvarint(field)?;
    if count > MAX_TAGGED_FIELDS {
        return Err(Error::at(
            ErrorKind::InvalidLength,
            at,
            field,
            format!("{count} tagged fields exceed the maximum of {MAX_TAGGED_FIELDS}"),
        ));
    }
    let mut unknown = U::default();
    let mut prev: Option<u32> = None;
    for _ in 0..count {
        let tag = r.uvarint(field)?;
        let size = r.uvarint(field)?;
        if prev.is_some_and(|p| tag <= p) {
            r.mark_noncanonical();
        }
        prev = Some(tag);
        let at = r.position();
        if known(r, tag)? {
            // Kafka reads a known tag with its own width whatever `size` says, and never
            // writes a default value.
            if r.position() - at != size as usize {
                r.mark_noncanonical();
            }
        } else {
            let data = r.tagged_data(size, field)?;
            unknown.keep(RawTaggedField {
                tag,
                data: Cow::Borrowed(data),
            });
        }
    }
    Ok(unknown)
}

fn no_known_tags(_: &mut Reader<'_>, _: u32) -> Result<bool> {
    Ok(false)
}

/// Field paths of a `TopicIdPartitionEntry`: the struct, name, id, partition, tags. Static, so
/// that decoding never formats a path unless it fails.
type TipPaths = [&'static str; 5];
const SEGMENT_TIP: TipPaths = [
    "remoteLogSegmentId.topicIdPartition",
    "remoteLogSegmentId.topicIdPartition.name",
    "remoteLogSegmentId.topicIdPartition.id",
    "remoteLogSegmentId.topicIdPartition.partition",
    "remoteLogSegmentId.topicIdPartition._tags",
];
const DELETE_TIP: TipPaths = [
    "topicIdPartition",
    "topicIdPartition.name",
    "topicIdPartition.id",
    "topicIdPartition.partition",
    "topicIdPartition._tags",
];

#[inline(always)]
fn read_topic_id_partition<'a>(
    r: &mut Reader<'a>,
    version: i16,
    [path, name_p, id_p, partition_p, tags_p]: TipPaths,
) -> Result<TopicIdPartitionEntry<'a>> {
    check_nested_version(r, version, path, "TopicIdPartitionEntry")?;
    let name = r.compact_str(name_p)?;
    let id = r.uuid(id_p)?;
    let partition = r.i32(partition_p)?;
    let unknown_tagged_fields = read_tags(r, tags_p, no_known_tags)?;
    Ok(TopicIdPartitionEntry {
        name: Cow::Borrowed(name),
        id,
        partition,
        unknown_tagged_fields,
    })
}

#[inline(always)]
fn read_segment_id<'a>(r: &mut Reader<'a>, version: i16) -> Result<SegmentIdEntry<'a>> {
    const P: &str = "remoteLogSegmentId";
    check_nested_version(r, version, P, "RemoteLogSegmentIdEntry")?;
    let topic_id_partition = read_topic_id_partition(r, version, SEGMENT_TIP)?;
    let id = r.uuid("remoteLogSegmentId.id")?;
    let unknown_tagged_fields = read_tags(r, "remoteLogSegmentId._tags", no_known_tags)?;
    Ok(SegmentIdEntry {
        topic_id_partition,
        id,
        unknown_tagged_fields,
    })
}

#[inline(always)]
fn read_epochs<'a>(r: &mut Reader<'a>, version: i16) -> Result<LeaderEpochEntries<'a>> {
    const P: &str = "segmentLeaderEpochs";
    let n = r.compact_array_len(P)?;
    let read = |r: &mut Reader<'a>| -> Result<LeaderEpochEntry<'a>> {
        check_nested_version(r, version, P, "SegmentLeaderEpochEntry")?;
        let leader_epoch = r.i32("segmentLeaderEpochs.leaderEpoch")?;
        let offset = r.i64("segmentLeaderEpochs.offset")?;
        let unknown_tagged_fields = read_tags(r, "segmentLeaderEpochs._tags", no_known_tags)?;
        Ok(LeaderEpochEntry {
            leader_epoch,
            offset,
            unknown_tagged_fields,
        })
    };
    if n == 1 {
        return Ok(LeaderEpochEntries::One(read(r)?));
    }
    // `n` is bounded by the bytes left; each entry takes at least 13 bytes.
    let mut out = Vec::with_capacity(n.min(r.remaining() / 13 + 1));
    for _ in 0..n {
        out.push(read(r)?);
    }
    Ok(LeaderEpochEntries::Many(out))
}

#[inline]
fn custom_metadata<'a>(r: &mut Reader<'a>) -> Result<Option<Cow<'a, [u8]>>> {
    Ok(r.compact_nullable_bytes("customMetadata")?
        .map(Cow::Borrowed))
}

/// The tag section shared by segment and snapshot records: tag 0 `txnIndexEmpty` (every
/// version), tag 1 `brokerLeaderEpoch` (version 1 and up).
#[inline(always)]
fn read_segment_tags<'a, U: UnknownTags<'a>>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<(bool, i32, U)> {
    let (mut txn_index_empty, mut broker_leader_epoch) = (false, 0);
    let unknown = read_tags(r, "_tags", |r, tag| match tag {
        0 => {
            txn_index_empty = r.bool("txnIndexEmpty")?;
            if !txn_index_empty {
                r.mark_noncanonical();
            }
            Ok(true)
        }
        1 if version >= 1 => {
            broker_leader_epoch = r.i32("brokerLeaderEpoch")?;
            if broker_leader_epoch == 0 {
                r.mark_noncanonical();
            }
            Ok(true)
        }
        1 => Err(tag_not_valid(r, tag, version, "brokerLeaderEpoch")),
        _ => Ok(false),
    })?;
    Ok((txn_index_empty, broker_leader_epoch, unknown))
}

/// The tag section of update and partition-delete records: tag 0 `brokerLeaderEpoch` and tag 1
/// `endOffset`, both from version 1, with the record's own defaults.
#[inline(always)]
fn read_update_tags<'a, U: UnknownTags<'a>>(
    r: &mut Reader<'a>,
    version: i16,
    defaults: (i32, i64),
) -> Result<(i32, i64, U)> {
    let (mut epoch, mut end) = defaults;
    let unknown = read_tags(r, "_tags", |r, tag| match tag {
        0 | 1 if version < 1 => Err(tag_not_valid(
            r,
            tag,
            version,
            if tag == 0 {
                "brokerLeaderEpoch"
            } else {
                "endOffset"
            },
        )),
        0 => {
            epoch = r.i32("brokerLeaderEpoch")?;
            if epoch == defaults.0 {
                r.mark_noncanonical();
            }
            Ok(true)
        }
        1 => {
            end = r.i64("endOffset")?;
            if end == defaults.1 {
                r.mark_noncanonical();
            }
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok((epoch, end, unknown))
}

#[inline(always)]
fn read_segment<'a>(r: &mut Reader<'a>, version: i16) -> Result<SegmentMetadataRecord<'a>> {
    let remote_log_segment_id = read_segment_id(r, version)?;
    let start_offset = r.i64("startOffset")?;
    let end_offset = r.i64("endOffset")?;
    let broker_id = r.i32("brokerId")?;
    let max_timestamp_ms = r.i64("maxTimestampMs")?;
    let event_timestamp_ms = r.i64("eventTimestampMs")?;
    let segment_leader_epochs = read_epochs(r, version)?;
    let segment_size_in_bytes = r.i32("segmentSizeInBytes")?;
    let custom_metadata = custom_metadata(r)?;
    let remote_log_segment_state = r.i8("remoteLogSegmentState")?;
    let (txn_index_empty, broker_leader_epoch, unknown_tagged_fields) =
        read_segment_tags(r, version)?;
    Ok(SegmentMetadataRecord {
        remote_log_segment_id,
        start_offset,
        end_offset,
        broker_id,
        max_timestamp_ms,
        event_timestamp_ms,
        segment_leader_epochs,
        segment_size_in_bytes,
        custom_metadata,
        remote_log_segment_state,
        txn_index_empty,
        broker_leader_epoch,
        unknown_tagged_fields,
    })
}

#[inline(always)]
fn read_update<'a>(r: &mut Reader<'a>, version: i16) -> Result<SegmentMetadataUpdateRecord<'a>> {
    let remote_log_segment_id = read_segment_id(r, version)?;
    let broker_id = r.i32("brokerId")?;
    let event_timestamp_ms = r.i64("eventTimestampMs")?;
    let custom_metadata = custom_metadata(r)?;
    let remote_log_segment_state = r.i8("remoteLogSegmentState")?;
    let (broker_leader_epoch, end_offset, unknown_tagged_fields) =
        read_update_tags(r, version, UPDATE_TAG_DEFAULTS)?;
    Ok(SegmentMetadataUpdateRecord {
        remote_log_segment_id,
        broker_id,
        event_timestamp_ms,
        custom_metadata,
        remote_log_segment_state,
        broker_leader_epoch,
        end_offset,
        unknown_tagged_fields,
    })
}

#[inline(always)]
fn read_partition_delete<'a>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<PartitionDeleteMetadataRecord<'a>> {
    let topic_id_partition = read_topic_id_partition(r, version, DELETE_TIP)?;
    let broker_id = r.i32("brokerId")?;
    let event_timestamp_ms = r.i64("eventTimestampMs")?;
    let remote_partition_delete_state = r.i8("remotePartitionDeleteState")?;
    let (broker_leader_epoch, end_offset, unknown_tagged_fields) =
        read_update_tags(r, version, PARTITION_DELETE_TAG_DEFAULTS)?;
    Ok(PartitionDeleteMetadataRecord {
        topic_id_partition,
        broker_id,
        event_timestamp_ms,
        remote_partition_delete_state,
        broker_leader_epoch,
        end_offset,
        unknown_tagged_fields,
    })
}

#[inline(always)]
fn read_snapshot<'a>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<SegmentMetadataSnapshotRecord<'a>> {
    let segment_id = r.uuid("segmentId")?;
    let start_offset = r.i64("startOffset")?;
    let end_offset = r.i64("endOffset")?;
    let broker_id = r.i32("brokerId")?;
    let max_timestamp_ms = r.i64("maxTimestampMs")?;
    let event_timestamp_ms = r.i64("eventTimestampMs")?;
    let segment_leader_epochs = read_epochs(r, version)?;
    let segment_size_in_bytes = r.i32("segmentSizeInBytes")?;
    let custom_metadata = custom_metadata(r)?;
    let remote_log_segment_state = r.i8("remoteLogSegmentState")?;
    let (txn_index_empty, broker_leader_epoch, unknown_tagged_fields) =
        read_segment_tags(r, version)?;
    Ok(SegmentMetadataSnapshotRecord {
        segment_id,
        start_offset,
        end_offset,
        broker_id,
        max_timestamp_ms,
        event_timestamp_ms,
        segment_leader_epochs,
        segment_size_in_bytes,
        custom_metadata,
        remote_log_segment_state,
        txn_index_empty,
        broker_leader_epoch,
        unknown_tagged_fields,
    })
}

// ---------------------------------------------------------------------------------------------
// Plain values, for replay

/// The user partition a plain value names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlainPartition<'a> {
    pub(crate) topic_id: Uuid,
    pub(crate) partition: i32,
    pub(crate) name: &'a str,
}

/// A segment or update value read by [`read_plain`] without building a [`Value`]: the same
/// fields, in the same types, that the full reader would give. Its leader epochs are in `E`:
/// the cache's list for replay, or the decoded entries when it becomes a `Value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Plain<'a, E = crate::model::LeaderEpochs> {
    Segment {
        part: PlainPartition<'a>,
        version: i16,
        id: Uuid,
        start_offset: i64,
        end_offset: i64,
        broker_id: i32,
        max_timestamp_ms: i64,
        event_timestamp_ms: i64,
        /// As written (not yet sorted by epoch).
        leader_epochs: E,
        segment_size_in_bytes: i32,
        custom_metadata: Option<&'a [u8]>,
        state: i8,
        txn_index_empty: bool,
        broker_leader_epoch: i32,
    },
    Update {
        part: PlainPartition<'a>,
        version: i16,
        id: Uuid,
        broker_id: i32,
        event_timestamp_ms: i64,
        custom_metadata: Option<&'a [u8]>,
        state: i8,
        broker_leader_epoch: i32,
        end_offset: i64,
    },
}

/// Where [`read_plain`] puts a segment's leader epochs, `n` of them, as written.
pub(crate) trait EpochList: Sized {
    fn with_capacity(n: usize) -> Self;
    fn push_entry(&mut self, leader_epoch: i32, offset: i64);
}

impl EpochList for crate::model::LeaderEpochs {
    #[inline(always)]
    fn with_capacity(n: usize) -> Self {
        crate::model::LeaderEpochs::with_capacity(n)
    }
    #[inline(always)]
    fn push_entry(&mut self, leader_epoch: i32, offset: i64) {
        self.push((leader_epoch, offset));
    }
}

impl<'a> EpochList for LeaderEpochEntries<'a> {
    #[inline(always)]
    fn with_capacity(n: usize) -> Self {
        LeaderEpochEntries::Many(if n > 1 {
            Vec::with_capacity(n)
        } else {
            Vec::new()
        })
    }
    /// The first entry is held inline, as the full reader holds a single one.
    #[inline(always)]
    fn push_entry(&mut self, leader_epoch: i32, offset: i64) {
        let entry = LeaderEpochEntry {
            leader_epoch,
            offset,
            unknown_tagged_fields: Vec::new(),
        };
        match self {
            LeaderEpochEntries::Many(v) if v.capacity() == 0 => {
                *self = LeaderEpochEntries::One(entry);
            }
            LeaderEpochEntries::Many(v) => v.push(entry),
            // Never reached from `read_plain`, which says how many come; an entry with no tags
            // clones without allocating.
            LeaderEpochEntries::One(first) => {
                *self = LeaderEpochEntries::Many(vec![first.clone(), entry]);
            }
        }
    }
}

impl<'a> Plain<'a, LeaderEpochEntries<'a>> {
    /// The `Value` the full reader gives for the same bytes.
    #[inline(always)]
    fn into_value(self) -> Value<'a> {
        let entry = |part: PlainPartition<'a>, id: Uuid| SegmentIdEntry {
            topic_id_partition: TopicIdPartitionEntry {
                name: Cow::Borrowed(part.name),
                id: part.topic_id,
                partition: part.partition,
                unknown_tagged_fields: Vec::new(),
            },
            id,
            unknown_tagged_fields: Vec::new(),
        };
        match self {
            Plain::Segment {
                part,
                version,
                id,
                start_offset,
                end_offset,
                broker_id,
                max_timestamp_ms,
                event_timestamp_ms,
                leader_epochs,
                segment_size_in_bytes,
                custom_metadata,
                state,
                txn_index_empty,
                broker_leader_epoch,
            } => Value {
                version,
                record: Record::Segment(SegmentMetadataRecord {
                    remote_log_segment_id: entry(part, id),
                    start_offset,
                    end_offset,
                    broker_id,
                    max_timestamp_ms,
                    event_timestamp_ms,
                    segment_leader_epochs: leader_epochs,
                    segment_size_in_bytes,
                    custom_metadata: custom_metadata.map(Cow::Borrowed),
                    remote_log_segment_state: state,
                    txn_index_empty,
                    broker_leader_epoch,
                    unknown_tagged_fields: Vec::new(),
                }),
            },
            Plain::Update {
                part,
                version,
                id,
                broker_id,
                event_timestamp_ms,
                custom_metadata,
                state,
                broker_leader_epoch,
                end_offset,
            } => Value {
                version,
                record: Record::Update(SegmentMetadataUpdateRecord {
                    remote_log_segment_id: entry(part, id),
                    broker_id,
                    event_timestamp_ms,
                    custom_metadata: custom_metadata.map(Cow::Borrowed),
                    remote_log_segment_state: state,
                    broker_leader_epoch,
                    end_offset,
                    unknown_tagged_fields: Vec::new(),
                }),
            },
        }
    }
}

/// Big-endian fixed-width fields off the front of a run the reader has already bounds-checked:
/// each read's own check folds into that one.
struct Fields<'b>(&'b [u8]);

impl Fields<'_> {
    #[inline(always)]
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (a, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*a)
    }

    #[inline(always)]
    fn i32(&mut self) -> Option<i32> {
        self.bytes().map(i32::from_be_bytes)
    }

    #[inline(always)]
    fn i64(&mut self) -> Option<i64> {
        self.bytes().map(i64::from_be_bytes)
    }

    #[inline(always)]
    fn uuid(&mut self) -> Option<Uuid> {
        self.bytes().map(Uuid::from_bytes)
    }

    /// An empty tag section, spelled as Kafka writes it.
    #[inline(always)]
    fn zero(&mut self) -> Option<()> {
        (self.bytes::<1>()? == [0]).then_some(())
    }
}

/// The record version a value's frame header declares (frame version 1, api key, version, read
/// as the decoder reads them), or `None` when the header does not read. Nothing after the header
/// is looked at: a host that already replayed the value asks this to tell which brokers can read it.
pub fn value_version(bytes: &[u8]) -> Option<i16> {
    let r = &mut Reader::new(bytes);
    if header_number(r, "frameVersion", ErrorKind::BadFrameVersion).ok()? != FRAME_VERSION {
        return None;
    }
    header_number(r, "apiKey", ErrorKind::UnknownApiKey).ok()?;
    header_number(r, "version", ErrorKind::UnsupportedVersion).ok()
}

/// Reads a segment (api key 0) or update (api key 1) value of version 0 or 1 with no unknown
/// tagged field, in the order the full reader reads it (fixed-width runs in one bounds check
/// each, tag sections as Kafka spells an empty one). `None` for anything else, valid or not:
/// the caller then decodes it with `decode_value`, whose full reader reports what is wrong (so
/// this never decides an error, and what it reads is what the full reader reads).
#[inline]
pub(crate) fn read_plain(bytes: &[u8]) -> Option<Plain<'_>> {
    read_plain_as(bytes)
}

/// [`read_plain`], with the leader epochs in `E`.
#[inline(always)]
pub(crate) fn read_plain_as<'a, E: EpochList>(bytes: &'a [u8]) -> Option<Plain<'a, E>> {
    let r = &mut Reader::new(bytes);
    if header_number(r, "frameVersion", ErrorKind::BadFrameVersion).ok()? != FRAME_VERSION {
        return None;
    }
    let api_key = header_number(r, "apiKey", ErrorKind::UnknownApiKey).ok()?;
    let version = header_number(r, "version", ErrorKind::UnsupportedVersion).ok()?;
    if !(0..=HIGHEST_VERSION).contains(&version) || !(0..=1).contains(&api_key) {
        return None;
    }
    // RemoteLogSegmentIdEntry { TopicIdPartitionEntry { name, id, partition }, id }, as
    // read_segment_id reads it (nested versions 0 and 1 are readable), each with no tags.
    let name = r.compact_str(SEGMENT_TIP[1]).ok()?;
    // Fixed-width runs are read with one bounds check a run. A tag count must be the one-byte
    // zero: any other spelling of it takes the full way.
    let mut f = Fields(r.take(38, SEGMENT_TIP[2]).ok()?);
    let topic_id = f.uuid()?;
    let partition = f.i32()?;
    f.zero()?;
    let id = f.uuid()?;
    f.zero()?;
    let part = PlainPartition {
        topic_id,
        partition,
        name,
    };
    if api_key == 0 {
        let mut f = Fields(r.take(36, "startOffset").ok()?);
        let start_offset = f.i64()?;
        let end_offset = f.i64()?;
        let broker_id = f.i32()?;
        let max_timestamp_ms = f.i64()?;
        let event_timestamp_ms = f.i64()?;
        let n = r.compact_array_len("segmentLeaderEpochs").ok()?;
        // Each entry takes 13 bytes: more than the bytes left hold is not plain.
        if n > r.remaining() / 13 {
            return None;
        }
        let mut leader_epochs = E::with_capacity(n);
        for _ in 0..n {
            // An entry and its tag section: plain values have none.
            let mut f = Fields(r.take(13, "segmentLeaderEpochs").ok()?);
            let epoch = f.i32()?;
            let offset = f.i64()?;
            f.zero()?;
            leader_epochs.push_entry(epoch, offset);
        }
        let segment_size_in_bytes = r.i32("segmentSizeInBytes").ok()?;
        let custom_metadata = r.compact_nullable_bytes("customMetadata").ok()?;
        let state = r.i8("remoteLogSegmentState").ok()?;
        let (txn_index_empty, broker_leader_epoch, AnyUnknown(unknown)) =
            read_segment_tags(r, version).ok()?;
        if unknown || r.remaining() > 0 {
            return None;
        }
        Some(Plain::Segment {
            part,
            version,
            id,
            start_offset,
            end_offset,
            broker_id,
            max_timestamp_ms,
            event_timestamp_ms,
            leader_epochs,
            segment_size_in_bytes,
            custom_metadata,
            state,
            txn_index_empty,
            broker_leader_epoch,
        })
    } else {
        let mut f = Fields(r.take(12, "brokerId").ok()?);
        let broker_id = f.i32()?;
        let event_timestamp_ms = f.i64()?;
        let custom_metadata = r.compact_nullable_bytes("customMetadata").ok()?;
        let state = r.i8("remoteLogSegmentState").ok()?;
        let (broker_leader_epoch, end_offset, AnyUnknown(unknown)) =
            read_update_tags(r, version, UPDATE_TAG_DEFAULTS).ok()?;
        if unknown || r.remaining() > 0 {
            return None;
        }
        Some(Plain::Update {
            part,
            version,
            id,
            broker_id,
            event_timestamp_ms,
            custom_metadata,
            state,
            broker_leader_epoch,
            end_offset,
        })
    }
}

/// Defaults of `(brokerLeaderEpoch, endOffset)` on update records.
pub const UPDATE_TAG_DEFAULTS: (i32, i64) = (-1, -1);
/// Defaults of `(brokerLeaderEpoch, endOffset)` on partition-delete records.
pub const PARTITION_DELETE_TAG_DEFAULTS: (i32, i64) = (0, 0);

// ---------------------------------------------------------------------------------------------
// Encoding

/// A known tagged field about to be written: its tag and its encoded data.
struct KnownTag {
    tag: u32,
    data: [u8; 8],
    len: usize,
}

impl KnownTag {
    fn i32(tag: u32, v: i32) -> KnownTag {
        let mut data = [0u8; 8];
        data[..4].copy_from_slice(&v.to_be_bytes());
        KnownTag { tag, data, len: 4 }
    }
    fn i64(tag: u32, v: i64) -> KnownTag {
        KnownTag {
            tag,
            data: v.to_be_bytes(),
            len: 8,
        }
    }
    fn bool(tag: u32, v: bool) -> KnownTag {
        let mut data = [0u8; 8];
        data[0] = u8::from(v);
        KnownTag { tag, data, len: 1 }
    }
}

/// Writes a tagged-field section: known non-default fields and unknown fields merged in
/// ascending tag order. Like Kafka's raw-tag writer, unknown tags must be strictly ascending and
/// must not reuse a tag the schema defines.
fn write_tags(
    w: &mut Writer,
    known: &[KnownTag],
    defined: &[u32],
    unknown: &[RawTaggedField<'_>],
    field: &str,
) -> Result<()> {
    let mut prev: Option<u32> = None;
    for u in unknown {
        if prev.is_some_and(|p| u.tag <= p) {
            return Err(Error::field(
                ErrorKind::InvalidArgument,
                field,
                format!(
                    "unknown tagged fields must be in ascending tag order; tag {} follows {}",
                    u.tag,
                    prev.unwrap_or(0)
                ),
            ));
        }
        if defined.contains(&u.tag) {
            return Err(Error::field(
                ErrorKind::InvalidArgument,
                field,
                format!(
                    "tag {} is defined by the schema and cannot be an unknown tagged field",
                    u.tag
                ),
            ));
        }
        prev = Some(u.tag);
    }
    let count = u32::try_from(known.len() + unknown.len())
        .map_err(|_| Error::field(ErrorKind::InvalidLength, field, "too many tagged fields"))?;
    w.uvarint(count);
    let mut k = known.iter().peekable();
    let mut u = unknown.iter().peekable();
    loop {
        let take_known = match (k.peek(), u.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a.tag < b.tag,
        };
        if take_known {
            if let Some(t) = k.next() {
                w.uvarint(t.tag);
                w.uvarint(t.len as u32);
                w.bytes(t.data.get(..t.len).unwrap_or_default());
            }
        } else if let Some(t) = u.next() {
            let len = u32::try_from(t.data.len())
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or_else(|| {
                    Error::field(ErrorKind::InvalidLength, field, "tagged field too long")
                })?;
            w.uvarint(t.tag);
            w.uvarint(len);
            w.bytes(&t.data);
        }
    }
    Ok(())
}

fn non_default_at(version: i16, field: &str) -> Error {
    Error::field(
        ErrorKind::UnsupportedVersion,
        field,
        format!("attempted to write a non-default {field} at version {version}"),
    )
}

fn check_nested_write(version: i16, field: &str, struct_name: &str) -> Result<()> {
    if version > HIGHEST_VERSION {
        return Err(Error::field(
            ErrorKind::UnsupportedVersion,
            field,
            format!("can't size version {version} of {struct_name}"),
        ));
    }
    Ok(())
}

fn write_topic_id_partition(
    w: &mut Writer,
    t: &TopicIdPartitionEntry<'_>,
    version: i16,
    paths: TipPaths,
) -> Result<()> {
    let [path, name_p, ..] = paths;
    check_nested_write(version, path, "TopicIdPartitionEntry")?;
    w.compact_str(&t.name, name_p)?;
    w.uuid(t.id);
    w.i32(t.partition);
    write_tags(w, &[], &[], &t.unknown_tagged_fields, path)
}

fn write_segment_id(w: &mut Writer, s: &SegmentIdEntry<'_>, version: i16) -> Result<()> {
    check_nested_write(version, "remoteLogSegmentId", "RemoteLogSegmentIdEntry")?;
    write_topic_id_partition(w, &s.topic_id_partition, version, SEGMENT_TIP)?;
    w.uuid(s.id);
    write_tags(w, &[], &[], &s.unknown_tagged_fields, "remoteLogSegmentId")
}

fn write_epochs(w: &mut Writer, epochs: &[LeaderEpochEntry<'_>], version: i16) -> Result<()> {
    w.compact_array_len(epochs.len(), "segmentLeaderEpochs")?;
    for e in epochs {
        check_nested_write(version, "segmentLeaderEpochs", "SegmentLeaderEpochEntry")?;
        w.i32(e.leader_epoch);
        w.i64(e.offset);
        write_tags(w, &[], &[], &e.unknown_tagged_fields, "segmentLeaderEpochs")?;
    }
    Ok(())
}

/// Known tags of segment and snapshot records at `version`.
fn segment_tags(
    version: i16,
    txn_index_empty: bool,
    broker_leader_epoch: i32,
) -> Result<Vec<KnownTag>> {
    let mut known = Vec::with_capacity(2);
    if txn_index_empty {
        known.push(KnownTag::bool(0, true));
    }
    if broker_leader_epoch != 0 {
        if version < 1 {
            return Err(non_default_at(version, "brokerLeaderEpoch"));
        }
        known.push(KnownTag::i32(1, broker_leader_epoch));
    }
    Ok(known)
}

/// Known tags of update and partition-delete records at `version`.
fn update_tags(version: i16, epoch: i32, end: i64, defaults: (i32, i64)) -> Result<Vec<KnownTag>> {
    let mut known = Vec::with_capacity(2);
    if epoch != defaults.0 {
        if version < 1 {
            return Err(non_default_at(version, "brokerLeaderEpoch"));
        }
        known.push(KnownTag::i32(0, epoch));
    }
    if end != defaults.1 {
        if version < 1 {
            return Err(non_default_at(version, "endOffset"));
        }
        known.push(KnownTag::i64(1, end));
    }
    Ok(known)
}

impl Value<'_> {
    /// Encodes the value as Kafka's serde would write this record at `self.version`.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut w = Writer::with_capacity(128);
        self.encode_into(&mut w)?;
        Ok(w.into_bytes())
    }

    /// Encodes into an existing writer (appending).
    pub fn encode_into(&self, w: &mut Writer) -> Result<()> {
        let version = self.version;
        w.uvarint(FRAME_VERSION as u32);
        w.uvarint(self.record.api_key().id() as u32);
        w.uvarint(i32::from(version) as u32);
        match &self.record {
            Record::Segment(s) => {
                write_segment_id(w, &s.remote_log_segment_id, version)?;
                w.i64(s.start_offset);
                w.i64(s.end_offset);
                w.i32(s.broker_id);
                w.i64(s.max_timestamp_ms);
                w.i64(s.event_timestamp_ms);
                write_epochs(w, &s.segment_leader_epochs, version)?;
                w.i32(s.segment_size_in_bytes);
                w.compact_nullable_bytes(s.custom_metadata.as_deref(), "customMetadata")?;
                w.i8(s.remote_log_segment_state);
                let known = segment_tags(version, s.txn_index_empty, s.broker_leader_epoch)?;
                write_tags(w, &known, &[0, 1], &s.unknown_tagged_fields, "")
            }
            Record::Update(u) => {
                write_segment_id(w, &u.remote_log_segment_id, version)?;
                w.i32(u.broker_id);
                w.i64(u.event_timestamp_ms);
                w.compact_nullable_bytes(u.custom_metadata.as_deref(), "customMetadata")?;
                w.i8(u.remote_log_segment_state);
                let known = update_tags(
                    version,
                    u.broker_leader_epoch,
                    u.end_offset,
                    UPDATE_TAG_DEFAULTS,
                )?;
                write_tags(w, &known, &[0, 1], &u.unknown_tagged_fields, "")
            }
            Record::PartitionDelete(d) => {
                write_topic_id_partition(w, &d.topic_id_partition, version, DELETE_TIP)?;
                w.i32(d.broker_id);
                w.i64(d.event_timestamp_ms);
                w.i8(d.remote_partition_delete_state);
                let known = update_tags(
                    version,
                    d.broker_leader_epoch,
                    d.end_offset,
                    PARTITION_DELETE_TAG_DEFAULTS,
                )?;
                write_tags(w, &known, &[0, 1], &d.unknown_tagged_fields, "")
            }
            Record::Snapshot(s) => {
                w.uuid(s.segment_id);
                w.i64(s.start_offset);
                w.i64(s.end_offset);
                w.i32(s.broker_id);
                w.i64(s.max_timestamp_ms);
                w.i64(s.event_timestamp_ms);
                write_epochs(w, &s.segment_leader_epochs, version)?;
                w.i32(s.segment_size_in_bytes);
                w.compact_nullable_bytes(s.custom_metadata.as_deref(), "customMetadata")?;
                w.i8(s.remote_log_segment_state);
                let known = segment_tags(version, s.txn_index_empty, s.broker_leader_epoch)?;
                write_tags(w, &known, &[0, 1], &s.unknown_tagged_fields, "")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Kafka's object-model checks

impl Value<'_> {
    /// The checks Kafka's `RemoteLogMetadataSerde.deserialize` adds after the bytes decode, when
    /// it builds its metadata objects: a known state id, and for segment records a start offset
    /// of at least 0, an end offset not below it and at least one leader epoch. A value failing
    /// here decodes but would stop a broker's metadata consumer.
    pub fn validate(&self) -> Result<()> {
        let invalid =
            |field: &str, msg: String| Err(Error::field(ErrorKind::InvalidRecord, field, msg));
        let state_ok = |id: i8| crate::model::SegmentState::from_id(id).is_some();
        match &self.record {
            Record::Segment(s) => {
                if !state_ok(s.remote_log_segment_state) {
                    return invalid(
                        "remoteLogSegmentState",
                        format!("unknown segment state id {}", s.remote_log_segment_state),
                    );
                }
                check_offsets_and_epochs(
                    s.start_offset,
                    s.end_offset,
                    s.segment_leader_epochs.len(),
                )
            }
            Record::Snapshot(s) => {
                if !state_ok(s.remote_log_segment_state) {
                    return invalid(
                        "remoteLogSegmentState",
                        format!("unknown segment state id {}", s.remote_log_segment_state),
                    );
                }
                check_offsets_and_epochs(
                    s.start_offset,
                    s.end_offset,
                    s.segment_leader_epochs.len(),
                )
            }
            Record::Update(u) if !state_ok(u.remote_log_segment_state) => invalid(
                "remoteLogSegmentState",
                format!("unknown segment state id {}", u.remote_log_segment_state),
            ),
            Record::PartitionDelete(d)
                if crate::model::PartitionDeleteState::from_id(d.remote_partition_delete_state)
                    .is_none() =>
            {
                invalid(
                    "remotePartitionDeleteState",
                    format!(
                        "unknown partition delete state id {}",
                        d.remote_partition_delete_state
                    ),
                )
            }
            _ => Ok(()),
        }
    }
}

/// Kafka's `RemoteLogSegmentMetadata` constructor checks.
pub(crate) fn check_offsets_and_epochs(start: i64, end: i64, epochs: usize) -> Result<()> {
    if start < 0 {
        return Err(Error::field(
            ErrorKind::InvalidRecord,
            "startOffset",
            format!("start offset {start} is negative"),
        ));
    }
    if end < start {
        return Err(Error::field(
            ErrorKind::InvalidRecord,
            "endOffset",
            format!("end offset {end} is below start offset {start}"),
        ));
    }
    if epochs == 0 {
        return Err(Error::field(
            ErrorKind::InvalidRecord,
            "segmentLeaderEpochs",
            "a segment needs at least one leader epoch",
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Ownership

fn owned_tags(t: TaggedFields<'_>) -> TaggedFields<'static> {
    t.into_iter().map(RawTaggedField::into_owned).collect()
}

fn owned_bytes(b: Option<Cow<'_, [u8]>>) -> Option<Cow<'static, [u8]>> {
    b.map(|b| Cow::Owned(b.into_owned()))
}

impl TopicIdPartitionEntry<'_> {
    pub fn into_owned(self) -> TopicIdPartitionEntry<'static> {
        TopicIdPartitionEntry {
            name: Cow::Owned(self.name.into_owned()),
            id: self.id,
            partition: self.partition,
            unknown_tagged_fields: owned_tags(self.unknown_tagged_fields),
        }
    }
}

impl SegmentIdEntry<'_> {
    pub fn into_owned(self) -> SegmentIdEntry<'static> {
        SegmentIdEntry {
            topic_id_partition: self.topic_id_partition.into_owned(),
            id: self.id,
            unknown_tagged_fields: owned_tags(self.unknown_tagged_fields),
        }
    }
}

fn owned_epochs(e: LeaderEpochEntries<'_>) -> LeaderEpochEntries<'static> {
    e.into_iter()
        .map(|e| LeaderEpochEntry {
            leader_epoch: e.leader_epoch,
            offset: e.offset,
            unknown_tagged_fields: owned_tags(e.unknown_tagged_fields),
        })
        .collect()
}

impl Value<'_> {
    /// A copy that no longer borrows the input.
    pub fn into_owned(self) -> Value<'static> {
        let record = match self.record {
            Record::Segment(s) => Record::Segment(SegmentMetadataRecord {
                remote_log_segment_id: s.remote_log_segment_id.into_owned(),
                start_offset: s.start_offset,
                end_offset: s.end_offset,
                broker_id: s.broker_id,
                max_timestamp_ms: s.max_timestamp_ms,
                event_timestamp_ms: s.event_timestamp_ms,
                segment_leader_epochs: owned_epochs(s.segment_leader_epochs),
                segment_size_in_bytes: s.segment_size_in_bytes,
                custom_metadata: owned_bytes(s.custom_metadata),
                remote_log_segment_state: s.remote_log_segment_state,
                txn_index_empty: s.txn_index_empty,
                broker_leader_epoch: s.broker_leader_epoch,
                unknown_tagged_fields: owned_tags(s.unknown_tagged_fields),
            }),
            Record::Update(u) => Record::Update(SegmentMetadataUpdateRecord {
                remote_log_segment_id: u.remote_log_segment_id.into_owned(),
                broker_id: u.broker_id,
                event_timestamp_ms: u.event_timestamp_ms,
                custom_metadata: owned_bytes(u.custom_metadata),
                remote_log_segment_state: u.remote_log_segment_state,
                broker_leader_epoch: u.broker_leader_epoch,
                end_offset: u.end_offset,
                unknown_tagged_fields: owned_tags(u.unknown_tagged_fields),
            }),
            Record::PartitionDelete(d) => Record::PartitionDelete(PartitionDeleteMetadataRecord {
                topic_id_partition: d.topic_id_partition.into_owned(),
                broker_id: d.broker_id,
                event_timestamp_ms: d.event_timestamp_ms,
                remote_partition_delete_state: d.remote_partition_delete_state,
                broker_leader_epoch: d.broker_leader_epoch,
                end_offset: d.end_offset,
                unknown_tagged_fields: owned_tags(d.unknown_tagged_fields),
            }),
            Record::Snapshot(s) => Record::Snapshot(SegmentMetadataSnapshotRecord {
                segment_id: s.segment_id,
                start_offset: s.start_offset,
                end_offset: s.end_offset,
                broker_id: s.broker_id,
                max_timestamp_ms: s.max_timestamp_ms,
                event_timestamp_ms: s.event_timestamp_ms,
                segment_leader_epochs: owned_epochs(s.segment_leader_epochs),
                segment_size_in_bytes: s.segment_size_in_bytes,
                custom_metadata: owned_bytes(s.custom_metadata),
                remote_log_segment_state: s.remote_log_segment_state,
                txn_index_empty: s.txn_index_empty,
                broker_leader_epoch: s.broker_leader_epoch,
                unknown_tagged_fields: owned_tags(s.unknown_tagged_fields),
            }),
        };
        Value {
            version: self.version,
            record,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
            .collect()
    }

    /// Spec §1.3: RemotePartitionDeleteMetadata (MARKED, brokerId 1), 42 bytes.
    #[test]
    fn partition_delete_worked_example() {
        let bytes = hex("010200" /* frame, key, version */
            .to_owned()
            .as_str())
        .into_iter()
        .chain(hex(
            "04666f6f0123456789abcdeffedcba98765432100000000000000000010000018bcfe568000000",
        ))
        .collect::<Vec<_>>();
        assert_eq!(bytes.len(), 42);
        let v = decode_value(&bytes);
        let Ok(Value {
            version: 0,
            record: Record::PartitionDelete(d),
        }) = &v
        else {
            unreachable!("decoded {v:?}")
        };
        assert_eq!(d.topic_id_partition.name, "foo");
        assert_eq!(d.broker_id, 1);
        assert_eq!(d.event_timestamp_ms, 1_700_000_000_000);
        assert_eq!(v.as_ref().ok().and_then(|v| v.encode().ok()), Some(bytes));
    }

    #[test]
    fn v1_default_update_tags_are_not_written() {
        let v = Value {
            version: 1,
            record: Record::Update(SegmentMetadataUpdateRecord {
                remote_log_segment_id: SegmentIdEntry {
                    topic_id_partition: TopicIdPartitionEntry {
                        name: "foo".into(),
                        id: Uuid::new(1, 2),
                        partition: 0,
                        unknown_tagged_fields: vec![],
                    },
                    id: Uuid::new(3, 4),
                    unknown_tagged_fields: vec![],
                },
                broker_id: 2,
                event_timestamp_ms: 5,
                custom_metadata: None,
                remote_log_segment_state: 1,
                broker_leader_epoch: 5,
                end_offset: 100,
                unknown_tagged_fields: vec![],
            }),
        };
        let b = v.encode().unwrap_or_default();
        // state 1, then 2 tags: tag 0 (4 bytes) = 5, tag 1 (8 bytes) = 100
        assert!(b.ends_with(&hex("010200040000000501080000000000000064")));
        assert_eq!(decode_value(&b).ok(), Some(v.clone()));
        let mut v0 = v;
        v0.version = 0;
        assert_eq!(
            v0.encode().err().map(|e| e.kind()),
            Some(ErrorKind::UnsupportedVersion)
        );
    }

    #[test]
    fn frame_errors_are_typed() {
        let kind = |h: &str| decode_value(&hex(h)).err().map(|e| e.kind());
        assert_eq!(kind(""), Some(ErrorKind::Truncated));
        assert_eq!(kind("00"), Some(ErrorKind::BadFrameVersion));
        assert_eq!(kind("02"), Some(ErrorKind::BadFrameVersion));
        assert_eq!(kind("808002"), Some(ErrorKind::BadFrameVersion));
        assert_eq!(kind("01"), Some(ErrorKind::Truncated));
        assert_eq!(kind("0104"), Some(ErrorKind::Truncated));
        assert_eq!(kind("010400"), Some(ErrorKind::UnknownApiKey));
        assert_eq!(kind("0101808002"), Some(ErrorKind::UnsupportedVersion));
        assert_eq!(kind("010102"), Some(ErrorKind::UnsupportedVersion));
        assert_eq!(kind("01808080808001"), Some(ErrorKind::InvalidVarint));
    }
}

#[cfg(test)]
mod plain_tests {
    //! `read_plain` reads exactly what the full reader reads, for every value of the shared
    //! vectors (Kafka 4.4.0's and the KIP-1266 ones) and every truncation, extension and
    //! version change of them, or declines; and `decode_value`, which tries it first, gives
    //! exactly what the full reader gives, value or error.
    use super::*;

    /// What `read_plain` must give for a decoded value, or `None` where it must decline.
    fn expected<'a>(v: &Value<'a>) -> Option<Plain<'a>> {
        let part = |t: &TopicIdPartitionEntry<'a>| match &t.name {
            Cow::Borrowed(name) => Some(PlainPartition {
                topic_id: t.id,
                partition: t.partition,
                name,
            }),
            Cow::Owned(_) => None,
        };
        if !(0..=HIGHEST_VERSION).contains(&v.version) {
            return None;
        }
        match &v.record {
            Record::Segment(s) => {
                let id = &s.remote_log_segment_id;
                let plain = s.unknown_tagged_fields.is_empty()
                    && id.unknown_tagged_fields.is_empty()
                    && id.topic_id_partition.unknown_tagged_fields.is_empty()
                    && s.segment_leader_epochs
                        .iter()
                        .all(|e| e.unknown_tagged_fields.is_empty());
                plain.then_some(())?;
                Some(Plain::Segment {
                    part: part(&id.topic_id_partition)?,
                    version: v.version,
                    id: id.id,
                    start_offset: s.start_offset,
                    end_offset: s.end_offset,
                    broker_id: s.broker_id,
                    max_timestamp_ms: s.max_timestamp_ms,
                    event_timestamp_ms: s.event_timestamp_ms,
                    leader_epochs: s
                        .segment_leader_epochs
                        .iter()
                        .map(|e| (e.leader_epoch, e.offset))
                        .collect(),
                    segment_size_in_bytes: s.segment_size_in_bytes,
                    custom_metadata: match &s.custom_metadata {
                        Some(Cow::Borrowed(c)) => Some(*c),
                        Some(Cow::Owned(_)) => return None,
                        None => None,
                    },
                    state: s.remote_log_segment_state,
                    txn_index_empty: s.txn_index_empty,
                    broker_leader_epoch: s.broker_leader_epoch,
                })
            }
            Record::Update(u) => {
                let id = &u.remote_log_segment_id;
                let plain = u.unknown_tagged_fields.is_empty()
                    && id.unknown_tagged_fields.is_empty()
                    && id.topic_id_partition.unknown_tagged_fields.is_empty();
                plain.then_some(())?;
                Some(Plain::Update {
                    part: part(&id.topic_id_partition)?,
                    version: v.version,
                    id: id.id,
                    broker_id: u.broker_id,
                    event_timestamp_ms: u.event_timestamp_ms,
                    custom_metadata: match &u.custom_metadata {
                        Some(Cow::Borrowed(c)) => Some(*c),
                        Some(Cow::Owned(_)) => return None,
                        None => None,
                    },
                    state: u.remote_log_segment_state,
                    broker_leader_epoch: u.broker_leader_epoch,
                    end_offset: u.end_offset,
                })
            }
            _ => None,
        }
    }

    fn check(bytes: &[u8]) -> bool {
        let full = decode_with(&mut Reader::new(bytes));
        assert_eq!(decode_value(bytes), full, "value {bytes:02x?}");
        let want = full.ok().and_then(|v| expected(&v));
        assert_eq!(read_plain(bytes), want, "value {bytes:02x?}");
        want.is_some()
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
            .collect()
    }

    #[test]
    fn plain_values_read_as_decode_value_reads_them() {
        let files = [
            include_str!("../../tests/vectors/kafka-4.4.0-values.json"),
            include_str!("../../tests/vectors/kafka-4.4.0-invalid.json"),
            include_str!("../../tests/vectors/v0.json"),
            include_str!("../../tests/vectors/v1.json"),
            include_str!("../../tests/vectors/v0-unknown-tags.json"),
            include_str!("../../tests/vectors/invalid.json"),
        ];
        let (mut inputs, mut plain) = (0, 0);
        for file in files {
            let doc: serde_json::Value = serde_json::from_str(file).unwrap_or_default();
            for case in doc["cases"].as_array().into_iter().flatten() {
                let Some(h) = case["hex"].as_str() else {
                    continue;
                };
                let bytes = hex(h);
                let mut variants = vec![bytes.clone()];
                variants.extend((0..bytes.len()).map(|n| bytes[..n].to_vec()));
                variants.push([bytes.as_slice(), &[0]].concat());
                for version in [1u8, 2, 0x7f] {
                    let mut v = bytes.clone();
                    if v.len() > 2 {
                        v[2] = version;
                        variants.push(v);
                    }
                }
                for v in variants {
                    inputs += 1;
                    plain += usize::from(check(&v));
                }
            }
        }
        println!(
            "read_plain: {inputs} inputs, {plain} plain, all as the full reader reads them; \
             decode_value gives the full reader's value or error on every one"
        );
        assert!(plain > 300 && inputs > 10_000, "{plain} plain of {inputs}");
    }
}
