//! Control records: the records of control batches (attribute bit 5).
//!
//! Owns: the control key (`Version int16, Type int16`) and the values Kafka puts behind each
//! type — transaction markers (ABORT/COMMIT: `Version int16, CoordinatorEpoch int32`) and the
//! KRaft control messages, which are the bare bodies of generated flexible messages at version 0
//! (`SnapshotHeaderRecord`, `SnapshotFooterRecord`, `KRaftVersionRecord`, `LeaderChangeMessage`,
//! `VotersRecord`): decoding them as Kafka does and encoding them as Kafka writes them.
//! Never: deciding what a control record means for a log (transactions, snapshots); I/O.
//!
//! Kafka's rules kept: a key shorter than 4 bytes or with a negative version is invalid, other
//! key versions are read as version 0; an unknown type is not an error (`UNKNOWN`, its value kept
//! raw); a marker value shorter than 6 bytes or with a negative version is invalid; bytes after
//! a known value are ignored. Error offsets are byte offsets into the key or the value.

use std::fmt;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;
use crate::wire::{Reader, Writer};

/// The type of a control record (the key's second int16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KRaftVersion,
    KRaftVoters,
    /// Any other type id (Kafka's `UNKNOWN`, which readers ignore).
    Unknown(i16),
}

impl ControlRecordType {
    pub fn from_id(id: i16) -> ControlRecordType {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KRaftVersion,
            6 => ControlRecordType::KRaftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KRaftVersion => 5,
            ControlRecordType::KRaftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    /// Kafka's enum constant name (`ABORT`, ..., `UNKNOWN`).
    pub fn name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
            ControlRecordType::LeaderChange => "LEADER_CHANGE",
            ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlRecordType::KRaftVersion => "KRAFT_VERSION",
            ControlRecordType::KRaftVoters => "KRAFT_VOTERS",
            ControlRecordType::Unknown(_) => "UNKNOWN",
        }
    }

    /// The 4-byte key Kafka writes for this type (key version 0).
    pub fn key(self) -> [u8; 4] {
        let [a, b] = 0i16.to_be_bytes();
        let [c, d] = self.id().to_be_bytes();
        [a, b, c, d]
    }
}

impl fmt::Display for ControlRecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `LeaderChangeMessage`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderChange {
    pub version: i16,
    pub leader_id: i32,
    pub voters: Vec<i32>,
    pub granting_voters: Vec<i32>,
}

/// An endpoint of a voter in `VotersRecord`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VoterEndpoint<'b> {
    pub name: &'b str,
    pub host: &'b str,
    pub port: u16,
}

/// A voter of `VotersRecord`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Voter<'b> {
    pub voter_id: i32,
    pub voter_directory_id: Uuid,
    pub endpoints: Vec<VoterEndpoint<'b>>,
    /// `KRaftVersionFeature`: (MinSupportedVersion, MaxSupportedVersion).
    pub kraft_version_range: (i16, i16),
}

/// `VotersRecord`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Voters<'b> {
    pub version: i16,
    pub voters: Vec<Voter<'b>>,
}

/// The value of a control record, by type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlValue<'b> {
    /// ABORT or COMMIT.
    EndTxn {
        version: i16,
        coordinator_epoch: i32,
    },
    SnapshotHeader {
        version: i16,
        last_contained_log_timestamp: i64,
    },
    SnapshotFooter {
        version: i16,
    },
    KRaftVersion {
        version: i16,
        kraft_version: i16,
    },
    LeaderChange(LeaderChange),
    Voters(Voters<'b>),
    /// The value of an unknown type, as stored.
    Unknown(Option<&'b [u8]>),
}

/// A decoded control record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlRecord<'b> {
    /// The key's version (Kafka reads versions above 0 as version 0).
    pub key_version: i16,
    pub record_type: ControlRecordType,
    pub value: ControlValue<'b>,
}

impl<'b> ControlRecord<'b> {
    /// Decodes a control record from its key and value.
    pub fn parse(key: Option<&[u8]>, value: Option<&'b [u8]>) -> Result<ControlRecord<'b>> {
        let (key_version, record_type) = parse_key(key)?;
        let value = parse_value(record_type, value)?;
        Ok(ControlRecord {
            key_version,
            record_type,
            value,
        })
    }

    /// A control record of the type that fits `value` (ABORT or COMMIT for a marker, as asked).
    pub fn new(value: ControlValue<'b>, commit: bool) -> ControlRecord<'b> {
        let record_type = match &value {
            ControlValue::EndTxn { .. } if commit => ControlRecordType::Commit,
            ControlValue::EndTxn { .. } => ControlRecordType::Abort,
            ControlValue::SnapshotHeader { .. } => ControlRecordType::SnapshotHeader,
            ControlValue::SnapshotFooter { .. } => ControlRecordType::SnapshotFooter,
            ControlValue::KRaftVersion { .. } => ControlRecordType::KRaftVersion,
            ControlValue::LeaderChange(_) => ControlRecordType::LeaderChange,
            ControlValue::Voters(_) => ControlRecordType::KRaftVoters,
            ControlValue::Unknown(_) => ControlRecordType::Unknown(-1),
        };
        ControlRecord {
            key_version: 0,
            record_type,
            value,
        }
    }

    /// The key as Kafka writes it.
    pub fn encode_key(&self) -> [u8; 4] {
        let [a, b] = self.key_version.to_be_bytes();
        let [c, d] = self.record_type.id().to_be_bytes();
        [a, b, c, d]
    }

    /// The value as Kafka writes it (`None` only for an unknown type with a null value).
    pub fn encode_value(&self) -> Result<Option<Vec<u8>>> {
        self.value.encode()
    }
}

fn invalid(at: usize, field: &str, message: String) -> Error {
    Error::at(ErrorKind::InvalidRecord, at, field, message)
}

fn parse_key(key: Option<&[u8]>) -> Result<(i16, ControlRecordType)> {
    let key = key.unwrap_or_default();
    let [a, b, c, d, ..] = *key else {
        return Err(invalid(
            0,
            "controlKey",
            format!(
                "Invalid value size found for end control record key. Must have at least 4 \
                 bytes, but found only {}",
                key.len()
            ),
        ));
    };
    let version = i16::from_be_bytes([a, b]);
    if version < 0 {
        return Err(invalid(
            0,
            "controlKey.version",
            format!(
                "Invalid version found for control record: {version}. May indicate data corruption"
            ),
        ));
    }
    Ok((
        version,
        ControlRecordType::from_id(i16::from_be_bytes([c, d])),
    ))
}

fn parse_value(t: ControlRecordType, value: Option<&[u8]>) -> Result<ControlValue<'_>> {
    let Some(v) = value else {
        return match t {
            ControlRecordType::Unknown(_) => Ok(ControlValue::Unknown(None)),
            _ => Err(invalid(
                0,
                "value",
                format!("{t} control record has a null value"),
            )),
        };
    };
    let mut r = Reader::new(v);
    let value = match t {
        ControlRecordType::Abort | ControlRecordType::Commit => {
            let [a, b, c, d, e, f, ..] = *v else {
                return Err(invalid(
                    0,
                    "value",
                    format!(
                        "Invalid value size found for end transaction marker. Must have at least \
                         6 bytes, but found only {}",
                        v.len()
                    ),
                ));
            };
            let version = i16::from_be_bytes([a, b]);
            if version < 0 {
                return Err(invalid(
                    0,
                    "value.version",
                    format!(
                        "Invalid version found for end transaction marker: {version}. May \
                         indicate data corruption"
                    ),
                ));
            }
            ControlValue::EndTxn {
                version,
                coordinator_epoch: i32::from_be_bytes([c, d, e, f]),
            }
        }
        ControlRecordType::SnapshotHeader => {
            let version = i16_(&mut r, "version")?;
            let ts = r.i64("lastContainedLogTimestamp")?;
            skip_tags(&mut r, "_tagged_fields")?;
            ControlValue::SnapshotHeader {
                version,
                last_contained_log_timestamp: ts,
            }
        }
        ControlRecordType::SnapshotFooter => {
            let version = i16_(&mut r, "version")?;
            skip_tags(&mut r, "_tagged_fields")?;
            ControlValue::SnapshotFooter { version }
        }
        ControlRecordType::KRaftVersion => {
            let version = i16_(&mut r, "version")?;
            let kraft_version = i16_(&mut r, "kRaftVersion")?;
            skip_tags(&mut r, "_tagged_fields")?;
            ControlValue::KRaftVersion {
                version,
                kraft_version,
            }
        }
        ControlRecordType::LeaderChange => {
            let version = i16_(&mut r, "version")?;
            let leader_id = r.i32("leaderId")?;
            let voters = voter_ids(&mut r, "voters")?;
            let granting_voters = voter_ids(&mut r, "grantingVoters")?;
            skip_tags(&mut r, "_tagged_fields")?;
            ControlValue::LeaderChange(LeaderChange {
                version,
                leader_id,
                voters,
                granting_voters,
            })
        }
        ControlRecordType::KRaftVoters => ControlValue::Voters(voters(&mut r)?),
        ControlRecordType::Unknown(_) => ControlValue::Unknown(Some(v)),
    };
    Ok(value)
}

fn i16_(r: &mut Reader<'_>, field: &str) -> Result<i16> {
    let b = r.take(2, field)?;
    Ok(i16::from_be_bytes([b[0], b[1]]))
}

/// Skips a tagged-field section (no tag is known in these messages).
fn skip_tags(r: &mut Reader<'_>, field: &str) -> Result<()> {
    let n = r.uvarint(field)?;
    for _ in 0..n {
        r.uvarint(field)?;
        let size = r.uvarint(field)?;
        r.tagged_data(size, field)?;
    }
    Ok(())
}

fn voter_ids(r: &mut Reader<'_>, field: &str) -> Result<Vec<i32>> {
    let n = r.compact_array_len(field)?;
    let mut out = Vec::with_capacity(n.min(r.remaining() / 5));
    for _ in 0..n {
        out.push(r.i32(field)?);
        skip_tags(r, field)?;
    }
    Ok(out)
}

fn voters<'b>(r: &mut Reader<'b>) -> Result<Voters<'b>> {
    let version = i16_(r, "version")?;
    let n = r.compact_array_len("voters")?;
    let mut voters = Vec::with_capacity(n.min(r.remaining() / 24));
    for _ in 0..n {
        let voter_id = r.i32("voters.voterId")?;
        let voter_directory_id = r.uuid("voters.voterUuid")?;
        let m = r.compact_array_len("voters.endpoints")?;
        let mut endpoints = Vec::with_capacity(m.min(r.remaining() / 5));
        for _ in 0..m {
            let name = r.compact_str("voters.endpoints.name")?;
            let host = r.compact_str("voters.endpoints.host")?;
            let port = r.take(2, "voters.endpoints.port")?;
            skip_tags(r, "voters.endpoints._tagged_fields")?;
            endpoints.push(VoterEndpoint {
                name,
                host,
                port: u16::from_be_bytes([port[0], port[1]]),
            });
        }
        let min = i16_(r, "voters.kRaftVersionFeature.minSupportedVersion")?;
        let max = i16_(r, "voters.kRaftVersionFeature.maxSupportedVersion")?;
        skip_tags(r, "voters.kRaftVersionFeature._tagged_fields")?;
        skip_tags(r, "voters._tagged_fields")?;
        voters.push(Voter {
            voter_id,
            voter_directory_id,
            endpoints,
            kraft_version_range: (min, max),
        });
    }
    skip_tags(r, "_tagged_fields")?;
    Ok(Voters { version, voters })
}

impl ControlValue<'_> {
    /// The value as Kafka writes it (`None` only for [`ControlValue::Unknown`] of a null value).
    pub fn encode(&self) -> Result<Option<Vec<u8>>> {
        let mut w = Writer::default();
        match self {
            ControlValue::EndTxn {
                version,
                coordinator_epoch,
            } => {
                w.bytes(&version.to_be_bytes());
                w.i32(*coordinator_epoch);
            }
            ControlValue::SnapshotHeader {
                version,
                last_contained_log_timestamp,
            } => {
                w.bytes(&version.to_be_bytes());
                w.i64(*last_contained_log_timestamp);
                w.uvarint(0);
            }
            ControlValue::SnapshotFooter { version } => {
                w.bytes(&version.to_be_bytes());
                w.uvarint(0);
            }
            ControlValue::KRaftVersion {
                version,
                kraft_version,
            } => {
                w.bytes(&version.to_be_bytes());
                w.bytes(&kraft_version.to_be_bytes());
                w.uvarint(0);
            }
            ControlValue::LeaderChange(lc) => {
                w.bytes(&lc.version.to_be_bytes());
                w.i32(lc.leader_id);
                for (ids, field) in [
                    (&lc.voters, "voters"),
                    (&lc.granting_voters, "grantingVoters"),
                ] {
                    w.compact_array_len(ids.len(), field)?;
                    for id in ids {
                        w.i32(*id);
                        w.uvarint(0);
                    }
                }
                w.uvarint(0);
            }
            ControlValue::Voters(v) => {
                w.bytes(&v.version.to_be_bytes());
                w.compact_array_len(v.voters.len(), "voters")?;
                for voter in &v.voters {
                    w.i32(voter.voter_id);
                    w.uuid(voter.voter_directory_id);
                    w.compact_array_len(voter.endpoints.len(), "voters.endpoints")?;
                    for e in &voter.endpoints {
                        w.compact_str(e.name, "voters.endpoints.name")?;
                        w.compact_str(e.host, "voters.endpoints.host")?;
                        w.bytes(&e.port.to_be_bytes());
                        w.uvarint(0);
                    }
                    w.bytes(&voter.kraft_version_range.0.to_be_bytes());
                    w.bytes(&voter.kraft_version_range.1.to_be_bytes());
                    w.uvarint(0);
                    w.uvarint(0);
                }
                w.uvarint(0);
            }
            ControlValue::Unknown(v) => return Ok(v.map(<[u8]>::to_vec)),
        }
        Ok(Some(w.into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_markers() {
        let r = ControlRecord::parse(Some(&[0, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 7]));
        assert_eq!(
            r.ok(),
            Some(ControlRecord {
                key_version: 0,
                record_type: ControlRecordType::Commit,
                value: ControlValue::EndTxn {
                    version: 0,
                    coordinator_epoch: 7
                }
            })
        );
        // Later key versions are read as version 0; unknown types are kept, not refused.
        let r = ControlRecord::parse(Some(&[0, 3, 0, 9, 0xff]), Some(b"xyz"));
        assert_eq!(
            r.as_ref().map(|r| r.record_type).ok(),
            Some(ControlRecordType::Unknown(9))
        );
        assert_eq!(
            r.map(|r| r.value).ok(),
            Some(ControlValue::Unknown(Some(&b"xyz"[..])))
        );
        for bad in [&[0u8, 0, 0][..], &[0xff, 0xff, 0, 0]] {
            let e = ControlRecord::parse(Some(bad), Some(&[0; 6])).err();
            assert_eq!(
                e.map(|e| e.kind()),
                Some(ErrorKind::InvalidRecord),
                "{bad:?}"
            );
        }
        let e = ControlRecord::parse(Some(&[0, 0, 0, 0]), Some(&[0, 0, 0, 0, 0])).err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidRecord));
        let e = ControlRecord::parse(Some(&[0, 0, 0, 0]), Some(&[0x80, 0, 0, 0, 0, 0])).err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidRecord));
    }

    #[test]
    fn snapshot_footer_example_of_the_spec() {
        let r = ControlRecord::parse(Some(&[0, 0, 0, 4]), Some(&[0, 0, 0]));
        assert_eq!(
            r.map(|r| r.value).ok(),
            Some(ControlValue::SnapshotFooter { version: 0 })
        );
    }

    #[test]
    fn kraft_values_round_trip() {
        let values = [
            ControlValue::SnapshotHeader {
                version: 0,
                last_contained_log_timestamp: 1_700_000_000_000,
            },
            ControlValue::SnapshotFooter { version: 0 },
            ControlValue::KRaftVersion {
                version: 0,
                kraft_version: 1,
            },
            ControlValue::LeaderChange(LeaderChange {
                version: 0,
                leader_id: 3,
                voters: vec![1, 2, 3],
                granting_voters: vec![3],
            }),
            ControlValue::Voters(Voters {
                version: 0,
                voters: vec![Voter {
                    voter_id: 1,
                    voter_directory_id: Uuid::from_bytes([7; 16]),
                    endpoints: vec![VoterEndpoint {
                        name: "CONTROLLER",
                        host: "localhost",
                        port: 9093,
                    }],
                    kraft_version_range: (0, 1),
                }],
            }),
            ControlValue::EndTxn {
                version: 0,
                coordinator_epoch: -5,
            },
        ];
        for v in values {
            let rec = ControlRecord::new(v.clone(), true);
            let bytes = rec.encode_value().ok().flatten().unwrap_or_default();
            let back = ControlRecord::parse(Some(&rec.encode_key()), Some(&bytes));
            assert_eq!(back.map(|r| r.value).ok(), Some(v));
        }
    }

    #[test]
    fn truncated_kraft_values_are_errors() {
        let e = ControlRecord::parse(Some(&[0, 0, 0, 3]), Some(&[0, 0, 1, 2])).err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::Truncated));
    }
}
