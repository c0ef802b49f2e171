// Shared by the page tests and the benchmark: Debian's Chromium (headless shell) driven by
// playwright-core, the built page opened from disk (file://, no server, no network).

import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const PAGE = join(ROOT, process.env.RLMETA_INSPECTOR_HTML ?? 'build/inspector/index.html');
export const ARTIFACTS = join(ROOT, 'build/inspector-test');
export const CHROMIUM = process.env.RLMETA_CHROMIUM ?? '/usr/lib/chromium/chromium-headless-shell';

export async function launch() {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** A fresh page on the built inspector (`query`: its URL's query, e.g. `?fullMiB=32`), with every console error, page error and network
 * request (anything but file: and data: and blob:) collected in `problems`. */
export async function openPage(browser, { width = 1500, height = 1400, query = '' } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
  page.on('request', (r) => {
    if (!/^(file|data|blob):/.test(r.url())) problems.push(`network request: ${r.url()}`);
  });
  await page.goto(pathToFileURL(PAGE).href + query);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 20000 });
  return { page, problems, context };
}

/** Loads files through the file picker and waits until the page says it is done (or failed). */
export async function load(page, paths, timeout = 60000) {
  await page.setInputFiles('#pick', paths.map((p) => join(ROOT, p)));
  await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout });
  return page.evaluate(() => document.body.dataset.state);
}

/** The renderer processes of the browsers this process started (descendants with
 * --type=renderer; a page's dedicated workers run in its renderer), each with its peak and
 * current resident memory in bytes (VmHWM, VmRSS of /proc/PID/status: every thread's heap, the
 * workers' WebAssembly memories and the page's arrays included). */
export function renderers() {
  const parent = new Map();
  const cmd = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      cmd.set(Number(d), readFileSync(`/proc/${d}/cmdline`, 'utf8'));
    } catch {
      // gone meanwhile
    }
  }
  const mine = (pid) => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  const out = [];
  for (const [pid, c] of cmd) {
    if (!c.includes('--type=renderer') || !mine(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
      out.push({ pid, peak: kb('VmHWM'), rss: kb('VmRSS') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
