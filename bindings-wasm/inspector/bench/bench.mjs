// bench-inspector: how long the page takes over a 100 MB segment file, in headless Chromium.
//
// Generates build/bench-inspector/00000000000000000000.log (gen_segment, 100 MiB, pre-KIP-1266
// null-key records of 8 partitions), then RUNS times: a fresh page opened from disk, the file
// given to the file input (what a drop does: the page's clock starts when it gets the File),
// and the page's own times read back: first rows shown, every row indexed, summary complete
// (lifecycles, counts, level), the first compaction preview. Also the module and page sizes, and
// the machine's load average (other work on the machine slows every number).
// Not a test: it prints numbers (and writes them to build/bench-inspector/result.json).

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { PAGE, ROOT, launch, openPage } from '../tests/browser.mjs';

const RUNS = Number(process.env.RUNS ?? 3);
const MB = process.env.MB ?? '100';
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

// The same stages in Node (the nodejs build of the same module), timed in CPU time: what the
// page's workers need when they have a core each, whatever else the machine runs.
const rlmeta = await import(pathToFileURL(join(ROOT, 'build/pkg/index.mjs')).href);
const cpu = {};
{
  const bytes = new Uint8Array(readFileSync(file));
  let t = process.cpuUsage();
  const lap = (k) => {
    const d = process.cpuUsage(t);
    cpu[k] = Math.round((d.user + d.system) / 1000);
    t = process.cpuUsage();
  };
  const log = rlmeta.openSegmentLog();
  log.addFile(file, bytes);
  log.index(2000);
  lap('firstRowsMs');
  log.index();
  log.columns(0, log.rows());
  lap('restOfIndexMs');
  const replay = rlmeta.openSegmentLog();
  replay.addFile(file, bytes);
  replay.summarize();
  replay.summary();
  replay.lifecycles();
  lap('replayMs');
  const last = log.columns(log.rows() - 1, log.rows()).timestamps[0];
  log.preview({ cleanupPolicy: 'compact', segmentRecords: 1000 }, last + 30n * 86400000n);
  lap('previewMs');
  console.log(`cpu time in Node: ${JSON.stringify(cpu)}`);
}

const browser = await launch();
const runs = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const { page, problems, context } = await openPage(browser);
    const wall = Date.now();
    await page.setInputFiles('#pick', file);
    await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 300000 });
    await page.waitForSelector('#preview-result[data-ms]', { timeout: 300000 });
    const d = await page.evaluate(() => ({ ...document.body.dataset, previewMs: document.getElementById('preview-result').dataset.ms }));
    if (d.state !== 'done' || problems.length) throw new Error(`run ${i}: ${d.state} ${problems.join('; ')}`);
    runs.push({
      rows: Number(d.rows), firstRowsMs: Number(d.firstRowsMs), indexedMs: Number(d.indexedMs),
      summarizeMs: Number(d.summarizeMs), replayedMs: Number(d.replayedMs), lifecyclesMs: Number(d.lifecyclesMs),
      summaryMs: Number(d.summaryMs), previewMs: Number(d.previewMs), wallMs: Date.now() - wall,
    });
    console.log(`run ${i + 1}: ${JSON.stringify(runs.at(-1))}`);
    await context.close();
  }
} finally {
  await browser.close();
}
const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
const result = {
  file: { bytes: statSync(file).size, records: runs[0].rows }, runs, sizes, nodeCpuMs: cpu,
  median: Object.fromEntries(['firstRowsMs', 'indexedMs', 'summarizeMs', 'replayedMs', 'lifecyclesMs', 'summaryMs', 'previewMs'].map((k) => [k, median(k)])),
  loadAverage: (await import('node:os')).loadavg(),
};
writeFileSync(join(dir, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
console.log(`bench-inspector: ${result.file.bytes} bytes, ${result.file.records} records; median of ${RUNS}: first rows ${result.median.firstRowsMs} ms, all rows ${result.median.indexedMs} ms, summary complete ${result.median.summaryMs} ms (core inspect ${result.median.summarizeMs} ms, replay in ${result.median.replayedMs} ms, lifecycles drawn in ${result.median.lifecyclesMs} ms), compaction preview ${result.median.previewMs} ms`);
console.log(`bench-inspector: module ${sizes.module.bytes} B (${sizes.module.gzip} gzip), glue ${sizes.glue.bytes} B (${sizes.glue.gzip} gzip), page ${sizes.page.bytes} B (${sizes.page.gzip} gzip)`);
