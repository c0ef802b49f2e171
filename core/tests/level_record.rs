//! The level record of `remote.log.metadata.version` (docs/FEATURE-LEVEL.md) as every reader of
//! a segment file sees it: replay reports it and changes nothing else, the inspection names the
//! level, rlmeta's listing shows it plainly while Kafka's own listing (keys off) keeps Kafka's
//! decode error for it.
#![allow(clippy::unwrap_used)]

use rlmeta::batch::{BatchBuilder, NewRecord};
use rlmeta::cache::{Applied, Skip, Store};
use rlmeta::feature::{LEVEL_RECORD_KEY, MetadataLevel, level_record_value};
use rlmeta::format::{DumpOptions, dump_log, dump_log_json};
use rlmeta::inspect::inspect;
use rlmeta::json::Int64Style;

type KeyValue<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// A segment file whose records are `(key, value)` at offsets 0.., one batch each.
fn file(records: &[KeyValue<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (k, v)) in records.iter().enumerate() {
        let mut b = BatchBuilder::new(i as i64);
        b.push(NewRecord::new(0, 1_796_000_000_000 + i as i64, *k, *v));
        b.encode_into(&mut out).unwrap();
    }
    out
}

#[test]
fn replay_reports_the_level_and_nothing_else_changes() {
    let mut store = Store::new();
    for l in MetadataLevel::ALL {
        let applied = store.apply(0, Some(LEVEL_RECORD_KEY), Some(level_record_value(l)));
        assert_eq!(applied, Applied::Skipped(Skip::LevelRecord(Ok(l))));
    }
    let Applied::Skipped(skip) = store.apply(1, Some(LEVEL_RECORD_KEY), Some(b"7")) else {
        panic!("a bad level record must be skipped");
    };
    assert!(
        matches!(&skip, Skip::LevelRecord(Err(e)) if e.code() == 13),
        "{skip:?}"
    );
    assert!(
        skip.fatal_to_kafka(),
        "stock Kafka's serde cannot read a level record"
    );
    assert!(store.partitions().is_empty());
}

#[test]
fn inspection_and_listings_show_the_level() {
    let seg = file(&[
        (Some(LEVEL_RECORD_KEY), Some(b"1")),
        (Some(LEVEL_RECORD_KEY), Some(b"2")),
    ]);
    let report = inspect(&[("00000000000000000000.log", &seg)]);
    let level = report.summary.level.clone().unwrap();
    assert_eq!(
        (level.offset, level.level.ok()),
        (1, Some(MetadataLevel::V2))
    );
    assert_eq!(report.summary.undecodable, 0);
    let text = report.to_text();
    assert!(
        text.contains("remote.log.metadata.version: level 2 (level record at offset 1)"),
        "{text}"
    );
    assert_eq!(report.to_json()["summary"]["level"]["level"], 2);

    let ours = dump_log("00000000000000000000.log", &seg, DumpOptions { keys: true });
    assert!(
        ours.contains(
            " key: remote.log.metadata.version payload: remote.log.metadata.version level 2"
        ),
        "{ours}"
    );
    // Kafka's own listing cannot decode it: "2" is frame version 50 to its serde.
    let kafkas = dump_log(
        "00000000000000000000.log",
        &seg,
        DumpOptions { keys: false },
    );
    assert!(kafkas.contains("payload: Error at offset 1, skipping. Could not deserialize metadata record due to unknown frame version 50"), "{kafkas}");
    let json = dump_log_json("00000000000000000000.log", &seg, Int64Style::Number);
    assert_eq!(
        json["batches"][0]["records"][0]["value"]["levelRecord"]["level"],
        1
    );

    let none = inspect(&[("00000000000000000000.log", &file(&[]))]);
    assert!(none.to_text().contains("no level record"));
    let bad = inspect(&[(
        "00000000000000000000.log",
        &file(&[(Some(LEVEL_RECORD_KEY), None)]),
    )]);
    assert!(
        bad.to_text()
            .contains("unknown, the level record at offset 0 is invalid"),
        "{}",
        bad.to_text()
    );
}
