//! Case runners, one per kind of conformance case.

use std::collections::BTreeMap;

use rlmeta::json::{from_hex, record_to_json, to_hex, value_from_record_json};
use rlmeta::{ErrorKind, RecordKey, Uuid, decode_value, metadata_partition};
use serde_json::Value as Json;

#[derive(Default)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub by_kind: BTreeMap<&'static str, usize>,
}

/// Runs every case of one file, printing a line per failure. With `emit`, plan cases print
/// their produced log to stdout, one JSON object a line.
pub fn run_file(path: &str, verbose: bool, emit: bool, tally: &mut Tally) {
    let doc = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str::<Json>(&t).map_err(|e| e.to_string()))
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("FAIL {path}: cannot read vector file: {e}");
            tally.failed += 1;
            return;
        }
    };
    let Some(cases) = doc.get("cases").and_then(Json::as_array) else {
        eprintln!("FAIL {path}: no \"cases\" array");
        tally.failed += 1;
        return;
    };
    for (i, case) in cases.iter().enumerate() {
        let name = case
            .get("name")
            .and_then(Json::as_str)
            .map_or_else(|| format!("#{i}"), str::to_owned);
        if emit && case.get("kind").and_then(Json::as_str) == Some("plan") {
            match crate::plan::run_plan(case) {
                Ok(log) => log.iter().for_each(|r| println!("{r}")),
                Err(why) => eprintln!("cannot emit {name}: {why}"),
            }
        }
        let (kind, result) = run_case(case);
        *tally.by_kind.entry(kind).or_default() += 1;
        match result {
            Ok(()) => {
                tally.passed += 1;
                if verbose {
                    eprintln!("ok   {path}: {name}");
                }
            }
            Err(mut why) => {
                tally.failed += 1;
                if why.len() > 2000 {
                    let cut = (0..=2000)
                        .rev()
                        .find(|&i| why.is_char_boundary(i))
                        .unwrap_or(0);
                    why.truncate(cut);
                    why.push_str(" ...");
                }
                eprintln!("FAIL {path}: {name} ({kind}): {why}");
            }
        }
    }
}

fn run_case(case: &Json) -> (&'static str, Result<(), String>) {
    let kind = case.get("kind").and_then(Json::as_str);
    match kind {
        Some("value") => ("value", value_case(case)),
        Some("replay") => ("replay", crate::replay::replay_case(case)),
        Some("plan") => ("plan", crate::plan::plan_case(case)),
        Some("cleaner") => ("cleaner", crate::cleaner::cleaner_case(case)),
        Some(other) => (
            "unsupported",
            Err(format!(
                "case kind {other:?} is not supported by this runner"
            )),
        ),
        None if case.get("numPartitions").is_some() => ("partitioner", partitioner_case(case)),
        None if case.get("key").is_some() => ("key", key_case(case)),
        None if case.get("error").is_some() => ("invalid", invalid_case(case)),
        None if case.get("record").is_some() => ("value", value_case(case)),
        None => ("unknown", Err("cannot tell the kind of this case".into())),
    }
}

pub(crate) fn field<'j>(case: &'j Json, name: &str) -> Result<&'j Json, String> {
    case.get(name)
        .ok_or_else(|| format!("case has no {name:?}"))
}

pub(crate) fn int(case: &Json, name: &str) -> Result<i64, String> {
    field(case, name)?
        .as_i64()
        .ok_or_else(|| format!("{name:?} is not a 64-bit integer"))
}

pub(crate) fn string<'j>(case: &'j Json, name: &str) -> Result<&'j str, String> {
    field(case, name)?
        .as_str()
        .ok_or_else(|| format!("{name:?} is not a string"))
}

pub(crate) fn narrow<T: TryFrom<i64>>(v: i64, name: &str) -> Result<T, String> {
    T::try_from(v).map_err(|_| format!("{name:?} = {v} is out of range"))
}

/// Decoding `hex` gives `record` at `version`, and encoding `record` gives `hex`.
fn value_case(case: &Json) -> Result<(), String> {
    let api_key: i16 = narrow(int(case, "apiKey")?, "apiKey")?;
    let version: i16 = narrow(int(case, "version")?, "version")?;
    let hex = string(case, "hex")?;
    let record = field(case, "record")?;
    let bytes = from_hex(hex).map_err(|e| e.to_string())?;
    let (decoded, canonical) =
        rlmeta::decode_value_canonical(&bytes).map_err(|e| format!("decode failed: {e}"))?;
    if !canonical {
        return Err("Kafka's bytes are not recognised as canonical".into());
    }
    if decoded.version != version || decoded.record.api_key().id() != api_key {
        return Err(format!(
            "decoded api key {} version {}, expected {api_key} {version}",
            decoded.record.api_key().id(),
            decoded.version
        ));
    }
    let got = record_to_json(&decoded);
    if &got != record {
        return Err(format!(
            "decoded record differs:\n  got      {got}\n  expected {record}"
        ));
    }
    let value = value_from_record_json(api_key, version, record)
        .map_err(|e| format!("record JSON rejected: {e}"))?;
    let encoded = value.encode().map_err(|e| format!("encode failed: {e}"))?;
    if encoded != bytes {
        return Err(format!(
            "encoded bytes differ:\n  got      {}\n  expected {hex}",
            to_hex(&encoded)
        ));
    }
    Ok(())
}

/// Decoding fails, with the kind of fault Kafka's error names.
fn invalid_case(case: &Json) -> Result<(), String> {
    let bytes = from_hex(string(case, "hex")?).map_err(|e| e.to_string())?;
    let mut kafka = string(case, "error")?.to_owned();
    for cause in case
        .get("causes")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        kafka.push_str(" | ");
        kafka.push_str(cause.as_str().unwrap_or_default());
    }
    match decode_value(&bytes) {
        Ok(v) => Err(format!(
            "decoded, Kafka refused it ({kafka}): {}",
            record_to_json(&v)
        )),
        Err(e) => match ErrorKind::from_kafka_message(&kafka) {
            Some(want) if want != e.kind() => Err(format!(
                "rlmeta says {e}; Kafka's error names {} ({kafka})",
                want.name()
            )),
            _ => Ok(()),
        },
    }
}

/// Deriving from the fields gives `key`; parsing `key` gives the fields.
fn key_case(case: &Json) -> Result<(), String> {
    let want = RecordKey {
        topic_id: Uuid::parse(string(case, "topicId")?).map_err(|e| e.to_string())?,
        topic: string(case, "topicName")?.to_owned(),
        partition: narrow(int(case, "partition")?, "partition")?,
        end_offset: int(case, "endOffset")?,
        broker_leader_epoch: narrow(int(case, "brokerLeaderEpoch")?, "brokerLeaderEpoch")?,
        update: field(case, "update")?
            .as_bool()
            .ok_or("\"update\" is not a bool")?,
    };
    let key = string(case, "key")?;
    if want.format() != key {
        return Err(format!("derived {:?}, expected {key:?}", want.format()));
    }
    match RecordKey::parse(key) {
        Ok(parsed) if parsed == want => Ok(()),
        Ok(parsed) => Err(format!("parsed {parsed:?}, expected {want:?}")),
        Err(e) => Err(format!("parse failed: {e}")),
    }
}

fn partitioner_case(case: &Json) -> Result<(), String> {
    let id = Uuid::parse(string(case, "topicId")?).map_err(|e| e.to_string())?;
    let p = metadata_partition(
        id,
        narrow(int(case, "partition")?, "partition")?,
        narrow(int(case, "numPartitions")?, "numPartitions")?,
    )
    .map_err(|e| e.to_string())?;
    let want = int(case, "metadataPartition")?;
    if i64::from(p) == want {
        Ok(())
    } else {
        Err(format!("got metadata partition {p}, expected {want}"))
    }
}
