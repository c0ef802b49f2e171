//! The repository's segment-file fixtures, for the core's own unit tests (compiled only for
//! them: the core does no I/O).

use std::path::{Path, PathBuf};

/// Each fixture metadata partition (a Kafka 4.4.0 broker's and the crafted ones) with the bytes
/// of its `.log` files in name (offset) order; a partition without one is left out.
pub fn metadata_partitions() -> Vec<(PathBuf, Vec<Vec<u8>>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut out = Vec::new();
    for base in ["broker/remote_log_metadata", "crafted"] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(base))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .map(|p| {
                let meta = p.join("__remote_log_metadata-0");
                if meta.is_dir() { meta } else { p }
            })
            .filter(|d| d.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "log"))
                .collect();
            logs.sort();
            let data: Vec<Vec<u8>> = logs.iter().filter_map(|p| std::fs::read(p).ok()).collect();
            if !data.is_empty() {
                out.push((dir, data));
            }
        }
    }
    out
}
