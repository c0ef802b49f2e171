//! `rlmeta-conformance [-v] [--emit] FILE...`: checks every case of conformance vector files
//! (vectors README §1-6: values, invalid values, keys, partitioner, replay, write plans; and
//! `"kind": "cleaner"` cases from Kafka's own cleaner, see `cleaner.rs`) against rlmeta and prints `N passed, M failed` as its last line; exits 1 on any failure. Failures are
//! listed on stderr. With `--emit`, plan scripts print their produced log on stdout (one
//! `{"key", "value"}` object a line) and the tally goes to stderr, so stdout is the log alone.
//!
//! `rlmeta-conformance --sample N SEED`: prints a value-vector file of N random records encoded
//! by rlmeta, for Kafka's own deserializer to check (tests/interop DecodeCheck).
//!
//! `rlmeta-conformance --plan-logs N SEED`: prints N random logs written by rlmeta's planner, for
//! the planner property against Kafka's store and cleaner (tests/interop PlanProperty).

mod cases;
mod cleaner;
mod deposed;
mod plan;
mod planlogs;
mod replay;
mod sample;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--sample") {
        let n = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
        println!("{}", sample::sample_file(n, seed));
        return ExitCode::SUCCESS;
    }
    if args.first().map(String::as_str) == Some("--plan-logs") {
        let n = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
        let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
        return match planlogs::plan_logs(n, seed) {
            Ok(file) => {
                print!("{file}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("plan-logs: {why}");
                ExitCode::FAILURE
            }
        };
    }
    let verbose = args.iter().any(|a| a == "-v" || a == "--verbose");
    let emit = args.iter().any(|a| a == "--emit");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if files.is_empty() {
        eprintln!(
            "usage: rlmeta-conformance [-v] FILE...   |   rlmeta-conformance --sample N SEED   |   rlmeta-conformance --plan-logs N SEED"
        );
        return ExitCode::from(2);
    }
    let mut tally = cases::Tally::default();
    for file in files {
        cases::run_file(file, verbose, emit, &mut tally);
    }
    let summary: Vec<String> = tally
        .by_kind
        .iter()
        .map(|(kind, n)| format!("{kind}: {n}"))
        .collect();
    let last = format!("{} passed, {} failed", tally.passed, tally.failed);
    if emit {
        eprintln!("  cases by kind: {}", summary.join(", "));
        eprintln!("{last}");
    } else {
        println!("  cases by kind: {}", summary.join(", "));
        println!("{last}");
    }
    if tally.failed > 0 || tally.passed == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
