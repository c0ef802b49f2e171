//! The query's pieces against the core's own rules: the regular expressions against the
//! layout's matcher (every key a template matches, fails or matches twice), the timestamps, the
//! refusals. The query as a whole runs on DuckDB against `rlmeta reconcile` in
//! bindings-python/tests/test_reconcile_sql.py.

use proptest::prelude::*;
use regex::Regex;

use super::*;
use crate::reconcile::{KeyMatch, PRESETS};

/// What the query decides of a key with these patterns: the template (1-based, 0 none), whether
/// it is ambiguous, and the fields (segment id, topic, topic id, partition, start offset).
fn as_the_query_does(layout: &Layout, key: &str) -> (usize, bool, Vec<Option<String>>) {
    for (i, t) in layout.templates.iter().enumerate() {
        let ((g, groups), l) = (t.regex(false), t.regex(true).0);
        let (g, l) = (Regex::new(&g).unwrap(), Regex::new(&l).unwrap());
        let Some(cg) = g.captures(key) else { continue };
        let cl = l
            .captures(key)
            .expect("the lazy form matches what the greedy one does");
        let get = |c: &regex::Captures, n: usize| c.get(n).map(|m| m.as_str().to_owned());
        let ambiguous = groups.iter().any(|(_, n)| get(&cg, *n) != get(&cl, *n));
        let valid = groups.iter().all(|(f, n)| {
            let v = get(&cg, *n).unwrap();
            match f {
                Field::TopicId | Field::SegmentId => "AQgw".contains(&v[21..]),
                Field::Partition => v.parse::<u64>().unwrap() <= i32::MAX as u64,
                Field::StartOffset { .. } => v.parse::<u128>().unwrap() <= i64::MAX as u128,
                _ => true,
            }
        });
        if !ambiguous && !valid {
            continue;
        }
        let field = |want: fn(&Field) -> bool| {
            groups
                .iter()
                .find(|(f, _)| want(f))
                .and_then(|(_, n)| get(&cg, *n))
        };
        let fields = vec![
            field(|f| matches!(f, Field::SegmentId)),
            field(|f| matches!(f, Field::Topic)),
            field(|f| matches!(f, Field::TopicId)),
            field(|f| matches!(f, Field::Partition)),
            field(|f| matches!(f, Field::StartOffset { .. })),
        ];
        return (i + 1, ambiguous, fields);
    }
    (0, false, vec![])
}

fn the_core(layout: &Layout, key: &str) -> (bool, bool, Vec<Option<String>>) {
    match layout.match_key(key) {
        KeyMatch::NoMatch => (false, false, vec![]),
        KeyMatch::Ambiguous(_) => (true, true, vec![]),
        KeyMatch::Matched(f) => (
            true,
            false,
            vec![
                Some(f.segment_id.to_string()),
                f.topic.map(str::to_owned),
                f.topic_id.map(|u| u.to_string()),
                f.partition.map(|p| p.to_string()),
                f.start_offset.map(|s| s.to_string()),
            ],
        ),
    }
}

fn agree(layout: &Layout, key: &str) {
    let (t, ambiguous, fields) = as_the_query_does(layout, key);
    let (matched, core_ambiguous, core_fields) = the_core(layout, key);
    assert_eq!(t > 0, matched, "{key:?}: a template matches");
    assert_eq!(ambiguous, core_ambiguous, "{key:?}: ambiguous");
    if matched && !ambiguous {
        // numbers as the query compares them (decimal), the rest as text
        let norm = |v: &Vec<Option<String>>| -> Vec<Option<String>> {
            v.iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_ref().map(|s| {
                        if i >= 3 {
                            s.parse::<i64>().unwrap().to_string()
                        } else {
                            s.clone()
                        }
                    })
                })
                .collect()
        };
        assert_eq!(norm(&fields), norm(&core_fields), "{key:?}: fields");
    }
}

const SEG: &str = "tqimKeZwStOEOwRzT3L5oQ";
const TID: &str = "MWJ6FHTfRYy67jzwZdeqSQ";

#[test]
fn the_presets_keys_split_as_the_matcher_splits_them() {
    let aiven = Layout::parse("aiven").unwrap();
    let local = Layout::parse("kafka-local").unwrap();
    let file = Layout::parse("rlmeta-file").unwrap();
    for (l, key) in [
        (
            &aiven,
            format!("orders-{TID}/3/00000000000000000042-{SEG}.log"),
        ),
        (
            &aiven,
            format!("my-topic-1-{TID}/10/00000000000000000000-{SEG}.rsm-manifest"),
        ),
        (&aiven, format!("t-{TID}/3/42-{SEG}.log")),
        (&local, format!("a-1-b-3-{TID}/42-{SEG}.log")),
        (
            &local,
            format!("orders-7-{TID}/42-{SEG}.leader_epoch_checkpoint"),
        ),
        (&local, format!("orders-99999999999-{TID}/42-{SEG}.log")),
        (
            &local,
            format!("orders-7-{TID}/99999999999999999999-{SEG}.log"),
        ),
        (&file, format!("t-0-{TID}/{SEG}/segment.log")),
        (&file, format!("t-0-{TID}/{SEG}.tmp/segment.log")),
        (
            &file,
            format!("t-0-{TID}/tqimKeZwStOEOwRzT3L5oR/segment.log"),
        ),
        (&file, "other-cluster/x.log".to_owned()),
    ] {
        agree(l, &key);
    }
    // a key two splits of one template match: both sides call it ambiguous
    let two = Layout::parse("{topic}-{file}/{segment_id}").unwrap();
    agree(&two, &format!("a-b-c/{SEG}"));
    assert!(as_the_query_does(&two, &format!("a-b-c/{SEG}")).1);
    let one = Layout::parse("{topic}-{partition}/{segment_id}.{file}").unwrap();
    agree(&one, &format!("a-1-2/{SEG}.log"));
    assert!(!as_the_query_does(&one, &format!("a-1-2/{SEG}.log")).1);
    let dots = Layout::parse("{topic}.{file}/{segment_id}").unwrap();
    agree(&dots, &format!("a.b.c/{SEG}"));
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(SEG.to_owned()),
        Just(TID.to_owned()),
        Just("tqimKeZwStOEOwRzT3L5oR".to_owned()),
        "[0-9]{1,3}",
        Just("00000000000000000042".to_owned()),
        Just("99999999999".to_owned()),
        "[a-z]{1,3}",
        Just("-".to_owned()),
        Just(".".to_owned()),
        Just("/".to_owned()),
        Just("log".to_owned()),
        Just(".tmp".to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn any_key_splits_as_the_matcher_splits_it(
        layout in prop::sample::select(vec![
            PRESETS[0].0.to_owned(), PRESETS[1].0.to_owned(), PRESETS[2].0.to_owned(),
            "{topic}-{partition}/{segment_id}.{file}".to_owned(),
            "{topic}-{file}/{segment_id}".to_owned(),
            "{topic}.{file}/{segment_id}|{segment_id}/{start_offset}".to_owned(),
            "x/{topic_id}-{partition}-{segment_id}".to_owned(),
        ]),
        pieces in prop::collection::vec(piece(), 1..12),
    ) {
        let layout = Layout::parse(&layout).unwrap();
        agree(&layout, &pieces.concat());
    }
}

#[test]
fn timestamps_are_utc_civil_times() {
    assert_eq!(timestamp(0), "1970-01-01 00:00:00.000");
    assert_eq!(timestamp(951_782_400_000), "2000-02-29 00:00:00.000");
    assert_eq!(timestamp(1_796_361_845_123), "2026-12-04 05:24:05.123");
    assert_eq!(timestamp(-1), "1969-12-31 23:59:59.999");
    assert_eq!(timestamp(4_107_542_400_000), "2100-03-01 00:00:00.000");
}

#[test]
fn bad_targets_are_refused_naming_what() {
    let layout = Layout::parse("aiven").unwrap();
    let p = Params {
        now_ms: 0,
        grace_ms: 0,
        metadata_as_of_ms: None,
        listing_as_of_ms: None,
    };
    let t = |inv| Target {
        inventory_table: inv,
        ledger_table: "ledger",
        bucket: "b",
        prefix: "",
        url_encoded_keys: false,
    };
    for bad in ["", "a;drop", "1x", "a..b", "inv-table"] {
        let e = query(&layout, &t(bad), p).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad:?}");
        assert!(e.to_string().contains("inventory table"), "{e}");
    }
    let e = query(&layout, &t("db.inv"), Params { grace_ms: -1, ..p }).unwrap_err();
    assert!(e.to_string().contains("grace"), "{e}");
    // quotes in the bucket and prefix are SQL-escaped
    let q = query(
        &layout,
        &Target {
            bucket: "it's",
            prefix: "a'b/",
            ..t("inv")
        },
        p,
    )
    .unwrap();
    assert!(
        q.contains("bucket = 'it''s'") && q.contains("= 'a''b/'"),
        "{q}"
    );
    assert!(ledger_ddl("x y", "s3://b/").is_err());
}
