//! Properties the batch and checkpoint fuzz targets and the property tests check, kept in one
//! place so that all of them check exactly the same thing. Not part of the supported API.

use crate::batch::{Batch, BatchBuilder, Batches, Compression, ControlRecord, CrcCheck, NewRecord};
use crate::batch::{ReadOptions, Record};
use crate::checkpoint::{self, MetadataBody};

/// A small limit, so that fuzzing finds bombs instead of running out of memory.
const FUZZ_LIMIT: usize = 1 << 20;

/// For any input: walking it as a file image, reading every batch's records and every control
/// record never panics; every uncompressed, CRC-valid batch whose records all read and are
/// spelled canonically re-encodes to exactly its own bytes; every other batch whose records all
/// read re-encodes (same codec) to a batch that reads back to the same records.
pub fn check_batches(data: &[u8]) -> Result<(), String> {
    let options = ReadOptions {
        crc: CrcCheck::Report,
        max_decompressed_size: FUZZ_LIMIT,
    };
    let mut walk = Batches::new(data, options);
    for item in walk.by_ref() {
        let Ok(batch) = item else { continue };
        check_batch(&batch)?;
    }
    if walk.position() > data.len() {
        return Err("walk went past the end".into());
    }
    check_scan_chunks(data)
}

/// For any input: a scan fed the image in chunks (of a size the input picks) answers exactly as a
/// scan of the whole image: the same file scan and summary (`inspect::Inspector::scan_push`).
pub fn check_scan_chunks(data: &[u8]) -> Result<(), String> {
    use crate::inspect::{Inspector, ScanOptions};
    let chunk = 1 + usize::from(data.first().copied().unwrap_or(0) % 29);
    let mut whole = Inspector::for_scan();
    let expected = whole.scan_file_with(data, ScanOptions::all(true));
    let mut fed = Inspector::for_scan();
    fed.scan_begin(data.len(), ScanOptions::all(true));
    for c in data.chunks(chunk) {
        fed.scan_push(c);
    }
    if fed.scan_end() != expected {
        return Err(format!("a scan fed in chunks of {chunk} answers otherwise"));
    }
    if fed.finish().summary != whole.finish().summary {
        return Err(format!("a scan fed in chunks of {chunk} sums up otherwise"));
    }
    check_streams(data, chunk)
}

/// For any input fed in chunks of `chunk` bytes: the kafka-dump-log listing is the whole image's
/// (`format::DumpFeed`), and the streamed compaction preview of the file read twice is the held
/// model's (`inspect::PreviewStream` against `inspect::preview_compaction_files`).
fn check_streams(data: &[u8], chunk: usize) -> Result<(), String> {
    use crate::format::{DumpFeed, DumpOptions, dump_log};
    use crate::inspect::{
        CompactionPreview, PartitionFeed, PreviewRecord, PreviewStream, preview_compaction_files,
        summary_compaction_config,
    };
    let options = DumpOptions { keys: true };
    let mut listing = String::new();
    let mut dump = DumpFeed::new("x.log", data.len(), options, &mut listing);
    for c in data.chunks(chunk) {
        dump.push(c, &mut listing);
    }
    dump.end(&mut listing);
    if listing != dump_log("x.log", data, options) {
        return Err(format!("the listing fed in chunks of {chunk} differs"));
    }
    let config = summary_compaction_config();
    for at in [i64::MIN, 0, i64::MAX, 1_796_000_000_000] {
        let mut stream = PreviewStream::new(config, at);
        loop {
            let mut feed = PartitionFeed::new();
            feed.begin(data.len());
            for c in data.chunks(chunk) {
                feed.push(c, |r| stream.push(&PreviewRecord::of(r)));
            }
            feed.end();
            if !stream.end_pass() {
                break;
            }
        }
        let held = CompactionPreview {
            kept: Vec::new(),
            ..preview_compaction_files(&[data], config, at)
        };
        if stream.finish() != held {
            return Err(format!("the streamed preview at {at} differs"));
        }
    }
    Ok(())
}

fn check_batch(batch: &Batch<'_>) -> Result<(), String> {
    let _ = (
        batch.last_offset(),
        batch.last_sequence(),
        batch.delete_horizon_ms(),
    );
    let _ = (
        batch.compression(),
        batch.timestamp_type(),
        batch.ensure_valid(),
    );
    let Ok(mut records) = batch.records() else {
        return Ok(());
    };
    let mut all: Vec<Record<'_>> = Vec::new();
    for r in records.by_ref() {
        let Ok(r) = r else { return Ok(()) };
        let _: Vec<_> = r.headers.iter().map(|h| h.key_str()).collect();
        if batch.is_control() {
            let _ = ControlRecord::parse(r.key, r.value).map(|c| c.encode_value());
        }
        all.push(r);
    }
    let canonical = records.is_canonical();
    let mut again = BatchBuilder::from_batch(batch);
    again.records = all
        .iter()
        .map(|r| NewRecord::from_record(r, batch.base_timestamp))
        .collect();
    let bytes = again
        .encode()
        .map_err(|e| format!("re-encoding failed: {e}"))?;
    let codec = batch.compression().unwrap_or(Compression::None);
    if codec == Compression::None && batch.crc_valid() == Some(true) && canonical {
        if bytes != batch.bytes() {
            return Err(format!(
                "canonical batch at byte {} re-encodes to other bytes",
                batch.position
            ));
        }
        return Ok(());
    }
    let back = Batch::parse(&bytes, 0, ReadOptions::default())
        .map_err(|e| format!("own output does not parse: {e}"))?;
    let back_records: Result<Vec<Record<'_>>, _> = back
        .records()
        .map_err(|e| format!("own output's records: {e}"))?
        .collect();
    let back_records = back_records.map_err(|e| format!("own output's records: {e}"))?;
    let same = |a: &Record<'_>, b: &Record<'_>| {
        (
            a.offset,
            a.timestamp,
            a.sequence,
            a.key,
            a.value,
            a.attributes,
        ) == (
            b.offset,
            b.timestamp,
            b.sequence,
            b.key,
            b.value,
            b.attributes,
        ) && a.headers.iter().eq(b.headers.iter())
    };
    if back_records.len() != all.len() || !all.iter().zip(&back_records).all(|(a, b)| same(a, b)) {
        return Err(format!(
            "batch at byte {} re-encodes to other records",
            batch.position
        ));
    }
    Ok(())
}

/// For any input: reading it as a checkpoint file, as a metadata record and as a file name never
/// panics; a decoded `FeatureLevelRecord` re-encodes to a record that decodes to the same value
/// (and to the same bytes when the input was Kafka's own spelling); what a checkpoint parses to
/// gives feature levels consistent with its records.
pub fn check_checkpoint(data: &[u8]) -> Result<(), String> {
    let _ = checkpoint::parse_checkpoint_file_name(&String::from_utf8_lossy(data));
    if let Ok(m) = checkpoint::decode_metadata_record(data) {
        if let MetadataBody::FeatureLevel(f) = &m.body {
            let bytes = f.encode().map_err(|e| format!("re-encoding failed: {e}"))?;
            let again = checkpoint::decode_metadata_record(&bytes)
                .map_err(|e| format!("own output does not decode: {e}"))?;
            if again != m {
                return Err("own output decodes to another value".into());
            }
        }
    }
    if let Ok(cp) = checkpoint::Checkpoint::parse(data) {
        let levels = cp.feature_levels();
        for f in &cp.features {
            if levels.get(&f.name).is_none() {
                return Err(format!("feature {} lost", f.name));
            }
        }
        match checkpoint::finalized_features(data) {
            Ok(l) if !cp.is_complete() || l != levels => {
                return Err("finalized_features disagrees with the parse".into());
            }
            Err(_) if cp.is_complete() => {
                return Err("complete checkpoint refused".into());
            }
            _ => {}
        }
    }
    Ok(())
}
