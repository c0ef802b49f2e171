//! Which partition of `__remote_log_metadata` holds a user partition's records.
//!
//! Owns: Kafka's `RemoteLogMetadataTopicPartitioner` rule (spec §4): Java's `Objects.hash(lsb,
//! msb, partition)`, its 4 big-endian bytes through Kafka's murmur2, made positive, modulo the
//! partition count. The topic name plays no part. Never: anything about topics' configs.

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;

/// Kafka's `Utils.murmur2` (32-bit, seed 0x9747b28c).
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let mut h: u32 = SEED ^ data.len() as u32;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        let mut k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if tail.len() >= 3 {
        h ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        h ^= u32::from(tail[1]) << 8;
    }
    if let Some(&b0) = tail.first() {
        h ^= u32::from(b0);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Java's `Long.hashCode`.
fn long_hash(v: i64) -> i32 {
    (v ^ ((v as u64) >> 32) as i64) as i32
}

/// The metadata partition (0..num_partitions) of a user partition.
pub fn metadata_partition(topic_id: Uuid, partition: i32, num_partitions: i32) -> Result<i32> {
    if num_partitions <= 0 {
        return Err(Error::field(
            ErrorKind::InvalidArgument,
            "numPartitions",
            format!("metadata topic partition count must be positive, got {num_partitions}"),
        ));
    }
    let h = [long_hash(topic_id.lsb), long_hash(topic_id.msb), partition]
        .into_iter()
        .fold(1i32, |h, x| h.wrapping_mul(31).wrapping_add(x));
    let m = murmur2(&h.to_be_bytes());
    Ok((m & 0x7fff_ffff) % num_partitions)
}

/// [`metadata_partition`] with the topic id in Kafka's string form, as bindings receive it; a
/// malformed id is an error naming the field `topicId`.
pub fn metadata_partition_of(topic_id: &str, partition: i32, num_partitions: i32) -> Result<i32> {
    metadata_partition(
        Uuid::parse(topic_id).map_err(|e| e.in_field("topicId"))?,
        partition,
        num_partitions,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur2_matches_kafka_utils_test() {
        assert_eq!(murmur2(b"21"), -973932308);
        assert_eq!(murmur2(b"foobar"), -790332482);
        assert_eq!(murmur2(b"a-little-bit-long-string"), -985981536);
        assert_eq!(murmur2(b"a-little-bit-longer-string"), -1486304829);
        assert_eq!(
            murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"),
            -58897971
        );
        assert_eq!(murmur2(b"abc"), 479470107);
        assert_eq!(murmur2(b""), 275646681);
    }

    #[test]
    fn spec_worked_examples() {
        let id = Uuid::new(0x0123456789abcdef, 0xfedcba9876543210u64 as i64);
        let got: Vec<_> = (0..3)
            .filter_map(|p| metadata_partition(id, p, 50).ok())
            .collect();
        assert_eq!(got, vec![11, 2, 38]);
        assert_eq!(
            metadata_partition(id, 0, 0).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
    }
}
