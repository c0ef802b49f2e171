// The Vite app (tests/package/vite) built with the rlmeta tarball installed, opened in Debian's
// Chromium headless shell (playwright-core) from a server on 127.0.0.1 (wasm-bindgen's web glue
// fetches the module: file:// cannot). Run from the repository root by make package-test.
//   RLMETA_VITE_APP  the app's directory (its dist/ built), RLMETA_CHROMIUM, RLMETA_INSPECT

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';

import { ROOT, jsForm, parseJsonLossless, int } from '../../bindings-wasm/tests/helpers.mjs';
import { rustInspection } from '../../bindings-wasm/tests/fixtures.mjs';

const APP = resolve(process.env.RLMETA_VITE_APP ?? join(ROOT, 'build/package-test/vite'));
const DIST = join(APP, 'dist');
const CHROMIUM = process.env.RLMETA_CHROMIUM ?? '/usr/lib/chromium/chromium-headless-shell';
const SEGMENT = 'tests/fixtures/broker/remote_log_metadata/__remote_log_metadata-0/00000000000000000000.log';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.log': 'application/octet-stream' };

let server, origin, browser;
const served = [];

before(async () => {
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.startsWith('/fixtures/') ? join(ROOT, 'tests', normalize(path)) : join(DIST, normalize(path === '/' ? '/index.html' : path));
    let body;
    try {
      body = readFileSync(file);
    } catch {
      served.push(`${path} 404`);
      res.writeHead(404).end();
      return;
    }
    served.push(`${path} 200`);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

test('vite build emitted the package\'s .wasm as an asset, byte for byte', () => {
  const wasm = readdirSync(join(DIST, 'assets')).filter((f) => f.endsWith('.wasm'));
  assert.equal(wasm.length, 1, `assets: ${wasm}`);
  assert.ok(readFileSync(join(DIST, 'assets', wasm[0])).equals(readFileSync(join(APP, 'node_modules/rlmeta/rlmeta_wasm_bg.wasm'))));
});

test('the built page decodes a value and opens a real segment file in Chromium', async () => {
  const c = parseJsonLossless(readFileSync(join(ROOT, 'tests/vectors/v1.json'), 'utf8')).cases[0];
  const node = await import(join(APP, 'node_modules/rlmeta/index.mjs'));
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
  page.on('request', (r) => r.url().startsWith(origin) || problems.push(`request outside the app: ${r.url()}`));
  await page.goto(`${origin}/?hex=${c.hex}&segment=/fixtures/${SEGMENT.slice('tests/fixtures/'.length)}`);
  await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 30000 });
  const state = await page.evaluate(() => document.body.dataset.state);
  const out = await page.textContent('#out');
  await context.close();
  assert.equal(state, 'done', out);
  assert.deepEqual(problems, []);
  assert.ok(served.some((s) => /^\/assets\/[^/]+\.wasm 200$/.test(s)), `the page fetched the emitted module: ${served}`);

  const r = JSON.parse(out);
  assert.equal(r.version, node.version());
  assert.deepEqual(r.value, JSON.parse(JSON.stringify({ apiKey: int(c.apiKey), version: int(c.version), record: jsForm(c.record) })));
  assert.equal(r.key, node.keyForValue(Uint8Array.from(c.hex.match(/../g), (h) => parseInt(h, 16))));
  assert.deepEqual(r.error, { name: 'TruncatedError', code: node.errorCodes().truncated, rlmetaError: true, truncated: true });

  const rs = rustInspection(SEGMENT).inspection.summary;
  assert.ok(rs.records > 0n);
  assert.equal(BigInt(r.rows), rs.records);
  for (const f of ['records', 'nullKeyRecords', 'keyedRecords', 'tombstones', 'undecodable', 'liveSegments', 'orphans', 'keptByCompaction']) {
    assert.equal(BigInt(r.summary[f]), rs[f], f);
  }
});
