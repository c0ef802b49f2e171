//! rlmeta's side of the replay race against Kafka 4.4.0 (`make bench-kafka`,
//! tests/interop/race/run.sh). Reads a history written by Kafka's own serde
//! (tests/interop/.../race/Race.java) and measures, single-threaded:
//!
//! - `warm FILE ROUNDS STATE_OUT`: decode only (`decode_value`), decode + apply (`Store::apply`
//!   into a new store), random-offset lookups (`Store::segment_for`, independent queries in a
//!   random order), the heap the store holds (a counting global allocator), and the final state
//!   and every lookup's answer written to STATE_OUT in the format Race.java writes;
//! - `cold FILE`: one pass of decode + apply in this fresh process (what a restart does);
//! - `lookups FILE ROUNDS`: one replay, then rounds of lookups alone (for profiles).
//!
//! Results are lines `RESULT rlmeta SHAPE METRIC VALUE`. Without arguments (as `cargo bench`
//! runs it) it prints how to run it and exits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // bench code: a failure is a panic

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use rlmeta::cache::Store;
use rlmeta::model::{TopicIdPartition, Uuid};
use rlmeta::record::decode_value;

#[path = "support/counting.rs"]
mod counting;

const WARMUP: usize = 1;

struct History {
    shape: &'static str,
    tps: Vec<TopicIdPartition>,
    /// Every value, back to back, and where each one ends.
    bytes: Vec<u8>,
    ends: Vec<usize>,
    queries: Vec<(usize, i32, i64)>,
}

impl History {
    fn values(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let v = &self.bytes[start..end];
            start = end;
            v
        })
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take(8).try_into().unwrap())
    }
}

fn load(path: &str) -> History {
    let file = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut c = Cursor(&file);
    assert_eq!(c.take(8), b"RLRACE01", "{path}: not a race file");
    let tps = (0..c.u32())
        .map(|_| {
            let topic_id = Uuid::new(c.i64(), c.i64());
            let n = c.u32() as usize;
            let topic = String::from_utf8(c.take(n).to_vec()).unwrap();
            TopicIdPartition {
                topic_id,
                topic,
                partition: c.i32(),
            }
        })
        .collect();
    let n = c.u32() as usize;
    let (mut bytes, mut ends) = (Vec::with_capacity(file.len()), Vec::with_capacity(n));
    for _ in 0..n {
        let len = c.u32() as usize;
        bytes.extend_from_slice(c.take(len));
        ends.push(bytes.len());
    }
    let queries = (0..c.u32())
        .map(|_| (c.u32() as usize, c.i32(), c.i64()))
        .collect();
    let shape = if path.contains("three") {
        "three"
    } else {
        "one"
    };
    History {
        shape,
        tps,
        bytes,
        ends,
        queries,
    }
}

fn result(h: &History, metric: &str, value: f64) {
    println!("RESULT rlmeta {} {metric} {value:.3}", h.shape);
}

fn replay(h: &History) -> Store {
    let mut store = Store::new();
    for (offset, v) in h.values().enumerate() {
        black_box(store.apply(offset as i64, None, Some(v)));
    }
    for tp in &h.tps {
        store.mark_initialized(tp);
    }
    store
}

fn lookups(h: &History, store: &Store) -> usize {
    h.queries
        .iter()
        .filter(|(p, epoch, offset)| {
            black_box(store.segment_for(&h.tps[*p], *epoch, *offset))
                .ok()
                .flatten()
                .is_some()
        })
        .count()
}

fn warm(path: &str, rounds: usize, state_out: &str) {
    let h = load(path);
    let secs = |t: Instant| t.elapsed().as_secs_f64();
    for r in 0..WARMUP + rounds {
        let t = Instant::now();
        for v in h.values() {
            let _ = black_box(decode_value(black_box(v)));
        }
        let s = secs(t);
        if r >= WARMUP {
            result(&h, "decode_mb_s", h.bytes.len() as f64 / s / 1e6);
            result(&h, "decode_mrec_s", h.ends.len() as f64 / s / 1e6);
        }
    }
    for r in 0..WARMUP + rounds {
        let t = Instant::now();
        let store = replay(&h);
        let s = secs(t);
        if r >= WARMUP {
            result(&h, "replay_mrec_s", h.ends.len() as f64 / s / 1e6);
        }
        drop(black_box(store));
    }
    let before = counting::live_bytes();
    let store = replay(&h);
    let held = counting::live_bytes() - before;
    time_lookups(&h, &store, WARMUP, rounds);
    let live = write_state(&h, &store, state_out);
    result(&h, "bytes_per_live_segment", held as f64 / live as f64);
    result(&h, "live_segments", live as f64);
}

fn cold(path: &str) {
    let h = load(path);
    let t = Instant::now();
    let store = replay(&h);
    let s = t.elapsed().as_secs_f64();
    black_box(&store);
    result(&h, "first_pass_ms", s * 1e3);
}

/// For profiles of lookups alone (callgrind, perf): one replay, then ROUNDS rounds of lookups.
fn lookups_only(path: &str, rounds: usize) {
    let h = load(path);
    let store = replay(&h);
    time_lookups(&h, &store, 0, rounds);
}

/// `warmup` unreported rounds, then `rounds` reported ones, of every lookup of the history.
fn time_lookups(h: &History, store: &Store, warmup: usize, rounds: usize) {
    for r in 0..warmup + rounds {
        let t = Instant::now();
        let found = lookups(h, store);
        let s = t.elapsed().as_secs_f64();
        assert_eq!(found, h.queries.len(), "a live offset was not found");
        if r >= warmup {
            result(h, "lookup_ns", s * 1e9 / h.queries.len() as f64);
        }
    }
}

/// The lines Race.java writes for Kafka's store (compared after sorting).
fn write_state(h: &History, store: &Store, path: &str) -> usize {
    let mut out = String::new();
    let mut live = 0;
    for (p, tp) in h.tps.iter().enumerate() {
        let mut max_epoch = -1;
        for m in store.segments(tp).unwrap() {
            live += 1;
            let mut epochs = String::new();
            for (e, start) in m.leader_epochs.iter() {
                write!(epochs, "{e}={start},").unwrap();
                max_epoch = max_epoch.max(*e);
            }
            writeln!(
                out,
                "segment {p} {} {} {} {} {epochs}",
                m.start_offset,
                m.end_offset,
                m.state.id(),
                m.id
            )
            .unwrap();
        }
        for e in -1..=max_epoch + 1 {
            let hi = store.highest_offset_for_epoch(tp, e).unwrap();
            let hi = hi.map_or("none".to_owned(), |o| o.to_string());
            writeln!(out, "highest {p} {e} {hi}").unwrap();
        }
    }
    for (i, (p, epoch, offset)) in h.queries.iter().enumerate() {
        let m = store.segment_for(&h.tps[*p], *epoch, *offset).unwrap();
        let id = m.map_or("none".to_owned(), |m| m.id.to_string());
        writeln!(out, "lookup {i} {id}").unwrap();
    }
    std::fs::write(path, out).unwrap();
    live
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["warm", file, rounds, state] => warm(file, rounds.parse().unwrap(), state),
        ["cold", file] => cold(file),
        ["lookups", file, rounds] => lookups_only(file, rounds.parse().unwrap()),
        _ => println!("race: the replay race against Kafka 4.4.0 runs with `make bench-kafka`"),
    }
}
