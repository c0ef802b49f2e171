// bench-inspector: how long the page takes over a large segment file, in headless Chromium, and
// how much memory its renderer takes.
//
// Generates build/bench-inspector/00000000000000000000.log (gen_segment, INSPECTOR_MIB MiB,
// default 100; pre-KIP-1266 null-key records of 8 partitions), then RUNS times: a fresh browser
// and page opened from disk, the file given to the file input (what a drop does: the page's clock
// starts when it gets the File), and the page's own times read back: first rows shown, every row
// indexed, summary complete (counts, level; lifecycles unless the replay is lean: files above
// the page's 128 MiB limit), the first compaction preview (not computed when lean); and the peak
// resident memory of the page's renderer process (VmHWM: its workers and their WebAssembly
// memories included; the page's baseline before the file is given, apart). Also the module and
// page sizes, and the machine's load average (other work on the machine slows every number).
// Not a test: it prints numbers (and writes them to build/bench-inspector/result.json).

import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { PAGE, ROOT, launch, openPage, renderers } from '../tests/browser.mjs';

const RUNS = Number(process.env.RUNS ?? 3);
const MB = process.env.INSPECTOR_MIB ?? process.env.MB ?? '100';
/** The page's limit above which its replay is lean (main.js LEAN_BYTES). */
const LEAN_BYTES = 128 << 20;
const SLICE = 8 << 20;
const dir = join(ROOT, 'build/bench-inspector');
mkdirSync(dir, { recursive: true });
const file = join(dir, '00000000000000000000.log');
console.log(execFileSync(process.env.RLMETA_GEN_SEGMENT ?? join(ROOT, 'target/release/gen_segment'), [file, MB]).toString().trim());

const size = (p) => {
  const b = readFileSync(p);
  return { bytes: b.length, gzip: gzipSync(b, { level: 9 }).length };
};
const sizes = {
  module: size(join(ROOT, 'build/pkg/rlmeta_wasm_bg.wasm')),
  glue: size(join(ROOT, 'build/pkg/rlmeta_wasm.js')),
  page: size(PAGE),
};

// The same stages in Node (the nodejs build of the same module), as the page's workers run them
// (the file read in slices, the columns taken and forgotten), timed in CPU time: what the page's
// workers need when they have a core each, whatever else the machine runs.
const rlmeta = await import(pathToFileURL(join(ROOT, 'build/pkg/index.mjs')).href);
const cpu = {};
const fileBytes = statSync(file).size;
const lean = fileBytes > LEAN_BYTES;
{
  const fd = openSync(file, 'r');
  const slice = Buffer.alloc(SLICE);
  const eachSlice = (f) => {
    for (let pos = 0; pos < fileBytes;) {
      const n = readSync(fd, slice, 0, Math.min(SLICE, fileBytes - pos), pos);
      f(slice.subarray(0, n));
      pos += n;
    }
  };
  let t = process.cpuUsage();
  const lap = (k) => {
    const d = process.cpuUsage(t);
    cpu[k] = Math.round((d.user + d.system) / 1000);
    t = process.cpuUsage();
  };
  const log = rlmeta.openSegmentLog();
  log.beginFile(file);
  let posted = 0;
  let last;
  eachSlice((bytes) => {
    log.push(bytes);
    const c = log.columns(posted, log.rows());
    if (c.timestamps.length) last = c.timestamps[c.timestamps.length - 1];
    posted = log.rows();
    log.forgetColumns();
  });
  log.endFile();
  log.tables({ segmentIds: false });
  lap('indexMs');
  const replay = rlmeta.openSegmentLog();
  replay.beginReplay(lean, fileBytes);
  replay.replayFile(fileBytes);
  eachSlice((bytes) => replay.replayPush(bytes));
  replay.endReplay();
  replay.summary();
  replay.lifecycles();
  lap('replayMs');
  if (!lean) {
    const ranges = log.allRanges(SLICE);
    for (let i = 0; i < ranges.length; i += 3) {
      const w = Buffer.alloc(ranges[i + 2] - ranges[i + 1]);
      readSync(fd, w, 0, w.length, ranges[i + 1]);
      log.addWindow(ranges[i], ranges[i + 1], w);
    }
    log.preview({ cleanupPolicy: 'compact', segmentRecords: 1000 }, last + 30n * 86400000n);
    log.clearWindows();
    lap('previewMs');
  }
  closeSync(fd);
  console.log(`cpu time in Node${lean ? ' (lean replay, no preview)' : ''}: ${JSON.stringify(cpu)}`);
}

const MiB = (n) => Math.round(n / 2 ** 20);
const runs = [];
for (let i = 0; i < RUNS; i++) {
  // A browser per run: its one renderer's peak (VmHWM) is this run's alone.
  const browser = await launch();
  try {
    const { page, problems } = await openPage(browser);
    const [renderer] = renderers();
    const wall = Date.now();
    let crashed = false;
    page.on('crash', () => { crashed = true; });
    await page.setInputFiles('#pick', file);
    try {
      await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 300000 });
    } catch (e) {
      const where = crashed ? 'the page crashed' : JSON.stringify(await page.evaluate(() => ({ ...document.body.dataset, status: document.getElementById('status').textContent })));
      throw new Error(`run ${i + 1}: not done after 300 s: ${where}; renderers ${JSON.stringify(renderers())}`, { cause: e });
    }
    await page.waitForSelector('#preview-result[data-ms], #preview-result[data-not-computed]', { timeout: 600000 });
    const d = await page.evaluate(() => ({ ...document.body.dataset, previewMs: document.getElementById('preview-result').dataset.ms }));
    if (d.state !== 'done' || problems.length) throw new Error(`run ${i}: ${d.state} ${problems.join('; ')}`);
    const peak = renderers().find((r) => r.pid === renderer.pid).peak;
    runs.push({
      rows: Number(d.rows), firstRowsMs: Number(d.firstRowsMs), indexedMs: Number(d.indexedMs),
      summarizeMs: Number(d.summarizeMs), replayedMs: Number(d.replayedMs), lifecyclesMs: Number(d.lifecyclesMs),
      summaryMs: Number(d.summaryMs), previewMs: d.previewMs === undefined ? null : Number(d.previewMs), wallMs: Date.now() - wall,
      baselineMiB: MiB(renderer.peak), peakMiB: MiB(peak),
    });
    console.log(`run ${i + 1}: ${JSON.stringify(runs.at(-1))}`);
  } finally {
    await browser.close();
  }
}
const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
const result = {
  file: { bytes: fileBytes, records: runs[0].rows }, lean, runs, sizes, nodeCpuMs: cpu,
  median: Object.fromEntries(['firstRowsMs', 'indexedMs', 'summarizeMs', 'replayedMs', 'lifecyclesMs', 'summaryMs', 'previewMs', 'baselineMiB', 'peakMiB'].map((k) => [k, median(k)])),
  loadAverage: (await import('node:os')).loadavg(),
};
writeFileSync(join(dir, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
const m = result.median;
console.log(`bench-inspector: ${result.file.bytes} bytes, ${result.file.records} records${lean ? ' (lean replay)' : ''}; median of ${RUNS}: first rows ${m.firstRowsMs} ms, all rows ${m.indexedMs} ms, summary complete ${m.summaryMs} ms (core inspect ${m.summarizeMs} ms, replay in ${m.replayedMs} ms, lifecycles drawn in ${m.lifecyclesMs} ms), compaction preview ${lean ? 'not computed' : `${m.previewMs} ms`}; renderer peak ${m.peakMiB} MiB (${m.baselineMiB} MiB before the file)`);
console.log(`bench-inspector: module ${sizes.module.bytes} B (${sizes.module.gzip} gzip), glue ${sizes.glue.bytes} B (${sizes.glue.gzip} gzip), page ${sizes.page.bytes} B (${sizes.page.gzip} gzip)`);
