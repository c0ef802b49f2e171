// The inspector page and the Rust inspector's JSON listing (inspect --json) against references
// that share no rlmeta code, generated in the same test run from Kafka 4.4.0's jars
// (`make inspector-kafka-ref`, into RLMETA_KAFKA_REF):
//   rlmd.txt     Kafka's DumpLogSegments --remote-log-metadata-decoder: every batch header, every
//                record header, every value as Kafka's serde prints it (or its error)
//   hex.txt      the same tool with --deep-iteration --print-data-log and a hex decoder for keys and
//                values: every key and value byte as Kafka's record reader gave it
//   replay.json  each file read with Kafka's FileRecords and replayed into Kafka's own
//                RemotePartitionMetadataStore (tests/interop FileReplay): the segments it lists
// For every segment file under tests/fixtures, every field of every batch and record: the JSON
// listing's, every row of the page's table and every record's detail panel; the page's counts
// against Kafka's dump and its live segments against Kafka's store. What Kafka 4.4.0 cannot read
// (KIP-1266 version-1 values, tombstones) is the one difference by design, checked as such and
// counted in the summary line.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SEGMENT_FIXTURES, rustInspection } from '../../tests/fixtures.mjs';
import { launch, load, openPage } from './browser.mjs';

const REF = process.env.RLMETA_KAFKA_REF;
if (!REF) throw new Error('RLMETA_KAFKA_REF is not set: run `make inspector-test` (it makes the Kafka references first)');
assert.ok(SEGMENT_FIXTURES.length >= 10, `segment fixtures: ${SEGMENT_FIXTURES.join(', ')}`);

/** The `name: value` pairs of a dump line's head (no value there has a space). */
function pairs(text) {
  const t = text.split(' ');
  const out = [];
  for (let i = 0; i + 1 < t.length; i += 2) {
    assert.ok(t[i].endsWith(':'), `not a "name: value" pair: ${t[i]} in ${text}`);
    out.push([t[i].slice(0, -1), t[i + 1]]);
  }
  return out;
}

const BATCH_FIELDS = ['baseOffset', 'lastOffset', 'count', 'baseSequence', 'lastSequence', 'producerId', 'producerEpoch', 'partitionLeaderEpoch',
  'isTransactional', 'isControl', 'deleteHorizonMs', 'position', 'TIME', 'size', 'magic', 'compresscodec', 'crc', 'isvalid'];

/** One DumpLogSegments output of several files: file path -> {batches, invalidBytesAtEnd}. */
function parseDump(text) {
  const files = new Map();
  let f;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m;
    if ((m = /^Dumping (.*)$/.exec(line))) {
      f = { batches: [], invalidBytesAtEnd: 0, logStartOffset: null };
      files.set(m[1], f);
    } else if ((m = /^Log starting offset: (\d+)$/.exec(line))) {
      f.logStartOffset = m[1];
    } else if (line.startsWith('baseOffset: ')) {
      const p = pairs(line);
      const b = { records: [] };
      p.forEach(([k, v], i) => {
        if (BATCH_FIELDS[i] === 'TIME') {
          // the label is the timestamp type (CreateTime or LogAppendTime), the value the batch's max
          b.timestampType = k;
          b.maxTimestamp = v;
        } else {
          assert.equal(k, BATCH_FIELDS[i], `batch field ${i} in ${line}`);
          b[k] = v;
        }
      });
      assert.equal(p.length, BATCH_FIELDS.length, line);
      f.batches.push(b);
    } else if (line.startsWith('| offset: ')) {
      m = /^\| (.*?) headerKeys: \[(.*?)\](?: key: (\S+))?(?: payload: (.*))?$/.exec(line);
      assert.ok(m, `a record line: ${line}`);
      const p = pairs(m[1]);
      assert.deepEqual(p.map(([k]) => k).filter((k, i) => i !== 1), ['offset', 'keySize', 'valueSize', 'sequence'], line);
      const r = { offset: p[0][1], timestampType: p[1][0], timestamp: p[1][1], keySize: p[2][1], valueSize: p[3][1], sequence: p[4][1],
        headerKeys: m[2] === '' ? [] : m[2].split(','), key: m[3] ?? null, payload: m[4] ?? null };
      f.batches.at(-1).records.push(r);
    } else if ((m = /^Found (\d+) invalid bytes at the end of /.exec(line))) {
      f.invalidBytesAtEnd = Number(m[1]);
    } else {
      assert.fail(`a line this test does not know from DumpLogSegments: ${line}`);
    }
  }
  return files;
}

const hexOf = (v) => {
  assert.ok(v === null || v.startsWith('hex:'), `HexDecoder output: ${v}`);
  return v === null ? null : v.slice(4);
};
const utf8 = (hex) => Buffer.from(hex, 'hex').toString('utf8');
const isoOf = (ms) => new Date(Number(ms)).toISOString().replace('T', ' ').replace('Z', '');
/** Kafka's payload for a value its serde could not read: `Error at offset N, skipping. <why>`. */
const kafkaFailed = (payload) => payload !== null && /^Error at offset \d+, skipping\. /.test(payload);
const KINDS = [['RemoteLogSegmentMetadataUpdate{', 'update'], ['RemoteLogSegmentMetadataSnapshot{', 'snapshot'],
  ['RemoteLogSegmentMetadata{', 'segment'], ['RemotePartitionDeleteMetadata{', 'partition delete']];

/** Every file's records as Kafka read them: the two dumps merged, checked to agree. */
function kafkaFiles() {
  const rlmd = parseDump(readFileSync(join(REF, 'rlmd.txt'), 'utf8'));
  const hex = parseDump(readFileSync(join(REF, 'hex.txt'), 'utf8'));
  const replay = JSON.parse(readFileSync(join(REF, 'replay.json'), 'utf8'));
  assert.deepEqual([...rlmd.keys()].sort(), [...SEGMENT_FIXTURES].sort(), 'Kafka dumped every fixture segment file');
  assert.deepEqual([...hex.keys()].sort(), [...SEGMENT_FIXTURES].sort());
  const out = new Map();
  for (const path of SEGMENT_FIXTURES) {
    const a = rlmd.get(path);
    const b = hex.get(path);
    assert.equal(a.batches.length, b.batches.length, path);
    a.batches.forEach((ba, i) => {
      const bb = b.batches[i];
      const { records: ra, ...ha } = ba;
      const { records: rb, ...hb } = bb;
      assert.deepEqual(ha, hb, `${path}: batch ${i} reads the same in both dumps`);
      assert.equal(ra.length, rb.length);
      ra.forEach((r, k) => {
        const h = rb[k];
        assert.deepEqual({ ...r, key: null, payload: null }, { ...h, key: null, payload: null }, `${path}: record ${r.offset}`);
        r.keyHex = hexOf(h.key);
        r.valueHex = hexOf(h.payload);
        r.text = r.payload;
      });
    });
    assert.equal(a.invalidBytesAtEnd, b.invalidBytesAtEnd);
    assert.ok(replay[path], `FileReplay replayed ${path}`);
    out.set(path, { ...a, replay: replay[path] });
  }
  return out;
}

const KAFKA = kafkaFiles();
const shortName = (path) => path.replace(/^tests\/fixtures\//, '').replace(/\/__remote.*$/, '');
const totals = { stoppedAtBadCrc: [], files: 0, batches: 0, records: 0, fields: 0, rows: 0, details: 0, unreadableByKafka: 0, liveCompared: 0, liveNotComparable: [] };

/** Compares and counts one field. */
function same(actual, expected, what) {
  assert.equal(String(actual), String(expected), what);
  totals.fields++;
}

describe('the JSON listing (inspect --json) against Kafka\'s DumpLogSegments', () => {
  for (const path of SEGMENT_FIXTURES) {
    test(path, () => {
      const kafka = KAFKA.get(path);
      const ours = rustInspection(path).files[0];
      same(ours.logStartOffset, kafka.logStartOffset, 'log start offset');
      same(ours.batches.length, kafka.batches.length, 'batches');
      same(ours.invalidBytesAtEnd, kafka.invalidBytesAtEnd, 'invalid bytes at the end');
      kafka.batches.forEach((k, i) => {
        const b = ours.batches[i];
        const at = `${path} batch ${i}`;
        for (const f of ['baseOffset', 'lastOffset', 'count', 'baseSequence', 'lastSequence', 'producerId', 'producerEpoch', 'partitionLeaderEpoch',
          'isTransactional', 'isControl', 'position', 'size', 'magic', 'crc', 'maxTimestamp', 'timestampType']) same(b[f], k[f], `${at} ${f}`);
        same(b.deleteHorizonMs === null ? 'OptionalLong.empty' : `OptionalLong[${b.deleteHorizonMs}]`, k.deleteHorizonMs, `${at} deleteHorizonMs`);
        same(b.compression, k.compresscodec, `${at} compression`);
        same(b.crcValid, k.isvalid, `${at} crc valid`);
        same(b.records.length, k.records.length, `${at} records`);
        k.records.forEach((kr, j) => {
          const r = b.records[j];
          const rat = `${path} offset ${kr.offset}`;
          for (const f of ['offset', 'timestamp', 'keySize', 'valueSize', 'sequence']) same(r[f], kr[f], `${rat} ${f}`);
          same(b.timestampType, kr.timestampType, `${rat} timestamp type`);
          assert.deepEqual(r.headers.map((h) => h.key), kr.headerKeys, `${rat} header keys`);
          same(r.key === null ? 'null' : Buffer.from(r.key, 'utf8').toString('hex'), kr.keyHex ?? 'null', `${rat} key bytes`);
          same(r.valueHex ?? 'null', kr.valueHex ?? 'null', `${rat} value bytes`);
          if (kr.valueHex === null) {
            assert.ok(r.value.tombstone, `${rat}: a tombstone`);
            totals.unreadableByKafka++;
          } else if (kafkaFailed(kr.text)) {
            // By design: Kafka 4.4.0 cannot read a KIP-1266 version-1 value or a level record;
            // rlmeta reads them. Anything else Kafka fails on, rlmeta must fail on too.
            if (r.value.levelRecord === undefined && r.value.error === undefined) {
              assert.equal(String(r.value.version), '1', `${rat}: Kafka failed (${kr.text}) on a value rlmeta reads as version ${r.value.version}`);
            }
            totals.unreadableByKafka++;
          } else {
            same(r.value.text, kr.text, `${rat} Kafka's toString of the value`);
          }
          totals.records++;
        });
        totals.batches++;
      });
      totals.files++;
    });
  }
});

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
  console.log(`kafka references: ${totals.files} files, ${totals.batches} batches, ${totals.records} records of the JSON listing and ${totals.rows} page rows, `
    + `${totals.details} detail panels, ${totals.fields} fields equal to Kafka 4.4.0's DumpLogSegments; live segments as Kafka's store lists them in ${totals.liveCompared} files; `
    + `${totals.unreadableByKafka} records Kafka 4.4.0 cannot read (version-1 values, tombstones: by design); `
    + `summary counts end at the first bad CRC (as a broker's replay): ${totals.stoppedAtBadCrc.join('; ') || 'none'}; `
    + `skipped (not comparable): ${totals.liveNotComparable.length ? totals.liveNotComparable.join('; ') : 'none'}`);
});

/**
 * Every table row's cells and every record's detail panel, read in the page in one go (a round
 * trip per row costs more than the rest of the test): each row scrolled to and clicked as a user
 * does, its key text and its panel waited for.
 */
function readAllRows(page, n) {
  return page.evaluate(async (n) => {
    const until = async (pred, what) => {
      for (let t = 0; t < 2000; t++) {
        const v = pred();
        if (v) return v;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error(`timed out waiting for ${what}`);
    };
    const scroller = document.getElementById('scroller');
    const detail = document.getElementById('detail');
    const out = [];
    for (let i = 0; i < n; i++) {
      scroller.scrollTop = i * 24;
      scroller.dispatchEvent(new Event('scroll'));
      const row = await until(() => {
        const r = document.querySelector(`#rows .tr[data-row="${i}"]`);
        return r && r.children[2].textContent !== '\u2026' ? r : null;
      }, `row ${i}`);
      const cells = [...row.children].map((c) => c.textContent);
      const markers = [...row.querySelectorAll('.m')].map((m) => m.textContent);
      row.children[0].click();
      await until(() => detail.dataset.row === String(i), `the detail panel of row ${i}`);
      const get = (k) => detail.querySelector(`[data-key="${k}"]`)?.textContent ?? null;
      const unhex = (t) => t?.split('\n').map((l) => l.slice(8, 8 + 47).replace(/ /g, '')).join('') ?? null;
      const heading = [...detail.querySelectorAll('h4')].map((h) => h.textContent).find((t) => t.startsWith('Decoded value')) ?? '';
      out.push({
        cells, markers, detail: {
          offset: get('offset'), timestamp: get('timestamp'), batch: get('batch'), producer: get('producer'), key: get('key'),
          keyHex: unhex(get('key-hex')), valueHex: unhex(get('value-hex')), kafkaText: get('kafka-text'), kafkaError: get('kafka-error'),
          tombstone: get('tombstone'), level: get('level'), valueVersion: /version (\d+)\)$/.exec(heading)?.[1] ?? null,
          headers: [...detail.querySelectorAll('[data-key="headers"] th')].map((th) => th.textContent),
        },
      });
    }
    return out;
  }, n);
}

describe('the page against Kafka\'s DumpLogSegments and Kafka\'s store', () => {
  // One page for every file, each loaded over the last as a user would (it is the page's own reset
  // that is used, and a fresh page per file costs more than the checks).
  let shared;
  before(async () => {
    shared = await openPage(browser);
  });
  after(async () => {
    assert.deepEqual(shared?.problems, []);
    await shared?.context.close();
  });
  for (const path of SEGMENT_FIXTURES) {
    test(path, async () => {
      const kafka = KAFKA.get(path);
      const records = kafka.batches.flatMap((b) => b.records.map((r) => ({ ...r, batch: b })));
      const { page, problems } = shared;
      // Nothing of the last file may pass for this one: no selected row, no 'done' until it loaded.
      await page.evaluate(() => {
        delete document.getElementById('detail').dataset.row;
        document.body.dataset.state = 'reloading';
      });
      assert.equal(await load(page, [path]), 'done', await page.textContent('#status'));
      same(await page.getAttribute('body', 'data-rows'), records.length, 'rows');
      // Counts, from Kafka's record headers and Kafka's serde. The summary is of the log a broker
      // replays: it ends at the first batch whose CRC is wrong (a broker recovering its log, and
      // a consumer checking CRCs, stop there); the table shows every record, as the dump does.
      const bad = kafka.batches.findIndex((b) => b.isvalid !== 'true');
      const replayed = kafka.batches.slice(0, bad < 0 ? undefined : bad).flatMap((b) => b.records);
      const dd = (k) => page.textContent(`#summary-list dd[data-key="${k}"]`);
      same(await dd('records'), replayed.length, 'records');
      same(await dd('nullKeyRecords'), replayed.filter((r) => r.keySize === '-1').length, 'null-key records');
      same(await dd('keyedRecords'), replayed.filter((r) => r.keySize !== '-1' && r.valueSize !== '-1').length, 'keyed records');
      same(await dd('tombstones'), replayed.filter((r) => r.keySize !== '-1' && r.valueSize === '-1').length, 'tombstones');
      same(await dd('fatalToOldBrokers'), replayed.filter((r) => r.valueHex === null || kafkaFailed(r.text)).length, 'records a 4.4.0 broker cannot read');
      same(kafka.replay.records, replayed.length, 'records Kafka\'s reader replayed into its store');
      if (bad >= 0) totals.stoppedAtBadCrc.push(`${shortName(path)} at byte ${kafka.batches[bad].position}`);

      // Live segments: Kafka's own store, fed by Kafka's own reader, where Kafka can read the log.
      const rp = kafka.replay;
      if (rp.unreadableByKafka === 0 && rp.records > 0) {
        same(await dd('liveSegments'), rp.liveSegments, 'live segments (Kafka\'s store)');
        const live = await page.$$eval('#lifecycle-table tbody tr[data-id]', (trs) => trs.filter((tr) => tr.dataset.now !== 'gone').map((tr) => `${tr.dataset.id} ${tr.dataset.now}`));
        const kafkaLive = rp.partitions.flatMap((p) => p.segments.map((s) => `${s.id} ${s.state}`));
        assert.deepEqual([...live].sort(), [...kafkaLive].sort(), 'live segments and their states, as Kafka\'s store lists them');
        totals.fields += kafkaLive.length;
        totals.liveCompared++;
      } else {
        totals.liveNotComparable.push(`${shortName(path)}: live segments (Kafka 4.4.0 cannot read ${rp.unreadableByKafka} of its ${rp.records} records)`);
      }

      // Every row of the table and every record's detail panel.
      const shown = await readAllRows(page, records.length);
      for (let i = 0; i < records.length; i++) {
        const k = records[i];
        const b = k.batch;
        const at = `${path} offset ${k.offset}`;
        const { cells, markers, detail } = shown[i];
        const [offset, time, key, kind, stateCell, partition, keyB, valueB] = cells;
        same(offset, k.offset, `${at} row offset`);
        same(time, isoOf(k.timestamp), `${at} row time`);
        same(key, k.keyHex === null ? 'null' : utf8(k.keyHex), `${at} row key`);
        same(keyB, k.keySize, `${at} row key size`);
        same(valueB, k.valueSize, `${at} row value size`);
        same(markers.includes('tombstone'), k.valueHex === null, `${at} tombstone marker`);
        same(markers.includes('null key'), k.keyHex === null, `${at} null-key marker`);
        same(markers.includes('bad CRC'), b.isvalid === 'false', `${at} bad-CRC marker`);
        same(markers.includes('headers'), k.headerKeys.length > 0, `${at} headers marker`);
        if (k.text !== null && !kafkaFailed(k.text)) {
          const kindName = KINDS.find(([p]) => k.text.startsWith(p));
          assert.ok(kindName, `${at}: a record class Kafka printed: ${k.text}`);
          same(kind, kindName[1], `${at} row kind`);
          const st = /, state=(\w+)/.exec(k.text)?.[1] ?? /[{ ,]state=(\w+)/.exec(k.text)?.[1];
          if (st) same(stateCell, st, `${at} row state`);
          const tp = /topicIdPartition=[A-Za-z0-9_-]+:([^,}]+)/.exec(k.text)?.[1];
          if (tp) same(partition, tp, `${at} row partition`);
        }

        same(detail.offset, k.offset, `${at} detail offset`);
        same(detail.timestamp, `${k.timestamp} (${isoOf(k.timestamp)} UTC, ${k.timestampType})`, `${at} detail timestamp`);
        same(detail.batch, `${path.split('/').pop()}, batch at byte ${b.position} (base offset ${b.baseOffset}, ${b.compresscodec}, CRC ${b.isvalid === 'true' ? 'valid' : 'WRONG'})`, `${at} detail batch`);
        same(detail.producer, `id ${b.producerId}, epoch ${b.producerEpoch}, sequence ${k.sequence}, leader epoch ${b.partitionLeaderEpoch}${b.isTransactional === 'true' ? ', transactional' : ''}`, `${at} detail producer`);
        same(detail.key, k.keyHex === null ? 'null (written before KIP-1266)' : utf8(k.keyHex), `${at} detail key`);
        same(detail.keyHex ?? 'null', k.keyHex ?? 'null', `${at} detail key hex`);
        same(detail.valueHex ?? 'null', k.valueHex ?? 'null', `${at} detail value hex`);
        assert.deepEqual(detail.headers, k.headerKeys, `${at} detail headers`);
        same(detail.tombstone !== null, k.valueHex === null, `${at} detail tombstone note`);
        if (k.valueHex === null) {
          assert.equal(detail.kafkaText, null, `${at}: no Kafka text for a tombstone`);
        } else if (kafkaFailed(k.text)) {
          // By design: Kafka 4.4.0 cannot read a KIP-1266 version-1 value or a level record; the
          // page decodes them (a level record shows its level note). Otherwise it shows an error.
          assert.ok(detail.valueVersion === '1' || detail.level !== null || detail.kafkaError !== null,
            `${at}: Kafka failed (${k.text}); the page shows ${JSON.stringify(detail)}`);
        } else {
          same(detail.kafkaText, k.text, `${at} detail Kafka toString`);
          assert.equal(detail.kafkaError, null, `${at}: no Kafka error where Kafka reads the value`);
        }
        totals.rows++;
        totals.details++;
      }
      assert.deepEqual(problems, []);
      console.log(`${path}: ${records.length} rows and detail panels as Kafka's DumpLogSegments reads them`);
    });
  }
});
