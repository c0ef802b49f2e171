//! The JSON form of record values, shared by every front end and by the conformance vectors.
//!
//! Owns: conversion between [`Value`] and the JSON document `{"apiKey", "version", "record"}`
//! whose `record` uses the schema's field names in lowerCamelCase (vectors README §1): uuids in
//! Kafka's string form, bytes as lowercase hex, tagged fields always present at the versions that
//! define them, `unknownTaggedFields` only when there are some. 64-bit numbers stay exact.
//! Never: the byte encoding (that is `record`), or the JSON of lifecycle events (that is `plan`,
//! which builds on this module's field readers).

use std::borrow::Cow;

use serde_json::{Map, Value as Json, json};

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;
use crate::record::{
    LeaderEpochEntry, PARTITION_DELETE_TAG_DEFAULTS, PartitionDeleteMetadataRecord, Record,
    SegmentIdEntry, SegmentMetadataRecord, SegmentMetadataSnapshotRecord,
    SegmentMetadataUpdateRecord, TaggedFields, TopicIdPartitionEntry, UPDATE_TAG_DEFAULTS, Value,
};
use crate::wire::RawTaggedField;

/// Lowercase hex of bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// Bytes from hex (either case).
pub fn from_hex(s: &str) -> Result<Vec<u8>> {
    let bad = |why: &str| Error::new(ErrorKind::InvalidArgument, format!("invalid hex: {why}"));
    if s.len() % 2 != 0 {
        return Err(bad("odd number of digits"));
    }
    let digit = |c: u8| {
        (c as char)
            .to_digit(16)
            .ok_or_else(|| bad(&format!("{:?} is not a hex digit", c as char)))
    };
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| Ok((digit(p[0])? * 16 + digit(p[1])?) as u8))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Value -> JSON

/// How 64-bit integers (offsets, timestamps) are written. JSON numbers are exact in every JSON
/// library that keeps 64-bit integers; JavaScript's `JSON.parse` does not, so the JS binding
/// asks for decimal strings. Reading accepts both forms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Int64Style {
    #[default]
    Number,
    String,
}

/// A 64-bit integer in the given style (shared with `format`'s JSON).
pub(crate) fn i64_json(v: i64, style: Int64Style) -> Json {
    match style {
        Int64Style::Number => json!(v),
        Int64Style::String => json!(v.to_string()),
    }
}

fn tags_json(t: &TaggedFields<'_>, obj: &mut Map<String, Json>) {
    if !t.is_empty() {
        let list = t
            .iter()
            .map(|f| json!({"tag": f.tag, "hex": to_hex(&f.data)}))
            .collect();
        obj.insert("unknownTaggedFields".into(), Json::Array(list));
    }
}

fn tip_json(t: &TopicIdPartitionEntry<'_>) -> Json {
    let mut o = Map::new();
    o.insert("name".into(), json!(t.name));
    o.insert("id".into(), json!(t.id.to_string()));
    o.insert("partition".into(), json!(t.partition));
    tags_json(&t.unknown_tagged_fields, &mut o);
    Json::Object(o)
}

fn segment_id_json(s: &SegmentIdEntry<'_>) -> Json {
    let mut o = Map::new();
    o.insert("topicIdPartition".into(), tip_json(&s.topic_id_partition));
    o.insert("id".into(), json!(s.id.to_string()));
    tags_json(&s.unknown_tagged_fields, &mut o);
    Json::Object(o)
}

fn epochs_json(e: &[LeaderEpochEntry<'_>], style: Int64Style) -> Json {
    Json::Array(
        e.iter()
            .map(|e| {
                let mut o = Map::new();
                o.insert("leaderEpoch".into(), json!(e.leader_epoch));
                o.insert("offset".into(), i64_json(e.offset, style));
                tags_json(&e.unknown_tagged_fields, &mut o);
                Json::Object(o)
            })
            .collect(),
    )
}

fn bytes_json(b: &Option<Cow<'_, [u8]>>) -> Json {
    b.as_ref().map_or(Json::Null, |b| json!(to_hex(b)))
}

/// The `record` object of a value, 64-bit integers as numbers.
pub fn record_to_json(v: &Value<'_>) -> Json {
    record_to_json_with(v, Int64Style::Number)
}

/// The `record` object of a value.
pub fn record_to_json_with(v: &Value<'_>, style: Int64Style) -> Json {
    let big = |x: i64| i64_json(x, style);
    let v1 = v.version >= 1;
    let mut o = Map::new();
    match &v.record {
        Record::Segment(s) => {
            o.insert(
                "remoteLogSegmentId".into(),
                segment_id_json(&s.remote_log_segment_id),
            );
            o.insert("startOffset".into(), big(s.start_offset));
            o.insert("endOffset".into(), big(s.end_offset));
            o.insert("brokerId".into(), json!(s.broker_id));
            o.insert("maxTimestampMs".into(), big(s.max_timestamp_ms));
            o.insert("eventTimestampMs".into(), big(s.event_timestamp_ms));
            o.insert(
                "segmentLeaderEpochs".into(),
                epochs_json(&s.segment_leader_epochs, style),
            );
            o.insert("segmentSizeInBytes".into(), json!(s.segment_size_in_bytes));
            o.insert("customMetadata".into(), bytes_json(&s.custom_metadata));
            o.insert(
                "remoteLogSegmentState".into(),
                json!(s.remote_log_segment_state),
            );
            o.insert("txnIndexEmpty".into(), json!(s.txn_index_empty));
            if v1 {
                o.insert("brokerLeaderEpoch".into(), json!(s.broker_leader_epoch));
            }
            tags_json(&s.unknown_tagged_fields, &mut o);
        }
        Record::Update(u) => {
            o.insert(
                "remoteLogSegmentId".into(),
                segment_id_json(&u.remote_log_segment_id),
            );
            o.insert("brokerId".into(), json!(u.broker_id));
            o.insert("eventTimestampMs".into(), big(u.event_timestamp_ms));
            o.insert("customMetadata".into(), bytes_json(&u.custom_metadata));
            o.insert(
                "remoteLogSegmentState".into(),
                json!(u.remote_log_segment_state),
            );
            if v1 {
                o.insert("brokerLeaderEpoch".into(), json!(u.broker_leader_epoch));
                o.insert("endOffset".into(), big(u.end_offset));
            }
            tags_json(&u.unknown_tagged_fields, &mut o);
        }
        Record::PartitionDelete(d) => {
            o.insert("topicIdPartition".into(), tip_json(&d.topic_id_partition));
            o.insert("brokerId".into(), json!(d.broker_id));
            o.insert("eventTimestampMs".into(), big(d.event_timestamp_ms));
            o.insert(
                "remotePartitionDeleteState".into(),
                json!(d.remote_partition_delete_state),
            );
            if v1 {
                o.insert("brokerLeaderEpoch".into(), json!(d.broker_leader_epoch));
                o.insert("endOffset".into(), big(d.end_offset));
            }
            tags_json(&d.unknown_tagged_fields, &mut o);
        }
        Record::Snapshot(s) => {
            o.insert("segmentId".into(), json!(s.segment_id.to_string()));
            o.insert("startOffset".into(), big(s.start_offset));
            o.insert("endOffset".into(), big(s.end_offset));
            o.insert("brokerId".into(), json!(s.broker_id));
            o.insert("maxTimestampMs".into(), big(s.max_timestamp_ms));
            o.insert("eventTimestampMs".into(), big(s.event_timestamp_ms));
            o.insert(
                "segmentLeaderEpochs".into(),
                epochs_json(&s.segment_leader_epochs, style),
            );
            o.insert("segmentSizeInBytes".into(), json!(s.segment_size_in_bytes));
            o.insert("customMetadata".into(), bytes_json(&s.custom_metadata));
            o.insert(
                "remoteLogSegmentState".into(),
                json!(s.remote_log_segment_state),
            );
            o.insert("txnIndexEmpty".into(), json!(s.txn_index_empty));
            if v1 {
                o.insert("brokerLeaderEpoch".into(), json!(s.broker_leader_epoch));
            }
            tags_json(&s.unknown_tagged_fields, &mut o);
        }
    }
    Json::Object(o)
}

/// The whole document `{"apiKey", "version", "record"}`.
pub fn value_to_json(v: &Value<'_>, style: Int64Style) -> Json {
    json!({"apiKey": v.record.api_key().id(), "version": v.version, "record": record_to_json_with(v, style)})
}

/// Decodes value bytes to the JSON text of the whole document: what bindings hand their callers.
pub fn decode_value_to_json(bytes: &[u8], style: Int64Style) -> Result<String> {
    Ok(value_to_json(&crate::record::decode_value(bytes)?, style).to_string())
}

/// Encodes the JSON text of a whole document `{"apiKey", "version", "record"}` to value bytes.
pub fn encode_value_from_json(text: &str) -> Result<Vec<u8>> {
    value_from_json(&parse(text)?)?.encode()
}

// ---------------------------------------------------------------------------------------------
// JSON -> Value

/// A JSON object being read, with its path for error messages.
pub(crate) struct Obj<'j> {
    map: &'j Map<String, Json>,
    path: String,
}

impl<'j> Obj<'j> {
    pub(crate) fn new(j: &'j Json, path: &str) -> Result<Obj<'j>> {
        let map = j
            .as_object()
            .ok_or_else(|| Error::field(ErrorKind::InvalidJson, path, "expected a JSON object"))?;
        Ok(Obj {
            map,
            path: path.to_owned(),
        })
    }

    /// Whether the object has this field.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    pub(crate) fn path(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    pub(crate) fn err(&self, name: &str, why: &str) -> Error {
        Error::field(ErrorKind::InvalidJson, &self.path(name), why)
    }

    pub(crate) fn get(&self, name: &str) -> Result<&'j Json> {
        self.map
            .get(name)
            .ok_or_else(|| self.err(name, "missing field"))
    }

    /// An integer, as a JSON number or a decimal string (see [`Int64Style`]).
    pub(crate) fn int<T: TryFrom<i64>>(&self, name: &str) -> Result<T> {
        let v = self.get(name)?;
        v.as_i64()
            .or_else(|| {
                v.as_str()
                    .and_then(|s| s.parse::<i64>().ok().filter(|n| n.to_string() == s))
            })
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| self.err(name, "expected an integer in the field's range"))
    }

    /// A tagged field: its default when absent.
    pub(crate) fn int_or<T: TryFrom<i64>>(&self, name: &str, default: T) -> Result<T> {
        if self.map.contains_key(name) {
            self.int(name)
        } else {
            Ok(default)
        }
    }

    pub(crate) fn bool_or(&self, name: &str, default: bool) -> Result<bool> {
        match self.map.get(name) {
            None => Ok(default),
            Some(v) => v
                .as_bool()
                .ok_or_else(|| self.err(name, "expected true or false")),
        }
    }

    pub(crate) fn str(&self, name: &str) -> Result<&'j str> {
        self.get(name)?
            .as_str()
            .ok_or_else(|| self.err(name, "expected a string"))
    }

    pub(crate) fn uuid(&self, name: &str) -> Result<Uuid> {
        Uuid::parse(self.str(name)?).map_err(|e| e.in_field(&self.path(name)))
    }

    pub(crate) fn obj(&self, name: &str) -> Result<Obj<'j>> {
        Obj::new(self.get(name)?, &self.path(name))
    }

    pub(crate) fn nullable_hex(&self, name: &str) -> Result<Option<Cow<'static, [u8]>>> {
        match self.get(name)? {
            Json::Null => Ok(None),
            Json::String(s) => from_hex(s)
                .map(|b| Some(Cow::Owned(b)))
                .map_err(|e| self.err(name, e.message())),
            _ => Err(self.err(name, "expected a hex string or null")),
        }
    }

    pub(crate) fn unknown_tags(&self) -> Result<TaggedFields<'static>> {
        let Some(list) = self.map.get("unknownTaggedFields") else {
            return Ok(Vec::new());
        };
        let list = list
            .as_array()
            .ok_or_else(|| self.err("unknownTaggedFields", "expected an array"))?;
        list.iter()
            .map(|f| {
                let f = Obj::new(f, &self.path("unknownTaggedFields"))?;
                let data = from_hex(f.str("hex")?).map_err(|e| f.err("hex", e.message()))?;
                Ok(RawTaggedField {
                    tag: f.int("tag")?,
                    data: Cow::Owned(data),
                })
            })
            .collect()
    }
}

fn tip_from(o: &Obj<'_>) -> Result<TopicIdPartitionEntry<'static>> {
    Ok(TopicIdPartitionEntry {
        name: Cow::Owned(o.str("name")?.to_owned()),
        id: o.uuid("id")?,
        partition: o.int("partition")?,
        unknown_tagged_fields: o.unknown_tags()?,
    })
}

fn segment_id_from(o: &Obj<'_>) -> Result<SegmentIdEntry<'static>> {
    Ok(SegmentIdEntry {
        topic_id_partition: tip_from(&o.obj("topicIdPartition")?)?,
        id: o.uuid("id")?,
        unknown_tagged_fields: o.unknown_tags()?,
    })
}

pub(crate) fn epochs_from(o: &Obj<'_>) -> Result<Vec<LeaderEpochEntry<'static>>> {
    let list = o
        .get("segmentLeaderEpochs")?
        .as_array()
        .ok_or_else(|| o.err("segmentLeaderEpochs", "expected an array"))?;
    list.iter()
        .map(|e| {
            let e = Obj::new(e, &o.path("segmentLeaderEpochs"))?;
            Ok(LeaderEpochEntry {
                leader_epoch: e.int("leaderEpoch")?,
                offset: e.int("offset")?,
                unknown_tagged_fields: e.unknown_tags()?,
            })
        })
        .collect()
}

/// Builds a value from its api key, version and `record` object. Tagged fields absent from the
/// JSON take their defaults.
pub fn value_from_record_json(api_key: i16, version: i16, record: &Json) -> Result<Value<'static>> {
    let o = Obj::new(record, "record")?;
    let record = match api_key {
        0 => Record::Segment(SegmentMetadataRecord {
            remote_log_segment_id: segment_id_from(&o.obj("remoteLogSegmentId")?)?,
            start_offset: o.int("startOffset")?,
            end_offset: o.int("endOffset")?,
            broker_id: o.int("brokerId")?,
            max_timestamp_ms: o.int("maxTimestampMs")?,
            event_timestamp_ms: o.int("eventTimestampMs")?,
            segment_leader_epochs: epochs_from(&o)?.into(),
            segment_size_in_bytes: o.int("segmentSizeInBytes")?,
            custom_metadata: o.nullable_hex("customMetadata")?,
            remote_log_segment_state: o.int("remoteLogSegmentState")?,
            txn_index_empty: o.bool_or("txnIndexEmpty", false)?,
            broker_leader_epoch: o.int_or("brokerLeaderEpoch", 0)?,
            unknown_tagged_fields: o.unknown_tags()?,
        }),
        1 => Record::Update(SegmentMetadataUpdateRecord {
            remote_log_segment_id: segment_id_from(&o.obj("remoteLogSegmentId")?)?,
            broker_id: o.int("brokerId")?,
            event_timestamp_ms: o.int("eventTimestampMs")?,
            custom_metadata: o.nullable_hex("customMetadata")?,
            remote_log_segment_state: o.int("remoteLogSegmentState")?,
            broker_leader_epoch: o.int_or("brokerLeaderEpoch", UPDATE_TAG_DEFAULTS.0)?,
            end_offset: o.int_or("endOffset", UPDATE_TAG_DEFAULTS.1)?,
            unknown_tagged_fields: o.unknown_tags()?,
        }),
        2 => Record::PartitionDelete(PartitionDeleteMetadataRecord {
            topic_id_partition: tip_from(&o.obj("topicIdPartition")?)?,
            broker_id: o.int("brokerId")?,
            event_timestamp_ms: o.int("eventTimestampMs")?,
            remote_partition_delete_state: o.int("remotePartitionDeleteState")?,
            broker_leader_epoch: o.int_or("brokerLeaderEpoch", PARTITION_DELETE_TAG_DEFAULTS.0)?,
            end_offset: o.int_or("endOffset", PARTITION_DELETE_TAG_DEFAULTS.1)?,
            unknown_tagged_fields: o.unknown_tags()?,
        }),
        3 => Record::Snapshot(SegmentMetadataSnapshotRecord {
            segment_id: o.uuid("segmentId")?,
            start_offset: o.int("startOffset")?,
            end_offset: o.int("endOffset")?,
            broker_id: o.int("brokerId")?,
            max_timestamp_ms: o.int("maxTimestampMs")?,
            event_timestamp_ms: o.int("eventTimestampMs")?,
            segment_leader_epochs: epochs_from(&o)?.into(),
            segment_size_in_bytes: o.int("segmentSizeInBytes")?,
            custom_metadata: o.nullable_hex("customMetadata")?,
            remote_log_segment_state: o.int("remoteLogSegmentState")?,
            txn_index_empty: o.bool_or("txnIndexEmpty", false)?,
            broker_leader_epoch: o.int_or("brokerLeaderEpoch", 0)?,
            unknown_tagged_fields: o.unknown_tags()?,
        }),
        k => {
            return Err(Error::field(
                ErrorKind::UnknownApiKey,
                "apiKey",
                format!("unknown metadata record api key {k}"),
            ));
        }
    };
    Ok(Value { version, record })
}

/// Builds a value from the whole document `{"apiKey", "version", "record"}`.
pub fn value_from_json(doc: &Json) -> Result<Value<'static>> {
    let o = Obj::new(doc, "")?;
    value_from_record_json(o.int("apiKey")?, o.int("version")?, o.get("record")?)
}

/// Parses JSON text (for bindings, which pass text across the boundary).
pub fn parse(text: &str) -> Result<Json> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::InvalidJson,
            format!(
                "invalid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        assert_eq!(to_hex(&[0x00, 0xab, 0xff]), "00abff");
        assert_eq!(from_hex("00ABff").ok(), Some(vec![0x00, 0xab, 0xff]));
        assert!(from_hex("abc").is_err());
        assert!(from_hex("zz").is_err());
    }

    #[test]
    fn int64_as_strings_round_trip_exactly() {
        let doc = json!({"apiKey": 2, "version": 1, "record": {"topicIdPartition": {"name": "a", "id": "AAAAAAAAAAAAAAAAAAAAAQ", "partition": 3},
            "brokerId": 1, "eventTimestampMs": "9223372036854775807", "remotePartitionDeleteState": 0, "brokerLeaderEpoch": 4, "endOffset": "-9223372036854775808"}});
        let v = value_from_json(&doc);
        let back = v.as_ref().map(|v| value_to_json(v, Int64Style::String));
        assert_eq!(back.ok(), Some(doc));
        let bytes = v.ok().and_then(|v| v.encode().ok()).unwrap_or_default();
        let text = decode_value_to_json(&bytes, Int64Style::Number).unwrap_or_default();
        assert!(
            text.contains("\"eventTimestampMs\":9223372036854775807"),
            "{text}"
        );
    }

    #[test]
    fn missing_field_names_its_path() {
        let doc = json!({"apiKey": 2, "version": 0, "record": {"topicIdPartition": {"name": "a", "partition": 0}}});
        let e = value_from_json(&doc).err();
        assert_eq!(e.as_ref().map(|e| e.kind()), Some(ErrorKind::InvalidJson));
        assert_eq!(
            e.as_ref().and_then(|e| e.field_name()),
            Some("record.topicIdPartition.id")
        );
    }
}
