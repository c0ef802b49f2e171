// Shared by the Node tests: a lossless JSON reader for the vector files, hex, the two builds.
//
// RLMETA_VECTORS: vector files (whitespace-separated paths; default tests/vectors/*.json).
// RLMETA_WASM_BUILD: the directory holding pkg/, the npm package (default build/).

import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUILD = resolve(process.env.RLMETA_WASM_BUILD ?? join(ROOT, 'build'));
/** The npm package as built (make wasm-build): both entry points, one module. */
export const PKG = join(BUILD, 'pkg');

/**
 * Parses JSON text keeping every integer exact: integer literals become bigints, other numbers
 * Numbers. (JSON.parse rounds integers above 2^53, and the vectors hold Long.MIN/MAX_VALUE.)
 */
export function parseJsonLossless(text) {
  let i = 0;
  const fail = (why) => {
    throw new SyntaxError(`JSON: ${why} at offset ${i}`);
  };
  const skip = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const expect = (word, value) => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail(`expected ${word}`);
  };
  const special = /["\\]/g;
  const string = () => {
    let out = '';
    i++; // the opening quote
    for (;;) {
      special.lastIndex = i;
      const end = special.exec(text)?.index;
      if (end === undefined) fail('unterminated string');
      out += text.slice(i, end);
      i = end;
      if (text[i++] === '"') return out;
      const esc = text[i++];
      if (esc === 'u') {
        const hex = text.slice(i, i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('bad \\u escape');
        out += String.fromCharCode(parseInt(hex, 16)); // surrogate pairs join by themselves
        i += 4;
      } else {
        const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[esc];
        if (simple === undefined) fail(`bad escape \\${esc}`);
        out += simple;
      }
    }
  };
  const number = () => {
    const m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('bad number');
    i += m[0].length;
    return m[1] === undefined && m[2] === undefined ? BigInt(m[0]) : Number(m[0]);
  };
  const value = () => {
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj = {};
      skip();
      if (text[i] === '}') return i++, obj;
      for (;;) {
        skip();
        if (text[i] !== '"') fail('expected a key');
        const key = string();
        skip();
        if (text[i++] !== ':') fail('expected :');
        Object.defineProperty(obj, key, { value: value(), enumerable: true, writable: true, configurable: true });
        skip();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return i++, obj;
        else fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const arr = [];
      skip();
      if (text[i] === ']') return i++, arr;
      for (;;) {
        arr.push(value());
        skip();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return i++, arr;
        else fail('expected , or ]');
      }
    }
    if (c === '"') return string();
    if (c === 't') return expect('true', true);
    if (c === 'f') return expect('false', false);
    if (c === 'n') return expect('null', null);
    return number();
  };
  const result = value();
  skip();
  if (i !== text.length) fail('trailing characters');
  return result;
}

/** The vector files to run. */
export function vectorFiles() {
  const listed = (process.env.RLMETA_VECTORS ?? '').split(/\s+/).filter(Boolean);
  if (listed.length > 0) return listed;
  const dir = join(ROOT, 'tests/vectors');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => join(dir, f));
  // No input is a failure, not zero passing tests.
  if (files.length === 0) throw new Error(`no vector files in ${dir}`);
  return files;
}

export function hexToBytes(hex) {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error(`not hex: ${hex}`);
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A bigint from the lossless reader as a Number, when it is one exactly. */
export function int(v) {
  if (typeof v !== 'bigint' || BigInt(Number(v)) !== v) throw new Error(`not a safe integer: ${v}`);
  return Number(v);
}

/** The schema's 64-bit fields (int64 in the record schemas): decimal strings in JS. */
export const INT64_FIELDS = new Set(['startOffset', 'endOffset', 'maxTimestampMs', 'eventTimestampMs', 'offset']);

/** A record read losslessly, in the form decodeValue gives: int64 fields as decimal strings,
 * every other integer a Number. */
export function jsForm(v, key) {
  if (typeof v === 'bigint') return INT64_FIELDS.has(key) ? v.toString() : int(v);
  if (Array.isArray(v)) return v.map((x) => jsForm(x, key));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsForm(x, k)]));
  return v;
}

/** What `fn` throws (fails when it throws nothing). */
export function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an exception, none was thrown');
}

/** The package's Node entry and its web entry (instantiated from the .wasm bytes). */
export async function loadBuilds() {
  const node = await import(pathToFileURL(join(PKG, 'index.mjs')).href);
  const web = await import(pathToFileURL(join(PKG, 'web.mjs')).href);
  const webApi = await web.default(readFileSync(join(PKG, 'rlmeta_wasm_bg.wasm')));
  return [
    { build: 'node', api: node.default, module: node },
    { build: 'web', api: webApi, module: web },
  ];
}
