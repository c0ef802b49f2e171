//! KIP-1266 record keys of `__remote_log_metadata`.
//!
//! Owns: the key text `<topicId>:<topic>:<partition>:<endOffset>:<brokerLeaderEpoch>` with the
//! `:UPDATE` suffix for update and partition-delete records (spec §10.3), deriving it from fields
//! or from a record value, formatting it, and parsing it back strictly (only the text Kafka would
//! write parses). Never: decisions about which key a lifecycle event writes (that is `plan`).

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;
use crate::record::{Record, Value};

/// Suffix of keys of update and partition-delete records.
pub const UPDATE_SUFFIX: &str = ":UPDATE";

/// Longest legal Kafka topic name.
pub const MAX_TOPIC_NAME_LEN: usize = 249;

/// A parsed KIP-1266 key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKey {
    pub topic_id: Uuid,
    pub topic: String,
    pub partition: i32,
    pub end_offset: i64,
    pub broker_leader_epoch: i32,
    /// True for `:UPDATE` keys (update and partition-delete records).
    pub update: bool,
}

/// Kafka's legal topic name: 1 to 249 characters of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub fn check_topic_name(name: &str) -> Result<()> {
    let bad = |why: String| Err(Error::field(ErrorKind::InvalidArgument, "topic", why));
    if name.is_empty() || name.len() > MAX_TOPIC_NAME_LEN {
        return bad(format!(
            "topic name length {} is outside 1..={MAX_TOPIC_NAME_LEN}",
            name.len()
        ));
    }
    if name == "." || name == ".." {
        return bad(format!("topic name {name:?} is reserved"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return bad(format!("topic name {name:?} has illegal character {c:?}"));
    }
    Ok(())
}

impl RecordKey {
    /// A key from its fields, refusing a topic name Kafka would not allow (such a name could
    /// make a key that does not parse back).
    pub fn new(
        topic_id: Uuid,
        topic: &str,
        partition: i32,
        end_offset: i64,
        broker_leader_epoch: i32,
        update: bool,
    ) -> Result<RecordKey> {
        check_topic_name(topic)?;
        Ok(RecordKey {
            topic_id,
            topic: topic.to_owned(),
            partition,
            end_offset,
            broker_leader_epoch,
            update,
        })
    }

    /// [`RecordKey::new`] with the topic id in Kafka's string form, as bindings receive it; a
    /// malformed id is an error naming the field `topicId`.
    pub fn from_text(
        topic_id: &str,
        topic: &str,
        partition: i32,
        end_offset: i64,
        broker_leader_epoch: i32,
        update: bool,
    ) -> Result<RecordKey> {
        let topic_id = Uuid::parse(topic_id).map_err(|e| e.in_field("topicId"))?;
        RecordKey::new(
            topic_id,
            topic,
            partition,
            end_offset,
            broker_leader_epoch,
            update,
        )
    }

    /// The key of a record value as KIP-1266 writes it. Segment records (api key 0) take the bare
    /// key; update and partition-delete records take `:UPDATE`, and need version 1 (a version-0
    /// update carries no end offset or epoch to build the key from). Snapshot records have no key.
    pub fn for_value(value: &Value<'_>) -> Result<RecordKey> {
        let key = RecordKey::fields_of(value)?;
        check_topic_name(&key.topic)?;
        Ok(key)
    }

    fn fields_of(value: &Value<'_>) -> Result<RecordKey> {
        let needs_v1 = |what: &str| {
            Error::field(
                ErrorKind::UnsupportedVersion,
                "version",
                format!(
                    "a version-{} {what} record has no brokerLeaderEpoch/endOffset to derive a key from",
                    value.version
                ),
            )
        };
        match &value.record {
            Record::Segment(s) => {
                let t = &s.remote_log_segment_id.topic_id_partition;
                Ok(RecordKey {
                    topic_id: t.id,
                    topic: t.name.to_string(),
                    partition: t.partition,
                    end_offset: s.end_offset,
                    broker_leader_epoch: s.broker_leader_epoch,
                    update: false,
                })
            }
            Record::Update(u) if value.version >= 1 => {
                let t = &u.remote_log_segment_id.topic_id_partition;
                Ok(RecordKey {
                    topic_id: t.id,
                    topic: t.name.to_string(),
                    partition: t.partition,
                    end_offset: u.end_offset,
                    broker_leader_epoch: u.broker_leader_epoch,
                    update: true,
                })
            }
            Record::PartitionDelete(d) if value.version >= 1 => {
                let t = &d.topic_id_partition;
                Ok(RecordKey {
                    topic_id: t.id,
                    topic: t.name.to_string(),
                    partition: t.partition,
                    end_offset: d.end_offset,
                    broker_leader_epoch: d.broker_leader_epoch,
                    update: true,
                })
            }
            Record::Update(_) => Err(needs_v1("update")),
            Record::PartitionDelete(_) => Err(needs_v1("partition-delete")),
            Record::Snapshot(_) => Err(Error::field(
                ErrorKind::InvalidArgument,
                "apiKey",
                "snapshot records are not written to __remote_log_metadata and have no key",
            )),
        }
    }

    /// The key text.
    pub fn format(&self) -> String {
        self.to_string()
    }

    /// The key of the same segment without `:UPDATE` (the base key), or with it.
    pub fn with_update(&self, update: bool) -> RecordKey {
        RecordKey {
            update,
            ..self.clone()
        }
    }

    /// Parses key bytes as read from a record (UTF-8 text).
    pub fn parse_bytes(bytes: &[u8]) -> Result<RecordKey> {
        let s = std::str::from_utf8(bytes).map_err(|e| {
            Error::at(
                ErrorKind::InvalidKey,
                e.valid_up_to(),
                "key",
                "record key is not valid UTF-8",
            )
        })?;
        RecordKey::parse(s)
    }

    /// Parses key text. Only canonical text parses: decimal numbers as Java prints them, the
    /// uuid in Kafka's 22-character form, a legal topic name, and `UPDATE` as the only suffix.
    pub fn parse(s: &str) -> Result<RecordKey> {
        let bad = |field: &str, why: String| {
            Error::field(ErrorKind::InvalidKey, field, format!("key {s:?}: {why}"))
        };
        // At most 6 fields are kept; `n` counts them all.
        let (mut parts, mut n) = ([""; 6], 0);
        for part in s.split(':') {
            if let Some(slot) = parts.get_mut(n) {
                *slot = part;
            }
            n += 1;
        }
        let parts = parts.get(..n.min(6)).unwrap_or_default();
        let update = match n {
            5 => false,
            6 if parts.last() == Some(&"UPDATE") => true,
            6 => {
                return Err(bad(
                    "suffix",
                    format!(
                        "unknown suffix {:?} (only UPDATE)",
                        parts.last().unwrap_or(&"")
                    ),
                ));
            }
            n => {
                return Err(bad(
                    "key",
                    format!("expected 5 ':'-separated fields (6 with UPDATE), got {n}"),
                ));
            }
        };
        let field = |i: usize| parts.get(i).copied().unwrap_or_default();
        let topic_id = Uuid::parse(field(0)).map_err(|e| bad("topicId", e.message().to_owned()))?;
        if field(0).len() != 22 {
            return Err(bad(
                "topicId",
                "a key carries the 22-character uuid form, without padding".into(),
            ));
        }
        let topic = field(1);
        check_topic_name(topic).map_err(|e| bad("topic", e.message().to_owned()))?;
        /// A number as Java prints it: no sign but a minus, no leading zero, no "-0".
        fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
            let canonical = match text.strip_prefix('-').unwrap_or(text).as_bytes() {
                [b'0'] => text.len() == 1,
                [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
                _ => false,
            };
            canonical.then(|| text.parse::<T>().ok()).flatten()
        }
        let partition = number::<i32>(field(2)).ok_or_else(|| {
            bad(
                "partition",
                format!("{:?} is not a canonical int", field(2)),
            )
        })?;
        let end_offset = number::<i64>(field(3)).ok_or_else(|| {
            bad(
                "endOffset",
                format!("{:?} is not a canonical long", field(3)),
            )
        })?;
        let broker_leader_epoch = number::<i32>(field(4)).ok_or_else(|| {
            bad(
                "brokerLeaderEpoch",
                format!("{:?} is not a canonical int", field(4)),
            )
        })?;
        Ok(RecordKey {
            topic_id,
            topic: topic.to_owned(),
            partition,
            end_offset,
            broker_leader_epoch,
            update,
        })
    }
}

impl fmt::Display for RecordKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}:{}:{}",
            self.topic_id, self.topic, self.partition, self.end_offset, self.broker_leader_epoch
        )?;
        if self.update {
            f.write_str(UPDATE_SUFFIX)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for RecordKey {
    type Err = Error;
    fn from_str(s: &str) -> Result<RecordKey> {
        RecordKey::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_the_spec_example() {
        let k = RecordKey {
            topic_id: Uuid::new(0x0123456789abcdef, 0xfedcba9876543210u64 as i64),
            topic: "foo".into(),
            partition: 0,
            end_offset: 100,
            broker_leader_epoch: 5,
            update: false,
        };
        assert_eq!(k.format(), "ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5");
        assert_eq!(k.format().len(), 34);
        assert_eq!(
            RecordKey::parse("ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5").ok(),
            Some(k.clone())
        );
        assert_eq!(
            RecordKey::parse("ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5:UPDATE").ok(),
            Some(k.with_update(true))
        );
    }

    #[test]
    fn rejects_malformed_keys() {
        for bad in [
            "",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:0:100",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5:DELETE",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:0:100:5:UPDATE:x",
            "ASNFZ4mrze_-3LqYdlQyE:foo:0:100:5",
            "ASNFZ4mrze_-3LqYdlQyEA::0:100:5",
            "ASNFZ4mrze_-3LqYdlQyEA:f o:0:100:5",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:00:100:5",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:+1:100:5",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:2147483648:100:5",
            "ASNFZ4mrze_-3LqYdlQyEA:foo:0:1e3:5",
            "ASNFZ4mrze_-3LqYdlQyEA:..:0:100:5",
        ] {
            assert_eq!(
                RecordKey::parse(bad).err().map(|e| e.kind()),
                Some(ErrorKind::InvalidKey),
                "{bad:?}"
            );
        }
        assert_eq!(
            RecordKey::parse_bytes(&[0xff]).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidKey)
        );
    }
}
