// The JS API beyond the vectors: errors, argument types, 64-bit extremes, traps, both builds.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import vm from 'node:vm';

import { PKG, ROOT, bytesToHex, hexToBytes, loadBuilds, thrown } from './helpers.mjs';

const builds = await loadBuilds();
const { createApi } = await import(pathToFileURL(join(PKG, 'api.mjs')).href);

// pub-v0-seg-state0-cm-null-1epoch-name1-p0 of tests/vectors/v0.json
const SEGMENT_V0 = hexToBytes(
  '01000002666d863579f7af219da11b0715b72181510000000000cf7d9e31da17031b33b9d13891711dcc00000000ca40903b8b000000' +
    'ca40994f53000006960000017931d6b31d000001621e20366f020000001a000000ca40903b8b00007ea22a000000',
);
const TOPIC_ID = 'ASNFZ4mrze_-3LqYdlQyEA';
const MAX = '9223372036854775807';
const MIN = '-9223372036854775808';

/** A version-1 partition-delete value with the 64-bit fields at `eventTimestampMs`/`endOffset`. */
const partitionDelete = (eventTimestampMs, endOffset) => ({
  apiKey: 2,
  version: 1,
  record: {
    topicIdPartition: { name: 'orders', id: TOPIC_ID, partition: 7 },
    brokerId: 1, eventTimestampMs, remotePartitionDeleteState: 0, brokerLeaderEpoch: 2147483647, endOffset,
  },
});

const camel = (kind) => kind.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('') + 'Error';

for (const { build, api, module } of builds) {
  describe(`${build} build`, () => {
    test('version is the crate version', () => {
      const cargo = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8').match(/^version = "(.*)"$/m)[1];
      assert.equal(api.version(), cargo);
    });

    test('a truncated value throws TruncatedError with code, kind, offset and field', () => {
      const e = thrown(() => api.decodeValue(SEGMENT_V0.subarray(0, 20)));
      assert.ok(e instanceof module.TruncatedError && e instanceof module.RlmetaError && e instanceof Error);
      assert.equal(e.name, 'TruncatedError');
      assert.equal(e.code, api.errorCodes().truncated);
      assert.equal(e.code, 1);
      assert.equal(e.kind, 'truncated');
      assert.equal(typeof e.offset, 'number');
      assert.ok(e.offset <= 20, `offset ${e.offset}`);
      assert.equal(typeof e.field, 'string');
      assert.ok(e.message.startsWith(`truncated (code 1) at byte ${e.offset}, field ${e.field}: `), e.message);
      assert.ok(e.message.endsWith(e.detail) && e.detail.length > 0);
      assert.match(e.stack, /TruncatedError/);
    });

    test('errors without a position have offset and field undefined, or a field only', () => {
      const e = thrown(() => api.keyParse('nope'));
      assert.ok(e instanceof module.InvalidKeyError);
      assert.equal(e.offset, undefined);
      const b = thrown(() => api.keyParse(Uint8Array.of(0x41, 0xff)));
      assert.ok(b instanceof module.InvalidKeyError);
      assert.equal(b.offset, 1);
      const j = thrown(() => api.encodeValue({}));
      assert.ok(j instanceof module.InvalidJsonError);
      assert.equal(j.field, 'apiKey');
      assert.equal(j.offset, undefined);
    });

    test('every core error kind has its class, named after it, in code order', () => {
      const codes = api.errorCodes();
      assert.ok(Object.isFrozen(codes));
      assert.deepEqual(Object.keys(module.errorClasses), Object.keys(codes));
      for (const [kind, Class] of Object.entries(module.errorClasses)) {
        assert.equal(Class.name, camel(kind));
        assert.equal(Class.kind, kind);
        assert.equal(module[Class.name], Class, `${Class.name} is exported`);
        assert.ok(Class.prototype instanceof module.RlmetaError);
      }
      assert.equal(codes.internal, 99);
    });

    test('each error\'s name is its class name, spelled from its kind (minifiers rename classes)', () => {
      for (const [kind, Class] of Object.entries(module.errorClasses)) {
        assert.equal(new Class('x', { kind }).name, Class.name);
      }
      assert.equal(new module.RlmetaError('x').name, 'RlmetaError');
    });

    test('the hand-written .d.mts declare the same classes', () => {
      const dts = readFileSync(join(PKG, 'errors.d.mts'), 'utf8');
      const declared = [...dts.matchAll(/export class (\w+) extends RlmetaError \{ static readonly kind: '(\w+)'; \}/g)];
      assert.deepEqual(declared.map((m) => [m[2], m[1]]), Object.entries(module.errorClasses).map(([k, c]) => [k, c.name]));
      const kinds = dts.match(/export type ErrorKindName =([^;]*);/)[1].match(/'(\w+)'/g).map((s) => s.slice(1, -1));
      assert.deepEqual(kinds, Object.keys(api.errorCodes()));
    });

    test('core errors map to their classes', () => {
      const { brokerLeaderEpoch, endOffset, ...untagged } = partitionDelete('0', '0').record;
      const deleteV0 = api.encodeValue({ apiKey: 2, version: 0, record: untagged });
      const cases = [
        [() => api.metadataPartition('not a uuid', 0, 50), 'InvalidUuidError'],
        [() => api.metadataPartition(TOPIC_ID, 0, 0), 'InvalidArgumentError', 'numPartitions'],
        [() => api.keyFormat({ topicId: TOPIC_ID, topic: 'a:b', partition: 0, endOffset: 0, brokerLeaderEpoch: 0, update: false }),
          'InvalidArgumentError', 'topic'],
        [() => api.encodeValue({ apiKey: 9, version: 0, record: {} }), 'UnknownApiKeyError', 'apiKey'],
        [() => api.encodeValue({ ...partitionDelete('0', '0'), version: '1.5' }), 'InvalidJsonError', 'version'],
        [() => api.decodeValue(Uint8Array.of(0)), 'BadFrameVersionError'],
        [() => api.decodeValue(Uint8Array.of(...SEGMENT_V0, 0)), 'TrailingBytesError'],
        [() => api.keyForValue(deleteV0), 'UnsupportedVersionError', 'version'],
        [() => api.encodeValue({ ...partitionDelete('0', '0'), version: 0 }), 'UnsupportedVersionError'],
      ];
      for (const [fn, name, field] of cases) {
        const e = thrown(fn);
        assert.equal(e.name, name, `${fn}: ${e}`);
        assert.ok(e instanceof module[name]);
        if (field !== undefined) assert.equal(e.field, field);
      }
    });

    test('outputs are plain objects and fresh bytes', () => {
      const v = api.decodeValue(SEGMENT_V0);
      assert.equal(Object.getPrototypeOf(v), Object.prototype);
      assert.equal(Object.getPrototypeOf(v.record.remoteLogSegmentId), Object.prototype);
      const k = api.keyParse(`${TOPIC_ID}:orders:7:42:3`);
      assert.equal(Object.getPrototypeOf(k), Object.prototype);
      assert.deepEqual(k, { topicId: TOPIC_ID, topic: 'orders', partition: 7, endOffset: '42', brokerLeaderEpoch: 3, update: false });
      const a = api.encodeValue(v);
      const b = api.encodeValue(v);
      assert.ok(a instanceof Uint8Array && a !== b && a.buffer !== b.buffer);
      assert.deepEqual(a, SEGMENT_V0);
    });

    test('any realm\'s Uint8Array is accepted, Buffer included', () => {
      const foreign = vm.runInNewContext(`Uint8Array.from([${SEGMENT_V0.join(',')}])`);
      assert.ok(!(foreign instanceof Uint8Array));
      assert.deepEqual(api.decodeValue(foreign), api.decodeValue(SEGMENT_V0));
      assert.deepEqual(api.decodeValue(Buffer.from(SEGMENT_V0)), api.decodeValue(SEGMENT_V0));
      const key = `${TOPIC_ID}:orders:7:42:3:UPDATE`;
      assert.deepEqual(api.keyParse(Buffer.from(key)), api.keyParse(key));
    });

    test('64-bit extremes stay exact both ways', () => {
      for (const [ts, end] of [[MAX, MIN], [MIN, MAX], ['9007199254740993', '-9007199254740993']]) {
        const asStrings = api.encodeValue(partitionDelete(ts, end));
        const asBigints = api.encodeValue(partitionDelete(BigInt(ts), BigInt(end)));
        assert.deepEqual(asBigints, asStrings);
        const back = api.decodeValue(asStrings);
        assert.equal(back.record.eventTimestampMs, ts);
        assert.equal(back.record.endOffset, end);
        assert.deepEqual(back, partitionDelete(ts, end));
        assert.equal(api.keyForValue(asStrings), `${TOPIC_ID}:orders:7:${end}:2147483647:UPDATE`);
        assert.equal(api.keyParse(api.keyForValue(asStrings)).endOffset, end);
      }
      for (const end of [MAX, MIN, BigInt(MAX), BigInt(MIN), Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
        const fields = { topicId: TOPIC_ID, topic: 'orders', partition: -2147483648, endOffset: end, brokerLeaderEpoch: 2147483647, update: true };
        const key = api.keyFormat(fields);
        assert.equal(key, `${TOPIC_ID}:orders:-2147483648:${end}:2147483647:UPDATE`);
        assert.deepEqual(api.keyParse(key), { ...fields, endOffset: String(end) });
      }
    });

    test('wrong argument types throw TypeError, out-of-range integers RangeError, and the module lives on', () => {
      const key = { topicId: TOPIC_ID, topic: 'orders', partition: 7, endOffset: '42', brokerLeaderEpoch: 3, update: false };
      const typeErrors = [
        () => api.decodeValue(), () => api.decodeValue(null), () => api.decodeValue('0100'), () => api.decodeValue(5),
        () => api.decodeValue([1, 0]), () => api.decodeValue(SEGMENT_V0.buffer), () => api.decodeValue(new Uint16Array(4)),
        () => api.decodeValue(new DataView(new ArrayBuffer(4))), () => api.decodeValue({ length: 3 }),
        () => api.encodeValue(), () => api.encodeValue(null), () => api.encodeValue('{}'), () => api.encodeValue([]),
        () => api.encodeValue(SEGMENT_V0.length),
        () => { const o = {}; o.self = o; api.encodeValue(o); },
        () => api.keyForValue('x'), () => api.keyParse(), () => api.keyParse(42), () => api.keyParse([65]),
        () => api.keyFormat(), () => api.keyFormat('k'), () => api.keyFormat({ ...key, topicId: 1 }),
        () => api.keyFormat({ ...key, topic: undefined }), () => api.keyFormat({ ...key, partition: '7' }),
        () => api.keyFormat({ ...key, partition: 1.5 }), () => api.keyFormat({ ...key, partition: NaN }),
        () => api.keyFormat({ ...key, partition: 7n }), () => api.keyFormat({ ...key, update: 'true' }),
        () => api.keyFormat({ ...key, update: undefined }), () => api.keyFormat({ ...key, brokerLeaderEpoch: null }),
        () => api.keyFormat({ ...key, endOffset: 1.5 }), () => api.keyFormat({ ...key, endOffset: 2 ** 53 }),
        () => api.keyFormat({ ...key, endOffset: 'abc' }), () => api.keyFormat({ ...key, endOffset: '01' }),
        () => api.keyFormat({ ...key, endOffset: '-0' }), () => api.keyFormat({ ...key, endOffset: '+1' }),
        () => api.keyFormat({ ...key, endOffset: ' 1' }), () => api.keyFormat({ ...key, endOffset: '' }),
        () => api.keyFormat({ ...key, endOffset: '0x10' }), () => api.keyFormat({ ...key, endOffset: undefined }),
        () => api.metadataPartition(TOPIC_ID, '0', 50), () => api.metadataPartition(TOPIC_ID, 0), () => api.metadataPartition(),
        () => api.metadataPartition(Symbol('x'), 0, 1),
        () => api.errorKindForKafkaMessage(), () => api.errorKindForKafkaMessage(new String('x')),
      ];
      for (const fn of typeErrors) assert.ok(thrown(fn) instanceof TypeError, `${fn} gave ${thrown(fn)}`);
      const rangeErrors = [
        () => api.keyFormat({ ...key, partition: 2 ** 31 }), () => api.keyFormat({ ...key, brokerLeaderEpoch: -(2 ** 31) - 1 }),
        () => api.keyFormat({ ...key, endOffset: 2n ** 63n }), () => api.keyFormat({ ...key, endOffset: '9223372036854775808' }),
        () => api.keyFormat({ ...key, endOffset: -(2n ** 63n) - 1n }),
        () => api.metadataPartition(TOPIC_ID, 0, 2 ** 32), () => api.metadataPartition(TOPIC_ID, -(2 ** 40), 1),
      ];
      for (const fn of rangeErrors) assert.ok(thrown(fn) instanceof RangeError, `${fn} gave ${thrown(fn)}`);
      assert.equal(api.keyFormat(key), `${TOPIC_ID}:orders:7:42:3`);
      assert.equal(bytesToHex(api.encodeValue(api.decodeValue(SEGMENT_V0))), bytesToHex(SEGMENT_V0));
    });

    test('errorKindForKafkaMessage names known faults, undefined otherwise', () => {
      const codes = api.errorCodes();
      assert.equal(api.errorKindForKafkaMessage('MetadataParseException: Unknown metadata id 7'), codes.unknown_api_key);
      assert.equal(api.errorKindForKafkaMessage('java.nio.BufferUnderflowException'), codes.truncated);
      assert.equal(api.errorKindForKafkaMessage('all is well'), undefined);
    });

    test('a trap becomes an InternalError and a fresh instance serves the next call', (t) => {
      // 2 GiB, never touched (wasm32's allocator refuses a layout this size and aborts), unless
      // this host will not even reserve it.
      let huge;
      try {
        huge = new Uint8Array(2 ** 31);
      } catch (e) {
        return t.skip(`cannot reserve 2 GiB here: ${e}`);
      }
      const e = thrown(() => api.decodeValue(huge));
      assert.ok(e instanceof module.InternalError, String(e));
      assert.equal(e.code, 99);
      assert.equal(e.kind, 'internal');
      assert.ok(e.cause instanceof WebAssembly.RuntimeError);
      assert.deepEqual(api.encodeValue(api.decodeValue(SEGMENT_V0)), SEGMENT_V0);
      assert.ok(thrown(() => api.decodeValue(SEGMENT_V0.subarray(0, 3))) instanceof module.TruncatedError);
    });
  });
}

describe('wrapper over a module that traps', () => {
  const fake = (native) => ({
    RawError: class RawError {},
    errorCodesJson: () => JSON.stringify({ truncated: 1, internal: 99 }),
    takePanicMessage: () => 'panicked at core/src/x.rs:1:1: oops',
    __wbg_reset_state: () => {},
    ...native,
  });
  const trap = () => {
    throw new WebAssembly.RuntimeError('unreachable');
  };

  test('the panic message is kept and the instance reset', () => {
    let resets = 0;
    let calls = 0;
    const api = createApi(fake({ version: () => (++calls === 1 ? trap() : 'ok'), __wbg_reset_state: () => resets++ }));
    const e = thrown(() => api.version());
    assert.equal(e.name, 'InternalError');
    assert.match(e.message, /^internal \(code 99\): .*trapped: panicked at core\/src\/x\.rs:1:1: oops$/);
    assert.equal(e.detail, 'panicked at core/src/x.rs:1:1: oops');
    assert.equal(resets, 1);
    assert.equal(api.version(), 'ok');
  });

  test('a module that cannot be reset refuses every later call', () => {
    const api = createApi(fake({ version: trap, takePanicMessage: trap, __wbg_reset_state: trap }));
    const first = thrown(() => api.version());
    assert.equal(first.name, 'InternalError');
    assert.match(first.detail, /unreachable \(no Rust panic/);
    const later = thrown(() => api.errorKindForKafkaMessage('x'));
    assert.equal(later.name, 'InternalError');
    assert.match(later.message, /unusable since it trapped/);
  });

  test('other exceptions pass through untouched', () => {
    const boom = new Error('boom');
    const api = createApi(fake({ version: () => { throw boom; } }));
    assert.equal(thrown(() => api.version()), boom);
  });
});

describe('web build', () => {
  test('init takes a compiled module too, and returns a working API', async () => {
    const web = await import(pathToFileURL(join(PKG, 'web.mjs')).href);
    const wasm = readFileSync(join(PKG, 'rlmeta_wasm_bg.wasm'));
    const api = await web.default(new WebAssembly.Module(wasm));
    assert.equal(api.metadataPartition(TOPIC_ID, 0, 50), 11);
  });

  test('the one package points Node and everything else at their entry points', () => {
    const pkg = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'rlmeta');
    assert.equal(pkg.type, 'module');
    assert.deepEqual(pkg.exports['.'], {
      node: { types: './index.d.mts', default: './index.mjs' },
      default: { types: './web.d.mts', default: './web.mjs' },
    });
    assert.equal(pkg.version, builds[0].api.version());
    for (const f of pkg.files) assert.ok(existsSync(join(PKG, f)), `${f} is listed in files and built`);
  });
});
