// The rlmeta JavaScript API over the wasm-bindgen module, for either build (nodejs or web).
//
// Owns: checking that arguments have the JS types the module takes (a TypeError, or a RangeError
// for an integer outside its Rust type: the generated glue would coerce or wrap it silently),
// records to and from the core's JSON text, and what the module throws turned into RlmetaError
// subclasses. Never: rules, defaults or validation of values (the core's).
// 64-bit integers (offsets, timestamps) come out as exact decimal strings, always; they go in as
// decimal strings, bigints or safe-integer numbers.

import { InternalError, RlmetaError, errorClasses } from './errors.mjs';
import { fileApi } from './files.mjs';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** A decimal integer as Java and Rust print it (what the core reads from a string). */
const DECIMAL = /^(?:0|-?[1-9][0-9]*)$/;

function describe(v) {
  if (v === null) return 'null';
  if (typeof v === 'object') return Array.isArray(v) ? 'an array' : `an object (${v.constructor?.name ?? 'no prototype'})`;
  return `a ${typeof v}`;
}

/** Any realm's Uint8Array (Node's Buffer included). */
function bytes(name, v, what = 'a Uint8Array') {
  if (ArrayBuffer.isView(v) && Object.prototype.toString.call(v) === '[object Uint8Array]') return v;
  throw new TypeError(`${name} must be ${what}, got ${describe(v)}`);
}

function text(name, v) {
  if (typeof v === 'string') return v;
  throw new TypeError(`${name} must be a string, got ${describe(v)}`);
}

function bool(name, v) {
  if (typeof v === 'boolean') return v;
  throw new TypeError(`${name} must be a boolean, got ${describe(v)}`);
}

function object(name, v) {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  throw new TypeError(`${name} must be an object, got ${describe(v)}`);
}

function int32(name, v) {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${name} must be an integer number, got ${describe(v)}`);
  if (v < INT32_MIN || v > INT32_MAX) throw new RangeError(`${name} ${v} is outside the 32-bit signed range`);
  return v;
}

function uint32(name, v) {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new TypeError(`${name} must be an integer number, got ${describe(v)}`);
  if (v < 0 || v > 0xffffffff) throw new RangeError(`${name} ${v} is outside the 32-bit unsigned range`);
  return v;
}

function int64(name, v) {
  let n;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'string' && DECIMAL.test(v)) n = BigInt(v);
  else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
  else throw new TypeError(`${name} must be a bigint, a decimal string or a safe integer number, got ${describe(v)}`);
  if (BigInt.asIntN(64, n) !== n) throw new RangeError(`${name} ${n} is outside the 64-bit signed range`);
  return n;
}

/** JSON.stringify replacer: bigints as decimal strings, which the core reads exactly. */
const bigintsAsDecimal = (_key, v) => (typeof v === 'bigint' ? v.toString() : v);

/**
 * The API over one loaded wasm-bindgen module (the nodejs build's exports or the web build's
 * namespace, initialized).
 */
export function createApi(native) {
  const codes = Object.freeze(JSON.parse(native.errorCodesJson()));
  let broken; // set when a trap left the module unusable and it could not be instantiated anew

  function fromRaw(raw) {
    try {
      const Class = errorClasses[raw.kind] ?? RlmetaError;
      return new Class(raw.display, { code: raw.code, kind: raw.kind, offset: raw.offset, field: raw.field, detail: raw.message });
    } finally {
      raw.free();
    }
  }

  // A trap (a panic, which cannot unwind on wasm32, or an abort such as memory exhausted) leaves
  // the instance's memory in an unknown state: report it and start from a fresh instance.
  function trapped(e) {
    let why;
    try {
      why = native.takePanicMessage();
    } catch {
      // the instance cannot even say why
    }
    why ??= `${e.message} (no Rust panic: an abort, e.g. memory exhausted)`;
    const details = { code: codes.internal, kind: 'internal', detail: why, cause: e };
    try {
      native.__wbg_reset_state();
    } catch (reset) {
      broken = new InternalError(`internal (code ${codes.internal}): rlmeta's WebAssembly module is unusable since it trapped: ${why}`, { ...details, cause: reset });
    }
    return new InternalError(`internal (code ${codes.internal}): rlmeta's WebAssembly module trapped: ${why}`, details);
  }

  function call(thunk) {
    if (broken) throw broken;
    try {
      return thunk();
    } catch (e) {
      if (e instanceof native.RawError) throw fromRaw(e);
      if (e instanceof WebAssembly.RuntimeError) throw trapped(e);
      throw e;
    }
  }

  function plainKey(raw) {
    try {
      return {
        topicId: raw.topicId,
        topic: raw.topic,
        partition: raw.partition,
        endOffset: raw.endOffset,
        brokerLeaderEpoch: raw.brokerLeaderEpoch,
        update: raw.update,
      };
    } finally {
      raw.free();
    }
  }

  const files = fileApi(native, call, { bytes, text, object, uint32, int64 });

  return Object.freeze({
    ...files,
    version: () => call(() => native.version()),
    errorCodes: () => codes,
    decodeValue: (value) => JSON.parse(call(() => native.decodeValueJson(bytes('value', value)))),
    encodeValue: (value) => call(() => native.encodeValueJson(JSON.stringify(object('value', value), bigintsAsDecimal))),
    keyFormat(fields) {
      const { topicId, topic, partition, endOffset, brokerLeaderEpoch, update } = object('key fields', fields);
      const args = [text('topicId', topicId), text('topic', topic), int32('partition', partition), int64('endOffset', endOffset),
        int32('brokerLeaderEpoch', brokerLeaderEpoch), bool('update', update)];
      return call(() => native.keyFormat(...args));
    },
    keyParse: (key) =>
      call(() => plainKey(typeof key === 'string' ? native.keyParse(key) : native.keyParseBytes(bytes('key', key, 'a string or a Uint8Array')))),
    keyForValue: (value) => call(() => native.keyForValue(bytes('value', value))),
    metadataPartition: (topicId, partition, numPartitions) =>
      call(() => native.metadataPartition(text('topicId', topicId), int32('partition', partition), int32('numPartitions', numPartitions))),
    errorKindForKafkaMessage: (message) => call(() => native.errorKindForKafkaMessage(text('message', message))),
  });
}
