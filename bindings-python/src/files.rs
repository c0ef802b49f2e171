//! Segment files read from disk in bounded chunks for the core's chunked readers.
//!
//! Owns: opening a file, taking its length, and handing its bytes over in chunks of [`CHUNK`]
//! (read, not mapped: a live broker may truncate its active segment under a read, which a
//! mapping turns into SIGBUS; a read sees the shorter file, which the core reads as cut). Never:
//! a rule; which batches and records a read yields is the core's (`inspect::FileFeed`,
//! `inspect::PartitionFeed`), and so is every model fed from them. Memory: one chunk and the
//! core's largest entry, never a file.

use std::io::Read;
use std::path::{Path, PathBuf};

use rlmeta::batch::Record;
use rlmeta::compaction::TopicConfig;
use rlmeta::inspect::{CompactionPreview, FileFeed, PartitionFeed, PreviewRecord, PreviewStream};

/// Bytes read at a time.
pub const CHUNK: usize = 4 << 20;

/// A file being read in chunks.
pub struct Chunks {
    file: std::io::Take<std::fs::File>,
    buf: Vec<u8>,
}

impl Chunks {
    /// The file at `path` and its length now.
    pub fn open(path: &Path) -> std::io::Result<(Chunks, usize)> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len() as usize;
        let buf = vec![0u8; CHUNK.min(len.max(1))];
        Ok((
            Chunks {
                file: file.take(len as u64),
                buf,
            },
            len,
        ))
    }

    /// Hands `each` every chunk, in order, up to the length the file had when opened.
    pub fn each(mut self, mut each: impl FnMut(&[u8])) -> std::io::Result<()> {
        while let Some(chunk) = self.next_chunk()? {
            each(chunk);
        }
        Ok(())
    }

    /// The next chunk, or None at the end.
    pub fn next_chunk(&mut self) -> std::io::Result<Option<&[u8]>> {
        loop {
            match self.file.read(&mut self.buf) {
                Ok(0) => return Ok(None),
                Ok(n) => return Ok(Some(&self.buf[..n])),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Every record of one file a consumer reads (up to its first batch that does not read), as
/// `Batches` walks a whole image; returns how many.
pub fn each_record(path: &Path, mut each: impl FnMut(&Record<'_>)) -> std::io::Result<usize> {
    let (chunks, len) = Chunks::open(path)?;
    let mut feed = FileFeed::new(len, false);
    let mut n = 0;
    chunks.each(|chunk| {
        feed.push(chunk, |batch| {
            if let Ok(records) = batch.records() {
                for r in records.flatten() {
                    each(&r);
                    n += 1;
                }
            }
        })
    })?;
    Ok(n)
}

/// The records of one metadata partition's files, in order, by the partition's rule (none in or
/// after its first corrupt batch).
pub fn partition_records(
    paths: &[PathBuf],
    mut each: impl FnMut(&Record<'_>),
) -> std::io::Result<()> {
    let mut feed = PartitionFeed::new();
    for p in paths {
        let (chunks, len) = Chunks::open(p)?;
        feed.begin(len);
        chunks.each(|chunk| feed.push(chunk, &mut each))?;
        feed.end();
    }
    Ok(())
}

/// The compaction previews of a partition's files at each of `moments`, the files read once per
/// pass the core's [`PreviewStream`]s ask for (all of them fed from the same read).
pub fn preview_paths(
    paths: &[PathBuf],
    config: TopicConfig,
    moments: &[i64],
) -> std::io::Result<Vec<CompactionPreview>> {
    let mut streams: Vec<(PreviewStream, bool)> = moments
        .iter()
        .map(|&at| (PreviewStream::new(config, at), true))
        .collect();
    while streams.iter().any(|(_, wanting)| *wanting) {
        partition_records(paths, |r| {
            let r = PreviewRecord::of(r);
            for (s, _) in streams.iter_mut().filter(|(_, wanting)| *wanting) {
                s.push(&r);
            }
        })?;
        for (s, wanting) in &mut streams {
            *wanting = *wanting && s.end_pass();
        }
    }
    Ok(streams.into_iter().map(|(s, _)| s.finish()).collect())
}
