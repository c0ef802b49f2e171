//! Domain types of Kafka's tiered-storage metadata.
//!
//! Owns: `Uuid` with Kafka's string form, `TopicIdPartition`, `RemoteLogSegmentId`, the segment
//! and partition-delete state enums with their wire ids and legal transitions, a segment's
//! leader epochs (`LeaderEpochs`), and `Display` forms equal to Kafka's `toString`. Never: bytes on the wire (that is `record`).

use std::fmt;

use smallvec::SmallVec;

use crate::error::{Error, ErrorKind, Result};

/// A segment's leader epochs: epoch -> the first offset it wrote, ascending by epoch. One is held
/// inline (nearly every segment has one), more go to the heap. Here, below the codec and the
/// cache, because both hold it.
pub type LeaderEpochs = SmallVec<[(i32, i64); 1]>;

/// A Kafka `Uuid`: two signed 64-bit halves, written most significant first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid {
    pub msb: i64,
    pub lsb: i64,
}

const B64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_value(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

impl Uuid {
    pub const ZERO: Uuid = Uuid { msb: 0, lsb: 0 };
    /// Kafka's `ONE_UUID`, also the id of the KRaft metadata topic.
    pub const ONE: Uuid = Uuid { msb: 0, lsb: 1 };

    pub const fn new(msb: i64, lsb: i64) -> Uuid {
        Uuid { msb, lsb }
    }

    #[inline]
    pub fn from_bytes(b: [u8; 16]) -> Uuid {
        let (hi, lo) = b.split_at(8);
        let mut m = [0u8; 8];
        let mut l = [0u8; 8];
        m.copy_from_slice(hi);
        l.copy_from_slice(lo);
        Uuid {
            msb: i64::from_be_bytes(m),
            lsb: i64::from_be_bytes(l),
        }
    }

    pub fn to_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.msb.to_be_bytes());
        out[8..].copy_from_slice(&self.lsb.to_be_bytes());
        out
    }

    /// Kafka's string form: URL-safe base64 of the 16 bytes, no padding, 22 characters.
    pub fn to_base64(self) -> String {
        let mut s = String::with_capacity(22);
        self.write_base64(&mut s);
        s
    }

    fn write_base64(self, out: &mut String) {
        let b = self.to_bytes();
        let push = |out: &mut String, v: u32| out.push(char::from(B64URL[(v & 63) as usize]));
        for chunk in b.chunks(3) {
            let n = chunk.iter().fold(0u32, |acc, &x| (acc << 8) | u32::from(x))
                << (8 * (3 - chunk.len()));
            push(out, n >> 18);
            push(out, n >> 12);
            if chunk.len() > 1 {
                push(out, n >> 6);
            }
            if chunk.len() > 2 {
                push(out, n);
            }
        }
    }

    /// Parses Kafka's string form. Like `Uuid.fromString` it also takes the padded 24-character
    /// form; unlike Java's lenient decoder it refuses non-zero trailing bits, so that every
    /// accepted string is the one Kafka prints.
    pub fn parse(s: &str) -> Result<Uuid> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidUuid,
                format!("{s:?} is not a Kafka uuid: {why}"),
            )
        };
        let body = match s.len() {
            22 => s,
            24 if s.ends_with("==") => &s[..22],
            n if n > 24 => return Err(bad("too long to be decoded as a base64 UUID")),
            n => return Err(bad(&format!("{n} characters, expected 22"))),
        };
        let mut bytes = [0u8; 16];
        let mut acc: u32 = 0;
        let mut bits = 0;
        let mut i = 0;
        for c in body.bytes() {
            let v = b64_value(c).ok_or_else(|| {
                bad(&format!(
                    "character {:?} is not URL-safe base64",
                    char::from(c)
                ))
            })?;
            acc = (acc << 6) | v;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                if let Some(slot) = bytes.get_mut(i) {
                    *slot = (acc >> bits) as u8;
                }
                i += 1;
                acc &= (1 << bits) - 1;
            }
        }
        if acc != 0 {
            return Err(bad("non-zero trailing bits"));
        }
        Ok(Uuid::from_bytes(bytes))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(22);
        self.write_base64(&mut s);
        f.write_str(&s)
    }
}

impl std::str::FromStr for Uuid {
    type Err = Error;
    fn from_str(s: &str) -> Result<Uuid> {
        Uuid::parse(s)
    }
}

/// A user topic partition with its topic id. Equal only when id, name and partition all are.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicIdPartition {
    pub topic_id: Uuid,
    pub topic: String,
    pub partition: i32,
}

impl fmt::Display for TopicIdPartition {
    /// Kafka's `TopicIdPartition.toString`: `<topicId>:<topic>-<partition>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}-{}", self.topic_id, self.topic, self.partition)
    }
}

/// A remote log segment: the user partition and the segment's own uuid.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RemoteLogSegmentId {
    pub topic_id_partition: TopicIdPartition,
    pub id: Uuid,
}

impl fmt::Display for RemoteLogSegmentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
            self.topic_id_partition, self.id
        )
    }
}

/// Lifecycle state of a remote segment (`RemoteLogSegmentState`), wire ids 0-3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
pub enum SegmentState {
    CopySegmentStarted = 0,
    CopySegmentFinished = 1,
    DeleteSegmentStarted = 2,
    DeleteSegmentFinished = 3,
}

impl SegmentState {
    pub const ALL: [SegmentState; 4] = [
        SegmentState::CopySegmentStarted,
        SegmentState::CopySegmentFinished,
        SegmentState::DeleteSegmentStarted,
        SegmentState::DeleteSegmentFinished,
    ];

    pub fn id(self) -> i8 {
        self as i8
    }

    /// Kafka's `forId`: `None` for an unknown id.
    pub fn from_id(id: i8) -> Option<SegmentState> {
        SegmentState::ALL.into_iter().find(|s| s.id() == id)
    }

    pub fn name(self) -> &'static str {
        match self {
            SegmentState::CopySegmentStarted => "COPY_SEGMENT_STARTED",
            SegmentState::CopySegmentFinished => "COPY_SEGMENT_FINISHED",
            SegmentState::DeleteSegmentStarted => "DELETE_SEGMENT_STARTED",
            SegmentState::DeleteSegmentFinished => "DELETE_SEGMENT_FINISHED",
        }
    }

    /// Kafka's `RemoteLogSegmentState.isValidTransition(src, target)`; `None` is "no state yet".
    pub fn is_valid_transition(from: Option<SegmentState>, to: SegmentState) -> bool {
        use SegmentState::*;
        match from {
            None => to == CopySegmentStarted,
            Some(CopySegmentStarted) => matches!(
                to,
                CopySegmentStarted | CopySegmentFinished | DeleteSegmentStarted
            ),
            Some(CopySegmentFinished) => matches!(to, CopySegmentFinished | DeleteSegmentStarted),
            Some(DeleteSegmentStarted) => {
                matches!(to, DeleteSegmentStarted | DeleteSegmentFinished)
            }
            Some(DeleteSegmentFinished) => to == DeleteSegmentFinished,
        }
    }
}

impl fmt::Display for SegmentState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// State of a user partition's deletion (`RemotePartitionDeleteState`), wire ids 0-2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
pub enum PartitionDeleteState {
    DeletePartitionMarked = 0,
    DeletePartitionStarted = 1,
    DeletePartitionFinished = 2,
}

impl PartitionDeleteState {
    pub const ALL: [PartitionDeleteState; 3] = [
        PartitionDeleteState::DeletePartitionMarked,
        PartitionDeleteState::DeletePartitionStarted,
        PartitionDeleteState::DeletePartitionFinished,
    ];

    pub fn id(self) -> i8 {
        self as i8
    }

    pub fn from_id(id: i8) -> Option<PartitionDeleteState> {
        PartitionDeleteState::ALL.into_iter().find(|s| s.id() == id)
    }

    pub fn name(self) -> &'static str {
        match self {
            PartitionDeleteState::DeletePartitionMarked => "DELETE_PARTITION_MARKED",
            PartitionDeleteState::DeletePartitionStarted => "DELETE_PARTITION_STARTED",
            PartitionDeleteState::DeletePartitionFinished => "DELETE_PARTITION_FINISHED",
        }
    }

    /// Kafka's `RemotePartitionDeleteState.isValidTransition`.
    pub fn is_valid_transition(
        from: Option<PartitionDeleteState>,
        to: PartitionDeleteState,
    ) -> bool {
        use PartitionDeleteState::*;
        match from {
            None => to == DeletePartitionMarked,
            Some(s) if s == to => true,
            Some(DeletePartitionMarked) => to == DeletePartitionStarted,
            Some(DeletePartitionStarted) => to == DeletePartitionFinished,
            Some(DeletePartitionFinished) => false,
        }
    }
}

impl fmt::Display for PartitionDeleteState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_string_form_matches_kafka() {
        let u = Uuid::new(0x0123456789abcdef, 0xfedcba9876543210u64 as i64);
        assert_eq!(u.to_string(), "ASNFZ4mrze_-3LqYdlQyEA");
        assert_eq!(Uuid::parse("ASNFZ4mrze_-3LqYdlQyEA").ok(), Some(u));
        assert_eq!(Uuid::parse("ASNFZ4mrze_-3LqYdlQyEA==").ok(), Some(u));
        assert_eq!(Uuid::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(Uuid::ONE.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(Uuid::new(-1, -1).to_string(), "_____________________w");
    }

    #[test]
    fn uuid_parse_rejects_what_is_not_kafkas_form() {
        for bad in [
            "",
            "abc",
            "ASNFZ4mrze_+3LqYdlQyEA",
            "ASNFZ4mrze_-3LqYdlQyEB",
            "ASNFZ4mrze_-3LqYdlQyEA=",
            "ASNFZ4mrze_-3LqYdlQyEA===",
        ] {
            let e = Uuid::parse(bad).err();
            assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidUuid), "{bad:?}");
        }
    }

    #[test]
    fn transitions_match_kafka_table() {
        use SegmentState::*;
        let allowed = |f: Option<SegmentState>| {
            SegmentState::ALL
                .into_iter()
                .filter(move |&t| SegmentState::is_valid_transition(f, t))
                .collect::<Vec<_>>()
        };
        assert_eq!(allowed(None), vec![CopySegmentStarted]);
        assert_eq!(
            allowed(Some(CopySegmentStarted)),
            vec![
                CopySegmentStarted,
                CopySegmentFinished,
                DeleteSegmentStarted
            ]
        );
        assert_eq!(
            allowed(Some(CopySegmentFinished)),
            vec![CopySegmentFinished, DeleteSegmentStarted]
        );
        assert_eq!(
            allowed(Some(DeleteSegmentStarted)),
            vec![DeleteSegmentStarted, DeleteSegmentFinished]
        );
        assert_eq!(
            allowed(Some(DeleteSegmentFinished)),
            vec![DeleteSegmentFinished]
        );
        use PartitionDeleteState::*;
        assert!(PartitionDeleteState::is_valid_transition(
            None,
            DeletePartitionMarked
        ));
        assert!(!PartitionDeleteState::is_valid_transition(
            None,
            DeletePartitionStarted
        ));
        assert!(PartitionDeleteState::is_valid_transition(
            Some(DeletePartitionMarked),
            DeletePartitionStarted
        ));
        assert!(!PartitionDeleteState::is_valid_transition(
            Some(DeletePartitionMarked),
            DeletePartitionFinished
        ));
        assert!(PartitionDeleteState::is_valid_transition(
            Some(DeletePartitionFinished),
            DeletePartitionFinished
        ));
    }

    #[test]
    fn display_forms_match_kafka_to_string() {
        let tip = TopicIdPartition {
            topic_id: Uuid::new(0x0123456789abcdef, 0xfedcba9876543210u64 as i64),
            topic: "foo".into(),
            partition: 0,
        };
        assert_eq!(tip.to_string(), "ASNFZ4mrze_-3LqYdlQyEA:foo-0");
        let id = RemoteLogSegmentId {
            topic_id_partition: tip,
            id: Uuid::new(0x1111111111111111, 0x2222222222222222),
        };
        assert_eq!(
            id.to_string(),
            "RemoteLogSegmentId{topicIdPartition=ASNFZ4mrze_-3LqYdlQyEA:foo-0, id=EREREREREREiIiIiIiIiIg}"
        );
    }
}
