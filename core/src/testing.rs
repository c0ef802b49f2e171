//! Properties shared by the fuzz targets, the kept fuzz crashers and the property tests, so that
//! all three check exactly the same thing. Not part of the supported API. `batch`: the same for
//! record batches and checkpoint files (test support lives here, so that no module of the core
//! depends on one above it). `stock`: records as a broker before KIP-1266 writes them, for tests. `history`: realistic
//! histories of many partitions, for the store's memory measurements.

pub mod batch;
#[cfg(test)]
pub mod fixtures;
pub mod history;
pub mod stock;

use crate::key::RecordKey;
use crate::record::{decode_value, decode_value_canonical};

/// For any input: decoding does not panic; `decode_value` (which tries the fixed-layout reader
/// first) gives what the full reader gives, value or error; what decodes re-encodes to a
/// canonical value that decodes the same; canonical input (Kafka's own spelling) re-encodes to
/// the very same bytes.
pub fn check_value_round_trip(data: &[u8]) -> Result<(), String> {
    let full = decode_value_canonical(data);
    if decode_value(data) != full.clone().map(|(v, _)| v) {
        return Err("decode_value and the full reader disagree".into());
    }
    let Ok((value, canonical)) = full else {
        return Ok(());
    };
    let _ = value.validate();
    let _ = RecordKey::for_value(&value);
    let _ = crate::json::value_to_json(&value, crate::json::Int64Style::String);
    let bytes = match value.encode() {
        Ok(b) => b,
        // Kafka's writer refuses unknown tags out of order too; such input is never canonical.
        Err(_) if !canonical => return Ok(()),
        Err(e) => return Err(format!("canonical input does not re-encode: {e}")),
    };
    if canonical && bytes != data {
        return Err("canonical input re-encodes to other bytes".into());
    }
    match decode_value_canonical(&bytes) {
        Ok((again, true)) if again == value => Ok(()),
        Ok((_, false)) => Err("own output is not canonical".into()),
        Ok(_) => Err("own output decodes to another value".into()),
        Err(e) => Err(format!("own output does not decode: {e}")),
    }
}

/// For any input: key parsing does not panic, and what parses formats back to the same text.
pub fn check_key_round_trip(data: &[u8]) -> Result<(), String> {
    match RecordKey::parse_bytes(data) {
        Ok(k) if k.format().as_bytes() != data => {
            Err(format!("key {k} formats differently from its input"))
        }
        _ => Ok(()),
    }
}
