//! Replays every input kept under fuzz/regressions/ with the fuzz targets' properties, and a set
//! of hand-picked hostile inputs, so a fixed crash stays fixed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code: a failure is a panic

use std::path::Path;

use rlmeta::testing::{check_key_round_trip, check_value_round_trip};

/// Replays every file kept in fuzz/regressions/<dir>: a missing or empty directory, or a file
/// that cannot be read, fails (a replay of nothing would pass without checking anything).
fn replay(dir: &str, check: fn(&[u8]) -> Result<(), String>) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions")
        .join(dir);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the kept fuzz inputs to replay)", dir.display()));
    let mut n = 0;
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let result = check(&data);
        assert!(result.is_ok(), "{}: {result:?}", path.display());
        n += 1;
    }
    assert!(n > 0, "{}: no kept fuzz inputs to replay", dir.display());
    n
}

#[test]
fn kept_crashers_stay_fixed() {
    let values = replay("value", check_value_round_trip);
    let keys = replay("key", check_key_round_trip);
    println!("replayed {values} kept value and {keys} kept key fuzz inputs");
}

#[test]
fn hostile_inputs_are_errors_not_panics() {
    let hostile: &[&[u8]] = &[
        b"",
        &[0x01, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f],
        &[0x01, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80, 0x08],
        &[
            0x01, 0x03, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
        &[
            0x01, 0x02, 0x01, 0x02, b'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0xff, 0xff, 0xff, 0xff, 0x0f,
        ],
    ];
    for h in hostile {
        assert!(check_value_round_trip(h).is_ok());
        assert!(rlmeta::decode_value(h).is_err(), "{h:02x?} decoded");
    }
    assert!(check_key_round_trip(b"AAAAAAAAAAAAAAAAAAAAAA:a:0:0:0:UPDATE").is_ok());
}
