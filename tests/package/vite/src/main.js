// What a user's Vite app does with the package: import it by name, instantiate (the .wasm is the
// asset Vite emitted for the package's `new URL(..., import.meta.url)`), decode. ?hex= a value to
// decode, ?segment= a segment file's URL to open. The result goes to #out as JSON.
import init, { RlmetaError, TruncatedError } from 'rlmeta';

const hexToBytes = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));

async function run() {
  const rlmeta = await init();
  const params = new URLSearchParams(location.search);
  const value = hexToBytes(params.get('hex') ?? '');
  const result = { version: rlmeta.version(), value: rlmeta.decodeValue(value), key: rlmeta.keyForValue(value) };
  try {
    rlmeta.decodeValue(hexToBytes('0100'));
    result.error = null;
  } catch (e) {
    result.error = { name: e.name, code: e.code, rlmetaError: e instanceof RlmetaError, truncated: e instanceof TruncatedError };
  }
  const segment = params.get('segment');
  if (segment) {
    const log = rlmeta.openSegmentLog();
    log.addFile(segment, new Uint8Array(await (await fetch(segment)).arrayBuffer()));
    while (!log.index(1 << 20));
    log.summarize();
    result.rows = log.rows();
    result.summary = log.summary();
    log.free();
  }
  return result;
}

const out = document.getElementById('out');
run().then(
  (r) => {
    out.textContent = JSON.stringify(r);
    document.body.dataset.state = 'done';
  },
  (e) => {
    out.textContent = String(e?.stack ?? e);
    document.body.dataset.state = 'error';
  },
);
