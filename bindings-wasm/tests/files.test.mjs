// Whole files through the Node build: every fixture segment file opened with openSegmentLog and
// checked against the Rust inspector's JSON for the same file (inspect --json), every checkpoint
// against Kafka's own kafka-dump-log listing.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';

import { PKG } from './helpers.mjs';
import { CHECKPOINT_FIXTURES, SEGMENT_FIXTURES, dumpRecords, kafkaFeatureLevels, readFixture, rustInspection } from './fixtures.mjs';

const rlmeta = await import(pathToFileURL(join(PKG, 'index.mjs')).href);
const { KIND, FLAG, SEGMENT_STATES, MARK } = rlmeta;

function open(path, budget) {
  const log = rlmeta.openSegmentLog();
  log.addFile(path, readFixture(path));
  if (budget !== undefined) log.index(budget);
  while (!log.index(1 << 20));
  log.summarize();
  return log;
}

describe('segment files', () => {
  for (const path of SEGMENT_FIXTURES) {
    test(path, () => {
      const rust = rustInspection(path);
      const dump = rust.files[0];
      const want = dumpRecords(dump);
      const log = open(path, 3);
      const n = log.rows();
      assert.equal(n, want.length, 'rows');
      const c = log.columns(0, n);
      const tables = log.tables();
      want.forEach((r, i) => {
        assert.equal(c.offsets[i], r.offset, `offset of row ${i}`);
        assert.equal(c.timestamps[i], r.timestamp, `timestamp of row ${i}`);
        assert.equal(BigInt(c.keySizes[i]), r.keySize);
        assert.equal(BigInt(c.valueSizes[i]), r.valueSize);
        const v = r.value;
        const kind = v.tombstone ? KIND.TOMBSTONE : v.levelRecord ? KIND.LEVEL_RECORD : v.error ? KIND.UNDECODABLE : Number(v.apiKey);
        assert.equal(c.kinds[i], kind, `kind of row ${i}`);
        assert.equal(Boolean(c.flags[i] & FLAG.NULL_KEY), r.key === null);
        assert.equal(Boolean(c.flags[i] & FLAG.KIP1266_KEY), r.keyFields !== null);
        assert.equal(Boolean(c.flags[i] & FLAG.BAD_CRC), r.batch.crcValid === false);
        const d = log.record(i);
        assert.equal(d.offset, r.offset.toString());
        assert.equal(d.kafkaText, v.text ?? (v.levelRecord ? `remote.log.metadata.version level ${v.levelRecord.level}` : null));
        assert.equal(d.valueHex, r.valueHex);
        assert.equal(d.key, r.key);
        assert.deepEqual(d.headers, r.headers);
        if (r.keyFields) assert.deepEqual({ ...d.keyFields, endOffset: BigInt(d.keyFields.endOffset), partition: BigInt(d.keyFields.partition), brokerLeaderEpoch: BigInt(d.keyFields.brokerLeaderEpoch) }, r.keyFields);
        if (v.record) {
          assert.equal(d.value.apiKey, Number(v.apiKey));
          if (c.segmentOf[i] >= 0) assert.equal(tables.segmentIds[c.segmentOf[i]], (v.record.remoteLogSegmentId?.id ?? v.record.segmentId));
        }
      });
      assert.deepEqual(log.keyTexts([...Array(n).keys()].reverse()), want.map((r) => r.key ?? '').reverse(), 'key texts');
      const keyed = want.filter((r) => r.key?.includes(':UPDATE')).length;
      assert.equal(log.keysContaining(':UPDATE').length, keyed);

      const s = log.summary();
      const rs = rust.inspection.summary;
      // The index's counts: read as the inspector replays, the rest in or after a corrupt batch.
      const counts = log.counts();
      for (const f of ['records', 'nullKeyRecords', 'keyedRecords', 'tombstones']) assert.equal(BigInt(counts[f]), rs[f], `counts.${f}`);
      assert.equal(counts.records + counts.unread, n + counts.unlisted, 'every row read or unread, and every unlisted record unread');
      assert.equal(BigInt(counts.unread), rs.unreadRecords, 'counts.unread as the inspector counts it');
      const firstBad = dump.batches.findIndex((b) => b.crcValid === false);
      assert.deepEqual(counts.corrupt.map((c) => c.position), firstBad < 0 ? [] : [Number(dump.batches[firstBad].position)]);
      want.forEach((r, i) => assert.equal(Boolean(c.flags[i] & FLAG.UNREAD), counts.corrupt.length > 0 && i >= counts.corrupt[0].row, `UNREAD of row ${i}`));
      for (const f of ['records', 'nullKeyRecords', 'keyedRecords', 'tombstones', 'undecodable', 'fatalToOldBrokers', 'liveSegments', 'orphans', 'keptByCompaction']) {
        assert.equal(BigInt(s[f]), rs[f], f);
      }
      assert.equal(s.lostByCompaction, rs.lostByCompaction.length);
      assert.equal(s.level, rs.level === null ? null : Number(rs.level.level));

      const l = log.lifecycles();
      const segs = rust.inspection.segments;
      assert.deepEqual(l.ids, segs.map((g) => g.id));
      segs.forEach((g, i) => {
        assert.equal(l.now[i] === -1 ? null : SEGMENT_STATES[l.now[i]], g.now);
        const steps = [...l.steps.lifecycle.keys()].filter((k) => l.steps.lifecycle[k] === i);
        assert.deepEqual(steps.map((k) => [l.steps.offset[k], SEGMENT_STATES[l.steps.state[k]]]), g.states.map((st) => [st.offset, st.state]));
        assert.equal(Boolean(l.marks[i] & MARK.DANGLING), g.startOffset === null);
        assert.equal(Boolean(l.marks[i] & MARK.STUCK), g.now === 'COPY_SEGMENT_STARTED' || g.now === 'DELETE_SEGMENT_STARTED');
      });

      // The inspector's own question, asked of the preview: compacted 30 days after the last record.
      if (n > 0) {
        const last = c.timestamps.reduce((a, b) => (b > a ? b : a));
        const p = log.preview({ cleanupPolicy: 'compact', segmentRecords: 1000 }, last + 30n * 86400000n);
        assert.equal(BigInt(p.recordsAfter), rs.keptByCompaction);
        assert.deepEqual(p.lost.slice().sort(), rs.lostByCompaction.slice().sort());
        assert.equal(p.nullKeysDropped, s.nullKeyRecords);
        const kept = p.kept.reduce((a, b) => a + b, 0);
        assert.equal(kept, p.recordsAfter);
      }

      // Every fault the Rust listing reports, with where.
      const faults = log.faults();
      const badCrc = dump.batches.filter((b) => b.crcValid === false);
      assert.equal(faults.filter((f) => f.kind === 'corrupt' && f.message.includes('CRC')).length, badCrc.length);
      for (const b of badCrc) assert.ok(faults.some((f) => f.position === Number(b.position)), `CRC fault at byte ${b.position}`);
      const tail = Number(dump.invalidBytesAtEnd);
      const fileLen = readFixture(path).length;
      assert.equal(faults.some((f) => f.kind === 'truncated' && f.position === fileLen - tail), tail > 0, 'truncated tail');
      const undecodable = want.filter((r) => r.value.error).length;
      assert.equal(faults.filter((f) => f.row !== undefined).length, undecodable);
      console.log(`${path}: ${n} rows, ${l.ids.length} lifecycles, ${faults.length} faults match inspect --json`);
      log.free();
    });
  }

  test('a file that is not a segment: one fault naming byte 0', () => {
    const log = rlmeta.openSegmentLog();
    log.addFile('notes.txt', new TextEncoder().encode('this is not a Kafka segment file at all, just text\n'));
    assert.equal(log.index(), true);
    assert.equal(log.rows(), 0);
    const [f, ...more] = log.faults();
    assert.equal(more.length, 0);
    assert.equal(f.position, 0);
    assert.match(f.message, /byte 0/);
  });

  test('the configuration of a preview is checked', () => {
    const log = open(SEGMENT_FIXTURES[0]);
    assert.throws(() => log.preview({ cleanupPolicy: 'shred' }, 0), TypeError);
    assert.throws(() => log.preview({ cleanupPolicy: 'compact' }, 1.5), TypeError);
    assert.throws(() => log.record(1e6), rlmeta.NotFoundError);
  });
});

// A host that streams a file (the inspector page): bytes pushed in small chunks, none kept, the
// columns taken and forgotten, the views read from byte ranges handed back; the replay fed in
// chunks. Everything as from the whole file.
describe('streamed segment files', () => {
  const chunks = (bytes, size) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  const concat = (parts) => {
    const out = {};
    for (const k of Object.keys(parts[0])) {
      const len = parts.reduce((n, p) => n + p[k].length, 0);
      out[k] = new parts[0][k].constructor(len);
      let at = 0;
      for (const p of parts) {
        out[k].set(p[k], at);
        at += p[k].length;
      }
    }
    return out;
  };
  for (const path of SEGMENT_FIXTURES) {
    test(path, () => {
      const bytes = readFixture(path);
      const whole = open(path);
      const n = whole.rows();
      const log = rlmeta.openSegmentLog();
      log.beginFile(path);
      const parts = [];
      let from = 0;
      for (const c of chunks(bytes, 61)) {
        log.push(c);
        parts.push(log.columns(from, log.rows()));
        from = log.rows();
        log.forgetColumns();
      }
      log.endFile();
      parts.push(log.columns(from, log.rows()));
      log.forgetColumns();
      assert.equal(log.rows(), n);
      assert.deepEqual(concat(parts), whole.columns(0, n));
      assert.deepEqual(log.tables(), whole.tables());
      assert.deepEqual(log.faults(), whole.faults());
      assert.deepEqual(log.counts(), whole.counts());
      assert.deepEqual(log.readinessAtLevel1(), whole.readinessAtLevel1());
      const ids = whole.tables().segmentIds;
      assert.equal(log.tables({ segmentIds: false }).segmentIds, null);
      for (const part of ['A', 'x', ids[0]?.slice(2, 8) ?? 'none']) {
        assert.deepEqual([...log.segmentsContaining(part)], ids.flatMap((id, i) => (id.includes(part) ? [i] : [])));
      }
      // The views, from the byte ranges of the batches they need.
      const rows = Array.from({ length: n + 1 }, (_, i) => i);
      const ranges = log.rowRanges(rows, 1 << 20);
      for (let i = 0; i < ranges.length; i += 3) log.addWindow(ranges[i], ranges[i + 1], bytes.subarray(ranges[i + 1], ranges[i + 2]));
      assert.deepEqual(log.keyTexts(rows), whole.keyTexts(rows));
      for (let row = 0; row < n; row++) assert.deepEqual(log.record(row), whole.record(row));
      assert.deepEqual(log.keysContaining('-'), whole.keysContaining('-'));
      const config = { cleanupPolicy: 'compact', segmentRecords: 3 };
      assert.deepEqual(log.preview(config, 1n << 42n), whole.preview(config, 1n << 42n));
      log.clearWindows();
      if (n > 0) assert.throws(() => log.record(0), /no record at row 0/);
      // One small window at a time: a key search over the whole file, range by range.
      const all = log.allRanges(64);
      const found = [];
      for (let i = 0; i < all.length; i += 3) {
        log.addWindow(all[i], all[i + 1], bytes.subarray(all[i + 1], all[i + 2]));
        found.push(...log.keysContaining('-'));
        log.clearWindows();
      }
      assert.deepEqual(found, [...whole.keysContaining('-')]);
      // The replay fed in chunks: full, as summarize(); lean, the counts without the
      // compaction what-if and the lifecycles.
      for (const lean of [false, true]) {
        log.beginReplay(lean, bytes.length);
        log.replayFile(bytes.length);
        for (const c of chunks(bytes, 53)) log.replayPush(c);
        log.endReplay();
        const s = log.summary();
        const want = whole.summary();
        if (lean) {
          assert.deepEqual({ ...s, keptByCompaction: 0, lostByCompaction: 0 }, { ...want, keptByCompaction: 0, lostByCompaction: 0 });
          assert.equal(log.lifecycles().ids.length, 0);
        } else {
          assert.deepEqual(s, want);
          assert.deepEqual(log.lifecycles(), whole.lifecycles());
        }
      }
      log.free();
      whole.free();
    });
  }
});

describe('checkpoints', () => {
  for (const path of CHECKPOINT_FIXTURES) {
    test(path, () => {
      const c = rlmeta.openCheckpoint(readFixture(path));
      assert.deepEqual(c.features.map(({ name, level, offset }) => ({ offset, name, level })), kafkaFeatureLevels(path));
      assert.equal(c.remoteLogMetadataVersion, null, 'stock Kafka 4.4.0 has no remote.log.metadata.version');
      assert.equal(c.complete, true);
      console.log(`${path}: ${c.features.length} feature levels match kafka-dump-log`);
    });
  }
  test('a truncated checkpoint throws with its byte offset', () => {
    const bytes = readFixture(CHECKPOINT_FIXTURES[0]);
    const e = (() => { try { rlmeta.openCheckpoint(bytes.subarray(0, bytes.length - 7)); } catch (e) { return e; } })();
    assert.ok(e instanceof rlmeta.RlmetaError, String(e));
    assert.equal(typeof e.offset, 'number');
  });
});
