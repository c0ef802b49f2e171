//! What a broker's store holds per live segment (`make bench-store-memory`; issue 30's aim: 200
//! bytes per hosted live segment, heap and native). Exact, not an RSS slope: a counting global
//! allocator gives the bytes the store requested and has not freed (allocator overhead
//! excluded) and the peak while it replays. Histories from `rlmeta::testing::history`, written by
//! rlmeta's planner, replayed into `Store::held` (the broker's mode) with every hosted
//! partition loaded first: a stock (level 0, null keys) history, a keyed one (level 2, KIP-1266
//! keys and tombstones) and a migrated one (level 0, the backfill, then level 2: deletions are
//! remembered). Per history shape it prints bytes per live segment, the slope between two sizes
//! (the broker benchmark's: 500 and 2,000 hosted partitions of 20 live segments each) and the
//! store's own account by structure (`Store::memory`), which must add up to what the
//! allocator counted. Prints; asserts nothing but that the account adds up.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // bench code: a failure is a panic

use rlmeta::testing::history::{Shape, Writing, history};

#[path = "support/counting.rs"]
mod counting;

struct Measured {
    live_segments: usize,
    held: isize,
    peak: isize,
    accounted: rlmeta::cache::MemoryUse,
}

fn measure(shape: &Shape) -> Measured {
    let h = history(shape).expect("the planner writes the history");
    let before = counting::live_bytes();
    counting::reset_peak();
    let store = h.replay_held();
    let held = counting::live_bytes() - before;
    let peak = counting::peak_bytes() - before;
    let live_segments = h.live_segments(&store);
    let accounted = store.memory();
    drop(store);
    Measured {
        live_segments,
        held,
        peak,
        accounted,
    }
}

fn per(bytes: isize, n: usize) -> f64 {
    bytes as f64 / n.max(1) as f64
}

fn report(name: &str, shape: Shape) -> Measured {
    let m = measure(&shape);
    println!(
        "{name}: {} hosted x {} live (+{} deleted each), {} unhosted: {} live segments, held {} B = {:.1} B/live segment, peak {:.1} B/live segment",
        shape.hosted,
        shape.live,
        shape.deleted,
        shape.unhosted,
        m.live_segments,
        m.held,
        per(m.held, m.live_segments),
        per(m.peak, m.live_segments),
    );
    let total = m.accounted.total();
    for (what, bytes) in m.accounted.parts() {
        println!(
            "    {what:<28} {bytes:>11} B  {:>7.1} B/live segment",
            per(bytes as isize, m.live_segments)
        );
    }
    println!(
        "    {:<28} {total:>11} B  (the allocator counted {}: {:+} B unaccounted)",
        "store's own account",
        m.held,
        m.held - total as isize
    );
    assert_eq!(
        total as isize, m.held,
        "the store's account must add up to what the allocator counted"
    );
    m
}

fn main() {
    // `cargo bench` passes --bench; any other argument is taken as a quick run.
    let quick = std::env::args().skip(1).any(|a| a == "--quick");
    let (small, large) = if quick { (50, 200) } else { (500, 2_000) };
    println!(
        "store memory per live segment (counting allocator, bytes requested; {}), seed 30",
        if quick { "quick" } else { "full" }
    );
    for (label, writing) in [
        ("level 0 (stock, null keys)", Writing::Stock),
        ("level 2 (KIP-1266 keys)", Writing::Keyed),
        ("migrated (level 0, backfill, level 2)", Writing::Migrated),
    ] {
        println!("\n== {label}");
        let shape = |hosted, live, deleted| Shape {
            hosted,
            unhosted: hosted / 4,
            live,
            deleted,
            writing,
            seed: 30,
        };
        let a = report("small", shape(small, 20, 40));
        let b = report("large", shape(large, 20, 40));
        let slope = (b.held - a.held) as f64 / (b.live_segments - a.live_segments) as f64;
        println!(
            "slope between {small} and {large} hosted partitions of 20 live segments: {slope:.1} B/live segment"
        );
        for live in [5, 100, 1_000] {
            let hosted = if quick { 20 } else { (40_000 / live).max(40) };
            report(
                &format!("{live} live each"),
                shape(hosted, live, 40.max(live)),
            );
        }
    }
}
