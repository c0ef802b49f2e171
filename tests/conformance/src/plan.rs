//! Write-plan scripts (vectors README §6): every event planned at the script's feature level
//! from an empty store, the planned records fed back through replay, and the produced log
//! compared with `expect`, which every plan case must have (`--emit` prints the produced log instead).

use rlmeta::cache::Store;
use rlmeta::feature::MetadataLevel;
use rlmeta::plan::{event_from_json, planned_to_json};
use serde_json::Value as Json;

use crate::cases::{field, int, narrow};

/// Runs the script; returns the produced log (one `{"key", "value"}` object per record).
pub fn run_plan(case: &Json) -> Result<Vec<Json>, String> {
    let level = MetadataLevel::from_level(narrow(int(case, "featureLevel")?, "featureLevel")?)
        .map_err(|e| e.to_string())?;
    let mut store = Store::new();
    let mut log = Vec::new();
    for (i, e) in field(case, "events")?
        .as_array()
        .ok_or("\"events\" is not an array")?
        .iter()
        .enumerate()
    {
        let event = event_from_json(e).map_err(|e| format!("event #{i}: {e}"))?;
        let planned = store
            .plan(&event, level)
            .map_err(|e| format!("event #{i}: the planner refused: {e}"))?;
        for p in planned {
            let key = p.key.format();
            store.apply(log.len() as i64, Some(key.as_bytes()), p.value.as_deref());
            log.push(planned_to_json(&p));
        }
    }
    Ok(log)
}

/// Checks the produced log against `expect`, record for record. A case without `expect` is an
/// error: a plan case is a regression example, and without its log it would check nothing.
pub fn plan_case(case: &Json) -> Result<(), String> {
    let log = run_plan(case)?;
    match case.get("expect") {
        None => {
            Err("a plan case needs \"expect\" (the records it produces); --emit prints them".into())
        }
        Some(Json::Array(expect)) if *expect == log => Ok(()),
        Some(expect) => Err(format!(
            "produced log differs:\n  got      {}\n  expected {expect}",
            Json::Array(log)
        )),
    }
}
