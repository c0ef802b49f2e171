// Copied into a fresh Node project that installed build/rlmeta-<version>.tgz (make package-test):
// the package as a user gets it, imported by its name. The expectations come from the repository
// (RLMETA_ROOT): the conformance vectors, and the Rust inspector's JSON for real Kafka 4.4.0 files.

import assert from 'node:assert/strict';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import rlmeta, { RlmetaError, TruncatedError, decodeValue, encodeValue, keyForValue, openCheckpoint, openSegmentLog } from 'rlmeta';

const ROOT = process.env.RLMETA_ROOT;
assert.ok(ROOT, 'RLMETA_ROOT: the repository');
const { bytesToHex, hexToBytes, int, jsForm, parseJsonLossless } = await import(pathToFileURL(join(ROOT, 'bindings-wasm/tests/helpers.mjs')).href);
const { CHECKPOINT_FIXTURES, SEGMENT_FIXTURES, kafkaFeatureLevels, readFixture, rustInspection } =
  await import(pathToFileURL(join(ROOT, 'bindings-wasm/tests/fixtures.mjs')).href);

const installed = join(process.cwd(), 'node_modules/rlmeta');

test('"rlmeta" resolves to the installed package\'s Node entry', () => {
  assert.equal(import.meta.resolve('rlmeta'), pathToFileURL(join(installed, 'index.mjs')).href);
  assert.ok(!lstatSync(installed).isSymbolicLink(), 'extracted from the tarball, not linked to the build');
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(pkg.version, rlmeta.version());
});

test('every value vector (v0, v1) decodes to its record and encodes back byte for byte', () => {
  let n = 0;
  for (const file of ['v0.json', 'v1.json']) {
    for (const c of parseJsonLossless(readFileSync(join(ROOT, 'tests/vectors', file), 'utf8')).cases) {
      const bytes = hexToBytes(c.hex);
      const got = decodeValue(bytes);
      assert.deepStrictEqual(got, { apiKey: int(c.apiKey), version: int(c.version), record: jsForm(c.record) }, c.name);
      assert.equal(bytesToHex(encodeValue(got)), c.hex, c.name);
      if (c.apiKey === 0n) assert.match(keyForValue(bytes), new RegExp(`^${c.record.remoteLogSegmentId.topicIdPartition.id}:`), c.name);
      n++;
    }
  }
  assert.ok(n >= 10, `only ${n} value cases`);
});

test('a truncated value throws TruncatedError (an RlmetaError) with its stable code', () => {
  let e;
  try {
    decodeValue(hexToBytes('0100'));
  } catch (x) {
    e = x;
  }
  assert.ok(e instanceof TruncatedError && e instanceof RlmetaError, String(e));
  assert.equal(e.code, rlmeta.errorCodes().truncated);
});

const BROKER_SEGMENTS = SEGMENT_FIXTURES.filter((p) => p.startsWith('tests/fixtures/broker/'));
test('the real broker segment files are there', () => assert.ok(BROKER_SEGMENTS.length >= 3, BROKER_SEGMENTS.join(', ')));

for (const path of BROKER_SEGMENTS) {
  test(`${path} opens as the Rust inspector reads it`, () => {
    const rust = rustInspection(path);
    const log = openSegmentLog();
    log.addFile(path, readFixture(path));
    while (!log.index(1 << 20));
    log.summarize();
    const s = log.summary();
    const rs = rust.inspection.summary;
    assert.ok(rs.records > 0n, 'the file has records');
    assert.equal(BigInt(log.rows()), rs.records, 'rows');
    for (const f of ['records', 'nullKeyRecords', 'keyedRecords', 'tombstones', 'undecodable', 'liveSegments', 'orphans', 'keptByCompaction']) {
      assert.equal(BigInt(s[f]), rs[f], f);
    }
    assert.deepEqual(log.lifecycles().ids, rust.inspection.segments.map((g) => g.id));
    log.free();
  });
}

for (const path of CHECKPOINT_FIXTURES) {
  test(`${path} opens with the feature levels kafka-dump-log printed`, () => {
    const info = openCheckpoint(readFixture(path));
    const want = kafkaFeatureLevels(path);
    assert.ok(want.length > 0, 'Kafka printed feature levels');
    assert.deepEqual(info.features.map(({ name, level, offset }) => ({ offset, name, level })), want);
  });
}
