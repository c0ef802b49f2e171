//! `rlmeta-wasm`: the WebAssembly half of the JavaScript binding (wasm-bindgen).
//!
//! Owns: converting JS values to core types and back, and carrying a core error to JS as a
//! [`RawError`] object that the JS wrapper (`js/api.mjs`) turns into an `RlmetaError` subclass.
//! Never: rules, defaults or validation of its own (the core has them), nor the public JS API:
//! callers use the wrapper, which also checks argument types before they reach this module.
//!
//! Records cross the boundary as the core's JSON text with every 64-bit integer as a decimal
//! string ([`Int64Style::String`]), so that `JSON.parse` keeps offsets and timestamps exact; key
//! end offsets leave as decimal strings too and arrive as `BigInt`s.
//!
//! wasm32-unknown-unknown cannot unwind: a panic aborts (a `RuntimeError` trap). The panic hook
//! installed at start-up keeps the message for [`take_panic_message`]; the wrapper reports it as
//! an `InternalError` and re-instantiates the module (`__wbg_reset_state`).

use std::cell::RefCell;

mod inspector;
pub use inspector::{
    CheckpointView, CountsView, Fault, PreviewView, ReadinessView, RecordDetail, SegmentLog,
    SummaryView, open_checkpoint,
};

use rlmeta::json::{Int64Style, decode_value_to_json, encode_value_from_json};
use rlmeta::{Error, ErrorKind, RecordKey};
use wasm_bindgen::prelude::*;

/// A core error as thrown to JS: its kind's code and name, where it was found and why. The
/// wrapper reads it once and frees it.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawError {
    /// The kind's stable numeric code (the same in every binding).
    #[wasm_bindgen(readonly)]
    pub code: u32,
    /// The kind's snake_case name (`truncated`, `invalid_key`, ...).
    #[wasm_bindgen(readonly)]
    pub kind: String,
    /// The message alone, without kind or position.
    #[wasm_bindgen(readonly)]
    pub message: String,
    /// The whole text: kind, code, position and message.
    #[wasm_bindgen(readonly)]
    pub display: String,
    /// Byte offset into the input where the fault was found, when the input was bytes.
    #[wasm_bindgen(readonly)]
    pub offset: Option<usize>,
    /// The schema field (dotted path) involved, when known.
    #[wasm_bindgen(readonly)]
    pub field: Option<String>,
}

impl From<Error> for RawError {
    fn from(e: Error) -> RawError {
        RawError {
            code: e.code(),
            kind: e.kind().name().to_owned(),
            message: e.message().to_owned(),
            display: e.to_string(),
            offset: e.offset(),
            field: e.field_name().map(str::to_owned),
        }
    }
}

/// What every export returns: a value, or a [`RawError`] thrown to JS.
type JsResult<T> = Result<T, RawError>;

/// The fields of a KIP-1266 record key; `endOffset` as an exact decimal string.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyFields {
    #[wasm_bindgen(readonly, js_name = topicId)]
    pub topic_id: String,
    #[wasm_bindgen(readonly)]
    pub topic: String,
    #[wasm_bindgen(readonly)]
    pub partition: i32,
    #[wasm_bindgen(readonly, js_name = endOffset)]
    pub end_offset: String,
    #[wasm_bindgen(readonly, js_name = brokerLeaderEpoch)]
    pub broker_leader_epoch: i32,
    #[wasm_bindgen(readonly)]
    pub update: bool,
}

impl From<RecordKey> for KeyFields {
    fn from(k: RecordKey) -> KeyFields {
        KeyFields {
            topic_id: k.topic_id.to_string(),
            topic: k.topic,
            partition: k.partition,
            end_offset: k.end_offset.to_string(),
            broker_leader_epoch: k.broker_leader_epoch,
            update: k.update,
        }
    }
}

thread_local! {
    /// The message of the last panic, kept by the hook until the wrapper takes it.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs when the module is instantiated: keeps panic messages for [`take_panic_message`].
#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        let text = info.to_string();
        LAST_PANIC.with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                *p = Some(text);
            }
        });
    }));
}

/// The message of the panic that aborted the last call, if any (taken: a second call says none).
#[wasm_bindgen(js_name = takePanicMessage)]
pub fn take_panic_message() -> Option<String> {
    LAST_PANIC.with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.take()))
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    rlmeta::VERSION.to_owned()
}

/// Decodes a record value to the JSON text `{"apiKey", "version", "record"}`, 64-bit integers
/// as decimal strings.
#[wasm_bindgen(js_name = decodeValueJson)]
pub fn decode_value_json(value: &[u8]) -> JsResult<String> {
    Ok(decode_value_to_json(value, Int64Style::String)?)
}

/// Encodes the JSON text `{"apiKey", "version", "record"}` (64-bit integers as numbers or
/// decimal strings) to record value bytes.
#[wasm_bindgen(js_name = encodeValueJson)]
pub fn encode_value_json(text: &str) -> JsResult<Vec<u8>> {
    Ok(encode_value_from_json(text)?)
}

/// The KIP-1266 key text of these fields (a topic name Kafka would not allow is refused).
#[wasm_bindgen(js_name = keyFormat)]
pub fn key_format(
    topic_id: &str,
    topic: &str,
    partition: i32,
    end_offset: i64,
    broker_leader_epoch: i32,
    update: bool,
) -> JsResult<String> {
    Ok(RecordKey::from_text(
        topic_id,
        topic,
        partition,
        end_offset,
        broker_leader_epoch,
        update,
    )?
    .format())
}

/// Parses KIP-1266 key text.
#[wasm_bindgen(js_name = keyParse)]
pub fn key_parse(key: &str) -> JsResult<KeyFields> {
    Ok(RecordKey::parse(key)?.into())
}

/// Parses the bytes of a record's key (UTF-8 text).
#[wasm_bindgen(js_name = keyParseBytes)]
pub fn key_parse_bytes(key: &[u8]) -> JsResult<KeyFields> {
    Ok(RecordKey::parse_bytes(key)?.into())
}

/// The key text KIP-1266 writes for a record value.
#[wasm_bindgen(js_name = keyForValue)]
pub fn key_for_value(value: &[u8]) -> JsResult<String> {
    Ok(RecordKey::for_value(&rlmeta::decode_value(value)?)?.format())
}

/// The partition of `__remote_log_metadata` (0..num_partitions) holding a user partition.
#[wasm_bindgen(js_name = metadataPartition)]
pub fn metadata_partition(topic_id: &str, partition: i32, num_partitions: i32) -> JsResult<i32> {
    Ok(rlmeta::partitioner::metadata_partition_of(
        topic_id,
        partition,
        num_partitions,
    )?)
}

/// The code of the kind of fault a Kafka exception text names, or `undefined`.
#[wasm_bindgen(js_name = errorKindForKafkaMessage)]
pub fn error_kind_for_kafka_message(text: &str) -> Option<u32> {
    ErrorKind::from_kafka_message(text).map(ErrorKind::code)
}

/// Every error kind's name and code, in code order, as the JSON text of an object (the names
/// are snake_case ASCII: nothing to escape).
#[wasm_bindgen(js_name = errorCodesJson)]
pub fn error_codes_json() -> String {
    let pairs: Vec<String> = ErrorKind::ALL
        .iter()
        .map(|k| format!("\"{}\":{}", k.name(), k.code()))
        .collect();
    format!("{{{}}}", pairs.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pub-v0-seg-state0-cm-null-1epoch-name1-p0` of tests/vectors/v0.json.
    const SEGMENT_V0: &str = "01000002666d863579f7af219da11b0715b72181510000000000cf7d9e31da17031b33b9d13891711dcc\
                              00000000ca40903b8b000000ca40994f53000006960000017931d6b31d000001621e20366f020000001a\
                              000000ca40903b8b00007ea22a000000";

    #[test]
    fn raw_error_carries_kind_place_and_text() {
        let e = decode_value_json(&[1, 0]).err();
        let e = e.as_ref();
        assert_eq!(e.map(|e| e.kind.as_str()), Some("truncated"));
        assert_eq!(e.map(|e| e.code), Some(ErrorKind::Truncated.code()));
        assert_eq!(e.and_then(|e| e.offset), Some(2));
        assert!(
            e.is_some_and(|e| e.display.starts_with("truncated (code 1) at byte 2")
                && e.display.ends_with(&e.message))
        );
    }

    #[test]
    fn keys_round_trip_with_exact_end_offsets() {
        let text = "ASNFZ4mrze_-3LqYdlQyEA:foo:0:-9223372036854775808:5:UPDATE";
        let k = key_parse(text);
        assert_eq!(
            k.as_ref().map(|k| k.end_offset.as_str()).ok(),
            Some("-9223372036854775808")
        );
        assert_eq!(key_parse_bytes(text.as_bytes()), k);
        let again = key_format("ASNFZ4mrze_-3LqYdlQyEA", "foo", 0, i64::MIN, 5, true);
        assert_eq!(again.ok().as_deref(), Some(text));
        assert_eq!(
            key_parse("x").err().map(|e| e.kind),
            Some("invalid_key".to_owned())
        );
        assert_eq!(
            key_format("bad", "foo", 0, 0, 0, false)
                .err()
                .map(|e| e.code),
            Some(ErrorKind::InvalidUuid.code())
        );
        let colon = key_format("ASNFZ4mrze_-3LqYdlQyEA", "a:b", 0, 0, 0, false);
        assert_eq!(colon.err().map(|e| e.field), Some(Some("topic".to_owned())));
    }

    #[test]
    fn values_decode_to_strings_and_encode_back() {
        let bytes = rlmeta::json::from_hex(SEGMENT_V0).unwrap_or_default();
        let text = decode_value_json(&bytes).unwrap_or_default();
        assert!(text.contains(r#""startOffset":"868666588043""#), "{text}");
        assert_eq!(encode_value_json(&text).ok(), Some(bytes.clone()));
        assert_eq!(
            key_for_value(&bytes).ok().as_deref(),
            Some("bYY1efevIZ2hGwcVtyGBUQ:f:0:868667182931:0")
        );
        assert_eq!(
            encode_value_json("{").err().map(|e| e.kind),
            Some("invalid_json".to_owned())
        );
    }

    #[test]
    fn partitioner_and_error_tables() {
        assert_eq!(
            metadata_partition("ASNFZ4mrze_-3LqYdlQyEA", 0, 50).ok(),
            Some(11)
        );
        assert_eq!(
            metadata_partition("ASNFZ4mrze_-3LqYdlQyEA", 0, 0)
                .err()
                .map(|e| e.kind),
            Some("invalid_argument".to_owned())
        );
        assert_eq!(
            error_kind_for_kafka_message("Unknown metadata id 9"),
            Some(ErrorKind::UnknownApiKey.code())
        );
        assert_eq!(error_kind_for_kafka_message("nothing known"), None);
        let codes = error_codes_json();
        assert!(
            codes.starts_with(r#"{"truncated":1,"trailing_bytes":2,"#)
                && codes.ends_with(r#""internal":99}"#),
            "{codes}"
        );
        assert_eq!(take_panic_message(), None);
    }
}
