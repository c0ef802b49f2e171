//! The core alone on the history `ApplyBenchmark` (bindings-c/java, `make bench-jni`) wrote:
//! `Store::apply` record by record, and `Store::apply_packed` on the same poll batches the JNI
//! call gets, each round into a fresh store. The JNI cost per record is the Java figure minus
//! these. Arguments (after `--`): batch size, measured rounds; the files (`history.bin`,
//! `levels.bin`) are in the directory `RLMETA_BENCH_DIR`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark: a failure is a panic

use std::hint::black_box;

use rlmeta::cache::{Applied, Store};

/// One poll batch as `apply_packed` takes it: offsets, data, key lengths, value lengths.
type Packed = (Vec<i64>, Vec<u8>, Vec<i32>, Vec<i32>);

struct Rec {
    offset: i64,
    key: Vec<u8>,
    value: Vec<u8>,
}

fn read(path: &str) -> Vec<Rec> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e} (run `make bench-jni`)"));
    assert_eq!(&b[..5], b"RLMB1", "{path} is no history file");
    let mut at = 5;
    let mut take = |n: usize| {
        let s = &b[at..at + n];
        at += n;
        s
    };
    let count = u32::from_be_bytes(take(4).try_into().unwrap());
    (0..count)
        .map(|_| {
            let offset = i64::from_be_bytes(take(8).try_into().unwrap());
            let k = i32::from_be_bytes(take(4).try_into().unwrap()) as usize;
            let v = i32::from_be_bytes(take(4).try_into().unwrap()) as usize;
            Rec {
                offset,
                key: take(k).to_vec(),
                value: take(v).to_vec(),
            }
        })
        .collect()
}

/// This thread's CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`, what Java's
/// `ThreadMXBean.getCurrentThreadCpuTime` reads too), so that time the scheduler gives the
/// machine's other processes is not counted.
fn cpu_ns() -> u128 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128
}

/// Median and fastest of `rounds` timed runs (after as many warm-up runs), in CPU ns per record.
fn time(rounds: usize, records: usize, mut run: impl FnMut() -> usize) -> (f64, f64) {
    let mut times: Vec<u128> = (0..rounds * 2)
        .map(|_| {
            let t0 = cpu_ns();
            assert_eq!(run(), records, "every record applies");
            cpu_ns() - t0
        })
        .skip(rounds)
        .collect();
    times.sort_unstable();
    let n = records as f64;
    (times[rounds / 2] as f64 / n, times[0] as f64 / n)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let batch: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(500);
    let rounds: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let Ok(dir) = std::env::var("RLMETA_BENCH_DIR") else {
        println!("apply: RLMETA_BENCH_DIR is not set (run `make bench-jni`); nothing measured");
        return;
    };
    // The level records are cheap: ten times the rounds, as the Java side does.
    for (name, expected, rounds) in [
        ("history", Applied::Applied, rounds),
        ("levels", level_2(), rounds * 10),
    ] {
        bench(
            name,
            &read(&format!("{dir}/{name}.bin")),
            &expected,
            batch,
            rounds,
        );
    }
}

fn level_2() -> Applied {
    Store::new().apply(0, Some(b"remote.log.metadata.version"), Some(b"2"))
}

fn bench(name: &str, history: &[Rec], expected: &Applied, batch: usize, rounds: usize) {
    let n = history.len();
    // Every record of a workload has the same outcome, and values of one version.
    let code = expected.outcome_code(history.first().map(|r| r.value.as_slice()));
    let (median, fastest) = time(rounds, n, || {
        let mut store = Store::new();
        history
            .iter()
            .filter(|r| {
                let a = store.apply(r.offset, Some(&r.key), Some(&r.value));
                black_box(&a) == expected
            })
            .count()
    });
    println!(
        "core Store::apply, {name}: {n} records, {rounds} rounds after {rounds} warm-up: median {median:.1} ns/record, fastest {fastest:.1} ns/record (thread CPU time)"
    );

    let packed: Vec<Packed> = history
        .chunks(batch)
        .map(|c| {
            let data = c
                .iter()
                .flat_map(|r| r.key.iter().chain(&r.value))
                .copied()
                .collect();
            (
                c.iter().map(|r| r.offset).collect(),
                data,
                c.iter().map(|r| r.key.len() as i32).collect(),
                c.iter().map(|r| r.value.len() as i32).collect(),
            )
        })
        .collect();
    let (median, fastest) = time(rounds, n, || {
        let mut store = Store::new();
        let mut out = vec![0u8; batch];
        packed
            .iter()
            .map(|(o, d, k, v)| {
                let out = &mut out[..o.len()];
                store.apply_packed(o, d, k, v, out).unwrap();
                out.iter().filter(|&&c| c == code).count()
            })
            .sum()
    });
    println!(
        "core Store::apply_packed, {name}: batches of {batch}: median {median:.1} ns/record, fastest {fastest:.1} ns/record (thread CPU time)"
    );
}
