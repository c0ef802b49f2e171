//! Cleaner cases (`"kind": "cleaner"`, written by the interop harness's `CleanerDiff` from Kafka
//! 4.4.0's own `UnifiedLog` and `Cleaner`): the case's operations (topic config, appends, rolls,
//! cleans at a given `now`) are replayed into rlmeta's compaction model
//! (`rlmeta::compaction::Log`), which must keep exactly the offsets Kafka kept at every clean.
//! On a difference it names the clean, the offsets only one side kept, and those records.

use rlmeta::compaction::{CleanupPolicy, Log, TopicConfig};
use rlmeta::json::from_hex;
use serde_json::Value as Json;

use crate::cases::field;

fn config(ops: &Json) -> Result<TopicConfig, String> {
    let text = |name: &str| -> Result<&str, String> {
        ops.get(name)
            .and_then(Json::as_str)
            .ok_or_else(|| format!("config has no {name:?}"))
    };
    let num = |name: &str| -> Result<i64, String> {
        text(name)?
            .parse::<i64>()
            .map_err(|e| format!("config {name:?}: {e}"))
    };
    Ok(TopicConfig {
        cleanup_policy: CleanupPolicy::parse(text("cleanup.policy")?).map_err(|e| e.to_string())?,
        retention_ms: num("retention.ms")?,
        min_compaction_lag_ms: num("min.compaction.lag.ms")?,
        delete_retention_ms: num("delete.retention.ms")?,
        segment_ms: num("segment.ms")?,
        // segment.bytes is Kafka's default (1 GiB): the harness rolls explicitly instead.
        segment_records: usize::MAX,
    })
}

fn bytes(v: &Json, what: &str) -> Result<Option<Vec<u8>>, String> {
    match v {
        Json::Null => Ok(None),
        Json::String(h) => from_hex(h).map(Some).map_err(|e| format!("{what}: {e}")),
        _ => Err(format!("{what} is neither null nor a hex string")),
    }
}

/// A short description of a record for failure reports.
fn describe(offset: i64, appended: &[(i64, Option<Vec<u8>>, bool)]) -> String {
    let Some((ts, key, has_value)) = usize::try_from(offset).ok().and_then(|o| appended.get(o))
    else {
        return format!("{offset}: ?");
    };
    let key = key.as_ref().map_or_else(
        || "null".to_owned(),
        |k| format!("{:?}", String::from_utf8_lossy(k)),
    );
    format!(
        "{offset}: ts {ts} key {key} {}",
        if *has_value { "value" } else { "TOMBSTONE" }
    )
}

pub fn cleaner_case(case: &Json) -> Result<(), String> {
    let ops = field(case, "ops")?
        .as_array()
        .ok_or("\"ops\" is not an array")?;
    let first = ops
        .first()
        .and_then(|o| o.get("config"))
        .ok_or("the first op must be a config")?;
    let mut log = Log::new(config(first)?);
    let mut appended: Vec<(i64, Option<Vec<u8>>, bool)> = Vec::new();
    let mut cleans = 0;
    for (i, op) in ops.iter().enumerate().skip(1) {
        if let Some(c) = op.get("config") {
            log.set_config(config(c).map_err(|e| format!("op #{i}: {e}"))?);
        } else if let Some(a) = op.get("append") {
            let a = a
                .as_array()
                .filter(|a| a.len() == 3)
                .ok_or_else(|| format!("op #{i}: append is not [ts, key, value]"))?;
            let ts = a[0].as_i64().ok_or_else(|| format!("op #{i}: timestamp"))?;
            let key = bytes(&a[1], "key")?;
            let value = bytes(&a[2], "value")?;
            appended.push((ts, key.clone(), value.is_some()));
            let offset = log.append(ts, key, value);
            if offset != appended.len() as i64 - 1 {
                return Err(format!(
                    "op #{i}: appended at offset {offset}, Kafka's log gave {}",
                    appended.len() - 1
                ));
            }
        } else if op.get("roll").is_some() {
            log.roll();
        } else if let Some(now) = op.get("clean") {
            let now = now.as_i64().ok_or_else(|| format!("op #{i}: clean time"))?;
            let kept: Vec<i64> = field(op, "kept")?
                .as_array()
                .ok_or("\"kept\" is not an array")?
                .iter()
                .map(|o| o.as_i64().ok_or_else(|| "kept offset".to_owned()))
                .collect::<Result<_, _>>()?;
            log.clean(now);
            cleans += 1;
            let got: Vec<i64> = log.records().map(|r| r.offset).collect();
            if got != kept {
                let only = |a: &[i64], b: &[i64]| -> Vec<String> {
                    a.iter()
                        .filter(|o| !b.contains(o))
                        .map(|&o| describe(o, &appended))
                        .collect()
                };
                return Err(format!(
                    "op #{i} (clean #{cleans} at now={now}, after {} appends): Kafka kept {} records, the model {}\n  \
                     only Kafka kept: {:?}\n  only the model kept: {:?}",
                    appended.len(),
                    kept.len(),
                    got.len(),
                    only(&kept, &got),
                    only(&got, &kept)
                ));
            }
        } else {
            return Err(format!("op #{i}: unknown operation {op}"));
        }
    }
    if cleans == 0 {
        return Err("the case has no clean: it checks nothing".into());
    }
    Ok(())
}
