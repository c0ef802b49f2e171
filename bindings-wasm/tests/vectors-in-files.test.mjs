// Every value of every vector file (tests/vectors) laid out as records of a segment file (JS-built
// batches, CRC-32C included) and read back through the whole-file surface: each record's kind,
// decoded value (the same as decodeValue's, which vectors.test.mjs checks against the vectors),
// Kafka toString and hex; each value that does not decode an undecodable row with its fault.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, test } from 'node:test';

import { bytesToHex, hexToBytes, loadBuilds, parseJsonLossless, vectorFiles } from './helpers.mjs';

const builds = await loadBuilds();

const CRC32C = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return (bytes) => {
    let c = 0xffffffff;
    for (const b of bytes) c = t[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
})();

function varint(out, v) {
  let z = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n)); // zigzag
  do {
    let b = Number(z & 0x7fn);
    z >>= 7n;
    if (z) b |= 0x80;
    out.push(b);
  } while (z);
}

/** One magic-2 batch of null-key records with these values, at `baseOffset`. */
function batch(baseOffset, values, ts) {
  const records = [];
  values.forEach((v, i) => {
    const body = [0];
    varint(body, 0); // timestamp delta
    varint(body, i); // offset delta
    varint(body, -1); // null key
    varint(body, v.length);
    body.push(...v);
    varint(body, 0); // headers
    varint(records, body.length);
    records.push(...body);
  });
  const after = new DataView(new ArrayBuffer(40));
  after.setInt16(0, 0); // attributes: no compression, CreateTime
  after.setInt32(2, values.length - 1);
  after.setBigInt64(6, BigInt(ts));
  after.setBigInt64(14, BigInt(ts));
  after.setBigInt64(22, -1n);
  after.setInt16(30, -1);
  after.setInt32(32, -1);
  after.setInt32(36, values.length);
  const crcd = new Uint8Array([...new Uint8Array(after.buffer), ...records]);
  const head = new DataView(new ArrayBuffer(21));
  head.setBigInt64(0, BigInt(baseOffset));
  head.setInt32(8, 9 + crcd.length);
  head.setInt32(12, 0);
  head.setInt8(16, 2);
  head.setUint32(17, CRC32C(crcd));
  return new Uint8Array([...new Uint8Array(head.buffer), ...crcd]);
}

for (const { build, api, module } of builds) {
  describe(`${build} build: vector values read as segment files`, () => {
    for (const path of vectorFiles()) {
      const doc = parseJsonLossless(readFileSync(path, 'utf8'));
      const values = (doc.cases ?? []).filter((c) => typeof c.hex === 'string' && c.numPartitions === undefined && c.key === undefined && (c.record !== undefined || c.error !== undefined)).map((c) => hexToBytes(c.hex));
      if (values.length === 0) continue;
      test(basename(path), () => {
        const parts = [];
        for (let i = 0; i < values.length; i += 50) parts.push(batch(i, values.slice(i, i + 50), 1796000000000 + i));
        const file = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let at = 0;
        for (const p of parts) {
          file.set(p, at);
          at += p.length;
        }
        const log = api.openSegmentLog();
        log.addFile('00000000000000000000.log', file);
        assert.equal(log.index(), true);
        assert.equal(log.rows(), values.length);
        const c = log.columns(0, values.length);
        const faults = log.faults();
        assert.equal(faults.filter((f) => f.row === undefined).length, 0, JSON.stringify(faults.slice(0, 2)));
        let undecodable = 0;
        values.forEach((v, i) => {
          assert.equal(c.offsets[i], BigInt(i));
          const d = log.record(i);
          assert.equal(d.valueHex, bytesToHex(v));
          let want;
          try {
            want = api.decodeValue(v);
          } catch (e) {
            undecodable++;
            assert.equal(c.kinds[i], module.KIND.UNDECODABLE, `row ${i}`);
            assert.ok(c.flags[i] & module.FLAG.ERROR);
            assert.equal(faults.find((f) => f.row === i)?.code, e.code, `the fault of row ${i}`);
            assert.ok(d.kafkaError.length > 0 && d.error.length > 0);
            return;
          }
          assert.equal(c.kinds[i], want.apiKey, `row ${i}`);
          assert.deepStrictEqual(d.value, want, `row ${i}`);
          assert.ok(d.kafkaText.startsWith('RemoteLogSegmentMetadata') || d.kafkaText.startsWith('RemotePartitionDeleteMetadata'), d.kafkaText);
        });
        console.log(`${build} ${basename(path)}: ${values.length} values in ${parts.length} batches, ${undecodable} undecodable, as decodeValue says`);
        log.free();
      });
    }
  });
}
