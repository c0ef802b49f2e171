//! What the broker's store spends a record while it replays (`make bench-apply`; issue 30's
//! start-up aim): nanoseconds a record through [`Store::apply_packed`], the host's path, on a
//! history written by rlmeta's planner (`rlmeta::testing::history`) with 2,000 hosted and 8,000
//! unhosted partitions (the broker benchmark's split: 80% of the records name partitions the
//! broker does not host), replayed into `Store::held` three ways: every hosted partition loaded
//! (the broker's bootstrap), none loaded (every record one of a partition not hosted), and into a
//! store that keeps every partition (`Store::new`, the tools' mode). Stock (level 0, null keys)
//! and keyed (level 2) histories. Wall time of the best of `ROUNDS` replays on one thread;
//! prints, asserts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // bench code: a failure is a panic

use std::time::Instant;

use rlmeta::cache::Store;
use rlmeta::testing::history::{History, Shape, Writing, history};

const ROUNDS: usize = 5;

/// Replays a case (APPLY_ROUNDS, default ROUNDS; 0 builds the history alone, so that a
/// counter such as `perf stat -e instructions:u` can take the difference, load-independent).
fn rounds() -> usize {
    std::env::var("APPLY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(ROUNDS)
}

/// The history packed as the plugin passes a poll: offsets, key+value bytes back to back, lengths.
struct Packed {
    offsets: Vec<i64>,
    data: Vec<u8>,
    keys: Vec<i32>,
    values: Vec<i32>,
}

fn pack(h: &History) -> Packed {
    let mut p = Packed {
        offsets: Vec::new(),
        data: Vec::new(),
        keys: Vec::new(),
        values: Vec::new(),
    };
    for (i, (k, v)) in h.records.iter().enumerate() {
        p.offsets.push(i as i64);
        for (part, lens) in [(k, &mut p.keys), (v, &mut p.values)] {
            match part {
                Some(b) => {
                    lens.push(b.len() as i32);
                    p.data.extend_from_slice(b);
                }
                None => lens.push(-1),
            }
        }
    }
    p
}

/// Best nanoseconds a record over ROUNDS replays into a fresh store from `fresh`, in polls of
/// 5,000 records (the plugin's max.poll.records), the store's and outcomes' drops excluded.
fn time(p: &Packed, fresh: &dyn Fn() -> Store) -> f64 {
    let n = p.offsets.len();
    let mut best = f64::MAX;
    for _ in 0..rounds() {
        let mut store = fresh();
        let mut outcomes = vec![0u8; n];
        let t = Instant::now();
        let mut at = 0usize;
        let mut from = 0usize;
        while from < n {
            let to = (from + 5_000).min(n);
            let bytes: usize = (from..to)
                .map(|i| p.keys[i].max(0) as usize + p.values[i].max(0) as usize)
                .sum();
            store
                .apply_packed(
                    &p.offsets[from..to],
                    &p.data[at..at + bytes],
                    &p.keys[from..to],
                    &p.values[from..to],
                    &mut outcomes[from..to],
                )
                .expect("a well-formed batch");
            at += bytes;
            from = to;
        }
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
        drop(store);
    }
    best
}

fn main() {
    let quick = std::env::args().skip(1).any(|a| a == "--quick");
    let (hosted, unhosted) = if quick { (200, 800) } else { (2_000, 8_000) };
    println!(
        "store apply, ns a record (best of {}; {hosted} hosted + {unhosted} unhosted partitions, 20 live + 40 deleted segments each, seed 30)",
        rounds()
    );
    // APPLY_ONLY=stock|keyed runs one history (for a profiler)
    let only = std::env::var("APPLY_ONLY").unwrap_or_default();
    for (name, label, writing) in [
        ("stock", "level 0 (stock, null keys)", Writing::Stock),
        ("keyed", "level 2 (KIP-1266 keys)", Writing::Keyed),
    ] {
        if !only.is_empty() && only != name {
            continue;
        }
        let shape = Shape {
            hosted,
            unhosted,
            live: 20,
            deleted: 40,
            writing,
            seed: 30,
        };
        let h = history(&shape).expect("the planner writes the history");
        let p = pack(&h);
        let hosted_tps = h.hosted.clone();
        let broker = time(&p, &|| {
            let mut s = Store::held();
            for tp in &hosted_tps {
                s.load_partition(tp);
            }
            s
        });
        // APPLY_BROKER_ONLY=1 times the broker's case alone (for a profiler)
        let (none, all) = if std::env::var_os("APPLY_BROKER_ONLY").is_some() {
            (f64::NAN, f64::NAN)
        } else {
            (time(&p, &Store::held), time(&p, &Store::new))
        };
        println!(
            "{label}: {} records ({} bytes): broker (hosted loaded) {broker:.0} ns, nothing hosted {none:.0} ns, every partition kept {all:.0} ns",
            p.offsets.len(),
            p.data.len()
        );
    }
}
