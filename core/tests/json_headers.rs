//! The JSON listing (`inspect --json`) carries each record's headers: key text and value hex.

use rlmeta::batch::{BatchBuilder, NewRecord};
use rlmeta::format::dump_log_json;
use rlmeta::json::Int64Style;

#[test]
fn json_listing_has_record_headers() -> rlmeta::Result<()> {
    let mut b = BatchBuilder::new(5);
    b.push(
        NewRecord::new(0, 1_796_000_000_000, None, Some(b"x"))
            .with_header(b"trace", Some(b"\x01\xff"))
            .with_header(b"none", None),
    );
    b.push(NewRecord::new(1, 1_796_000_000_001, None, Some(b"y")));
    let file = b.encode()?;
    let json = dump_log_json("00000000000000000005.log", &file, Int64Style::Number);
    let records = &json["batches"][0]["records"];
    assert_eq!(
        records[0]["headers"],
        serde_json::json!([{"key": "trace", "valueHex": "01ff"}, {"key": "none", "valueHex": null}])
    );
    assert_eq!(records[1]["headers"], serde_json::json!([]));
    println!("json listing: headers of 2 records checked");
    Ok(())
}
