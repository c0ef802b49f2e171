//! Segment files crafted with rlmeta's own encoders (tests/fixtures/crafted, made by
//! `examples/craft_fixtures`, see tests/fixtures/README.md), next to what Kafka 4.4.0's own
//! kafka-dump-log printed for them (tests/fixtures/crafted/dump, by tests/e2e/dump-crafted.sh).
//! rlmeta's dump equals Kafka's line for line: compressed batches of every codec, a corrupt CRC,
//! a truncated tail, tombstones. The one exception is by design: KIP-1266 version-1 values, which
//! Kafka 4.4.0 cannot read and rlmeta decodes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use rlmeta::format::{DumpOptions, dump_log, kafka_decode_error_text};
use serde_json::Value as Json;

fn crafted() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/crafted")
}

fn dump(case: &str) -> (String, String) {
    let bytes = std::fs::read(
        crafted()
            .join(case)
            .join("__remote_log_metadata-0/00000000000000000000.log"),
    )
    .unwrap();
    let kafka =
        std::fs::read_to_string(crafted().join("dump").join(format!("{case}.txt"))).unwrap();
    (
        dump_log("00000000000000000000.log", &bytes, DumpOptions::default()),
        kafka,
    )
}

fn assert_same_lines(case: &str, ours: &str, kafka: &str, skip: impl Fn(&str) -> bool) {
    let ours: Vec<&str> = ours.lines().collect();
    let kafka: Vec<&str> = kafka.lines().collect();
    assert_eq!(ours.len(), kafka.len(), "{case}: line count");
    for (i, (a, b)) in ours.iter().zip(&kafka).enumerate() {
        if !skip(b) {
            assert_eq!(a, b, "{case}: line {}", i + 1);
        }
    }
}

#[test]
fn compressed_corrupt_and_truncated_files_dump_as_kafka_does() {
    for case in [
        "gzip",
        "snappy",
        "lz4",
        "zstd",
        "corrupt-crc",
        "truncated-tail",
    ] {
        let (ours, kafka) = dump(case);
        assert_same_lines(case, &ours, &kafka, |_| false);
    }
    let (ours, _) = dump("corrupt-crc");
    assert!(ours.contains("isvalid: false"));
    let (ours, _) = dump("truncated-tail");
    assert!(ours.ends_with("Found 113 invalid bytes at the end of 00000000000000000000.log\n"));
}

#[test]
fn keyed_log_with_tombstones_dumps_as_kafka_does_but_for_version_1_values() {
    let (ours, kafka) = dump("kip1266-keyed");
    // Kafka 4.4.0 fails on every version-1 value ("Failed to deserialize record with type N");
    // rlmeta reads them. Tombstone lines and every batch line must match.
    assert_same_lines("kip1266-keyed", &ours, &kafka, |line| {
        line.contains("Failed to deserialize record with type")
    });
    assert!(
        kafka.contains("valueSize: -1")
            && ours.contains("Cannot invoke \"java.nio.ByteBuffer.remaining()\"")
    );
    let with_keys = dump_log(
        "00000000000000000000.log",
        &std::fs::read(
            crafted().join("kip1266-keyed/__remote_log_metadata-0/00000000000000000000.log"),
        )
        .unwrap(),
        DumpOptions { keys: true },
    );
    assert!(
        with_keys.contains(
            " key: ASNFZ4mrze_-3LqYdlQyEA:orders:0:99:2 payload: RemoteLogSegmentMetadata{"
        )
    );
    assert!(
        with_keys
            .contains(" key: ASNFZ4mrze_-3LqYdlQyEA:orders:0:99:2:UPDATE payload: <tombstone>")
    );
}

/// The error text of every invalid vector (Kafka's own exception messages) is what rlmeta's dump
/// prints for the same bytes.
#[test]
fn decode_errors_print_kafkas_exception_messages() {
    let mut checked = 0;
    for entry in
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")).unwrap()
    {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().contains("invalid") {
            continue;
        }
        let doc: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            let bytes = rlmeta::json::from_hex(case["hex"].as_str().unwrap()).unwrap();
            let err = rlmeta::decode_value(&bytes).unwrap_err();
            let kafka = case["error"].as_str().unwrap();
            let message = kafka
                .strip_prefix(
                    "org.apache.kafka.server.common.serialization.MetadataParseException: ",
                )
                .unwrap_or(kafka);
            assert_eq!(
                kafka_decode_error_text(&bytes, &err),
                message,
                "{}: {}",
                path.display(),
                case["name"]
            );
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked}");
}
