//! Replay cases (vectors README §5): events applied in order to one store, then Kafka's answers
//! to every query compared.

use rlmeta::cache::Store;
use rlmeta::json::from_hex;
use rlmeta::{ErrorKind, TopicIdPartition, Uuid};
use serde_json::Value as Json;

use crate::cases::{field, int, narrow, string};

fn tip(j: &Json) -> Result<TopicIdPartition, String> {
    Ok(TopicIdPartition {
        topic_id: Uuid::parse(string(j, "id")?).map_err(|e| e.to_string())?,
        topic: string(j, "name")?.to_owned(),
        partition: narrow(int(j, "partition")?, "partition")?,
    })
}

fn bytes(event: &Json, name: &str) -> Result<Option<Vec<u8>>, String> {
    match event.get(name) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if name == "key" => Ok(Some(s.as_bytes().to_vec())),
        Some(Json::String(s)) => from_hex(s).map(Some).map_err(|e| e.to_string()),
        Some(_) => Err(format!("event {name:?} is neither null nor a string")),
    }
}

/// Replays the events, then checks every query.
pub fn replay_case(case: &Json) -> Result<(), String> {
    let mut store = Store::new();
    for event in field(case, "events")?
        .as_array()
        .ok_or("\"events\" is not an array")?
    {
        if let Some(tp) = event.get("markInitialized") {
            store.mark_initialized(&tip(tp)?);
            continue;
        }
        let offset = int(event, "offset")?;
        store.apply(
            offset,
            bytes(event, "key")?.as_deref(),
            bytes(event, "value")?.as_deref(),
        );
    }
    let mut failures = Vec::new();
    for (i, q) in field(case, "queries")?
        .as_array()
        .ok_or("\"queries\" is not an array")?
        .iter()
        .enumerate()
    {
        if let Err(why) = query(&store, q) {
            failures.push(format!("query #{i} {}: {why}", q));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n    "))
    }
}

fn query(store: &Store, q: &Json) -> Result<(), String> {
    let tp = tip(field(q, "topicIdPartition")?)?;
    let epoch = || -> Result<i32, String> { narrow(int(q, "leaderEpoch")?, "leaderEpoch") };
    let ids = |v: Vec<&rlmeta::cache::SegmentMetadata>| {
        Json::Array(
            v.into_iter()
                .map(|m| Json::String(m.id.to_string()))
                .collect(),
        )
    };
    let got: rlmeta::Result<Json> = match string(q, "op")? {
        "segmentFor" => store
            .segment_for(&tp, epoch()?, int(q, "offset")?)
            .map(|m| m.map_or(Json::Null, |m| Json::String(m.id.to_string()))),
        "highestOffsetForEpoch" => store
            .highest_offset_for_epoch(&tp, epoch()?)
            .map(|o| o.map_or(Json::Null, Json::from)),
        "listSegments" => store.segments(&tp).map(ids),
        "listSegmentsForEpoch" => store.segments_for_epoch(&tp, epoch()?).map(ids),
        "segmentState" => {
            let id = Uuid::parse(string(q, "segmentId")?).map_err(|e| e.to_string())?;
            store
                .segment_state(&tp, id)
                .map(|s| s.map_or(Json::Null, |s| Json::from(s.id())))
        }
        op => return Err(format!("unknown query op {op:?}")),
    };
    match (q.get("error").and_then(Json::as_str), got) {
        (Some(want), Err(e)) => {
            let kind = match want {
                "notFound" => ErrorKind::NotFound,
                "notInitialized" => ErrorKind::NotInitialized,
                other => return Err(format!("unknown expected error {other:?}")),
            };
            if e.kind() == kind {
                Ok(())
            } else {
                Err(format!("got error {e}, expected {want}"))
            }
        }
        (Some(want), Ok(v)) => Err(format!("got {v}, expected error {want}")),
        (None, Err(e)) => Err(format!("got error {e}")),
        (None, Ok(v)) => {
            let expect = field(q, "expect")?;
            let same = match (q.get("ordered").and_then(Json::as_bool), &v, expect) {
                (Some(false), Json::Array(a), Json::Array(b)) => {
                    let mut a: Vec<String> = a.iter().map(Json::to_string).collect();
                    let mut b: Vec<String> = b.iter().map(Json::to_string).collect();
                    a.sort();
                    b.sort();
                    a == b
                }
                _ => &v == expect,
            };
            if same {
                Ok(())
            } else {
                Err(format!("got {v}, expected {expect}"))
            }
        }
    }
}
