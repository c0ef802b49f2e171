//! The reconciliation's object rules as one SQL query, for an engine that joins an S3 Inventory
//! table with the ledger where the inventory is too large even for the streaming classifier
//! (Athena, Trino; DuckDB runs it too and tests it).
//!
//! Owns: the ledger as CSV rows (the segments records named: what the query joins against), and
//! the query. Given the inventory's table, the bucket and prefix, the [`Layout`] and the same
//! [`Params`] as [`super::reconcile`], it gives every object under the prefix a class and says
//! whether it is safe to delete, by the rules of [`super::Classifier`] that a join can decide:
//! - `unmatched`: no template matches the key, the first one that does matches it in more than
//!   one way (its greedy and lazy forms split the key differently: [`super::Template::regex`]),
//!   or its fields disagree with the metadata of the segment it names;
//! - `orphaned`: no record names its segment;
//! - `leaked`: its segment was deleted (DELETE_SEGMENT_FINISHED, tombstoned, or its partition
//!   deleted); `deleted` instead when that came after the listing, less the grace;
//! - `named`: every other object of a segment the records name. Which of those are live,
//!   dangling, a copy in progress, an abandoned upload or a size mismatch needs every object of
//!   the segment; the full `rlmeta reconcile` decides it, and the query never calls one safe.
//!
//! Orphaned and leaked objects last modified before `min(now, metadata as of) - grace` are safe
//! to delete: what the classifier plans for them. The one plan the query leaves out is the
//! objects of abandoned uploads that finished segments cover (the classifier deletes them).
//! Never: I/O, running the query, or a rule of its own: every condition above is one of the
//! classifier's, and the tests compare the query's answer with it on the same objects.

use super::layout::{Field, Layout};
use super::{Ledger, Params, deleted};
use crate::error::{Error, ErrorKind, Result};

/// Where the query reads.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// The inventory's table (AWS's documented schema: `bucket`, `key`, `size`,
    /// `last_modified_date` as a timestamp), `name` or `schema.name`.
    pub inventory_table: &'a str,
    /// The table of [`ledger_rows`] ([`LEDGER_COLUMNS`]).
    pub ledger_table: &'a str,
    pub bucket: &'a str,
    /// The prefix the store's keys start with (taken off before the layout matches).
    pub prefix: &'a str,
    /// The inventory's keys are URL-encoded (CSV inventories): the query decodes them.
    pub url_encoded_keys: bool,
}

/// The ledger table's columns, as [`ledger_rows`] writes them (CSV with this header line).
pub const LEDGER_COLUMNS: &str =
    "segment_id,topic_id,topic,partition,start_offset,since_ms,deleted";

/// One CSV line (with its line break) per segment any record named, in no particular order:
/// its id, partition, start offset (empty when no record gave it), the time of its latest
/// record and whether it is deleted. Topic names need no quoting (Kafka allows `[a-zA-Z0-9._-]`).
pub fn ledger_rows(ledger: &Ledger) -> impl Iterator<Item = String> + '_ {
    ledger.named.iter().map(|(id, n)| {
        let tp = &ledger.parts[n.partition as usize];
        let start = n.start_offset.map(|s| s.to_string()).unwrap_or_default();
        format!(
            "{id},{},{},{},{start},{},{}\n",
            tp.topic_id,
            tp.topic,
            tp.partition,
            n.since_ms,
            deleted(n)
        )
    })
}

/// Athena's `CREATE EXTERNAL TABLE` for the ledger's CSV files under `location` (an S3 folder).
pub fn ledger_ddl(table: &str, location: &str) -> Result<String> {
    ident(table, "ledger table")?;
    Ok(format!(
        "CREATE EXTERNAL TABLE {table} (\n  segment_id string, topic_id string, topic string, partition int,\n  \
         start_offset bigint, since_ms bigint, deleted boolean)\n\
         ROW FORMAT DELIMITED FIELDS TERMINATED BY ','\nLOCATION {}\n\
         TBLPROPERTIES ('skip.header.line.count' = '1');\n",
        quote(location)
    ))
}

/// The query (see the module doc). Errors: a table name that is not an identifier, a negative
/// grace (`InvalidArgument`).
pub fn query(layout: &Layout, t: &Target, p: Params) -> Result<String> {
    ident(t.inventory_table, "inventory table")?;
    ident(t.ledger_table, "ledger table")?;
    p.check()?;
    let cutoff = p
        .now_ms
        .min(p.metadata_as_of_ms.unwrap_or(p.now_ms))
        .saturating_sub(p.grace_ms);
    // '+' is a space in the form encoding of CSV inventories (a '+' of the key is %2B); Trino's
    // url_decode says so, DuckDB's does not
    let key = if t.url_encoded_keys {
        "url_decode(replace(key, '+', '%20'))"
    } else {
        "key"
    };
    let n = t.prefix.chars().count();
    let under = if n == 0 {
        String::new()
    } else {
        format!(" AND substr({key}, 1, {n}) = {}", quote(t.prefix))
    };

    // per template: its patterns, and each field's group
    let forms: Vec<_> = layout
        .templates
        .iter()
        .map(|tm| (tm.regex(false), tm.regex(true).0))
        .collect();
    let ext = |re: &str, g: usize| format!("regexp_extract(k, {}, {g})", quote(re));
    let mut matches = String::new();
    let mut ambiguous = String::new();
    let mut fields: Vec<String> = Vec::new();
    for name in [
        "segment_id",
        "topic",
        "topic_id",
        "partition",
        "start_offset",
    ] {
        let mut arms = String::new();
        for (i, ((re, groups), _)) in forms.iter().enumerate() {
            if let Some((_, g)) = groups.iter().find(|(f, _)| column(f) == Some(name)) {
                arms.push_str(&format!(" WHEN {} THEN {}", i + 1, ext(re, *g)));
            }
        }
        fields.push(if arms.is_empty() {
            format!("CAST(NULL AS varchar) AS {name}")
        } else {
            format!("CASE template{arms} END AS {name}")
        });
    }
    for (i, ((re, groups), lazy)) in forms.iter().enumerate() {
        // As the core's matcher: the first template that matches in more than one way (its
        // greedy and lazy forms split the key differently) makes the key ambiguous; one that
        // matches in one way counts if its uuids are ones Kafka prints (trailing bits zero), its
        // partition an int and its start offset a bigint, else the next template is tried.
        let m = format!("NULLIF({}, '') IS NOT NULL", ext(re, 0));
        let split: Vec<String> = groups
            .iter()
            .filter(|(f, _)| {
                !matches!(
                    f,
                    Field::TopicId | Field::SegmentId | Field::StartOffset { width: Some(_) }
                )
            })
            .map(|(_, g)| format!("{} <> {}", ext(re, *g), ext(lazy, *g)))
            .collect();
        let amb = if split.is_empty() {
            "false".to_owned()
        } else {
            format!("({})", split.join(" OR "))
        };
        let valid: Vec<String> = groups
            .iter()
            .filter_map(|(f, g)| match f {
                Field::TopicId | Field::SegmentId => Some(format!(
                    "substr({}, 22, 1) IN ('A', 'Q', 'g', 'w')",
                    ext(re, *g)
                )),
                Field::Partition => Some(format!(
                    "CAST({} AS decimal(20, 0)) <= {}",
                    ext(re, *g),
                    i32::MAX
                )),
                Field::StartOffset { .. } => Some(format!(
                    "CAST({} AS decimal(20, 0)) <= {}",
                    ext(re, *g),
                    i64::MAX
                )),
                _ => None,
            })
            .collect();
        // CASE, not AND: an engine may evaluate both sides, and a cast of no match fails
        matches.push_str(&format!(
            "\n      WHEN CASE WHEN {m} THEN {amb} OR ({}) ELSE false END THEN {}",
            valid.join(" AND "),
            i + 1
        ));
        if !split.is_empty() {
            ambiguous.push_str(&format!(" WHEN {} THEN {amb}", i + 1));
        }
    }
    let ambiguous = if ambiguous.is_empty() {
        "false".to_owned()
    } else {
        format!("CASE template{ambiguous} ELSE false END")
    };
    let not_judged = match p.listing_as_of_ms {
        Some(l) => format!(
            "\n      WHEN l.deleted AND l.since_ms > {} THEN 'deleted'",
            l.saturating_sub(p.grace_ms)
        ),
        None => String::new(),
    };
    Ok(format!(
        "-- rlmeta reconcile --emit-sql: every object under {store} against the ledger of the metadata,\n\
         -- by the layout {spec:?}, grace {grace} ms, now {now} ({now_ms} ms){asof}{listed}.\n\
         -- Safe to delete: orphaned and leaked objects last modified before {cut} (UTC).\n\
         -- Objects of segments the records name otherwise are 'named': `rlmeta reconcile` classifies them.\n\
         WITH listed AS (\n  \
           SELECT key AS listed_key, size, last_modified_date, substr({key}, {from}) AS k\n  \
           FROM {inv}\n  \
           WHERE bucket = {bucket}{under}\n\
         ), split AS (\n  \
           SELECT listed.*, CASE{matches}\n      ELSE 0 END AS template\n  \
           FROM listed\n\
         ), fields AS (\n  \
           SELECT split.*, {ambiguous} AS ambiguous,\n    {fields}\n  \
           FROM split\n\
         ), classed AS (\n  \
           SELECT f.listed_key AS key, f.size, f.last_modified_date, f.segment_id,\n    \
             CASE\n      \
               WHEN f.template = 0 OR f.ambiguous THEN 'unmatched'\n      \
               WHEN l.segment_id IS NULL THEN 'orphaned'\n      \
               WHEN (f.topic IS NOT NULL AND f.topic <> l.topic)\n        \
                 OR (f.topic_id IS NOT NULL AND f.topic_id <> l.topic_id)\n        \
                 OR (f.partition IS NOT NULL AND CAST(f.partition AS decimal(20, 0)) <> l.partition)\n        \
                 OR (f.start_offset IS NOT NULL AND l.start_offset IS NOT NULL\n            \
                     AND CAST(f.start_offset AS decimal(20, 0)) <> l.start_offset) THEN 'unmatched'{not_judged}\n      \
               WHEN l.deleted THEN 'leaked'\n      \
               ELSE 'named'\n    \
             END AS class\n  \
           FROM fields f LEFT JOIN {ledger} l ON l.segment_id = f.segment_id\n\
         )\n\
         SELECT key, size, last_modified_date, segment_id, class,\n  \
           class IN ('orphaned', 'leaked') AND last_modified_date < TIMESTAMP '{cut}' AS safe_to_delete\n\
         FROM classed\n\
         ORDER BY key\n",
        store = format_args!("s3://{}/{}", t.bucket, t.prefix),
        spec = layout.spec(),
        grace = p.grace_ms,
        now = timestamp(p.now_ms),
        now_ms = p.now_ms,
        asof = p
            .metadata_as_of_ms
            .map(|m| format!(", metadata as of {}", timestamp(m)))
            .unwrap_or_default(),
        listed = p
            .listing_as_of_ms
            .map(|m| format!(", inventory made {}", timestamp(m)))
            .unwrap_or_default(),
        cut = timestamp(cutoff),
        from = n + 1,
        inv = t.inventory_table,
        bucket = quote(t.bucket),
        fields = fields.join(",\n    "),
        ledger = t.ledger_table,
    ))
}

/// The query's column of a key field (`{file}` has none: the query does not need it).
fn column(f: &Field) -> Option<&'static str> {
    match f {
        Field::SegmentId => Some("segment_id"),
        Field::Topic => Some("topic"),
        Field::TopicId => Some("topic_id"),
        Field::Partition => Some("partition"),
        Field::StartOffset { .. } => Some("start_offset"),
        Field::File => None,
    }
}

/// A SQL string literal.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A table name: identifiers, dot-separated.
fn ident(name: &str, what: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    if ok {
        Ok(())
    } else {
        Err(Error::field(
            ErrorKind::InvalidArgument,
            what,
            format!("{name:?} is not a table name (letters, digits and _, schema.table)"),
        ))
    }
}

/// `YYYY-MM-DD HH:MM:SS.mmm` of milliseconds since the epoch, UTC (proleptic Gregorian).
fn timestamp(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // days since 0000-03-01 split into 400-year eras, then the year of the era, March-based
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

#[cfg(test)]
mod tests;
