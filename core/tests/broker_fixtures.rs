//! Files written by a real Kafka 4.4.0 broker (tests/fixtures/broker, see its README; or, with
//! RLMETA_BROKER_DIR, the output of a fresh tests/e2e/run-broker.sh run): rlmeta's
//! dump of every `__remote_log_metadata` segment equals Kafka's own kafka-dump-log output line for
//! line, every batch's CRC is valid, every value decodes, and the zero checkpoint's feature
//! levels are the ones `kafka-features describe` reported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use rlmeta::batch::{Batches, ReadOptions};
use rlmeta::format::{DumpOptions, dump_log};

fn fixtures() -> PathBuf {
    match std::env::var_os("RLMETA_BROKER_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/broker"),
    }
}

/// Every `__remote_log_metadata-N/<base offset>.log` file: (partition dir, file name, path).
fn metadata_segments() -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(fixtures().join("remote_log_metadata")).unwrap() {
        let dir = dir.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let file = f.file_name().unwrap().to_string_lossy().into_owned();
            if file.ends_with(".log") {
                out.push((name.clone(), file, f));
            }
        }
    }
    out.sort();
    assert!(
        !out.is_empty(),
        "no metadata segment files under {}",
        fixtures().display()
    );
    out
}

#[test]
fn dump_equals_kafka_dump_log_line_for_line() {
    for (dir, file, path) in metadata_segments() {
        let bytes = std::fs::read(&path).unwrap();
        let ours = dump_log(&file, &bytes, DumpOptions::default());
        let kafka =
            std::fs::read_to_string(fixtures().join("dump").join(format!("{dir}-{file}.txt")))
                .unwrap();
        let (ours, kafka): (Vec<&str>, Vec<&str>) =
            (ours.lines().collect(), kafka.lines().collect());
        for (i, (a, b)) in ours.iter().zip(kafka.iter()).enumerate() {
            assert_eq!(a, b, "{dir}: line {} differs", i + 1);
        }
        assert_eq!(ours.len(), kafka.len(), "{dir}: line count");
    }
}

#[test]
fn every_batch_is_valid_and_every_value_decodes() {
    let mut values = 0;
    for (_, _, path) in metadata_segments() {
        let bytes = std::fs::read(&path).unwrap();
        let mut batches = Batches::new(&bytes, ReadOptions::default());
        for b in batches.by_ref() {
            let b = b.unwrap();
            assert_eq!(b.crc_valid(), Some(true));
            for r in b.records().unwrap() {
                let v = r.unwrap().value.expect("no tombstones in a 4.4.0 log");
                let (decoded, canonical) = rlmeta::decode_value_canonical(v).unwrap();
                assert!(canonical);
                assert_eq!(decoded.encode().unwrap(), v);
                values += 1;
            }
        }
        assert_eq!(batches.invalid_bytes(), 0);
    }
    assert!(values > 20, "{values} values");
}

/// `kafka-features describe` while the broker ran (features.txt) against the zero checkpoint
/// that `kafka-storage format` wrote: every numeric finalized level, and kraft.version from the
/// KRAFT_VERSION control record. metadata.version is printed by name (4.4-IV2) there and stored
/// as a level in the checkpoint; it must be present.
#[test]
fn zero_checkpoint_levels_match_kafka_features_describe() {
    let path = fixtures()
        .join("cluster_metadata/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint");
    let levels = rlmeta::checkpoint::finalized_features(&std::fs::read(path).unwrap()).unwrap();
    let described = std::fs::read_to_string(fixtures().join("features.txt")).unwrap();
    let mut compared = 0;
    for line in described.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let field = |name: &str| {
            words
                .iter()
                .position(|w| *w == name)
                .and_then(|i| words.get(i + 1))
                .copied()
                .unwrap()
        };
        let (feature, finalized) = (field("Feature:"), field("FinalizedVersionLevel:"));
        match feature {
            "metadata.version" => assert!(levels.metadata_version().is_some()),
            "kraft.version" => assert_eq!(levels.kraft_version, finalized.parse().ok()),
            _ => assert_eq!(levels.get(feature), finalized.parse().ok(), "{feature}"),
        }
        compared += 1;
    }
    assert_eq!(compared, 7);
    assert_eq!(
        levels.remote_log_metadata_version(),
        None,
        "4.4.0 has no KIP-1266 feature: absent, not level 0"
    );
}

/// Replaying the broker's metadata log yields exactly the segments its remote storage still
/// holds, all COPY_SEGMENT_FINISHED; every segment deleted by retention is gone.
#[test]
fn replay_yields_exactly_the_segments_in_remote_storage() {
    let listing = std::fs::read_to_string(fixtures().join("remote-listing.txt")).unwrap();
    let mut in_storage: Vec<String> = listing
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(':').next()?.rsplit('/').next().map(str::to_owned))
        .collect();
    in_storage.sort();
    let mut live = Vec::new();
    let mut gone = 0;
    for (_, _, path) in metadata_segments() {
        let bytes = std::fs::read(&path).unwrap();
        let report = rlmeta::inspect::inspect(&[("00000000000000000000.log", &bytes)]);
        for s in &report.segments {
            match s.now {
                Some(state) => {
                    assert_eq!(state, rlmeta::SegmentState::CopySegmentFinished);
                    live.push(s.id.to_string());
                }
                None => gone += 1,
            }
        }
        assert_eq!(
            report.summary.live_segments,
            report.segments.iter().filter(|s| s.now.is_some()).count()
        );
    }
    live.sort();
    assert_eq!(live, in_storage);
    assert!(gone > 0, "retention deleted some segments");
}
