//! The compression codecs of record batches, as Kafka's clients write and read them.
//!
//! Owns: the codec ids of the batch attributes; decompression of a batch's records section for
//! gzip (RFC 1952 members, CRC-32 and size checked, concatenated members read like Java's
//! `GZIPInputStream`), snappy (xerial snappy-java's stream framing, and its raw-block fallback),
//! lz4 (the LZ4 frame format as Kafka's `Lz4BlockOutputStream` writes it: independent blocks,
//! descriptor checksum checked, optional block and content checksums checked) and zstd (one or
//! more frames, skippable frames skipped, content checksum checked); compression in the same
//! framings, for building batches. Every decompression stops with a typed error as soon as its
//! output would pass the caller's limit, so no input can make it allocate much more than that.
//! Never: record parsing (that is `batch`), I/O.
//!
//! The deflate, snappy-block, lz4-block and zstd-frame codecs come from pure-Rust crates
//! (`miniz_oxide`, `snap`, `lz4_flex`, `ruzstd`); every framing around them, the gzip CRC-32 and
//! the lz4 xxHash32 are written here.

use std::fmt;

use crate::batch::crc::{crc32, crc32_update};
use crate::error::{Error, ErrorKind, Result};

/// The compression codec of a batch (attribute bits 0-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Compression {
    None = 0,
    Gzip = 1,
    Snappy = 2,
    Lz4 = 3,
    Zstd = 4,
}

impl Compression {
    /// Every codec, in id order.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// The codec with this id (0-4); ids 5-7 name no codec.
    pub fn from_id(id: u8) -> Option<Compression> {
        Compression::ALL.into_iter().find(|c| *c as u8 == id)
    }

    pub fn id(self) -> u8 {
        self as u8
    }

    /// Kafka's name, as `compression.type` and kafka-dump-log's `compresscodec:` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Decompresses `data` (a batch's records section) with `codec`, refusing to produce more than
/// `limit` bytes. `Compression::None` returns a copy.
pub fn decompress(codec: Compression, data: &[u8], limit: usize) -> Result<Vec<u8>> {
    decompress_at(codec, data, limit, 0)
}

/// [`decompress`] with error offsets shifted by `base` (the position of `data` in the file).
pub(crate) fn decompress_at(
    codec: Compression,
    data: &[u8],
    limit: usize,
    base: usize,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let ctx = Ctx { base, limit, codec };
    match codec {
        Compression::None => {
            if data.len() > limit {
                return Err(ctx.too_large(0, data.len()));
            }
            out.extend_from_slice(data);
        }
        Compression::Gzip => gzip_decode(data, &mut out, &ctx)?,
        Compression::Snappy => snappy_decode(data, &mut out, &ctx)?,
        Compression::Lz4 => lz4_decode(data, &mut out, &ctx)?,
        Compression::Zstd => zstd_decode(data, &mut out, &ctx)?,
    }
    Ok(out)
}

/// Compresses `data` the way Kafka's producer does for `codec` (gzip at deflate level 6 in a
/// gzip member; snappy in xerial framing with 32 KiB blocks; lz4 in Kafka's LZ4 frame with 64 KiB
/// independent blocks and no checksums but the descriptor's; zstd as one frame at ruzstd's
/// fastest level). `Compression::None` returns a copy.
pub fn compress(codec: Compression, data: &[u8]) -> Result<Vec<u8>> {
    match codec {
        Compression::None => Ok(data.to_vec()),
        Compression::Gzip => Ok(gzip_encode(data)),
        Compression::Snappy => snappy_encode(data),
        Compression::Lz4 => lz4_encode(data),
        Compression::Zstd => Ok(ruzstd::encoding::compress_to_vec(
            data,
            ruzstd::encoding::CompressionLevel::Fastest,
        )),
    }
}

/// Where errors point and how much may be produced.
struct Ctx {
    base: usize,
    limit: usize,
    codec: Compression,
}

impl Ctx {
    fn corrupt(&self, at: usize, message: impl fmt::Display) -> Error {
        Error::at(
            ErrorKind::Corrupt,
            self.base.saturating_add(at),
            self.codec.name(),
            format!("{} data does not decompress: {message}", self.codec.name()),
        )
    }

    fn too_large(&self, at: usize, wanted: usize) -> Error {
        Error::at(
            ErrorKind::LimitExceeded,
            self.base.saturating_add(at),
            self.codec.name(),
            format!(
                "{} data decompresses to more than the limit of {} bytes (at least {wanted})",
                self.codec.name(),
                self.limit
            ),
        )
    }

    /// Room left under the limit once `out` holds `have` bytes.
    fn room(&self, have: usize) -> usize {
        self.limit.saturating_sub(have)
    }
}

fn le_u32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn be_u32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

// ---------------------------------------------------------------------------------------------
// gzip (RFC 1952 around raw deflate)

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const GZIP_DEFLATE: u8 = 8;
const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
/// Deflate never expands more than about 1032 to 1; a size hint above that is a lie.
const DEFLATE_MAX_RATIO: usize = 1032;

fn gzip_decode(data: &[u8], out: &mut Vec<u8>, ctx: &Ctx) -> Result<()> {
    let body = gzip_header(data, 0, ctx)?;
    let mut pos = gzip_member(data, body, out, ctx)?;
    // Like Java's GZIPInputStream: another member may follow; bytes that do not start with a
    // valid member header are ignored.
    while data.len() > pos {
        let Ok(body) = gzip_header(data, pos, ctx) else {
            break;
        };
        pos = gzip_member(data, body, out, ctx)?;
    }
    Ok(())
}

/// Checks the gzip member header at `start`; returns where its deflate data starts.
fn gzip_header(data: &[u8], start: usize, ctx: &Ctx) -> Result<usize> {
    let eof = |at: usize| ctx.corrupt(at, "gzip stream ends early");
    let fixed = data.get(start..start + 10).ok_or_else(|| eof(start))?;
    if fixed[0..2] != GZIP_MAGIC {
        return Err(ctx.corrupt(start, "not in GZIP format"));
    }
    if fixed[2] != GZIP_DEFLATE {
        return Err(ctx.corrupt(start + 2, "unsupported compression method"));
    }
    let flags = fixed[3];
    let mut pos = start + 10;
    if flags & FEXTRA != 0 {
        let n = data.get(pos..pos + 2).ok_or_else(|| eof(pos))?;
        let n = usize::from(u16::from_le_bytes([n[0], n[1]]));
        pos = pos
            .checked_add(2 + n)
            .filter(|&p| p <= data.len())
            .ok_or_else(|| eof(pos))?;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = data.get(pos..).unwrap_or_default();
            let nul = rest.iter().position(|&b| b == 0).ok_or_else(|| eof(pos))?;
            pos += nul + 1;
        }
    }
    if flags & FHCRC != 0 {
        let stored = data.get(pos..pos + 2).ok_or_else(|| eof(pos))?;
        let stored = u16::from_le_bytes([stored[0], stored[1]]);
        let header = data.get(start..pos).unwrap_or_default();
        if crc32(header) as u16 != stored {
            return Err(ctx.corrupt(pos, "corrupt GZIP header"));
        }
        pos += 2;
    }
    Ok(pos)
}

/// Inflates the member whose deflate data starts at `pos`, checks its trailer, appends its
/// content to `out`; returns where the member ends.
fn gzip_member(data: &[u8], mut pos: usize, out: &mut Vec<u8>, ctx: &Ctx) -> Result<usize> {
    let eof = |at: usize| ctx.corrupt(at, "gzip stream ends early");
    let body = data.get(pos..).unwrap_or_default();
    // The last 4 bytes hold the size of a lone member: a good first guess for the output.
    let hint = le_u32(data, data.len().saturating_sub(4)).map_or(0, |n| n as usize);
    let hint = hint.min(body.len().saturating_mul(DEFLATE_MAX_RATIO));
    let out_start = out.len();
    let used = inflate(body, out, hint, ctx, pos)?;
    pos += used;
    let trailer = data.get(pos..pos + 8).ok_or_else(|| eof(pos))?;
    let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let size = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    let content = out.get(out_start..).unwrap_or_default();
    if crc32(content) != crc || content.len() as u32 != size {
        return Err(ctx.corrupt(pos, "corrupt GZIP trailer"));
    }
    Ok(pos + 8)
}

/// Inflates the raw deflate stream at the start of `input`, appending to `out`; returns how many
/// input bytes the stream used.
fn inflate(input: &[u8], out: &mut Vec<u8>, hint: usize, ctx: &Ctx, at: usize) -> Result<usize> {
    use miniz_oxide::inflate::TINFLStatus;
    use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};

    let start = out.len();
    let room = ctx.room(start);
    let mut cap = hint.clamp(256, 1 << 20).min(room);
    let mut state = Box::<DecompressorOxide>::default();
    let mut consumed = 0;
    let mut written = 0;
    out.resize(start + cap, 0);
    loop {
        let src = input.get(consumed..).unwrap_or_default();
        let dst = out.get_mut(start..).unwrap_or_default();
        let (status, used, made) = decompress(
            &mut state,
            src,
            dst,
            written,
            inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        consumed += used;
        written += made;
        match status {
            TINFLStatus::Done => {
                out.truncate(start + written);
                return Ok(consumed);
            }
            TINFLStatus::HasMoreOutput => {
                if cap >= room {
                    out.truncate(start);
                    return Err(ctx.too_large(at + consumed, room.saturating_add(1)));
                }
                cap = cap.saturating_mul(2).min(room);
                out.resize(start + cap, 0);
            }
            TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                out.truncate(start);
                return Err(ctx.corrupt(at + consumed, "deflate stream ends early"));
            }
            _ => {
                out.truncate(start);
                return Err(ctx.corrupt(at + consumed, "invalid deflate data"));
            }
        }
    }
}

fn gzip_encode(data: &[u8]) -> Vec<u8> {
    let deflated = miniz_oxide::deflate::compress_to_vec(data, 6);
    let mut out = Vec::with_capacity(deflated.len() + 18);
    // MTIME 0, XFL 0, OS "unknown": what Java's GZIPOutputStream writes.
    out.extend_from_slice(&[
        GZIP_MAGIC[0],
        GZIP_MAGIC[1],
        GZIP_DEFLATE,
        0,
        0,
        0,
        0,
        0,
        0,
        0xff,
    ]);
    out.extend_from_slice(&deflated);
    out.extend_from_slice(&crc32_update(0, data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

// ---------------------------------------------------------------------------------------------
// snappy (xerial snappy-java stream framing)

/// xerial's stream header: magic, then version and compatible version as big-endian int32.
const SNAPPY_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const SNAPPY_HEADER_LEN: usize = 16;
/// snappy-java's default block size (uncompressed bytes per chunk).
const SNAPPY_BLOCK: usize = 32 * 1024;

fn snappy_decode(data: &[u8], out: &mut Vec<u8>, ctx: &Ctx) -> Result<()> {
    if data.len() < SNAPPY_HEADER_LEN || data.get(..8) != Some(&SNAPPY_MAGIC[..]) {
        // snappy-java reads input without its header as one raw snappy block.
        return snappy_block(data, out, ctx, 0);
    }
    let version = be_u32(data, 8).unwrap_or(0) as i32;
    if version < 1 {
        return Err(ctx.corrupt(
            8,
            format!("incompatible snappy-java stream version {version}"),
        ));
    }
    let magic_head = be_u32(&SNAPPY_MAGIC, 0).unwrap_or(0);
    let mut pos = SNAPPY_HEADER_LEN;
    while pos < data.len() {
        let len =
            be_u32(data, pos).ok_or_else(|| ctx.corrupt(pos, "snappy chunk length cut short"))?;
        if len == magic_head {
            // A concatenated stream: its header again.
            if data.get(pos..pos + 8) != Some(&SNAPPY_MAGIC[..]) || data.len() < pos + 16 {
                return Err(ctx.corrupt(pos, "invalid snappy-java stream header"));
            }
            pos += SNAPPY_HEADER_LEN;
            continue;
        }
        let len = usize::try_from(len as i32)
            .map_err(|_| ctx.corrupt(pos, format!("invalid snappy chunk size {}", len as i32)))?;
        pos += 4;
        let chunk = data
            .get(pos..pos.saturating_add(len))
            .ok_or_else(|| ctx.corrupt(pos, "failed to read snappy chunk"))?;
        snappy_block(chunk, out, ctx, pos)?;
        pos += len;
    }
    Ok(())
}

fn snappy_block(block: &[u8], out: &mut Vec<u8>, ctx: &Ctx, at: usize) -> Result<()> {
    let n = snap::raw::decompress_len(block).map_err(|e| ctx.corrupt(at, e))?;
    let start = out.len();
    if n > ctx.room(start) {
        return Err(ctx.too_large(at, start.saturating_add(n)));
    }
    out.resize(start + n, 0);
    let dst = out.get_mut(start..).unwrap_or_default();
    match snap::raw::Decoder::new().decompress(block, dst) {
        Ok(made) if made == n => Ok(()),
        Ok(_) => {
            out.truncate(start);
            Err(ctx.corrupt(at, "invalid uncompressed byte size"))
        }
        Err(e) => {
            out.truncate(start);
            Err(ctx.corrupt(at, e))
        }
    }
}

fn snappy_encode(data: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(SNAPPY_HEADER_LEN + data.len() / 2 + 64);
    out.extend_from_slice(&SNAPPY_MAGIC);
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    let mut enc = snap::raw::Encoder::new();
    let mut scratch = vec![0u8; snap::raw::max_compress_len(SNAPPY_BLOCK)];
    for chunk in data.chunks(SNAPPY_BLOCK) {
        let n = enc.compress(chunk, &mut scratch).map_err(|e| {
            Error::field(ErrorKind::InvalidArgument, "snappy", format!("snappy: {e}"))
        })?;
        let block = scratch.get(..n).unwrap_or_default();
        out.extend_from_slice(&(n as u32).to_be_bytes());
        out.extend_from_slice(block);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// lz4 (LZ4 frame format, as Kafka's Lz4BlockOutputStream writes it)

const LZ4_MAGIC: u32 = 0x184D_2204;
const LZ4_UNCOMPRESSED: u32 = 0x8000_0000;
const LZ4_FLG_VERSION: u8 = 0x40;
const LZ4_FLG_INDEPENDENT: u8 = 0x20;
const LZ4_FLG_BLOCK_CHECKSUM: u8 = 0x10;
const LZ4_FLG_CONTENT_SIZE: u8 = 0x08;
const LZ4_FLG_CONTENT_CHECKSUM: u8 = 0x04;
/// BD byte for 64 KiB blocks, Kafka's default.
const LZ4_BD_64K: u8 = 4 << 4;

fn lz4_decode(data: &[u8], out: &mut Vec<u8>, ctx: &Ctx) -> Result<()> {
    let eof = |at: usize| ctx.corrupt(at, "Stream ended prematurely");
    if data.len() < 6 {
        return Err(eof(data.len()));
    }
    if le_u32(data, 0) != Some(LZ4_MAGIC) {
        return Err(ctx.corrupt(0, "Stream unsupported (invalid magic bytes)"));
    }
    let (flg, bd) = (data[4], data[5]);
    if flg & 0x03 != 0 {
        return Err(ctx.corrupt(4, "Reserved bits must be 0"));
    }
    if flg & LZ4_FLG_INDEPENDENT == 0 {
        return Err(ctx.corrupt(4, "Dependent block stream is unsupported"));
    }
    if flg >> 6 != LZ4_FLG_VERSION >> 6 {
        return Err(ctx.corrupt(4, format!("Version {} is unsupported", flg >> 6)));
    }
    if bd & 0x8f != 0 {
        return Err(ctx.corrupt(5, "Reserved bits of the block descriptor must be 0"));
    }
    let size_code = (bd >> 4) & 7;
    if !(4..=7).contains(&size_code) {
        return Err(ctx.corrupt(5, "Block size value must be between 4 and 7"));
    }
    let max_block = 1usize << (2 * usize::from(size_code) + 8);
    let mut pos = 6;
    if flg & LZ4_FLG_CONTENT_SIZE != 0 {
        pos += 8;
    }
    let descriptor = data.get(4..pos).ok_or_else(|| eof(pos))?;
    let hc = *data.get(pos).ok_or_else(|| eof(pos))?;
    if (xxh32(descriptor, 0) >> 8) as u8 != hc {
        return Err(ctx.corrupt(pos, "Stream frame descriptor corrupted"));
    }
    pos += 1;
    let start = out.len();
    loop {
        let word = le_u32(data, pos).ok_or_else(|| eof(pos))?;
        pos += 4;
        let stored = word & LZ4_UNCOMPRESSED != 0;
        let size = (word & !LZ4_UNCOMPRESSED) as usize;
        if size == 0 {
            if flg & LZ4_FLG_CONTENT_CHECKSUM != 0 {
                let want = le_u32(data, pos).ok_or_else(|| eof(pos))?;
                let content = out.get(start..).unwrap_or_default();
                if xxh32(content, 0) != want {
                    return Err(ctx.corrupt(pos, "Content checksum mismatch"));
                }
            }
            // Kafka stops reading at the end mark; bytes after it are ignored.
            return Ok(());
        }
        if size > max_block {
            return Err(ctx.corrupt(
                pos - 4,
                format!("Block size {size} exceeded max: {max_block}"),
            ));
        }
        let block = data.get(pos..pos + size).ok_or_else(|| eof(pos))?;
        let have = out.len();
        if stored {
            if size > ctx.room(have) {
                return Err(ctx.too_large(pos, have.saturating_add(size)));
            }
            out.extend_from_slice(block);
        } else {
            let room = ctx.room(have);
            // The exact size when the block's sequences add up, so that a small block does not
            // zero a whole 64 KiB buffer; otherwise as much as a block may hold.
            let exact = lz4_block_len(block).filter(|&n| n <= max_block);
            let cap = exact.unwrap_or(max_block).min(room);
            if exact.is_some_and(|n| n > room) {
                return Err(ctx.too_large(pos, have.saturating_add(exact.unwrap_or(0))));
            }
            out.resize(have + cap, 0);
            let dst = out.get_mut(have..).unwrap_or_default();
            match lz4_flex::block::decompress_into(block, dst) {
                Ok(made) => out.truncate(have + made),
                Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                    if exact.is_none() && cap < max_block =>
                {
                    out.truncate(have);
                    return Err(ctx.too_large(pos, have.saturating_add(cap).saturating_add(1)));
                }
                Err(e) => {
                    out.truncate(have);
                    return Err(ctx.corrupt(pos, e));
                }
            }
        }
        pos += size;
        if flg & LZ4_FLG_BLOCK_CHECKSUM != 0 {
            let want = le_u32(data, pos).ok_or_else(|| eof(pos))?;
            if xxh32(block, 0) != want {
                return Err(ctx.corrupt(pos, "Block checksum mismatch"));
            }
            pos += 4;
        }
    }
}

/// The decompressed size of a raw LZ4 block, from its sequence headers alone (literal and
/// match lengths), or `None` when they do not add up.
fn lz4_block_len(block: &[u8]) -> Option<usize> {
    let mut pos = 0usize;
    let mut out = 0usize;
    let extended = |pos: &mut usize, mut n: usize| -> Option<usize> {
        if n == 15 {
            loop {
                let b = *block.get(*pos)?;
                *pos += 1;
                n = n.checked_add(usize::from(b))?;
                if b != 255 {
                    break;
                }
            }
        }
        Some(n)
    };
    loop {
        let token = *block.get(pos)?;
        pos += 1;
        let literals = extended(&mut pos, usize::from(token >> 4))?;
        pos = pos.checked_add(literals)?;
        out = out.checked_add(literals)?;
        if pos == block.len() {
            return Some(out);
        }
        pos = pos.checked_add(2)?;
        let matched = extended(&mut pos, usize::from(token & 15))?;
        out = out.checked_add(matched)?.checked_add(4)?;
        if pos >= block.len() {
            return None;
        }
    }
}

fn lz4_encode(data: &[u8]) -> Result<Vec<u8>> {
    const BLOCK: usize = 64 * 1024;
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    out.extend_from_slice(&LZ4_MAGIC.to_le_bytes());
    let descriptor = [LZ4_FLG_VERSION | LZ4_FLG_INDEPENDENT, LZ4_BD_64K];
    out.extend_from_slice(&descriptor);
    out.push((xxh32(&descriptor, 0) >> 8) as u8);
    let mut scratch = vec![0u8; lz4_flex::block::get_maximum_output_size(BLOCK)];
    for chunk in data.chunks(BLOCK) {
        let n = lz4_flex::block::compress_into(chunk, &mut scratch)
            .map_err(|e| Error::field(ErrorKind::InvalidArgument, "lz4", format!("lz4: {e}")))?;
        match scratch.get(..n) {
            Some(block) if n < chunk.len() => {
                out.extend_from_slice(&(n as u32).to_le_bytes());
                out.extend_from_slice(block);
            }
            _ => {
                out.extend_from_slice(&(chunk.len() as u32 | LZ4_UNCOMPRESSED).to_le_bytes());
                out.extend_from_slice(chunk);
            }
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    Ok(out)
}

const P1: u32 = 0x9E37_79B1;
const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

/// xxHash32 of `data` (the LZ4 frame's descriptor, block and content checksums).
pub(crate) fn xxh32(data: &[u8], seed: u32) -> u32 {
    fn round(acc: u32, lane: u32) -> u32 {
        acc.wrapping_add(lane.wrapping_mul(P2))
            .rotate_left(13)
            .wrapping_mul(P1)
    }
    let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    let mut stripes = data.chunks_exact(16);
    let mut h = if data.len() >= 16 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        for s in &mut stripes {
            v[0] = round(v[0], word(&s[0..4]));
            v[1] = round(v[1], word(&s[4..8]));
            v[2] = round(v[2], word(&s[8..12]));
            v[3] = round(v[3], word(&s[12..16]));
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(data.len() as u32);
    let mut words = stripes.remainder().chunks_exact(4);
    for w in &mut words {
        h = h
            .wrapping_add(word(w).wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h
            .wrapping_add(u32::from(b).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

// ---------------------------------------------------------------------------------------------
// zstd

const ZSTD_MAGIC: u32 = 0xFD2F_B528;
/// Largest window zstd-jni uses for Kafka's streams (level 19+ without a size: 8 MiB). A frame
/// may declare a larger window only when the caller's limit allows that much anyway.
const ZSTD_KAFKA_MAX_WINDOW: u64 = 8 << 20;

/// Window size and declared content size of the zstd frame header at the start of `data`.
fn zstd_frame_sizes(data: &[u8]) -> Option<(u64, Option<u64>)> {
    let fhd = *data.get(4)?;
    let single = fhd & 0x20 != 0;
    let fcs_len = match fhd >> 6 {
        0 if single => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let dict_len = [0usize, 1, 2, 4][usize::from(fhd & 3)];
    let mut pos = 5;
    let window_desc = if single {
        None
    } else {
        pos += 1;
        Some(*data.get(5)?)
    };
    pos += dict_len;
    let fcs = data.get(pos..pos + fcs_len)?;
    let mut le = [0u8; 8];
    le.get_mut(..fcs_len)?.copy_from_slice(fcs);
    let mut content = u64::from_le_bytes(le);
    if fcs_len == 2 {
        content += 256;
    }
    let content = (fcs_len > 0).then_some(content);
    let window = match window_desc {
        Some(wd) => {
            let base = 1u64 << (10 + u32::from(wd >> 3));
            base + (base / 8) * u64::from(wd & 7)
        }
        None => content.unwrap_or(0),
    };
    Some((window, content))
}

fn zstd_decode(data: &[u8], out: &mut Vec<u8>, ctx: &Ctx) -> Result<()> {
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

    let mut decoder = FrameDecoder::new();
    let mut src: &[u8] = data;
    while !src.is_empty() {
        let at = data.len() - src.len();
        let magic = le_u32(src, 0).ok_or_else(|| ctx.corrupt(at, "zstd frame cut short"))?;
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            // A skippable frame: magic, size, then that many bytes of user data.
            let len = le_u32(src, 4).ok_or_else(|| ctx.corrupt(at, "zstd frame cut short"))?;
            let end = 8usize.saturating_add(len as usize);
            src = src
                .get(end..)
                .ok_or_else(|| ctx.corrupt(at, "skippable frame cut short"))?;
            continue;
        }
        if magic != ZSTD_MAGIC {
            return Err(ctx.corrupt(at, "unknown zstd frame magic"));
        }
        let (window, content) =
            zstd_frame_sizes(src).ok_or_else(|| ctx.corrupt(at, "zstd frame header cut short"))?;
        let room = ctx.room(out.len());
        if let Some(n) = content.filter(|&n| n > room as u64) {
            return Err(ctx.too_large(at, usize::try_from(n).unwrap_or(usize::MAX)));
        }
        if window > ZSTD_KAFKA_MAX_WINDOW.max(room as u64) {
            return Err(ctx.too_large(at, usize::try_from(window).unwrap_or(usize::MAX)));
        }
        decoder.reset(&mut src).map_err(|e| ctx.corrupt(at, e))?;
        let frame_start = out.len();
        loop {
            let at = data.len() - src.len();
            let done = decoder
                .decode_blocks(&mut src, BlockDecodingStrategy::UptoBytes(64 * 1024))
                .map_err(|e| ctx.corrupt(at, e))?;
            if decoder.can_collect() > ctx.room(out.len()) {
                return Err(ctx.too_large(at, out.len().saturating_add(decoder.can_collect())));
            }
            decoder
                .collect_to_writer(&mut *out)
                .map_err(|e| ctx.corrupt(at, e))?;
            if done {
                break;
            }
        }
        if let (Some(want), Some(got)) = (
            decoder.get_checksum_from_data(),
            decoder.get_calculated_checksum(),
        ) {
            if want != got {
                return Err(ctx.corrupt(data.len() - src.len(), "zstd content checksum mismatch"));
            }
        }
        if let Some(n) = content {
            if (out.len() - frame_start) as u64 != n {
                return Err(ctx.corrupt(
                    data.len() - src.len(),
                    "zstd frame content size does not match its header",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxh32_known_values() {
        assert_eq!(xxh32(b"", 0), 0x02CC_5D05);
        assert_eq!(xxh32(b"abc", 0), 0x32D1_53FF);
    }

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..200_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 1000) as u8)
            .collect();
        for codec in Compression::ALL {
            for n in [0, 1, 100, 70_000, data.len()] {
                let packed = compress(codec, &data[..n]);
                let packed = match packed {
                    Ok(p) => p,
                    Err(e) => panic!("{codec}: {e}"),
                };
                let got = decompress(codec, &packed, 1 << 20);
                assert_eq!(got.as_deref().ok(), Some(&data[..n]), "{codec} {n}");
            }
        }
    }

    #[test]
    fn lz4_block_sizes_are_read_from_sequences() {
        let data: Vec<u8> = (0..70_000u32)
            .map(|i| (i % 97) as u8 ^ (i / 5000) as u8)
            .collect();
        for n in [0, 1, 15, 16, 300, 65_536] {
            let chunk = &data[..n];
            let mut block = vec![0u8; lz4_flex::block::get_maximum_output_size(n)];
            let len = lz4_flex::block::compress_into(chunk, &mut block).unwrap_or(0);
            assert_eq!(lz4_block_len(&block[..len]), Some(n), "{n}");
        }
        assert_eq!(lz4_block_len(&[]), None);
        assert_eq!(lz4_block_len(&[0xf0]), None);
        assert_eq!(lz4_block_len(&[0x10, b'a', 0x01]), None);
    }

    #[test]
    fn limits_are_enforced() {
        let zeros = vec![0u8; 1 << 20];
        for codec in Compression::ALL {
            let packed = compress(codec, &zeros).unwrap_or_default();
            let e = decompress(codec, &packed, 1000).err();
            assert_eq!(
                e.map(|e| e.kind()),
                Some(ErrorKind::LimitExceeded),
                "{codec}"
            );
            let ok = decompress(codec, &packed, 1 << 20).map(|v| v.len()).ok();
            assert_eq!(ok, Some(1 << 20), "{codec}");
        }
    }
}
