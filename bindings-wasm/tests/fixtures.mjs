// The fixture files (tests/fixtures) and what the Rust inspector and Kafka's own tool say about
// them: shared by the Node tests and the browser tests of the inspector page.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

import { ROOT, parseJsonLossless } from './helpers.mjs';

const FIXTURES = join(ROOT, 'tests/fixtures');

function walk(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** Every segment file under tests/fixtures, relative to the repository root. */
export const SEGMENT_FIXTURES = walk(FIXTURES).filter((p) => p.endsWith('.log')).map((p) => relative(ROOT, p)).sort();
/** Every checkpoint file under tests/fixtures. */
export const CHECKPOINT_FIXTURES = walk(FIXTURES).filter((p) => p.endsWith('.checkpoint')).map((p) => relative(ROOT, p)).sort();
// No input is a failure, not zero passing tests.
if (SEGMENT_FIXTURES.length === 0 || CHECKPOINT_FIXTURES.length === 0) throw new Error(`no segment or checkpoint files under ${FIXTURES}`);

const INSPECT = process.env.RLMETA_INSPECT; // a built inspect binary; else cargo run

/** The Rust inspector's JSON for a file (`inspect --json`), 64-bit integers as bigints. */
export function rustInspection(path) {
  const args = ['--json', join(ROOT, path)];
  const out = INSPECT
    ? execFileSync(INSPECT, args, { cwd: ROOT, maxBuffer: 1 << 28 })
    : execFileSync('cargo', ['run', '-q', '--release', '-p', 'rlmeta-examples', '--bin', 'inspect', '--', ...args], { cwd: ROOT, maxBuffer: 1 << 28 });
  return parseJsonLossless(out.toString('utf8'));
}

/** The records of a dump, flat, in order. */
export const dumpRecords = (dump) => dump.batches.flatMap((b) => b.records.map((r) => ({ ...r, batch: b })));

/** The FeatureLevelRecords Kafka's own kafka-dump-log printed for a checkpoint fixture. */
export function kafkaFeatureLevels(path) {
  const name = path.split('/').slice(-2).join('-');
  const text = readFileSync(join(FIXTURES, 'broker/dump', `${name}.txt`), 'utf8');
  return [...text.matchAll(/\| offset: (\d+) .*"type":"FEATURE_LEVEL_RECORD".*"name":"([^"]+)","featureLevel":(\d+)/g)]
    .map((m) => ({ offset: m[1], name: m[2], level: Number(m[3]) }));
}

export const readFixture = (path) => new Uint8Array(readFileSync(join(ROOT, path)));
