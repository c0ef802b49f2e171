// Every conformance vector (tests/vectors, README §1-4) through both builds of the JS binding.
// Cases are told apart as the Rust conformance runner does; kinds this binding does not expose
// (replay, plan, ...) are reported as skipped.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, test } from 'node:test';

import { bytesToHex, hexToBytes, int, jsForm, loadBuilds, parseJsonLossless, thrown, vectorFiles } from './helpers.mjs';

const builds = await loadBuilds();
const files = vectorFiles().map((path) => ({ path, doc: parseJsonLossless(readFileSync(path, 'utf8')) }));

function kindOf(c) {
  if (c.kind !== undefined) return c.kind;
  if (c.numPartitions !== undefined) return 'partitioner';
  if (c.key !== undefined) return 'key';
  if (c.error !== undefined) return 'invalid';
  if (c.record !== undefined) return 'value';
  return 'unknown';
}

/** The key fields KIP-1266 derives from a record (vectors README §4), or undefined for none. */
function expectedKey({ apiKey, version, record: r }) {
  const tip = r.remoteLogSegmentId?.topicIdPartition ?? r.topicIdPartition;
  const fields = (update) => ({
    topicId: tip.id, topic: tip.name, partition: tip.partition, endOffset: r.endOffset,
    brokerLeaderEpoch: r.brokerLeaderEpoch ?? 0, update,
  });
  if (apiKey === 0) return fields(false);
  if ((apiKey === 1 || apiKey === 2) && version >= 1) return fields(true);
  return undefined;
}

function valueCase({ api, module }, c) {
  const bytes = hexToBytes(c.hex);
  const want = { apiKey: int(c.apiKey), version: int(c.version), record: jsForm(c.record) };
  const got = api.decodeValue(bytes);
  assert.deepStrictEqual(got, want);
  // Encoding gives Kafka's bytes back, from the decoded form and from the vector's own numbers
  // (bigints, however large).
  assert.equal(bytesToHex(api.encodeValue(got)), c.hex.toLowerCase());
  assert.equal(bytesToHex(api.encodeValue({ apiKey: c.apiKey, version: c.version, record: c.record })), c.hex.toLowerCase());
  const key = expectedKey(want);
  if (key === undefined) {
    assert.ok(thrown(() => api.keyForValue(bytes)) instanceof module.RlmetaError);
    return;
  }
  // The key derived from the value is the key of the record's fields: both the same text, or
  // both refused alike (e.g. a topic name Kafka would not allow).
  let derived;
  try {
    derived = api.keyForValue(bytes);
  } catch (e) {
    assert.ok(e instanceof module.RlmetaError, `not an RlmetaError: ${e}`);
    assert.equal(thrown(() => api.keyFormat(key)).code, e.code);
    return;
  }
  assert.equal(derived, api.keyFormat(key));
  assert.deepStrictEqual(api.keyParse(derived), key);
}

function invalidCase({ api, module }, c) {
  const e = thrown(() => api.decodeValue(hexToBytes(c.hex)));
  assert.ok(e instanceof module.RlmetaError, `not an RlmetaError: ${e}`);
  assert.ok(e instanceof module.errorClasses[e.kind], `${e.name} is not the class of ${e.kind}`);
  assert.equal(e.code, api.errorCodes()[e.kind]);
  const kafka = [c.error, ...(c.causes ?? [])].join(' | ');
  const want = api.errorKindForKafkaMessage(kafka);
  if (want !== undefined) assert.equal(e.code, want, `rlmeta says ${e.message}; Kafka said ${kafka}`);
}

function keyCase({ api }, c) {
  const fields = {
    topicId: c.topicId, topic: c.topicName, partition: int(c.partition), endOffset: c.endOffset,
    brokerLeaderEpoch: int(c.brokerLeaderEpoch), update: c.update,
  };
  const parsed = { ...fields, endOffset: c.endOffset.toString() };
  assert.equal(api.keyFormat(fields), c.key);
  assert.equal(api.keyFormat(parsed), c.key);
  assert.deepStrictEqual(api.keyParse(c.key), parsed);
  assert.deepStrictEqual(api.keyParse(new TextEncoder().encode(c.key)), parsed);
}

function partitionerCase({ api }, c) {
  assert.equal(api.metadataPartition(c.topicId, int(c.partition), int(c.numPartitions)), int(c.metadataPartition));
}

const runners = { value: valueCase, invalid: invalidCase, key: keyCase, partitioner: partitionerCase };

for (const build of builds) {
  describe(`${build.build} build`, () => {
    for (const { path, doc } of files) {
      describe(basename(path), () => {
        test('has cases', () => assert.ok(Array.isArray(doc.cases) && doc.cases.length > 0));
        doc.cases.forEach((c, n) => {
          const kind = kindOf(c);
          const run = runners[kind];
          const name = `${kind} ${c.name ?? `#${n}`}`;
          if (kind === 'unknown') test(name, () => assert.fail('cannot tell the kind of this case'));
          else if (run === undefined) test(name, (t) => t.skip(`${kind} cases are not exposed by the JS binding`));
          else test(name, () => run(build, c));
        });
      });
    }
  });
}
