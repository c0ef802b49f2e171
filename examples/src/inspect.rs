//! `inspect [--json] [--summary] [FILE...]`: the kafka-dump-log listing of
//! `__remote_log_metadata` segment files with each record's key, every segment's folded
//! lifecycle, and a summary (records, live segments, what compaction would keep); with
//! `--summary`, the summary alone (no listing, no lifecycles: what a whole partition directory
//! needs). Without files it inspects the files of a real Kafka
//! 4.4.0 broker embedded from tests/fixtures (metadata partition 0). All logic is in the core
//! (`rlmeta::format`, `rlmeta::inspect`); this program reads files and prints.

use std::process::ExitCode;

use rlmeta::format::{DumpOptions, dump_log, dump_log_json};
use rlmeta::inspect::{Inspection, Inspector, inspect};
use rlmeta::json::Int64Style;

const EMBEDDED: &[(&str, &[u8])] = &[(
    "__remote_log_metadata-0/00000000000000000000.log",
    include_bytes!(
        "../../tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0/00000000000000000000.log"
    ),
)];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let summary_only = args.iter().any(|a| a == "--summary");
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    if summary_only && !paths.is_empty() {
        // Each file handed to the inspector as it is read: it keeps the images instead of
        // copying their values.
        let mut inspector = Inspector::new();
        for p in &paths {
            match std::fs::read(p) {
                Ok(bytes) => inspector.push_file_owned(bytes),
                Err(e) => {
                    eprintln!("inspect: cannot read {p}: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        print_summary(&inspector.finish(), json);
        return ExitCode::SUCCESS;
    }
    let mut owned = Vec::new();
    for p in &paths {
        match std::fs::read(p) {
            Ok(bytes) => owned.push((p.as_str(), bytes)),
            Err(e) => {
                eprintln!("inspect: cannot read {p}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let files: Vec<(&str, &[u8])> = if owned.is_empty() {
        EMBEDDED.to_vec()
    } else {
        owned.iter().map(|(n, b)| (*n, b.as_slice())).collect()
    };
    let report = inspect(&files);
    if summary_only {
        print_summary(&report, json);
    } else if json {
        let dumps: Vec<_> = files
            .iter()
            .map(|(name, bytes)| dump_log_json(name, bytes, Int64Style::Number))
            .collect();
        let doc = serde_json::json!({"files": dumps, "inspection": report.to_json()});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        for (name, bytes) in &files {
            print!("{}", dump_log(name, bytes, DumpOptions { keys: true }));
        }
        print!("{}", report.to_text());
    }
    ExitCode::SUCCESS
}

/// The summary alone, as text or as `{"inspection": {"summary": ...}}`.
fn print_summary(report: &Inspection, json: bool) {
    if json {
        let doc = serde_json::json!({"inspection": {"summary": report.summary_json()}});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        print!("{}", report.summary_text());
    }
}
