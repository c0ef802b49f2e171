//! Kafka's primitive encodings, as its message generator reads and writes them.
//!
//! Owns: a bounds-checked reader over a borrowed byte slice and a writer into a `Vec<u8>`, for
//! fixed-width big-endian integers, uuids, Kafka's unsigned varints, compact strings, compact
//! nullable bytes, compact array counts and tagged-field sections. Every read failure is an
//! [`Error`] carrying the byte offset and the field being read. Never: knowledge of any record
//! schema (that is `record`), allocation driven by a length the input has not backed with bytes.

use std::borrow::Cow;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;

/// Longest string Kafka's generated code accepts for a `string` field (0x7fff bytes).
pub const MAX_STRING_LEN: usize = 0x7fff;

/// A cursor over input bytes. Borrowed data (strings, bytes) is returned without copying.
///
/// It also notes whether the input was written the way Kafka writes (minimal varints, bools as
/// 0 or 1, ...): Kafka's reader accepts other spellings, and only canonical input re-encodes to
/// the same bytes.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    canonical: bool,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            canonical: true,
        }
    }

    /// False once anything was read in a form Kafka's writer would not produce.
    pub fn is_canonical(&self) -> bool {
        self.canonical
    }

    /// Notes that the input is accepted but not in Kafka's own spelling.
    #[inline]
    pub fn mark_noncanonical(&mut self) {
        self.canonical = false;
    }

    /// Bytes consumed so far (the offset of the next read).
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[cold]
    #[inline(never)]
    fn truncated(&self, field: &str, need: usize) -> Error {
        Error::at(
            ErrorKind::Truncated,
            self.pos,
            field,
            format!("needs {need} byte(s), only {} left", self.remaining()),
        )
    }

    /// The next `n` bytes, borrowed.
    #[inline(always)]
    pub fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end.and_then(|e| self.buf.get(self.pos..e)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.truncated(field, n)),
        }
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N]> {
        let s = self.take(N, field)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    #[inline(always)]
    pub fn i8(&mut self, field: &str) -> Result<i8> {
        Ok(i8::from_be_bytes(self.array(field)?))
    }

    /// Kafka reads a bool as "any non-zero byte is true".
    #[inline]
    pub fn bool(&mut self, field: &str) -> Result<bool> {
        let b = self.i8(field)?;
        if b != 0 && b != 1 {
            self.canonical = false;
        }
        Ok(b != 0)
    }

    #[inline(always)]
    pub fn i32(&mut self, field: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(field)?))
    }

    #[inline(always)]
    pub fn i64(&mut self, field: &str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(field)?))
    }

    #[inline(always)]
    pub fn uuid(&mut self, field: &str) -> Result<Uuid> {
        Ok(Uuid::from_bytes(self.array(field)?))
    }

    /// Kafka's unsigned varint: at most 5 bytes, low 7-bit groups first; bits beyond 32 are
    /// dropped exactly as Java's `int` shifts drop them.
    #[inline(always)]
    pub fn uvarint(&mut self, field: &str) -> Result<u32> {
        // Nearly every varint here (lengths, counts, tags) is one byte.
        if let Some(&b) = self.buf.get(self.pos).filter(|&&b| b < 0x80) {
            self.pos += 1;
            return Ok(u32::from(b));
        }
        self.uvarint_long(field)
    }

    #[cold]
    fn uvarint_long(&mut self, field: &str) -> Result<u32> {
        let start = self.pos;
        let mut value: u32 = 0;
        let mut shift = 0u32;
        loop {
            let b = match self.buf.get(self.pos) {
                Some(&b) => b,
                None => return Err(self.truncated(field, 1)),
            };
            self.pos += 1;
            value |= u32::from(b & 0x7f).wrapping_shl(shift);
            if b & 0x80 == 0 {
                if self.pos - start != uvarint_len(value) || (shift == 28 && b > 0x0f) {
                    self.canonical = false;
                }
                return Ok(value);
            }
            shift += 7;
            if shift > 28 {
                return Err(Error::at(
                    ErrorKind::InvalidVarint,
                    start,
                    field,
                    "unsigned varint is longer than 5 bytes",
                ));
            }
        }
    }

    /// A compact length field as Java sees it: `readUnsignedVarint() - 1` in `int` arithmetic.
    /// Returns `None` for the null marker (a negative result).
    #[inline(always)]
    fn compact_len(&mut self, field: &str) -> Result<Option<usize>> {
        let n = (self.uvarint(field)? as i32).wrapping_sub(1);
        Ok(usize::try_from(n).ok())
    }

    /// A non-nullable compact string. Kafka rejects null, lengths above 0x7fff, and (we add)
    /// bytes that are not UTF-8, which Java would silently replace.
    #[inline(always)]
    pub fn compact_str(&mut self, field: &str) -> Result<&'a str> {
        let bytes = self.compact_str_bytes(field)?;
        let data_at = self.pos - bytes.len();
        to_str(bytes).map_err(|e| not_utf8(data_at + e.valid_up_to(), field))
    }

    /// The bytes of a non-nullable compact string, with every check of [`Reader::compact_str`]
    /// but the UTF-8 one.
    #[inline]
    pub fn compact_str_bytes(&mut self, field: &str) -> Result<&'a [u8]> {
        let at = self.pos;
        match self.compact_len(field)? {
            Some(n) if n <= MAX_STRING_LEN => self.take(n, field),
            len => Err(bad_string_len(at, field, len)),
        }
    }

    /// Compact nullable bytes.
    #[inline(always)]
    pub fn compact_nullable_bytes(&mut self, field: &str) -> Result<Option<&'a [u8]>> {
        match self.compact_len(field)? {
            None => Ok(None),
            Some(n) => self.take(n, field).map(Some),
        }
    }

    /// A non-nullable compact array count. Like Kafka, a count larger than the bytes left is
    /// refused before anything is allocated.
    #[inline(always)]
    pub fn compact_array_len(&mut self, field: &str) -> Result<usize> {
        let at = self.pos;
        match self.compact_len(field)? {
            Some(n) if n <= self.remaining() => Ok(n),
            len => Err(bad_array_len(at, field, len, self.remaining())),
        }
    }

    /// The raw data of a tagged field whose tag the reader does not know.
    pub fn tagged_data(&mut self, size: u32, field: &str) -> Result<&'a [u8]> {
        let at = self.pos;
        let size = size as i32;
        if size < 0 {
            return Err(Error::at(
                ErrorKind::InvalidLength,
                at,
                field,
                format!("tagged field has negative size {size}"),
            ));
        }
        self.take(size as usize, field)
    }
}

/// A tagged field the schema does not know, kept so that re-encoding is byte-identical.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RawTaggedField<'a> {
    pub tag: u32,
    pub data: Cow<'a, [u8]>,
}

impl RawTaggedField<'_> {
    pub fn into_owned(self) -> RawTaggedField<'static> {
        RawTaggedField {
            tag: self.tag,
            data: Cow::Owned(self.data.into_owned()),
        }
    }
}

/// `bytes` as a `str`. ASCII, nearly every name Kafka writes, is checked a word at a time; the
/// rest by std's UTF-8 check, whose error says where.
#[inline(always)]
fn to_str(bytes: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    use ascii::AsAsciiStr;
    match bytes.as_ascii_str() {
        Ok(ascii) => Ok(ascii.as_str()),
        Err(_) => std::str::from_utf8(bytes),
    }
}

#[cold]
#[inline(never)]
fn not_utf8(at: usize, field: &str) -> Error {
    Error::at(
        ErrorKind::InvalidUtf8,
        at,
        field,
        "string is not valid UTF-8",
    )
}

/// The error of a non-nullable compact array's count: null, or more than the bytes left.
#[cold]
#[inline(never)]
fn bad_array_len(at: usize, field: &str, len: Option<usize>, left: usize) -> Error {
    match len {
        None => Error::at(
            ErrorKind::InvalidLength,
            at,
            field,
            "non-nullable array was serialized as null",
        ),
        Some(n) => Error::at(
            ErrorKind::Truncated,
            at,
            field,
            format!("array of {n} element(s) but only {left} byte(s) left"),
        ),
    }
}

/// The error of a non-nullable compact string's length: null, or above Kafka's limit.
#[cold]
#[inline(never)]
fn bad_string_len(at: usize, field: &str, len: Option<usize>) -> Error {
    let why = match len {
        None => "non-nullable string was serialized as null".to_owned(),
        Some(n) => format!("string has invalid length {n} (at most {MAX_STRING_LEN})"),
    };
    Error::at(ErrorKind::InvalidLength, at, field, why)
}

/// Number of bytes `v` takes as an unsigned varint.
pub fn uvarint_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0xfff_ffff => 4,
        _ => 5,
    }
}

/// Appends Kafka encodings to a byte vector.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn with_capacity(n: usize) -> Writer {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    pub fn i8(&mut self, v: i8) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn bool(&mut self, v: bool) {
        self.buf.push(u8::from(v));
    }

    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn uuid(&mut self, v: Uuid) {
        self.buf.extend_from_slice(&v.to_bytes());
    }

    pub fn uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.buf.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    /// A non-nullable compact string; Kafka refuses to write one longer than 0x7fff bytes.
    pub fn compact_str(&mut self, s: &str, field: &str) -> Result<()> {
        if s.len() > MAX_STRING_LEN {
            return Err(Error::field(
                ErrorKind::InvalidLength,
                field,
                format!(
                    "string of {} bytes is too long to be serialized (at most {MAX_STRING_LEN})",
                    s.len()
                ),
            ));
        }
        self.uvarint(s.len() as u32 + 1);
        self.bytes(s.as_bytes());
        Ok(())
    }

    pub fn compact_nullable_bytes(&mut self, b: Option<&[u8]>, field: &str) -> Result<()> {
        match b {
            None => self.uvarint(0),
            Some(b) => {
                let n = u32::try_from(b.len())
                    .ok()
                    .filter(|&n| n < i32::MAX as u32)
                    .ok_or_else(|| {
                        Error::field(ErrorKind::InvalidLength, field, "bytes too long")
                    })?;
                self.uvarint(n + 1);
                self.bytes(b);
            }
        }
        Ok(())
    }

    pub fn compact_array_len(&mut self, n: usize, field: &str) -> Result<()> {
        let n = u32::try_from(n)
            .ok()
            .filter(|&n| n < i32::MAX as u32)
            .ok_or_else(|| Error::field(ErrorKind::InvalidLength, field, "array too long"))?;
        self.uvarint(n + 1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uvarint_matches_java_semantics() {
        let cases: &[(&[u8], u32)] = &[
            (&[0x00], 0),
            (&[0x7f], 127),
            (&[0x80, 0x01], 128),
            (&[0xac, 0x02], 300),
            (&[0xff, 0xff, 0xff, 0xff, 0x0f], u32::MAX),
            (&[0x81, 0x80, 0x80, 0x80, 0x08], 0x8000_0001),
            // bits beyond 32 in the fifth byte are dropped, as Java's int shift drops them
            (&[0x80, 0x80, 0x80, 0x80, 0x7f], 0xf000_0000),
            // non-canonical but accepted
            (&[0x80, 0x00], 0),
        ];
        for (bytes, want) in cases {
            let mut r = Reader::new(bytes);
            assert_eq!(r.uvarint("x").ok(), Some(*want), "{bytes:02x?}");
            assert_eq!(r.remaining(), 0);
        }
        let err = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
            .uvarint("x")
            .err();
        assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::InvalidVarint));
        let err = Reader::new(&[0x80]).uvarint("x").err();
        assert_eq!(err.map(|e| e.kind()), Some(ErrorKind::Truncated));
    }

    #[test]
    fn uvarint_writer_is_canonical_and_sized() {
        for v in [
            0u32,
            1,
            127,
            128,
            16383,
            16384,
            0x1f_ffff,
            0x20_0000,
            0xfff_ffff,
            0x1000_0000,
            u32::MAX,
        ] {
            let mut w = Writer::default();
            w.uvarint(v);
            let b = w.into_bytes();
            assert_eq!(b.len(), uvarint_len(v));
            assert_eq!(Reader::new(&b).uvarint("x").ok(), Some(v));
        }
    }

    #[test]
    fn compact_lengths_follow_java_int_arithmetic() {
        // 0 is null; 0x80000000 wraps to Integer.MAX_VALUE after "- 1" and is too long.
        assert_eq!(
            Reader::new(&[0x00]).compact_nullable_bytes("b").ok(),
            Some(None)
        );
        let e = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x08])
            .compact_nullable_bytes("b")
            .err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::Truncated));
        let e = Reader::new(&[0x00]).compact_str("name").err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidLength));
        let e = Reader::new(&[0x81, 0x80, 0x02]).compact_str("name").err();
        assert_eq!(e.map(|e| e.kind()), Some(ErrorKind::InvalidLength));
        let e = Reader::new(&[0x0b, 0x00]).compact_array_len("a").err();
        assert_eq!(
            e.map(|e| (e.kind(), e.offset())),
            Some((ErrorKind::Truncated, Some(0)))
        );
    }
}
