//! `rlmeta-conformance FILE...`: checks every case of conformance vector files (vectors README
//! §1-4) against rlmeta and prints `N passed, M failed` as its last line; exits 1 on any failure.
//!
//! `rlmeta-conformance --sample N SEED`: prints a value-vector file of N random records encoded
//! by rlmeta, for Kafka's own deserializer to check (tests/interop DecodeCheck).

mod cases;
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
    let verbose = args.iter().any(|a| a == "-v" || a == "--verbose");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if files.is_empty() {
        eprintln!(
            "usage: rlmeta-conformance [-v] FILE...   |   rlmeta-conformance --sample N SEED"
        );
        return ExitCode::from(2);
    }
    let mut tally = cases::Tally::default();
    for file in files {
        cases::run_file(file, verbose, &mut tally);
    }
    for (kind, n) in &tally.by_kind {
        println!("  {kind}: {n} case(s)");
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.failed > 0 || tally.passed == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
