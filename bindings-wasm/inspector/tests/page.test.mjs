// The inspector page in a real Chromium (Debian's headless shell, playwright-core), opened from
// disk with no server: every fixture under tests/fixtures loaded through the file picker and what
// the page shows checked against the Rust inspector's JSON for the same file (inspect --json),
// and the checkpoints against Kafka's own kafka-dump-log listing. Screenshots go to
// build/inspector-test/.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { CHECKPOINT_FIXTURES, SEGMENT_FIXTURES, dumpRecords, kafkaFeatureLevels, readFixture, rustInspection } from '../../tests/fixtures.mjs';
import { ARTIFACTS, ROOT, launch, load, openPage, renderers } from './browser.mjs';

const shotName = (path) => path.replace(/^tests\/fixtures\//, '').replace(/\/__remote_log_metadata-\d+\/0+\.log$/, '').replace(/[/]/g, '-');

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** Text of the summary value with this data-key. */
const dd = (page, box, key) => page.textContent(`${box} dd[data-key="${key}"]`);

/** The hex of a detail-panel hex dump (offset and ASCII columns dropped). */
const unhex = (text) => text.split('\n').map((l) => l.slice(8, 8 + 47).replace(/ /g, '')).join('');

async function shownCount(page) {
  return Number(await page.getAttribute('#count', 'data-shown'));
}

async function setFilter(page, selector, on) {
  await page.setChecked(selector, on);
}

/** The Summary, the table's count and the migration box account for every record as the Rust
 * inspector does: `rs.records` read, `rs.unreadRecords` in or after a corrupt batch, together
 * every row of the listing; the same null-key count everywhere. */
async function accountsForEveryRecord(page, rs, rows) {
  const unread = Number(rs.unreadRecords);
  const unlisted = Number(await page.$eval('#count', (c) => c.dataset.unlisted ?? '0'));
  assert.equal(Number(rs.records) + unread, rows + unlisted, 'inspect --json: read and unread are every row and every unlisted record');
  assert.equal(await dd(page, '#summary-list', 'records'), String(rs.records), 'summary: read');
  assert.equal(await dd(page, '#summary-list', 'unread'), String(unread), 'summary: in or after a corrupt batch');
  const count = await page.$eval('#count', (c) => ({ ...c.dataset }));
  assert.deepEqual([count.total, count.read, count.unread], [String(rows), String(rs.records), String(unread)], 'table count');
  assert.equal(await dd(page, '#migration-result', 'records'), String(rs.records), 'migration: read');
  assert.equal(await dd(page, '#migration-result', 'unread'), String(unread), 'migration: in or after');
  assert.equal(await dd(page, '#migration-result', 'nullKeyRecords'), String(rs.nullKeyRecords), 'migration: null keys');
  const level2 = await dd(page, '#migration-result', 'level2');
  if (Number(rs.nullKeyRecords) > 0) assert.match(level2, new RegExp(`^not yet: ${rs.nullKeyRecords} null-key records remain`));
  else assert.match(level2, /^ready/);
}

describe('segment fixtures', () => {
  for (const path of SEGMENT_FIXTURES) {
    test(path, async () => {
      const rust = rustInspection(path);
      const dump = rust.files[0];
      const want = dumpRecords(dump);
      const rs = rust.inspection.summary;
      const { page, problems, context } = await openPage(browser);
      try {
        assert.equal(await load(page, [path]), 'done', await page.textContent('#status'));

        // Rows and the summary.
        assert.equal(Number(await page.getAttribute('body', 'data-rows')), want.length);
        assert.equal(await shownCount(page), want.length);
        for (const k of ['records', 'nullKeyRecords', 'keyedRecords', 'tombstones', 'undecodable', 'fatalToOldBrokers', 'liveSegments', 'orphans', 'lostByCompaction']) {
          const v = k === 'lostByCompaction' ? rs.lostByCompaction.length : Number(rs[k]);
          assert.equal(await dd(page, '#summary-list', k), String(v), k);
        }
        assert.equal(await dd(page, '#summary-list', 'keptByCompaction'), `${rs.keptByCompaction} of ${rs.records}`);
        await accountsForEveryRecord(page, rs, want.length);
        const level = await page.getAttribute('#level', 'data-level');
        assert.equal(level, rs.level === null ? 'null' : String(rs.level.level));

        // Lifecycles: every segment, its state now and its marks.
        const rows = await page.$$eval('#lifecycle-table tbody tr[data-id]', (trs) => trs.map((tr) => ({ id: tr.dataset.id, now: tr.dataset.now, marks: tr.dataset.marks })));
        assert.deepEqual(rows.map((r) => r.id), rust.inspection.segments.map((s) => s.id));
        rust.inspection.segments.forEach((s, i) => {
          assert.equal(rows[i].now, s.now ?? 'gone', `state of ${s.id}`);
          assert.equal(rows[i].marks.includes('dangling'), s.startOffset === null);
          assert.equal(rows[i].marks.includes('stuck'), s.now === 'COPY_SEGMENT_STARTED' || s.now === 'DELETE_SEGMENT_STARTED');
        });
        assert.equal(await page.getAttribute('#chart', 'data-segments') ?? '0', String(rows.length));

        // The compaction preview at its default (compact, 30 days after the last record) is the
        // inspector's own "if compacted now".
        if (want.length > 0) {
          await page.waitForSelector('#preview-result[data-records-after]:not([data-pending])');
          assert.equal(await page.getAttribute('#preview-result', 'data-records-after'), String(rs.keptByCompaction));
          assert.equal(await page.getAttribute('#preview-result', 'data-lost'), String(rs.lostByCompaction.length));
          const loss = await page.textContent('#preview-result [data-key="loss"]');
          if (rs.lostByCompaction.length > 0) assert.match(loss, /^LOSS: .*live segment/);
          else assert.doesNotMatch(loss, /LOSS/);
          // Before the first record existed: nothing to keep.
          await page.$eval('#p-time', (s) => {
            s.value = s.min;
            s.dispatchEvent(new Event('input'));
          });
          await page.waitForFunction(() => {
            const box = document.getElementById('preview-result');
            return box.dataset.pending === undefined && Number(box.dataset.recordsBefore) <= 1;
          });
        }

        // Faults: every bad CRC and truncated tail of the listing, with its byte.
        const faults = await page.$$eval('#fault-list li', (lis) => lis.map((li) => ({ kind: li.dataset.kind, position: li.dataset.position, text: li.textContent })));
        for (const b of dump.batches.filter((b) => b.crcValid === false)) {
          const f = faults.find((f) => f.kind === 'corrupt' && f.position === String(b.position));
          assert.ok(f, `a bad CRC fault at byte ${b.position}: ${JSON.stringify(faults)}`);
          assert.match(f.text, new RegExp(`^bad CRC in .* at byte ${b.position}, offset ${b.baseOffset}`));
        }
        const tail = Number(dump.invalidBytesAtEnd);
        if (tail > 0) {
          const at = readFixture(path).length - tail;
          const f = faults.find((f) => f.kind === 'truncated');
          assert.ok(f, 'a truncated-tail fault');
          assert.equal(f.position, String(at));
          assert.match(f.text, new RegExp(`^truncated tail in .* at byte ${at}: .*${tail} invalid bytes at the end`));
        } else {
          assert.ok(!faults.some((f) => f.kind === 'truncated'));
        }

        // Filters.
        const count = (pred) => want.filter(pred).length;
        await setFilter(page, '#f-nullkeys', true);
        assert.equal(await shownCount(page), count((r) => r.key === null), 'null-key filter');
        await setFilter(page, '#f-nullkeys', false);
        await setFilter(page, '#f-tombstones', true);
        assert.equal(await shownCount(page), count((r) => r.value.tombstone), 'tombstone filter');
        await setFilter(page, '#f-tombstones', false);
        await setFilter(page, '#f-errors', true);
        assert.equal(await shownCount(page), count((r) => r.value.error || r.batch.crcValid === false), 'error filter');
        await setFilter(page, '#f-errors', false);
        await page.fill('#f-key', ':UPDATE');
        await page.waitForFunction((n) => document.getElementById('count').dataset.pending === undefined && Number(document.getElementById('count').dataset.shown) === n, count((r) => r.key?.includes(':UPDATE')), { timeout: 5000 });
        await page.fill('#f-key', '');
        await page.waitForFunction((n) => Number(document.getElementById('count').dataset.shown) === n, want.length);
        await page.selectOption('#sort', 'timestamp');
        await page.setChecked('#sort-desc', true);
        const newest = want.reduce((a, r) => (r.timestamp > a ? r.timestamp : a), want[0]?.timestamp ?? 0n);
        if (want.length) assert.equal(await page.textContent('#rows .tr:not([hidden]) span:nth-child(2)'), new Date(Number(newest)).toISOString().replace('T', ' ').replace('Z', ''));
        await page.selectOption('#sort', 'row');
        await page.setChecked('#sort-desc', false);

        // A record's detail panel: the first, a keyed one and a tombstone, if any.
        const picks = [0, want.findIndex((r) => r.keyFields), want.findIndex((r) => r.value.tombstone), want.findIndex((r) => r.value.error)].filter((i, k, a) => i >= 0 && a.indexOf(i) === k);
        for (const i of picks) {
          const r = want[i];
          await page.$eval('#scroller', (s, top) => { s.scrollTop = top; }, i * 24);
          await page.click(`#rows .tr[data-row="${i}"]`);
          await page.waitForSelector(`#detail[data-row="${i}"]`);
          assert.equal(await dd(page, '#detail', 'offset'), r.offset.toString());
          assert.equal(await dd(page, '#detail', 'key'), r.key ?? 'null (written before KIP-1266)');
          if (r.value.text) assert.equal(await page.textContent('#detail [data-key="kafka-text"]'), r.value.text);
          if (r.valueHex) assert.equal(unhex(await page.textContent('#detail [data-key="value-hex"]')), r.valueHex);
          if (r.value.tombstone) assert.match(await page.textContent('#detail [data-key="tombstone"]'), /Tombstone/);
          if (r.value.error) assert.equal(await page.textContent('#detail [data-key="error"]'), `Does not decode: ${r.value.error.message}`);
          if (r.keyFields) {
            const kf = await page.$$eval('#detail [data-key="key-fields"] td', (tds) => tds.map((td) => td.textContent));
            assert.deepEqual(kf, [r.keyFields.topicId, r.keyFields.topic, String(r.keyFields.partition), String(r.keyFields.endOffset), String(r.keyFields.brokerLeaderEpoch), String(r.keyFields.update)]);
          }
          if (r.value.record) {
            const decoded = JSON.parse(await page.textContent('#detail [data-key="value"]'));
            const id = r.value.record.remoteLogSegmentId?.id;
            if (id) assert.equal(decoded.remoteLogSegmentId.id, id);
          }
        }
        // The rows on screen: consecutive positions from the first, as many as fit (or all).
        const onScreen = await page.$$eval('#rows .tr', (trs) => trs.filter((t) => getComputedStyle(t).display !== 'none').map((t) => Number(t.dataset.pos)));
        const first = Number(await page.getAttribute('#rows', 'data-first'));
        const fit = Math.ceil(480 / 24) + 2; // the scroller's height over a row's, and one more each side
        const expected = Array.from({ length: Math.min(fit, want.length - first) }, (_, k) => first + k);
        assert.deepEqual(onScreen, expected, 'rows on screen');
        await page.screenshot({ path: join(ARTIFACTS, `${shotName(path)}.png`), fullPage: true });
        assert.deepEqual(problems, []);
        console.log(`${path}: ${want.length} rows, ${rows.length} lifecycles, ${faults.length} faults, ${picks.length} details as inspect --json says`);
      } finally {
        await context.close();
      }
    });
  }
});

describe('a corrupt batch mid-file, and 250-character topic names', () => {
  test('Summary, table and migration box account for every record as inspect --json; the filter row keeps its layout', async () => {
    const dir = join(ARTIFACTS, 'corrupt-long-topic/__remote_log_metadata-0');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '00000000000000000000.log');
    const topic = `t${'0123456789'.repeat(25)}`.slice(0, 250);
    execFileSync(process.env.RLMETA_GEN_SEGMENT ?? join(ROOT, 'target/release/gen_segment'), [file, '0.05', `--topic=${topic}`]);
    // The third batch's producer id changes: its CRC no longer matches, nothing else moves.
    const bytes = readFileSync(file);
    let at = 0;
    for (let b = 0; b < 2; b++) at += 12 + bytes.readInt32BE(at + 8);
    bytes[at + 50] ^= 0xff;
    writeFileSync(file, bytes);
    const path = relative(ROOT, file);
    const rust = rustInspection(path);
    const rs = rust.inspection.summary;
    const rows = dumpRecords(rust.files[0]).length;
    assert.ok(Number(rs.records) > 0 && Number(rs.records) < rows, `${rs.records} of ${rows} read`);
    assert.ok(Number(rs.nullKeyRecords) > 0);
    const { page, problems, context } = await openPage(browser);
    try {
      assert.equal(await load(page, [path]), 'done', await page.textContent('#status'));
      await accountsForEveryRecord(page, rs, rows);
      for (const k of ['nullKeyRecords', 'keyedRecords', 'tombstones']) assert.equal(await dd(page, '#summary-list', k), String(rs[k]), k);
      assert.match(await dd(page, '#summary-list', 'corrupt'), new RegExp(`at byte ${at} \\(offset 100\\)`));
      assert.match(await page.textContent('#count'), new RegExp(`^${rows} of ${rows} \\(${rs.records} read, ${rows - Number(rs.records)} in or after a corrupt batch\\)$`));

      // The filter row: every control inside the form, the first five on one line, the long
      // names cut (the full name in a title).
      await page.selectOption('#f-topic', topic);
      const form = await page.$eval('#filters', (f) => f.getBoundingClientRect().toJSON());
      const labels = await page.$$eval('#filters > label', (ls) => ls.map((l) => l.getBoundingClientRect().toJSON()));
      for (const l of labels) assert.ok(l.left >= form.left - 0.5 && l.right <= form.right + 0.5, `a filter outside the form: ${JSON.stringify(l)}`);
      assert.ok(labels.slice(0, 5).every((l) => Math.abs(l.top - labels[0].top) < 1), `the first filters wrap: ${JSON.stringify(labels.slice(0, 5))}`);
      for (const id of ['f-topic', 'f-partition']) {
        const w = await page.$eval(`#${id}`, (s) => s.getBoundingClientRect().width);
        assert.ok(w < form.width / 4, `#${id} is ${w}px of ${form.width}px`);
      }
      assert.equal(await page.getAttribute('#f-topic', 'title'), topic);
      const table = await page.$eval('#lifecycle-table', (t) => t.getBoundingClientRect().width);
      assert.ok(table <= form.width + 0.5, `the lifecycle table is ${table}px, wider than the page's ${form.width}px`);
      assert.equal(await page.getAttribute('#lifecycle-table tbody td:first-child', 'title'), `${topic}-0`);
      assert.equal(await page.getAttribute('#f-partition option:nth-child(2)', 'title'), `${topic}-0`);
      await page.screenshot({ path: join(ARTIFACTS, 'corrupt-long-topic.png'), fullPage: true });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});

describe('checkpoints and bad files', () => {
  test('checkpoints show their finalized feature levels, and what absent means', async () => {
    const { page, problems, context } = await openPage(browser);
    try {
      assert.equal(await load(page, CHECKPOINT_FIXTURES), 'done');
      for (const path of CHECKPOINT_FIXTURES) {
        const box = `.checkpoint[data-name="${basename(path)}"]`;
        const shown = await page.$$eval(`${box} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
        const kafka = kafkaFeatureLevels(path);
        assert.deepEqual(shown.filter((r) => r[0] !== 'kraft.version'), kafka.map((f) => [f.name, String(f.level), f.offset]));
        assert.match(await page.textContent(`${box} [data-key="remoteLogMetadataVersion"]`), /^remote\.log\.metadata\.version: absent\. .*level record.*level 0/);
      }
      await page.screenshot({ path: join(ARTIFACTS, 'checkpoints.png'), fullPage: true });
      assert.deepEqual(problems, []);
      console.log(`${CHECKPOINT_FIXTURES.length} checkpoints: feature levels as kafka-dump-log lists them`);
    } finally {
      await context.close();
    }
  });

  test('a file that is not a segment, and a truncated checkpoint, say what and where', async () => {
    const dir = join(ROOT, 'build/inspector-test');
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'These are my notes about the incident, not a Kafka segment file.\n');
    const cp = readFixture(CHECKPOINT_FIXTURES[0]);
    const cut = join(dir, '00000000000000000000-0000000000.checkpoint');
    writeFileSync(cut, cp.subarray(0, cp.length - 7));
    const { page, problems, context } = await openPage(browser);
    try {
      await page.setInputFiles('#pick', [notes, cut]);
      await page.waitForSelector('body[data-state="done"], body[data-state="error"]');
      assert.equal(await page.getAttribute('body', 'data-state'), 'done');
      const bad = await page.textContent('#fault-list li[data-kind="not-a-segment"]');
      assert.match(bad, /^notes\.txt is not a __remote_log_metadata segment file .*byte 0/);
      const cpText = await page.textContent('.checkpoint p.bad');
      assert.match(cpText, /^Not a readable KRaft checkpoint \(fault at byte \d+\): /);
      assert.equal(await page.getAttribute('body', 'data-rows'), '0');
      await page.screenshot({ path: join(ARTIFACTS, 'bad-files.png'), fullPage: true });
      assert.deepEqual(problems, []);
      console.log(`bad files: "${bad.slice(0, 70)}…", "${cpText.slice(0, 60)}…"`);
    } finally {
      await context.close();
    }
  });

  test('a file above 4 GiB is refused before any of it is read, naming it and its size', async () => {
    const dir = join(ROOT, 'build/inspector-test');
    const huge = join(dir, '00000000000000000000.log');
    rmSync(huge, { force: true });
    const fd = openSync(huge, 'w');
    try {
      ftruncateSync(fd, 2 ** 32 + 4096); // sparse: 4 GiB and a page, no block written
    } finally {
      closeSync(fd);
    }
    const { page, problems, context } = await openPage(browser);
    try {
      await page.setInputFiles('#pick', huge);
      await page.waitForSelector('body[data-state="done"], body[data-state="error"]');
      assert.equal(await page.getAttribute('body', 'data-state'), 'error');
      const text = await page.textContent('#fatal');
      assert.match(text, /^00000000000000000000\.log is 4096 MiB: the page's decoder \(32-bit WebAssembly\) reads files of up to 4 GiB\. /);
      assert.match(text, /rlmeta inspect --summary/);
      assert.deepEqual(problems, []);
      console.log(`above 4 GiB: "${text.slice(0, 90)}…"`);
    } finally {
      await context.close();
      rmSync(huge, { force: true });
    }
  });

  test('a drop of several files: a segment and a checkpoint together', async () => {
    const { page, problems, context } = await openPage(browser);
    try {
      const files = [SEGMENT_FIXTURES.find((p) => p.includes('kip1266-keyed')), CHECKPOINT_FIXTURES[0]];
      const payload = files.map((p) => ({ name: basename(p), b64: Buffer.from(readFixture(p)).toString('base64') }));
      const transfer = await page.evaluateHandle((items) => {
        const dt = new DataTransfer();
        for (const { name, b64 } of items) dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], name));
        return dt;
      }, payload);
      await page.dispatchEvent('#drop', 'drop', { dataTransfer: transfer });
      await page.waitForSelector('body[data-state="done"]');
      const rust = rustInspection(files[0]);
      assert.equal(await page.getAttribute('body', 'data-rows'), String(dumpRecords(rust.files[0]).length));
      const level = rust.inspection.summary.level;
      assert.equal(await page.getAttribute('#level', 'data-level'), level === null ? 'null' : String(level.level));
      assert.equal(await page.$$eval('.checkpoint', (c) => c.length), 1);
      assert.deepEqual(problems, []);
      console.log('drop: a segment and a checkpoint read together');
    } finally {
      await context.close();
    }
  });
});

describe('a partition directory', () => {
  test('a folder of three metadata partitions: one log at a time, chosen by partition', async () => {
    const dir = 'tests/fixtures/broker/remote_log_metadata';
    const { page, problems, context } = await openPage(browser);
    try {
      await page.setInputFiles('#pick-dir', join(ROOT, dir));
      await page.waitForSelector('body[data-state="done"]');
      const options = await page.$$eval('#group option', (os) => os.map((o) => o.value));
      assert.deepEqual(options, ['__remote_log_metadata-0', '__remote_log_metadata-1', '__remote_log_metadata-2']);
      for (const p of options) {
        await page.selectOption('#group', p);
        await page.waitForFunction(() => document.body.dataset.state === 'done');
        const rust = rustInspection(`${dir}/${p}/00000000000000000000.log`);
        assert.equal(await page.getAttribute('body', 'data-rows'), String(dumpRecords(rust.files[0]).length), p);
        assert.equal(await dd(page, '#summary-list', 'liveSegments'), String(rust.inspection.summary.liveSegments));
      }
      assert.deepEqual(problems, []);
      console.log(`folder: ${options.length} metadata partitions, each as inspect --json says`);
    } finally {
      await context.close();
    }
  });
});

describe('a million rows and more', () => {
  test('the table scrolls to the last of 1.5M rows past Chromium\'s element-height cap', async () => {
    const file = join(ROOT, 'build/inspector-test/00000000000000000000.log');
    const gen = process.env.RLMETA_GEN_SEGMENT ?? join(ROOT, 'target/release/gen_segment');
    execFileSync(gen, [file, '130']);
    const inspect = process.env.RLMETA_INSPECT ?? join(ROOT, 'target/release/inspect');
    // The listing of 1.5M records is too long for a JS string: the summary lines only.
    const text = execFileSync('sh', ['-c', '"$0" "$1" | tail -n 8', inspect, file], { maxBuffer: 1 << 20 }).toString();
    const rust = { records: Number(text.match(/records: ([\d,]+) \(/)[1].replaceAll(',', '')) }; // 1,500,000
    const { page, problems, context } = await openPage(browser, { width: 1500, height: 900 });
    try {
      assert.equal(await load(page, ['build/inspector-test/00000000000000000000.log'], 180000), 'done');
      const n = Number(await page.getAttribute('body', 'data-rows'));
      assert.equal(n, rust.records);
      assert.ok(n * 24 > 33554428, `${n} rows of 24 px pass Chromium's cap`);
      const spacer = await page.$eval('#spacer', (s) => s.getBoundingClientRect().height);
      assert.ok(spacer <= 8000000, `spacer ${spacer} px`);
      // The bottom: the last row is the last record.
      await page.$eval('#scroller', (s) => { s.scrollTop = s.scrollHeight; });
      await page.waitForFunction((n) => [...document.querySelectorAll('#rows .tr:not([hidden])')].some((r) => Number(r.dataset.pos) === n - 1), n);
      const lastOffset = await page.$eval(`#rows .tr[data-pos="${n - 1}"] span`, (s) => s.textContent);
      assert.equal(lastOffset, String(n - 1));
      // The middle. The window still shows the bottom until the scroll's frame renders, so wait for
      // it to move off the bottom's first row before reading where it landed.
      const bottomFirst = await page.getAttribute('#rows', 'data-first');
      await page.$eval('#scroller', (s) => { s.scrollTop = (s.scrollHeight - s.clientHeight) / 2; });
      await page.waitForFunction((b) => document.getElementById('rows').dataset.first !== b, bottomFirst);
      const first = Number(await page.getAttribute('#rows', 'data-first'));
      assert.ok(Math.abs(first - n / 2) < 100, `middle row ${first} of ${n}`);
      await page.screenshot({ path: join(ARTIFACTS, 'million-rows.png') });
      assert.deepEqual(problems, []);
      console.log(`${n} rows: the last row reached (offset ${lastOffset}), the middle at row ${first}, spacer ${spacer} px`);
    } finally {
      await context.close();
    }
  });
});


// A file much larger than the slices the workers read (8 MiB), opened with the page's lean limit
// lowered to 32 MiB (?fullMiB=32): exact counts, the views read back from the file, the banner
// saying what is not computed, and the renderer's memory (VmHWM of its process: the workers'
// WebAssembly memories, every thread's heap) grown by less than 3 times the file's size (about
// 1.4-2.2 times here: 35 bytes of columns per record on the page, the batch and segment tables in the
// worker, the slices read). A page that reads the file whole holds it at least 4 times (an
// ArrayBuffer per worker, each worker's module's copy): the page before issue 33 grew by 9 times
// (1.2 GB) on this file.
/** How many records of a segment file name segment `id`, by the Node build over the whole file. */
async function segmentRecordsNode(file, id) {
  const rlmeta = await import(pathToFileURL(join(ROOT, 'build/pkg/index.mjs')).href);
  const log = rlmeta.openSegmentLog();
  try {
    log.addFile(file, readFileSync(file));
    log.index();
    const i = log.tables().segmentIds.indexOf(id);
    return log.columns(0, log.rows()).segmentOf.filter((s) => s === i).length;
  } finally {
    log.free();
  }
}

describe('a file much larger than a slice', () => {
  test('128 MiB read in slices: exact counts, views from byte ranges, lean banner, memory below 3 times the file', async () => {
    const dir = join(ROOT, 'build/inspector-test/large');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '00000000000000000000.log');
    const gen = process.env.RLMETA_GEN_SEGMENT ?? join(ROOT, 'target/release/gen_segment');
    execFileSync(gen, [file, '128']);
    const size = statSync(file).size;
    const inspect = process.env.RLMETA_INSPECT ?? join(ROOT, 'target/release/inspect');
    const rust = JSON.parse(execFileSync(inspect, ['--json', '--summary', file], { maxBuffer: 1 << 24 }).toString()).inspection.summary;
    // A browser of its own: its renderer's peak is this page's alone.
    const own = await launch();
    try {
      const { page, problems } = await openPage(own, { width: 1500, height: 900, query: '?fullMiB=32' });
      const mine = renderers();
      assert.equal(mine.length, 1, `one renderer: ${JSON.stringify(mine)}`);
      const baseline = mine[0].peak;
      await page.setInputFiles('#pick', file);
      await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 120000 });
      assert.equal(await page.getAttribute('body', 'data-state'), 'done', await page.textContent('#status'));
      const n = Number(await page.getAttribute('body', 'data-rows'));
      assert.equal(n, rust.records, 'every record is a row');
      assert.equal(Number(await page.getAttribute('#count', 'data-total')), rust.records);
      for (const key of ['records', 'nullKeyRecords', 'keyedRecords', 'tombstones', 'undecodable', 'fatalToOldBrokers', 'liveSegments', 'orphans']) {
        assert.equal(await dd(page, '#summary-list', key), String(rust[key]), key);
      }
      assert.equal(rust.unreadRecords, 0);
      // What a lean replay does not compute, said where it would be and in the banner.
      assert.match(await page.textContent('#large'), /^These segment files are 128 MiB: .*does not compute segment lifecycles, what compaction would keep \(summary\) or the compaction preview/);
      assert.equal(await page.isVisible('#large'), true);
      assert.match(await dd(page, '#summary-list', 'keptByCompaction'), /^not computed/);
      assert.match(await dd(page, '#summary-list', 'lostByCompaction'), /^not computed/);
      assert.equal(await page.getAttribute('#chart', 'data-not-computed'), '1');
      assert.equal(await page.getAttribute('#preview-result', 'data-not-computed'), '1');
      // The last row's details and key, read back from its batch's bytes near the file's end.
      await page.$eval('#scroller', (s) => { s.scrollTop = s.scrollHeight; });
      const last = `#rows .tr[data-row="${n - 1}"]`;
      await page.waitForSelector(last);
      // The details read the row's batch back from the file: under a loaded machine (a cold make
      // test ran an aarch64 broker under qemu beside it) they once took more than Playwright's
      // default 30 s, so the wait is the load phase's 120 s.
      await page.click(last);
      await page.waitForSelector(`#detail[data-row="${n - 1}"]`, { timeout: 120000 });
      assert.equal(await page.textContent('#detail dd[data-key="offset"]'), String(n - 1));
      assert.match(await page.textContent('#detail dd[data-key="batch"]'), /batch at byte \d{9}/);
      const value = JSON.parse(await page.textContent('#detail pre[data-key="value"]'));
      // The segment filter (the ids stay in the worker): the last record's segment's records, as
      // the Node build counts them over the whole file.
      const id = value.remoteLogSegmentId.id;
      await page.fill('#f-segment', id);
      await page.waitForFunction(() => document.getElementById('count').dataset.shown !== document.getElementById('count').dataset.total && !document.getElementById('count').dataset.pending);
      assert.equal(await shownCount(page), await segmentRecordsNode(file, id), `records of segment ${id}`);
      const after = renderers().find((r) => r.pid === mine[0].pid);
      const grown = after.peak - baseline;
      console.log(`${n} rows of a ${size}-byte file read in slices (lean); renderer peak ${(after.peak / 2 ** 20).toFixed(0)} MiB, grown by ${(grown / 2 ** 20).toFixed(0)} MiB from ${(baseline / 2 ** 20).toFixed(0)} MiB`);
      assert.ok(grown < 3 * size, `the renderer grew by ${grown} bytes, a ${size}-byte file`);
      assert.deepEqual(problems, []);
    } finally {
      await own.close();
    }
  });
});
