// The inspector's decoding thread: owns the rlmeta module and the opened files; answers the
// page's requests. Everything it sends is plain data or typed arrays (transferred, not copied).
//
// The page runs two: one indexes the files and answers requests, the other replays them with the
// core's inspector at the same time.
// Protocol (page -> worker): {type:'init', module} once (a compiled WebAssembly.Module), then
// {type:'open', role, files:[{name, buffer}]}; requests {type, id, ...} answered with
// {type:'reply', id, result | error}. Worker -> page: 'ready', 'checkpoint', 'tables', 'rows' (a
// chunk of columns), 'indexed', 'summary', 'fatal'.

import init from 'rlmeta-pkg/web.mjs';

/** Rows in the first chunk: enough for the first screens, small enough to show at once. */
const FIRST_CHUNK = 2000;
const CHUNK = 250000;
const PEEK_BYTES = 1 << 20;

let rlmeta;
let log;
let rows = 0;

const transferables = (obj) => Object.values(obj).filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer);
const faultText = (e) => (e && e.message ? e.message : String(e));

function postRows(from, to) {
  const columns = log.columns(from, to);
  postMessage({ type: 'rows', from, to, columns }, transferables(columns));
}

/**
 * `role` 'index': checkpoints, then the segment files walked into columns (posted in chunks),
 * tables, faults and the migration check; this instance then answers the page's requests.
 * `role` 'replay': the core's inspector over the same files (lifecycles, summary), in parallel.
 */
async function open(files, role) {
  log?.free();
  log = rlmeta.openSegmentLog();
  rows = 0;
  const segments = files.filter((f) => !f.name.endsWith('.checkpoint'));
  // Segment files are named by base offset: name order is offset order.
  segments.sort((a, b) => (a.name.split('/').pop() < b.name.split('/').pop() ? -1 : 1));
  if (role === 'replay') {
    for (const f of segments) log.addFile(f.name, new Uint8Array(f.buffer));
    if (segments.length === 0) return;
    const t = performance.now();
    log.summarize();
    const summarizeMs = performance.now() - t;
    postMessage({ type: 'summary', summarizeMs, summary: log.summary(), lifecycles: log.lifecycles() });
    log.free();
    log = undefined;
    return;
  }
  for (const f of files.filter((f) => f.name.endsWith('.checkpoint'))) {
    try {
      postMessage({ type: 'checkpoint', name: f.name, info: rlmeta.openCheckpoint(new Uint8Array(f.buffer)) });
    } catch (e) {
      postMessage({ type: 'checkpoint', name: f.name, error: { message: faultText(e), kind: e.kind, offset: e.offset } });
    }
  }
  if (segments.length === 0) {
    postMessage({ type: 'indexed', rows: 0, tables: null, faults: [], segments: 0 });
    return;
  }
  // A large file: its first MiB first, on its own, for the first screens (the whole file is
  // copied into the module before anything else can be read). Its rows, tables and batches come
  // first in the whole file's too, in the same order.
  const head = segments[0].buffer;
  if (head.byteLength > PEEK_BYTES * 4) {
    const peek = rlmeta.openSegmentLog();
    peek.addFile(segments[0].name, new Uint8Array(head, 0, PEEK_BYTES));
    peek.index(FIRST_CHUNK);
    postMessage({ type: 'tables', tables: peek.tables() });
    const columns = peek.columns(0, peek.rows());
    postMessage({ type: 'rows', from: 0, to: peek.rows(), columns, peek: true }, transferables(columns));
    peek.free();
  }
  for (const f of segments) log.addFile(f.name, new Uint8Array(f.buffer));
  let done = log.index(FIRST_CHUNK);
  postMessage({ type: 'tables', tables: log.tables() });
  let n = log.rows();
  postRows(0, n);
  rows = n;
  while (!done) {
    done = log.index(CHUNK);
    n = log.rows();
    postRows(rows, n);
    rows = n;
  }
  postMessage({ type: 'indexed', rows, tables: log.tables(), faults: log.faults(), segments: segments.length, counts: log.counts(), readiness: log.readinessAtLevel1() });
}

const requests = {
  keys: ({ rows: wanted }) => log.keyTexts(wanted),
  record: ({ row }) => log.record(row),
  keysContaining: ({ needle }) => log.keysContaining(needle),
  preview: ({ config, nowMs }) => log.preview(config, nowMs),
};

onmessage = async ({ data }) => {
  try {
    if (data.type === 'init') {
      rlmeta = await init(data.module);
      postMessage({ type: 'ready', version: rlmeta.version() });
    } else if (data.type === 'open') {
      await open(data.files, data.role);
    } else {
      const result = requests[data.type](data);
      postMessage({ type: 'reply', id: data.id, result }, ArrayBuffer.isView(result) ? [result.buffer] : []);
    }
  } catch (e) {
    if (data.id !== undefined) postMessage({ type: 'reply', id: data.id, error: faultText(e) });
    else postMessage({ type: 'fatal', message: faultText(e) });
  }
};
