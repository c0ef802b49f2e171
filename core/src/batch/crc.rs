//! The two CRC-32 variants record batches meet: CRC-32C (Castagnoli), which guards every magic-2
//! batch, and CRC-32 (the IEEE/zlib one), which guards every gzip member.
//!
//! Owns: CRC-32C through the `crc32c` crate (SSE4.2 where the CPU has it, about 10x the table
//! code here; its own software path elsewhere, wasm32 included), checked against this module's
//! table-driven code; and CRC-32 (slicing by 16, tables built at compile time). Never: `unsafe`
//! of its own, I/O.

/// Reflected polynomial of CRC-32C (Castagnoli), as Kafka's `Crc32C` uses.
const CASTAGNOLI: u32 = 0x82F6_3B78;
/// Reflected polynomial of CRC-32 (IEEE 802.3), as gzip uses.
const IEEE: u32 = 0xEDB8_8320;

/// How many bytes one step of the main loop consumes (and so how many tables there are).
const SLICES: usize = 16;

type Tables = [[u32; 256]; SLICES];

/// Table `k` maps a byte to the CRC of that byte followed by `k` zero bytes.
const fn make_tables(poly: u32) -> Tables {
    let mut t = [[0u32; 256]; SLICES];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut bit = 0;
        while bit < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            bit += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < SLICES {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

static CRC32C_TABLES: Tables = make_tables(CASTAGNOLI);
static CRC32_TABLES: Tables = make_tables(IEEE);

#[inline(always)]
fn lookup(t: &[u32; 256], v: u32) -> u32 {
    t[(v & 0xff) as u8 as usize]
}

/// Advances a raw (pre-inverted) CRC state over `data`.
#[inline]
fn update(t: &Tables, mut crc: u32, data: &[u8]) -> u32 {
    let mut chunks = data.chunks_exact(SLICES);
    for c in &mut chunks {
        let w0 = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let w1 = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        let w2 = u32::from_le_bytes([c[8], c[9], c[10], c[11]]);
        let w3 = u32::from_le_bytes([c[12], c[13], c[14], c[15]]);
        crc = lookup(&t[15], w0)
            ^ lookup(&t[14], w0 >> 8)
            ^ lookup(&t[13], w0 >> 16)
            ^ lookup(&t[12], w0 >> 24)
            ^ lookup(&t[11], w1)
            ^ lookup(&t[10], w1 >> 8)
            ^ lookup(&t[9], w1 >> 16)
            ^ lookup(&t[8], w1 >> 24)
            ^ lookup(&t[7], w2)
            ^ lookup(&t[6], w2 >> 8)
            ^ lookup(&t[5], w2 >> 16)
            ^ lookup(&t[4], w2 >> 24)
            ^ lookup(&t[3], w3)
            ^ lookup(&t[2], w3 >> 8)
            ^ lookup(&t[1], w3 >> 16)
            ^ lookup(&t[0], w3 >> 24);
    }
    for &b in chunks.remainder() {
        crc = lookup(&t[0], crc ^ u32::from(b)) ^ (crc >> 8);
    }
    crc
}

/// CRC-32C of `data` (the checksum a magic-2 record batch stores).
pub fn crc32c(data: &[u8]) -> u32 {
    ::crc32c::crc32c(data)
}

/// CRC-32C by this module's tables: the reference the fast path is tested against.
pub fn crc32c_software(data: &[u8]) -> u32 {
    !update(&CRC32C_TABLES, !0, data)
}

/// CRC-32 (IEEE, as zlib and gzip compute it) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    crc32_update(0, data)
}

/// Continues a CRC-32 (IEEE) computed over earlier bytes: `crc32_update(crc32(a), b)` equals
/// `crc32(a ++ b)`.
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    !update(&CRC32_TABLES, !crc, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time reference, to check the sliced tables against.
    fn slow(poly: u32, data: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            }
        }
        !c
    }

    #[test]
    fn check_values() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32c(b""), 0);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn sliced_equals_bitwise_at_every_length_and_alignment() {
        let data: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(167) ^ (i >> 3)) as u8)
            .collect();
        for start in 0..17 {
            for end in start..data.len() {
                let s = &data[start..end];
                assert_eq!(crc32c(s), slow(CASTAGNOLI, s), "{start}..{end}");
                assert_eq!(crc32c_software(s), slow(CASTAGNOLI, s), "{start}..{end}");
                assert_eq!(crc32(s), slow(IEEE, s), "{start}..{end}");
            }
        }
    }

    #[test]
    fn crc32_continues() {
        let (a, b) = (b"hello, ".as_slice(), b"world".as_slice());
        assert_eq!(crc32_update(crc32(a), b), crc32(b"hello, world"));
    }
}
