// The inspector page: files in, views out. A host only: the worker's rlmeta module decides every
// count, state, fault and verdict; this file hands the workers the dropped Files (they read them
// in slices, never whole), lays out rows and draws.
//
// Memory: the page keeps 35 bytes of columns per record, the workers the batch table, tables and
// counts; no file's bytes are held whole. Above LEAN_BYTES of segment files the replay is lean:
// segment lifecycles and the compaction what-ifs (the summary's and the preview), which hold every
// segment's history and every record's key and value, are not computed, and the page says so.

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import wasmUrl from 'rlmeta-pkg/rlmeta_wasm_bg.wasm?url';
import DecodeWorker from './worker.js?worker&inline';
import { FLAG, KIND, KIND_NAMES, MARK, PARTITION_DELETE_STATES, SEGMENT_STATES } from 'rlmeta-pkg/files.mjs';
import { COMPACTION_HORIZON_MS, DEFAULT_V1_RETENTION_MS, DEFAULT_V1_SEGMENT_MS, LEVEL_PRESETS } from 'rlmeta-pkg/tables.mjs';
import { RowWindow } from './rows.js';

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
};
const DAY = 86400000;
const iso = (ms) => {
  const n = Number(ms);
  return Number.isFinite(n) && Math.abs(n) < 8.64e15 ? new Date(n).toISOString().replace('T', ' ').replace('Z', '') : String(ms);
};
const bytesText = (n) => (n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`);
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Segment files above this many bytes in all are replayed lean (see the top). `?fullMiB=N` sets
 * it (tests lower it). */
const LEAN_BYTES = (Number(new URLSearchParams(location.search).get('fullMiB')) || 128) * (1 << 20);

// ------------------------------------------------------------------ state
const state = {
  rows: 0,
  cols: null, // growing column arrays
  tables: null,
  view: new Uint32Array(0), // filtered and sorted rows
  keyCache: new Map(),
  keyMatches: null, // Set of rows whose key matches the key filter, or null
  selected: -1,
  lifecycles: null,
  summary: null,
  t0: 0,
};

// ------------------------------------------------------------------ worker
let worker;
let nextId = 1;
const pending = new Map();
function ask(type, payload = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ type, id, ...payload });
  });
}

function fatal(message) {
  const f = $('fatal');
  f.hidden = false;
  f.textContent = message;
  setStatus(`Stopped: ${message}`);
  document.body.dataset.state = 'error';
}
function setStatus(text) {
  $('status').textContent = text;
}

/** The module's bytes: inlined in this page as a data: URL (no fetch: file:// has no origin). */
function wasmBytes() {
  const b64 = wasmUrl.slice(wasmUrl.indexOf(',') + 1);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

let replayer; // the second worker: replays the files with the core's inspector meanwhile
let starting = 2;
function spawn(module) {
  const w = new DecodeWorker();
  w.onerror = (e) => fatal(`The decoder stopped: ${e.message ?? 'worker error'}`);
  w.onmessage = ({ data }) => {
    try {
      if (data.type === 'ready' && --starting > 0) return;
      onWorker(data);
    } catch (e) {
      fatal(`The page failed to show the result: ${e.message}`);
    }
  };
  w.postMessage({ type: 'init', module });
  return w;
}

async function start() {
  try {
    const module = await WebAssembly.compile(wasmBytes());
    worker = spawn(module);
    replayer = spawn(module);
  } catch (e) {
    fatal(`The decoder could not start: ${e.message}`);
  }
}

function onWorker(m) {
  switch (m.type) {
    case 'ready':
      $('version').textContent = `rlmeta ${m.version}`;
      setStatus('Ready: drop files.');
      document.body.dataset.state = 'ready';
      break;
    case 'reply': {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.result);
      break;
    }
    case 'checkpoint':
      showCheckpoint(m);
      break;
    case 'tables':
      state.tables = m.tables;
      break;
    case 'rows':
      addRows(m);
      break;
    case 'indexed':
      onIndexed(m);
      break;
    case 'summary':
      onSummary(m);
      break;
    case 'fatal':
      fatal(m.message);
      break;
    default:
  }
}

// ------------------------------------------------------------------ files in
/** The metadata partition directory a file came from (`__remote_log_metadata-3`), or ''. */
const groupOf = (f) => (f.path ?? '').split('/').slice(0, -1).pop() ?? '';

let groups = new Map();
/** Files of one or more metadata partitions: each partition's files are one log, shown one at a
 * time (offsets of different partitions overlap). */
function openFiles(fileList) {
  const files = [...fileList].map((f) => (f.file ? f : { file: f, path: f.webkitRelativePath || f.name }));
  if (files.length === 0) return;
  groups = new Map();
  for (const f of files) {
    const g = f.file.name.endsWith('.checkpoint') ? '' : groupOf(f);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(f);
  }
  const checkpoints = groups.get('') ?? [];
  const logs = [...groups.keys()].filter((g) => g !== '').sort();
  const sel = $('group');
  if (logs.length > 1) {
    sel.replaceChildren(...logs.map((g) => el('option', { value: g, text: `${g} (${plural(groups.get(g).length, 'file')})` })));
    sel.closest('p').hidden = false;
    sel.onchange = () => openGroup([...groups.get(sel.value), ...checkpoints]);
    openGroup([...groups.get(logs[0]), ...checkpoints]);
  } else {
    sel.closest('p').hidden = true;
    openGroup(files);
  }
}

/** The largest file the decoder indexes: 32-bit WebAssembly, whose byte positions are 32 bits. */
const MAX_FILE_BYTES = 2 ** 32 - 1;

async function openGroup(files) {
  reset();
  state.t0 = performance.now();
  const huge = files.find((f) => f.file.size > MAX_FILE_BYTES);
  if (huge) {
    fatal(`${huge.path} is ${mib(huge.file.size)}: the page's decoder (32-bit WebAssembly) reads files of up to 4 GiB. `
      + 'The rlmeta CLI streams files of any size: rlmeta scan, rlmeta inspect --summary, rlmeta simulate.');
    return;
  }
  document.body.dataset.state = 'loading';
  setStatus(`Reading ${plural(files.length, 'file')}…`);
  // The workers read the Files themselves, slice by slice (a File is passed by reference).
  const list = files.map((f) => ({ name: f.path, file: f.file }));
  const bytes = files.filter((f) => !f.file.name.endsWith('.checkpoint')).reduce((n, f) => n + f.file.size, 0);
  state.lean = bytes > LEAN_BYTES;
  if (state.lean) showLean(bytes);
  worker.postMessage({ type: 'open', role: 'index', lean: state.lean, files: list });
  replayer.postMessage({ type: 'open', role: 'replay', lean: state.lean, files: list });
}

const mib = (n) => `${(n / (1 << 20)).toFixed(0)} MiB`;
const LEAN_WHY = () => `it needs every segment's history and every record's key and value in memory, which grows with the files (these are above the page's ${mib(LEAN_BYTES)} limit)`;
/** The banner of a lean replay: what is not computed, and why. */
function showLean(bytes) {
  const b = $('large');
  b.hidden = false;
  b.textContent = `These segment files are ${mib(bytes)}: the page reads them in slices and shows every record, the counts, faults, live segments, orphans, level and migration check, but does not compute segment lifecycles, what compaction would keep (summary) or the compaction preview: ${LEAN_WHY()}. The rlmeta CLI (rlmeta inspect, rlmeta simulate) computes them outside the browser.`;
}
const NOT_COMPUTED = 'not computed for files this large (see the banner above)';

function reset() {
  Object.assign(state, { lean: false, viewBuf: null, filtered: null, rows: 0, cols: null, tables: null, view: new Uint32Array(0), selected: -1, lifecycles: null, summary: null, keyMatches: null, segMatches: null, indexed: null, shown: false });
  state.keyCache.clear();
  for (const id of ['fatal', 'faults', 'level', 'large', 'checkpoints', 'segments']) $(id).hidden = true;
  $('fault-list').replaceChildren();
  $('checkpoint-list').replaceChildren();
  $('detail').replaceChildren(el('p', { class: 'muted', text: 'Select a record to see its key fields, decoded value, Kafka\u2019s toString and hex.' }));
  $('preview-result').replaceChildren();
  $('migration-result').replaceChildren();
  $('summary-list').replaceChildren();
  $('chart').replaceChildren();
  for (const id of ['chart', 'preview-result']) delete $(id).dataset.notComputed;
  $('lifecycle-table').tBodies[0].replaceChildren();
  for (const k of ['firstRowsMs', 'indexedMs', 'summaryMs', 'rows']) delete document.body.dataset[k];
  table.setRows(0);
}

const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
/** Every file under a dropped entry (directories walked), with its path. */
async function walkEntry(entry, out) {
  if (entry.isFile) {
    out.push({ file: await new Promise((ok, fail) => entry.file(ok, fail)), path: entry.fullPath.replace(/^\//, '') });
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
      if (batch.length === 0) break;
      for (const e of batch) await walkEntry(e, out);
    }
  }
}
drop.addEventListener('drop', async (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  const entries = [...e.dataTransfer.items].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length && entries.some((x) => x.isDirectory)) {
    const out = [];
    try {
      for (const x of entries) await walkEntry(x, out);
    } catch (err) {
      fatal(`Could not read the dropped folder: ${err.message}`);
      return;
    }
    openFiles(out.filter((f) => /\.(log|checkpoint)$/.test(f.path)));
  } else {
    openFiles(e.dataTransfer.files);
  }
});
window.addEventListener('dragover', (e) => e.preventDefault());
window.addEventListener('drop', (e) => e.preventDefault());
$('pick').addEventListener('change', (e) => openFiles(e.target.files));
$('pick-dir').addEventListener('change', (e) => openFiles([...e.target.files].filter((f) => /\.(log|checkpoint)$/.test(f.name))));

// ------------------------------------------------------------------ rows in
const COLUMN_TYPES = {
  offsets: BigInt64Array, timestamps: BigInt64Array, kinds: Uint8Array, states: Int8Array, flags: Uint8Array,
  keySizes: Int32Array, valueSizes: Int32Array, partitionOf: Int32Array, segmentOf: Int32Array,
};

/** Columns grow to the worker's estimate of the rows (rows per byte so far), so a large file's
 * are allocated about once, not doubled. */
function addRows({ from, to, estimate, columns }) {
  const want = Math.max(1024, Math.ceil((estimate ?? 0) * 1.02));
  if (!state.cols) {
    state.cols = {};
    for (const [k, T] of Object.entries(COLUMN_TYPES)) state.cols[k] = new T(Math.max(want, to));
  }
  for (const [k, T] of Object.entries(COLUMN_TYPES)) {
    let col = state.cols[k];
    if (col.length < to) {
      const grown = new T(Math.max(want, Math.ceil(to * 1.25)));
      grown.set(col.subarray(0, from));
      state.cols[k] = col = grown;
    }
    col.set(columns[k], from);
  }
  state.rows = to;
  $('segments').hidden = false;
  if (from === 0) {
    document.body.dataset.firstRowsMs ??= (performance.now() - state.t0).toFixed(1);
    setupFilters();
  }
  applyView(from > 0);
  setStatus(`${to.toLocaleString('en')} records read…`);
}

function onIndexed(m) {
  document.body.dataset.indexedMs = (performance.now() - state.t0).toFixed(1);
  if (m.tables) {
    state.tables = m.tables;
    setupFilters();
  }
  showFaults(m.faults, m.rows);
  state.indexed = m;
  applyView();
  if (m.segments === 0) finish();
  else if (state.summary) showReplay();
  else setStatus(`${m.rows.toLocaleString('en')} records read; replaying lifecycles…`);
}

function finish() {
  document.body.dataset.summaryMs = (performance.now() - state.t0).toFixed(1);
  document.body.dataset.rows = String(state.rows);
  document.body.dataset.state = 'done';
  const t = (Number(document.body.dataset.summaryMs) / 1000).toFixed(2);
  setStatus(state.tables ? `${state.rows.toLocaleString('en')} records in ${plural(state.tables.files.length, 'file')}, read in ${t} s.` : `Read in ${t} s.`);
}

// ------------------------------------------------------------------ faults
function showFaults(faults, rows) {
  if (!faults.length) return;
  $('faults').hidden = false;
  const list = $('fault-list');
  const files = new Set(faults.map((f) => f.file));
  for (const file of files) {
    const mine = faults.filter((f) => f.file === file);
    const fileRows = state.tables ? rowsOfFile(file) : 0;
    if (fileRows === 0 && mine.some((f) => f.position === 0)) {
      list.append(el('li', { class: 'bad', 'data-kind': 'not-a-segment', text: `${file} is not a __remote_log_metadata segment file (nothing at byte 0 reads as a record batch): ${mine[0].message}` }));
      continue;
    }
    for (const f of mine) {
      const where = [f.position !== undefined ? `byte ${f.position}` : null, f.recordOffset !== undefined ? `offset ${f.recordOffset}` : null].filter(Boolean).join(', ');
      const what = f.kind === 'truncated' ? 'truncated tail' : f.kind === 'corrupt' && f.message.includes('CRC') ? 'bad CRC' : f.row !== undefined ? 'undecodable value' : f.kind;
      const li = el('li', { class: 'bad', 'data-kind': f.kind, 'data-position': String(f.position ?? ''), 'data-offset': String(f.recordOffset ?? '') },
        el('b', { text: `${what} in ${file} at ${where}: ` }), f.message);
      if (f.row !== undefined) {
        li.append(' ', el('a', { href: '#', text: 'show record' }));
        li.lastChild.addEventListener('click', (e) => {
          e.preventDefault();
          select(f.row, true);
        });
      }
      list.append(li);
    }
  }
  void rows;
}

function rowsOfFile(file) {
  const t = state.tables;
  const fi = t.files.indexOf(file);
  let n = 0;
  for (let b = 0; b < t.batches.file.length; b++) if (t.batches.file[b] === fi) n += t.batches.count[b];
  return n;
}

// ------------------------------------------------------------------ summary, level, migration
function onSummary({ summary, lifecycles, summarizeMs }) {
  document.body.dataset.summarizeMs = summarizeMs.toFixed(1);
  document.body.dataset.replayedMs = (performance.now() - state.t0).toFixed(1);
  state.summary = summary;
  state.lifecycles = lifecycles;
  showLevel(summary);
  $('segments').hidden = false;
  if (state.indexed) showReplay();
}

/** Where each file's first corrupt batch is, for people. */
const corruptText = (n) => n.corrupt.map((c) => `${state.tables?.files[c.file] ?? `file ${c.file}`} at byte ${c.position} (offset ${c.baseOffset})`).join('; ');

/** The summary: the record counts are the index's (the same result the table and the migration
 * check show); the replay's are what only replaying says (undecodable values, live segments,
 * orphans, compaction, level). */
function showSummary(s, n) {
  const dl = $('summary-list');
  const item = (name, value, key) => dl.append(el('dt', { text: name }), el('dd', { 'data-key': key, text: String(value) }));
  dl.replaceChildren();
  item('records read', n.records, 'records');
  item('records in or after a corrupt batch (listed, not read)', n.unread, 'unread');
  if (n.unlisted) item('of those, records a batch header counts that do not decode (no row)', n.unlisted, 'unlisted');
  if (n.corrupt.length) item('first corrupt batch', corruptText(n), 'corrupt');
  item('null-key records (written before KIP-1266)', n.nullKeyRecords, 'nullKeyRecords');
  item('keyed records (KIP-1266 keys and level records)', n.keyedRecords, 'keyedRecords');
  item('tombstones', n.tombstones, 'tombstones');
  item('undecodable values', s.undecodable, 'undecodable');
  item('records that stop a pre-KIP-1266 broker', s.fatalToOldBrokers, 'fatalToOldBrokers');
  item('live segments', s.liveSegments, 'liveSegments');
  item('orphaned updates', s.orphans, 'orphans');
  // The core compacts the summary's log COMPACTION_HORIZON_MS after the last record (Kafka's
  // compacted defaults); the preview below answers for any moment.
  const later = `if compacted ${COMPACTION_HORIZON_MS / DAY} days after the last record`;
  item(`kept ${later}`, state.lean ? NOT_COMPUTED : `${s.keptByCompaction} of ${n.records}`, 'keptByCompaction');
  item(`live segments lost ${later}`, state.lean ? NOT_COMPUTED : s.lostByCompaction, 'lostByCompaction');
}

/** Once both the columns and the replay are in: lifecycles (timed by the columns), the
 * migration check, the compaction preview. */
function showReplay() {
  if (state.shown) return;
  state.shown = true;
  const t = performance.now();
  showSummary(state.summary, state.indexed.counts);
  showMigration(state.summary, state.indexed.counts, state.indexed.readiness);
  if (state.lean) showNotComputed($('chart'), `Segment lifecycles: ${NOT_COMPUTED}.`);
  else showLifecycles();
  document.body.dataset.lifecyclesMs = (performance.now() - t).toFixed(1);
  finish();
  setupPreview();
}

function showLevel(s) {
  const b = $('level');
  b.hidden = false;
  b.className = 'banner';
  let text;
  if (s.level === null) {
    text = 'remote.log.metadata.version: no level record in these files. A partition read to its end with no level record, on a topic created by stock Kafka, is at level 0 (append-only, null keys allowed); if these files are not the whole partition, its level is unknown.';
  } else if (s.level === 'invalid') {
    b.classList.add('bad');
    text = `remote.log.metadata.version: unknown, the level record at offset ${s.levelOffset} is invalid (its value must be exactly 0, 1 or 2).`;
  } else {
    text = `remote.log.metadata.version: level ${s.level} (level record at offset ${s.levelOffset}).`;
  }
  b.textContent = text;
  b.dataset.level = String(s.level);
}

function showMigration(s, n, r) {
  const box = $('migration-result');
  const lines = [
    ['records read', String(n.records), 'records'],
    ['records in or after a corrupt batch (a broker recovering the log truncates it there)', String(n.unread), 'unread'],
    ['null-key records', String(n.nullKeyRecords), 'nullKeyRecords'],
    ['newest null-key record', n.lastNullKeyTimestamp === null ? 'none' : `${iso(n.lastNullKeyTimestamp)} UTC`, 'lastNullKeyTimestamp'],
    ['records a pre-KIP-1266 broker cannot consume (its metadata consumer thread stops)', String(s.fatalToOldBrokers), 'fatalToOldBrokers'],
    ['level 2 (cleanup.policy=compact)', r.ready ? 'ready: no null-key record remains' : `not yet: ${r.nullKeyRecords} null-key records remain${r.estimatedCleanupMs ? `; under level 1 (segment.ms ${DEFAULT_V1_SEGMENT_MS / DAY} d, retention.ms ${DEFAULT_V1_RETENTION_MS / DAY} d) they are gone by ${iso(r.estimatedCleanupMs)} UTC` : ''}`, 'level2'],
  ];
  const dl = el('dl');
  for (const [k, v, key] of lines) dl.append(el('dt', { text: k }), el('dd', { 'data-key': key, text: v }));
  box.replaceChildren(dl);
  if (s.fatalToOldBrokers > 0) {
    box.append(el('p', { class: 'warn', text: `A broker that predates KIP-1266 must not read this partition: ${s.fatalToOldBrokers} of its records (tombstones, KIP-1266 values, level records or undecodable values) would stop its metadata consumer.` }));
  }
}

// ------------------------------------------------------------------ checkpoints
function showCheckpoint({ name, info, error }) {
  $('checkpoints').hidden = false;
  const box = el('div', { class: 'checkpoint', 'data-name': name }, el('h3', { text: name }));
  if (error) {
    box.append(el('p', { class: 'bad', 'data-kind': error.kind ?? '', text: `Not a readable KRaft checkpoint${error.offset !== undefined ? ` (fault at byte ${error.offset})` : ''}: ${error.message}` }));
  } else {
    const t = el('table', {}, el('thead', {}, el('tr', {}, el('th', { text: 'feature' }), el('th', { text: 'finalized level' }), el('th', { text: 'record offset' }))));
    const body = el('tbody');
    for (const f of info.features) body.append(el('tr', { 'data-feature': f.name }, el('td', { text: f.name }), el('td', { text: String(f.level) }), el('td', { text: f.offset })));
    if (info.kraftVersion !== null) body.append(el('tr', { 'data-feature': 'kraft.version' }, el('td', { text: 'kraft.version' }), el('td', { text: String(info.kraftVersion) }), el('td', { text: '(control record)' })));
    t.append(body);
    box.append(t);
    const rlmv = info.remoteLogMetadataVersion;
    box.append(el('p', { class: rlmv === null ? 'note' : '', 'data-key': 'remoteLogMetadataVersion', text: rlmv === null
      ? 'remote.log.metadata.version: absent. This cluster does not finalize the feature (stock Kafka 4.4.0 has no such feature). Each __remote_log_metadata partition then carries its own level in a level record (key remote.log.metadata.version): a partition read to its end without one, on a topic created by stock Kafka, is at level 0; not yet read, unknown.'
      : `remote.log.metadata.version: finalized at level ${rlmv}. The finalized level wins over any level record in the metadata partitions.` }));
    box.append(el('p', { class: 'muted', text: `${info.records} records in ${info.batches} batches; ${info.complete ? 'header and footer present' : 'incomplete: header or footer missing'}${info.voters ? `; voters ${info.voters.join(', ')}` : ''}${info.lastContainedLogTimestamp ? `; last contained log time ${iso(info.lastContainedLogTimestamp)} UTC` : ''}.` }));
  }
  $('checkpoint-list').append(box);
}

// ------------------------------------------------------------------ filters and sort
const STATE_OPTIONS = [
  ...SEGMENT_STATES.map((n, i) => [`s${i}`, n]),
  ...PARTITION_DELETE_STATES.map((n, i) => [`p${i}`, n]),
];

function setupFilters() {
  const t = state.tables;
  if (!t) return;
  const topics = [...new Set(t.partitions.map((p) => p.topic))].sort();
  fillSelect($('f-topic'), topics.map((x) => [x, x]));
  fillSelect($('f-partition'), t.partitions.map((p, i) => [String(i), `${p.topic}-${p.partition}`]));
  fillSelect($('f-state'), STATE_OPTIONS);
}
function fillSelect(sel, options) {
  const keep = sel.value;
  sel.replaceChildren(el('option', { value: '', text: 'all' }), ...options.map(([v, text]) => el('option', { value: v, text, title: text })));
  sel.value = options.some(([v]) => v === keep) ? keep : '';
  titleSelected(sel);
}
/** A select shows its chosen option's full text on hover (long topic names are cut by CSS). */
function titleSelected(sel) {
  sel.title = sel.selectedOptions[0]?.textContent ?? '';
}

/** Filters and sorts the rows into the view. `grow === true` (more rows came, filters as
 * before): only the new rows are filtered, after the ones filtered last time. */
function applyView(grow) {
  const c = state.cols;
  const n = state.rows;
  if (!c) return;
  const topic = $('f-topic').value;
  const part = $('f-partition').value === '' ? null : Number($('f-partition').value);
  const segs = state.segMatches;
  const st = $('f-state').value;
  const wantTomb = $('f-tombstones').checked;
  const wantNull = $('f-nullkeys').checked;
  const wantErr = $('f-errors').checked;
  const t = state.tables;
  const topicParts = topic && t ? new Set(t.partitions.map((p, i) => (p.topic === topic ? i : -1)).filter((i) => i >= 0)) : null;
  const stateKinds = st === '' ? null : st[0] === 's' ? [KIND.SEGMENT, KIND.UPDATE, KIND.SNAPSHOT] : [KIND.PARTITION_DELETE];
  const stateId = st === '' ? 0 : Number(st.slice(1));
  const keys = state.keyMatches;
  let [from, m] = grow === true && state.filtered ? state.filtered : [0, 0];
  // One buffer for the filtered rows, reused while the rows grow (as large as the columns).
  if (!state.viewBuf || state.viewBuf.length < n) {
    const buf = new Uint32Array(c.offsets.length);
    if (state.viewBuf) buf.set(state.viewBuf.subarray(0, m));
    state.viewBuf = buf;
  }
  const out = state.viewBuf;
  for (let i = from; i < n; i++) {
    const f = c.flags[i];
    if (wantTomb && !(f & FLAG.TOMBSTONE)) continue;
    if (wantNull && !(f & FLAG.NULL_KEY)) continue;
    if (wantErr && !(f & (FLAG.ERROR | FLAG.BAD_CRC | FLAG.BAD_KEY))) continue;
    if (part !== null && c.partitionOf[i] !== part) continue;
    if (topicParts && !topicParts.has(c.partitionOf[i])) continue;
    if (segs && !(c.segmentOf[i] >= 0 && segs[c.segmentOf[i]])) continue;
    if (stateKinds && (!stateKinds.includes(c.kinds[i]) || c.states[i] !== stateId)) continue;
    if (keys && !keys.has(i)) continue;
    out[m++] = i;
  }
  state.filtered = [n, m];
  let view = out.subarray(0, m);
  const by = $('sort').value;
  const desc = $('sort-desc').checked;
  if (by !== 'row') {
    const src = { timestamp: c.timestamps, keySize: c.keySizes, valueSize: c.valueSizes, kind: c.kinds, state: c.states }[by];
    // Numbers, not bigints, to compare (millisecond timestamps are exact below 2^53); ties keep log order.
    const key = new Float64Array(view.length);
    for (let k = 0; k < view.length; k++) key[k] = Number(src[view[k]]);
    const order = Uint32Array.from(view.keys()).sort((a, b) => key[a] - key[b] || a - b);
    view = order.map((k) => view[k]);
  }
  if (desc) view = Uint32Array.from(view).reverse();
  state.view = view;
  const counts = state.indexed?.counts;
  const unlisted = counts?.unlisted ? `, ${counts.unlisted.toLocaleString('en')} of them without a row: their batch does not decode` : '';
  const read = counts && counts.unread > 0 ? ` (${counts.records.toLocaleString('en')} read, ${counts.unread.toLocaleString('en')} in or after a corrupt batch${unlisted})` : '';
  $('count').textContent = `${m.toLocaleString('en')} of ${n.toLocaleString('en')}${read}`;
  $('count').dataset.shown = String(m);
  $('count').dataset.total = String(n);
  if (counts) Object.assign($('count').dataset, { read: String(counts.records), unread: String(counts.unread), unlisted: String(counts.unlisted) });
  table.setRows(m);
}

for (const id of ['f-topic', 'f-partition', 'f-state', 'f-tombstones', 'f-nullkeys', 'f-errors', 'sort', 'sort-desc']) $(id).addEventListener('change', applyView);
for (const id of ['f-topic', 'f-partition']) $(id).addEventListener('change', () => titleSelected($(id)));
// The segment ids stay in the worker: it says which contain the text (a mask by segment index).
let segTimer;
$('f-segment').addEventListener('input', () => {
  clearTimeout(segTimer);
  segTimer = setTimeout(async () => {
    const needle = $('f-segment').value.trim();
    if (needle === '') state.segMatches = null;
    else {
      $('count').dataset.pending = '1';
      const found = await ask('segmentsContaining', { needle });
      if ($('f-segment').value.trim() !== needle) return;
      const mask = new Uint8Array(found.length ? found[found.length - 1] + 1 : 0);
      for (const i of found) mask[i] = 1;
      state.segMatches = mask;
      delete $('count').dataset.pending;
    }
    applyView();
  }, 150);
});
let keyTimer;
$('f-key').addEventListener('input', () => {
  clearTimeout(keyTimer);
  keyTimer = setTimeout(async () => {
    const needle = $('f-key').value;
    if (needle === '') state.keyMatches = null;
    else {
      $('count').dataset.pending = '1';
      const rows = await ask('keysContaining', { needle });
      if ($('f-key').value !== needle) return;
      state.keyMatches = new Set(rows);
      delete $('count').dataset.pending;
    }
    applyView();
  }, 200);
});

// ------------------------------------------------------------------ the table
function stateName(i) {
  const c = state.cols;
  const s = c.states[i];
  if (s < 0) return '';
  return c.kinds[i] === KIND.PARTITION_DELETE ? (PARTITION_DELETE_STATES[s] ?? `UNKNOWN(${s})`) : (SEGMENT_STATES[s] ?? `UNKNOWN(${s})`);
}

function markers(i) {
  const c = state.cols;
  const f = c.flags[i];
  const out = [];
  if (f & FLAG.TOMBSTONE) out.push(['tomb', 'tombstone']);
  if (f & FLAG.NULL_KEY) out.push(['null', 'null key']);
  if (f & FLAG.ERROR) out.push(['err', 'error']);
  if (f & FLAG.BAD_CRC) out.push(['err', 'bad CRC']);
  if (f & FLAG.BAD_KEY) out.push(['err', 'bad key']);
  if (f & FLAG.UNREAD) out.push(['err', 'not read']);
  if (f & FLAG.HEADERS) out.push(['hdr', 'headers']);
  return out;
}

const missingKeys = new Set();
let keyFetch = null;
function wantKey(row) {
  missingKeys.add(row);
  if (keyFetch) return;
  keyFetch = Promise.resolve().then(async () => {
    const rows = [...missingKeys];
    missingKeys.clear();
    try {
      const texts = await ask('keys', { rows });
      rows.forEach((r, k) => state.keyCache.set(r, texts[k]));
      if (state.keyCache.size > 200000) state.keyCache.clear();
    } finally {
      keyFetch = null;
    }
    table.refresh();
  });
}

function renderRow(div, pos) {
  const i = state.view[pos];
  const c = state.cols;
  const t = state.tables;
  const cells = div.children;
  div.dataset.row = String(i);
  div.classList.toggle('selected', i === state.selected);
  div.classList.toggle('error', Boolean(c.flags[i] & (FLAG.ERROR | FLAG.BAD_CRC | FLAG.BAD_KEY)));
  cells[0].textContent = c.offsets[i].toString();
  cells[1].textContent = iso(c.timestamps[i]);
  let key;
  if (c.keySizes[i] < 0) key = 'null';
  else if (state.keyCache.has(i)) key = state.keyCache.get(i);
  else {
    key = '…';
    wantKey(i);
  }
  cells[2].textContent = key;
  cells[2].title = key;
  cells[3].textContent = KIND_NAMES[c.kinds[i]];
  cells[4].textContent = stateName(i);
  const p = c.partitionOf[i];
  cells[5].textContent = p >= 0 && t ? `${t.partitions[p].topic}-${t.partitions[p].partition}` : '';
  cells[6].textContent = String(c.keySizes[i]);
  cells[7].textContent = String(c.valueSizes[i]);
  cells[8].replaceChildren(...markers(i).map(([cls, text]) => el('span', { class: `m ${cls}`, text })));
}

const table = new RowWindow($('scroller'), $('spacer'), $('rows'), { rowHeight: 24, columns: 9, render: renderRow });
$('rows').addEventListener('click', (e) => {
  const row = e.target.closest('.tr');
  if (row?.dataset.row) select(Number(row.dataset.row), false);
});

// ------------------------------------------------------------------ detail
async function select(row, scroll) {
  state.selected = row;
  if (scroll) {
    const pos = state.view.indexOf(row);
    if (pos >= 0) table.scrollTo(pos);
  }
  table.refresh();
  const d = await ask('record', { row });
  if (state.selected !== row) return;
  showDetail(row, d);
}

function hexLines(hex) {
  const lines = [];
  for (let i = 0; i < hex.length; i += 32) {
    const chunk = hex.slice(i, i + 32);
    const bytes = chunk.match(/../g) ?? [];
    const ascii = bytes.map((b) => {
      const n = parseInt(b, 16);
      return n >= 32 && n < 127 ? String.fromCharCode(n) : '.';
    }).join('');
    lines.push(`${(i / 2).toString(16).padStart(6, '0')}  ${bytes.join(' ').padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}

function showDetail(row, d) {
  const box = $('detail');
  const dl = el('dl');
  const add = (k, v, key) => dl.append(el('dt', { text: k }), el('dd', { 'data-key': key ?? k, text: v }));
  add('offset', d.offset);
  add('timestamp', `${d.timestamp} (${iso(d.timestamp)} UTC, ${d.timestampType})`, 'timestamp');
  add('file', `${d.file}, batch at byte ${d.batchPosition} (base offset ${d.batchBaseOffset}, ${d.compression}, CRC ${d.crcValid ? 'valid' : 'WRONG'})`, 'batch');
  add('producer', `id ${d.producerId}, epoch ${d.producerEpoch}, sequence ${d.sequence}, leader epoch ${d.partitionLeaderEpoch}${d.transactional ? ', transactional' : ''}`, 'producer');
  add('key', d.key === null ? 'null (written before KIP-1266)' : d.key, 'key');
  box.replaceChildren(el('h3', { text: `Record at offset ${d.offset}` }), dl);
  if (d.keyFields) {
    const k = d.keyFields;
    box.append(el('h4', { text: 'Key fields (KIP-1266)' }), kv([['topic id', k.topicId], ['topic', k.topic], ['partition', String(k.partition)], ['end offset', k.endOffset], ['broker leader epoch', String(k.brokerLeaderEpoch)], ['update', String(k.update)]], 'key-fields'));
  }
  if (d.headers.length) box.append(el('h4', { text: 'Headers' }), kv(d.headers.map((h) => [h.key, h.valueHex === null ? 'null' : h.valueHex]), 'headers'));
  if (d.level !== null) box.append(el('p', { class: 'note', 'data-key': 'level', text: `Level record: this partition is at remote.log.metadata.version level ${d.level} from here on.` }));
  if (d.valueHex === null) box.append(el('p', { class: 'note', 'data-key': 'tombstone', text: 'Tombstone (null value): the cleaner removes the key\u2019s earlier records; a broker that predates KIP-1266 stops reading here.' }));
  if (d.error) box.append(el('p', { class: 'bad', 'data-key': 'error', text: `Does not decode: ${d.error}` }));
  if (d.kafkaError) box.append(el('p', { class: 'bad', 'data-key': 'kafka-error', text: `Kafka's decoder: ${d.kafkaError}` }));
  if (d.kafkaText) box.append(el('h4', { text: 'Kafka toString (kafka-dump-log payload)' }), el('pre', { 'data-key': 'kafka-text', text: d.kafkaText }));
  if (d.value) box.append(el('h4', { text: `Decoded value (api key ${d.value.apiKey}, version ${d.value.version})` }), el('pre', { 'data-key': 'value', text: JSON.stringify(d.value.record, null, 2) }));
  if (d.keyHex !== null) box.append(el('h4', { text: 'Key hex' }), el('pre', { 'data-key': 'key-hex', text: hexLines(d.keyHex) }));
  if (d.valueHex !== null) box.append(el('h4', { text: `Value hex (${d.valueHex.length / 2} bytes)` }), el('pre', { 'data-key': 'value-hex', text: hexLines(d.valueHex) }));
  box.dataset.row = String(row);
}

function kv(pairs, key) {
  const t = el('table', { class: 'kv', 'data-key': key });
  for (const [k, v] of pairs) t.append(el('tr', {}, el('th', { text: k }), el('td', { text: v })));
  return t;
}

// ------------------------------------------------------------------ lifecycles
const STATE_COLORS = ['#e0a030', '#2f8f4f', '#c05050', '#808080'];

function showLifecycles() {
  const l = state.lifecycles;
  const n = l.ids.length;
  const body = $('lifecycle-table').tBodies[0];
  const rowsHtml = [];
  const shown = Math.min(n, 1000); // the chart shows them all; the table the first 1000
  const stepsOf = Array.from({ length: shown }, () => []);
  for (let k = 0; k < l.steps.lifecycle.length; k++) {
    const i = l.steps.lifecycle[k];
    if (i < shown) stepsOf[i].push(`${SEGMENT_STATES[l.steps.state[k]]}@${l.steps.offset[k]}`);
  }
  for (let i = 0; i < shown; i++) {
    const steps = stepsOf[i];
    const marks = [];
    if (l.marks[i] & MARK.STUCK) marks.push('stuck');
    if (l.marks[i] & MARK.DANGLING) marks.push('dangling');
    if (l.marks[i] & MARK.OVERLAPPING) marks.push('overlapping');
    const p = l.partitionTable[l.partitions[i]];
    const tr = el('tr', { 'data-id': l.ids[i], 'data-now': l.now[i] < 0 ? 'gone' : SEGMENT_STATES[l.now[i]], 'data-marks': marks.join(' ') },
      el('td', { text: p ? `${p.topic}-${p.partition}` : '', title: p ? `${p.topic}-${p.partition}` : '' }),
      el('td', { text: l.ids[i] }),
      el('td', { text: l.hasRange[i] ? `[${l.ranges[2 * i]}..${l.ranges[2 * i + 1]}]` : 'segment record missing' }),
      el('td', { text: steps.join(' \u2192 ') }),
      el('td', { text: l.now[i] < 0 ? 'gone' : `live, ${SEGMENT_STATES[l.now[i]]}` }),
      el('td', { class: marks.length ? 'bad' : '', text: marks.join(', ') }));
    rowsHtml.push(tr);
  }
  if (shown < n) rowsHtml.push(el('tr', {}, el('td', { colspan: '6', class: 'muted', text: `… and ${(n - shown).toLocaleString('en')} more (the chart shows every one)` })));
  body.replaceChildren(...rowsHtml);
  drawChart();
}

/** Each step's record time in seconds, found by its offset in the columns (binary search while
 * the offsets ascend, as in one partition's log; a map otherwise). */
function stepTimes(offsets) {
  const c = state.cols;
  const n = state.rows;
  const out = new Float64Array(offsets.length);
  let ascending = true;
  for (let i = 1; i < n && ascending; i++) ascending = c.offsets[i - 1] < c.offsets[i];
  const map = ascending ? null : new Map(Array.from({ length: n }, (_, i) => [c.offsets[i], i]));
  const base = n > 0 ? c.offsets[0] : 0n;
  for (let k = 0; k < offsets.length; k++) {
    let row;
    const guess = Number(offsets[k] - base); // no gaps: the row is the offset's distance from the first
    if (guess >= 0 && guess < n && c.offsets[guess] === offsets[k]) row = guess;
    else if (map) row = map.get(offsets[k]);
    else {
      let a = 0;
      let b = n - 1;
      while (a < b) {
        const m = (a + b) >> 1;
        if (c.offsets[m] < offsets[k]) a = m + 1;
        else b = m;
      }
      row = a;
    }
    out[k] = row === undefined ? NaN : Number(c.timestamps[row]) / 1000;
  }
  return out;
}

let plot;
/** Up to this many lifecycles are drawn: more than the chart has pixel rows is only cost. Marked
 * ones are always drawn (up to the same number again); the rest evenly sampled. */
const MAX_DRAWN = 2000;

function drawChart() {
  const l = state.lifecycles;
  const n = l.ids.length;
  const box = $('chart');
  box.replaceChildren();
  plot?.destroy();
  if (n === 0) {
    box.append(el('p', { class: 'muted', text: 'No segment lifecycles in these files.' }));
    return;
  }
  // Steps come grouped by lifecycle: lifecycle i's are steps starts[i] .. starts[i + 1].
  const starts = new Uint32Array(n + 1);
  for (const i of l.steps.lifecycle) starts[i + 1]++;
  for (let i = 0; i < n; i++) starts[i + 1] += starts[i];
  const stride = Math.max(1, Math.ceil(n / MAX_DRAWN));
  const drawn = [];
  let marked = 0;
  for (let i = 0; i < n; i++) {
    if (i % stride === 0) drawn.push(i);
    else if (l.marks[i] && marked < MAX_DRAWN) {
      drawn.push(i);
      marked++;
    }
  }
  const wanted = [];
  for (const i of drawn) for (let k = starts[i]; k < starts[i + 1]; k++) wanted.push(l.steps.offset[k]);
  const times = stepTimes(wanted);
  const stepsOf = new Map();
  let w = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const i of drawn) {
    const steps = [];
    for (let k = starts[i]; k < starts[i + 1]; k++, w++) {
      const t = times[w];
      if (t < lo) lo = t;
      if (t > hi) hi = t;
      steps.push([t, l.steps.state[k]]);
    }
    stepsOf.set(i, steps);
  }
  if (!(hi > lo)) hi = lo + 1;
  const end = hi + (hi - lo) * 0.02;
  const height = Math.min(600, Math.max(160, n * 14 + 60));
  const draw = (u) => {
    const ctx = u.ctx;
    ctx.save();
    const rowPx = Math.max(1, Math.min(12, (u.bbox.height / Math.min(n, MAX_DRAWN)) * 0.7 / devicePixelRatio) * devicePixelRatio);
    for (const [i, steps] of stepsOf) {
      const y = u.valToPos(i, 'y', true);
      for (let k = 0; k < steps.length; k++) {
        const [t0, st] = steps[k];
        const t1 = k + 1 < steps.length ? steps[k + 1][0] : l.now[i] < 0 ? t0 : end;
        const x0 = u.valToPos(t0, 'x', true);
        const x1 = Math.max(x0 + 2 * devicePixelRatio, u.valToPos(t1, 'x', true));
        ctx.fillStyle = STATE_COLORS[st] ?? '#000';
        ctx.fillRect(x0, y - rowPx / 2, x1 - x0, rowPx);
      }
      if (l.marks[i]) {
        ctx.fillStyle = '#d00';
        const x = u.valToPos(steps.length ? steps[steps.length - 1][0] : lo, 'x', true);
        ctx.beginPath();
        ctx.arc(x, y, 3 * devicePixelRatio, 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    ctx.restore();
  };
  plot = new uPlot({
    width: Math.max(400, box.clientWidth || 900),
    height,
    legend: { show: false },
    cursor: { y: false, drag: { x: true, y: false } },
    scales: { x: { time: true, min: lo, max: end }, y: { auto: false, range: [-0.5, n - 0.5] } },
    axes: [{}, { label: 'segment', size: 60, values: (u, vals) => vals.map((v) => (Number.isInteger(v) ? String(v) : '')) }],
    series: [{}, { stroke: 'transparent', points: { show: false } }],
    hooks: { draw: [draw] },
  }, [[lo, end], [null, null]], box);
  box.dataset.segments = String(n);
  if (stride > 1) box.append(el('p', { class: 'muted', text: `${n.toLocaleString('en')} segments: every ${stride}th drawn, and every marked one; drag to zoom in on a time range.` }));
}

// ------------------------------------------------------------------ compaction preview
// The presets are the core's cleaner configs of each feature level (tables.mjs): compacted
// (level 2), level 1, append-only (level 0).
const PRESETS = { compact: LEVEL_PRESETS[2], level1: LEVEL_PRESETS[1], delete: LEVEL_PRESETS[0] };
function usePreset(name) {
  const p = PRESETS[name];
  $('p-policy').value = p.policy;
  $('p-retention').value = String(p.retentionMs);
  $('p-lag').value = String(p.minCompactionLagMs);
  $('p-delete-retention').value = String(p.deleteRetentionMs);
  $('p-segment-ms').value = String(p.segmentMs);
}

/** In place of a view a lean replay does not compute. */
function showNotComputed(box, text) {
  box.replaceChildren(el('p', { class: 'warn', 'data-key': 'not-computed', text }));
  box.dataset.notComputed = '1';
}

let timeRange = [0, 0];
function setupPreview() {
  const c = state.cols;
  if (state.lean) {
    showNotComputed($('preview-result'), `The compaction preview is ${NOT_COMPUTED}: ${LEAN_WHY()}.`);
    return;
  }
  if (!c || state.rows === 0) {
    $('preview-result').replaceChildren(el('p', { class: 'muted', text: 'No records.' }));
    return;
  }
  let lo = c.timestamps[0];
  let hi = c.timestamps[0];
  for (let i = 1; i < state.rows; i++) {
    const t = c.timestamps[i];
    if (t < lo) lo = t;
    if (t > hi) hi = t;
  }
  timeRange = [Number(lo), Number(hi) + 30 * DAY];
  const slider = $('p-time');
  slider.min = String(timeRange[0]);
  slider.max = String(timeRange[1]);
  slider.step = '60000';
  slider.value = String(timeRange[1]);
  usePreset($('p-preset').value);
  runPreview();
}

let previewTimer;
let previewSeq = 0;
function schedulePreview() {
  clearTimeout(previewTimer);
  $('p-time-text').textContent = `${iso(Number($('p-time').value))} UTC`;
  previewTimer = setTimeout(runPreview, 120);
}
async function runPreview() {
  if (!state.summary || state.lean) return;
  const seq = ++previewSeq;
  const nowMs = Math.round(Number($('p-time').value));
  $('p-time-text').textContent = `${iso(nowMs)} UTC`;
  const config = {
    cleanupPolicy: $('p-policy').value, retentionMs: $('p-retention').value.trim(), minCompactionLagMs: $('p-lag').value.trim(),
    deleteRetentionMs: $('p-delete-retention').value.trim(), segmentMs: $('p-segment-ms').value.trim(),
    segmentRecords: Number($('p-segment-records').value.trim() || '0'),
  };
  const box = $('preview-result');
  box.dataset.pending = '1';
  let p;
  const asked = performance.now();
  try {
    p = await ask('preview', { config, nowMs });
    box.dataset.ms = (performance.now() - asked).toFixed(1);
  } catch (e) {
    if (seq === previewSeq) box.replaceChildren(el('p', { class: 'bad', text: `The preview needs valid configs: ${e.message}` }));
    delete box.dataset.pending;
    return;
  }
  if (seq !== previewSeq) return;
  delete box.dataset.pending;
  const dl = el('dl');
  const add = (k, v, key) => dl.append(el('dt', { text: k }), el('dd', { 'data-key': key, text: v }));
  add('records', `${p.recordsBefore} before, ${p.recordsAfter} after`, 'records');
  add('bytes', `${bytesText(p.bytesBefore)} before, ${bytesText(p.bytesAfter)} after`, 'bytes');
  add('null-key records discarded', String(p.nullKeysDropped), 'nullKeysDropped');
  add('live segments', `${p.liveBefore} before; ${p.lost.length} lost`, 'live');
  box.replaceChildren(dl);
  box.dataset.recordsBefore = String(p.recordsBefore);
  box.dataset.recordsAfter = String(p.recordsAfter);
  box.dataset.lost = String(p.lost.length);
  if (p.lost.length > 0) {
    box.append(el('p', { class: 'banner bad', 'data-key': 'loss', text: `LOSS: a broker replaying the cleaned log no longer knows ${plural(p.lost.length, 'live segment')} (${p.lost.slice(0, 5).join(', ')}${p.lost.length > 5 ? ', …' : ''}). The cleaner discards null-key records, and this log was written before KIP-1266: do not set cleanup.policy=compact on it before its null-key records expire.` }));
  } else if (p.nullKeysDropped > 0) {
    box.append(el('p', { class: 'warn', 'data-key': 'loss', text: `${p.nullKeysDropped} null-key records are discarded, but no live segment is lost.` }));
  } else {
    box.append(el('p', { class: 'ok', 'data-key': 'loss', text: 'No live segment is lost.' }));
  }
}
$('p-time').addEventListener('input', schedulePreview);
$('p-preset').addEventListener('change', () => {
  usePreset($('p-preset').value);
  runPreview();
});
for (const id of ['p-policy', 'p-retention', 'p-lag', 'p-delete-retention', 'p-segment-ms', 'p-segment-records']) $(id).addEventListener('change', runPreview);

window.addEventListener('error', (e) => fatal(`The page failed: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => fatal(`The page failed: ${e.reason?.message ?? e.reason}`));
start();
