// The inspector's decoding thread: owns the rlmeta module and the opened files; answers the
// page's requests. Everything it sends is plain data or typed arrays (transferred, not copied).
//
// It never holds a segment file whole: it reads the File in slices (File.slice, which reads from
// disk) and hands them to the module, which keeps the index's batch table, tables and counts but
// not the bytes; the columns go to the page as they grow and the module forgets them. A view that
// needs records (key texts, a record's details, a key search, the compaction preview) reads back
// only the byte ranges of the batches it needs (the module says which), hands them over, asks, and
// drops them.
//
// The page runs two: one indexes the files and answers requests, the other replays them with the
// core's inspector at the same time (`lean`: counts, live segments and level only; no lifecycles
// and no compaction what-if, which hold every segment's history and every record's key).
// Protocol (page -> worker): {type:'init', module} once (a compiled WebAssembly.Module), then
// {type:'open', role, lean, files:[{name, file}]} (File objects: cloned by reference, no bytes
// copied); requests {type, id, ...} answered with {type:'reply', id, result | error}. Worker ->
// page: 'ready', 'checkpoint', 'tables', 'rows' (a chunk of columns), 'indexed', 'summary', 'fatal'.

import init from 'rlmeta-pkg/web.mjs';

/** The first slice: its rows are the first screens, shown at once. */
const FIRST_SLICE = 1 << 20;
/** Bytes read from a file at a time. */
const SLICE = 8 << 20;
/** Rows posted at a time (at least; the page filters only the new ones). */
const CHUNK = 250000;
/** A view reads back ranges of at most this many bytes (bytes between the batches it needs
 * included); a key search reads the files in ranges of SLICE. */
const VIEW_RANGE = 1 << 20;
/** The columns the page keeps (the others, sizes and batchOf, are the module's to use). */
const PAGE_COLUMNS = ['offsets', 'timestamps', 'kinds', 'states', 'flags', 'keySizes', 'valueSizes', 'partitionOf', 'segmentOf'];

let rlmeta;
let log;
/** The segment files in feeding order (a fault's and a range's file number indexes it). */
let segmentFiles = [];
let lean = false;

const transferables = (obj) => Object.values(obj).filter((v) => ArrayBuffer.isView(v)).map((v) => v.buffer);
const faultText = (e) => (e && e.message ? e.message : String(e));
const readBytes = async (file, start, end) => new Uint8Array(await file.slice(start, end).arrayBuffer());

/** Every slice of a file in order: the first one small when `first` (the first screens). */
async function* slices(file, first) {
  let pos = 0;
  while (pos < file.size) {
    const end = Math.min(file.size, pos + (first && pos === 0 ? FIRST_SLICE : SLICE));
    yield readBytes(file, pos, end);
    pos = end;
  }
}

/** Segment files are named by base offset: name order is offset order. */
const byOffset = (files) => files.filter((f) => !f.name.endsWith('.checkpoint'))
  .sort((a, b) => (a.name.split('/').pop() < b.name.split('/').pop() ? -1 : 1));

/**
 * `role` 'index': checkpoints, then the segment files read slice by slice into columns (posted in
 * chunks), tables, faults and the migration check; this instance then answers the page's requests.
 * `role` 'replay': the core's inspector over the same files (lifecycles, summary), in parallel.
 */
async function open(files, role) {
  const previous = log;
  const mine = rlmeta.openSegmentLog();
  log = mine;
  if (previous && !reading.has(previous)) previous.free();
  reading.add(mine);
  try {
    await read(mine, files, role);
  } finally {
    reading.delete(mine);
    if (log !== mine || role === 'replay') mine.free();
    if (log === mine && role === 'replay') log = undefined;
  }
}

/** The logs whose files are being read (a log superseded meanwhile is freed when its read ends). */
const reading = new Set();
class Superseded extends Error {}

async function read(mine, files, role) {
  // Other files opened meanwhile: this read stops at its next slice.
  const current = () => {
    if (log !== mine) throw new Superseded();
  };
  const segments = byOffset(files);
  const total = segments.reduce((n, f) => n + f.file.size, 0);
  if (role === 'replay') {
    if (segments.length === 0) return;
    const t = performance.now();
    mine.beginReplay(lean, total);
    for (const f of segments) {
      mine.replayFile(f.file.size);
      for await (const bytes of slices(f.file, false)) {
        current();
        mine.replayPush(bytes);
      }
    }
    mine.endReplay();
    const summarizeMs = performance.now() - t;
    postMessage({ type: 'summary', summarizeMs, lean, summary: mine.summary(), lifecycles: mine.lifecycles() });
    return;
  }
  for (const f of files.filter((f) => f.name.endsWith('.checkpoint'))) {
    try {
      const bytes = await readBytes(f.file, 0, f.file.size);
      current();
      const info = rlmeta.openCheckpoint(bytes);
      postMessage({ type: 'checkpoint', name: f.name, info });
    } catch (e) {
      postMessage({ type: 'checkpoint', name: f.name, error: { message: faultText(e), kind: e.kind, offset: e.offset } });
    }
  }
  segmentFiles = segments.map((f) => f.file);
  if (segments.length === 0) {
    postMessage({ type: 'indexed', rows: 0, tables: null, faults: [], segments: 0 });
    return;
  }
  let posted = 0;
  let read = 0;
  const post = (done) => {
    const rows = mine.rows();
    if (rows === posted || (!done && posted > 0 && rows - posted < CHUNK)) return;
    if (posted === 0) postMessage({ type: 'tables', tables: mine.tables({ segmentIds: false }) });
    const all = mine.columns(posted, rows);
    const columns = Object.fromEntries(PAGE_COLUMNS.map((k) => [k, all[k]]));
    // How many rows the files hold, by the rows per byte so far: the page sizes its columns once.
    const estimate = Math.ceil((rows * total) / Math.max(read, 1));
    postMessage({ type: 'rows', from: posted, to: rows, estimate, columns }, transferables(columns));
    mine.forgetColumns();
    posted = rows;
  };
  for (const [i, f] of segments.entries()) {
    mine.beginFile(f.name);
    for await (const bytes of slices(f.file, i === 0)) {
      current();
      mine.push(bytes);
      read += bytes.length;
      post(false);
    }
    mine.endFile();
  }
  post(true);
  postMessage({ type: 'indexed', rows: mine.rows(), tables: mine.tables({ segmentIds: false }), faults: mine.faults(), segments: segments.length, counts: mine.counts(), readiness: mine.readinessAtLevel1() });
}

/** Calls `ask` with the byte ranges (flat [file, start, end, ...]) of the segment files handed
 * to the log, then drops them. */
async function withRanges(l, ranges, ask) {
  try {
    for (let i = 0; i < ranges.length; i += 3) {
      const bytes = await readBytes(segmentFiles[ranges[i]], ranges[i + 1], ranges[i + 2]);
      if (l !== log) throw new Superseded();
      l.addWindow(ranges[i], ranges[i + 1], bytes);
    }
    return ask();
  } finally {
    if (l === log) l.clearWindows();
  }
}

const requests = {
  keys: ({ rows }, l) => withRanges(l, l.rowRanges(rows, VIEW_RANGE), () => l.keyTexts(rows)),
  /** The segment-id table stays here (one string per segment is the largest table). */
  segmentsContaining: ({ needle }, l) => l.segmentsContaining(needle),
  record: ({ row }, l) => withRanges(l, l.rowRanges([row], VIEW_RANGE), () => l.record(row)),
  /** A key search reads every batch, one range at a time. */
  keysContaining: async ({ needle }, l) => {
    const ranges = l.allRanges(SLICE);
    const found = [];
    for (let i = 0; i < ranges.length; i += 3) found.push(await withRanges(l, ranges.subarray(i, i + 3), () => l.keysContaining(needle)));
    const out = new Uint32Array(found.reduce((n, f) => n + f.length, 0));
    let at = 0;
    for (const f of found) {
      out.set(f, at);
      at += f.length;
    }
    return out;
  },
  /** The cleaner's model holds every record: over files the page opened in full (not lean),
   * handed over range by range (each slice's ArrayBuffer is dropped once the module has it). */
  preview: ({ config, nowMs }, l) => {
    if (lean) throw new Error('the compaction preview is not computed for files this large');
    return withRanges(l, l.allRanges(SLICE), () => l.preview(config, nowMs));
  },
};

// Requests run one at a time (each hands the module its own byte ranges), beside the indexing.
let queue = Promise.resolve();
onmessage = ({ data }) => {
  const run = async () => {
    try {
      if (data.type === 'init') {
        rlmeta = await init(data.module);
        postMessage({ type: 'ready', version: rlmeta.version() });
      } else if (data.type === 'open') {
        lean = Boolean(data.lean);
        await open(data.files, data.role);
      } else {
        const result = await requests[data.type](data, log);
        postMessage({ type: 'reply', id: data.id, result }, ArrayBuffer.isView(result) ? [result.buffer] : []);
      }
    } catch (e) {
      if (e instanceof Superseded) return;
      if (data.id !== undefined) postMessage({ type: 'reply', id: data.id, error: faultText(e) });
      else postMessage({ type: 'fatal', message: faultText(e) });
    }
  };
  if (data.type === 'open' || data.type === 'init') run();
  else queue = queue.then(run);
};
