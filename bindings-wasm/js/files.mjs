// Whole files over the wasm-bindgen module: a metadata partition's segment files, a checkpoint.
//
// Owns: turning the module's objects into plain JS values (typed arrays stay typed arrays;
// 64-bit columns are exact BigInt64Arrays, single 64-bit values exact decimal strings), freeing
// them. Never: rules (the core decides every count, state and verdict), or the tables naming the
// record kinds, flags and states the columns carry (tables.mjs, generated from the core).

import { FLAG, KIND, KIND_NAMES, MARK, PARTITION_DELETE_STATES, POLICY, SEGMENT_STATES } from './tables.mjs';

/** The tables the columns use: generated from the core (tables.mjs). */
export { FLAG, KIND, KIND_NAMES, MARK, PARTITION_DELETE_STATES, POLICY, SEGMENT_STATES };

/** The module's comma-separated id lists. */
const split = (s) => (s === '' ? [] : s.split(','));
const str = (v) => (v === undefined || v === null ? v : v.toString());

function taken(obj, read) {
  try {
    return read(obj);
  } finally {
    obj.free();
  }
}

/** Adds openSegmentLog/openCheckpoint to an API: `call` converts what the module throws. */
export function fileApi(native, call, check) {
  const plainFault = (f) => taken(f, (f) => ({
    file: f.file, code: f.code, kind: f.kind, message: f.display, position: f.position,
    recordOffset: str(f.recordOffset), row: f.row,
  }));

  function openSegmentLog() {
    const log = call(() => new native.SegmentLog());
    const range = (from, to) => [check.uint32('from', from), check.uint32('to', to)];
    return Object.freeze({
      /** Adds a segment file (add them in offset order). */
      addFile(name, bytes) {
        check.text('name', name);
        check.bytes('bytes', bytes);
        call(() => log.addFile(name, bytes));
      },
      /** Begins a streamed segment file (in offset order): its bytes come with push(), none is kept. */
      beginFile: (name) => call(() => log.beginFile(check.text('name', name))),
      /** The next bytes of the streamed file. */
      push: (chunk) => call(() => log.push(check.bytes('chunk', chunk))),
      endFile: () => call(() => log.endFile()),
      /** Forgets the columns of the rows so far (columns() then answers for later rows only). */
      forgetColumns: () => call(() => log.forgetColumns()),
      /** Byte ranges [file, start, end, ...] holding these rows' batches (runs up to maxBytes merged). */
      rowRanges: (rows, maxBytes) => call(() => log.rowRanges(Uint32Array.from(rows), check.uint32('maxBytes', maxBytes))),
      /** Byte ranges holding every batch, as rowRanges. */
      allRanges: (maxBytes) => call(() => log.allRanges(check.uint32('maxBytes', maxBytes))),
      /** Bytes of a streamed file from byte `start`, read by the views until clearWindows(). */
      addWindow(file, start, bytes) {
        const [f, s] = [check.uint32('file', file), check.uint32('start', start)];
        call(() => log.addWindow(f, s, check.bytes('bytes', bytes)));
      },
      clearWindows: () => call(() => log.clearWindows()),
      /** A replay fed in chunks: lean keeps counts, live segments and level only (no lifecycles,
       * no compaction what-if). Then replayFile(len), replayPush(chunk)... per file, endReplay(). */
      beginReplay: (lean, totalBytes) => call(() => log.beginReplay(Boolean(lean), Number(totalBytes))),
      replayFile: (len) => call(() => log.replayFile(check.uint32('len', len))),
      replayPush: (chunk) => call(() => log.replayPush(check.bytes('chunk', chunk))),
      endReplay: () => call(() => log.endReplay()),
      /** Indexes at least `budget` more records (or all); true once every file is read. */
      index: (budget = 0xffffffff) => call(() => log.index(check.uint32('budget', budget))),
      rows: () => call(() => log.rows),
      columns(from, to) {
        const [a, b] = range(from, to);
        return call(() => ({
          offsets: log.offsets(a, b), timestamps: log.timestamps(a, b), kinds: log.kinds(a, b),
          states: log.states(a, b), flags: log.flags(a, b), keySizes: log.keySizes(a, b),
          valueSizes: log.valueSizes(a, b), sizes: log.sizes(a, b), batchOf: log.batchOf(a, b),
          partitionOf: log.partitionOf(a, b), segmentOf: log.segmentOf(a, b),
        }));
      },
      /** Indexes into tables().segmentIds of the ids containing `needle`. */
      segmentsContaining: (needle) => call(() => log.segmentsContaining(check.text('needle', needle))),
      /** segmentIds: false leaves the segment ids out (null): one string per segment is the
       * largest table of a large file. */
      tables: ({ segmentIds = true } = {}) => call(() => {
        const ids = log.partitionTopicIds();
        const topics = log.partitionTopics();
        const numbers = log.partitionNumbers();
        return {
          files: log.fileNames(),
          partitions: ids.map((topicId, i) => ({ topicId, topic: topics[i], partition: numbers[i] })),
          segmentIds: segmentIds ? split(log.segmentIds()) : null,
          batches: {
            file: log.batchFiles(), position: log.batchPositions(), baseOffset: log.batchBaseOffsets(),
            lastOffset: log.batchLastOffsets(), count: log.batchCounts(), codec: log.batchCodecs(),
            crcValid: log.batchCrcValid(), size: log.batchSizes(),
          },
        };
      }),
      faults: () => call(() => log.faults().map(plainFault)),
      /** Rows whose key text contains `needle`. */
      keysContaining: (needle) => call(() => log.keysContaining(check.text('needle', needle))),
      /** Key texts of these rows ('' for a null key). */
      keyTexts: (rows) => call(() => log.keyTexts(Uint32Array.from(rows))),
      record: (row) => call(() => taken(log.record(check.uint32('row', row)), (d) => {
        const key = d.keyFields;
        return {
          file: d.file, offset: str(d.offset), timestamp: str(d.timestamp), timestampType: d.timestampType,
          sequence: d.sequence, batchPosition: d.batchPosition, batchBaseOffset: str(d.batchBaseOffset),
          compression: d.compression, crcValid: d.crcValid, producerId: str(d.producerId),
          producerEpoch: d.producerEpoch, partitionLeaderEpoch: d.partitionLeaderEpoch,
          transactional: d.transactional, control: d.control, key: d.key ?? null, keyHex: d.keyHex ?? null,
          keyFields: key === undefined ? null : taken(key, (k) => ({
            topicId: k.topicId, topic: k.topic, partition: k.partition, endOffset: k.endOffset,
            brokerLeaderEpoch: k.brokerLeaderEpoch, update: k.update,
          })),
          headers: d.headerKeys.map((k, i) => ({ key: k, valueHex: d.headerNull[i] ? null : d.headerValuesHex[i] })),
          valueHex: d.valueHex ?? null, kafkaText: d.kafkaText ?? null,
          value: d.valueJson === undefined ? null : JSON.parse(d.valueJson),
          error: d.error ?? null, kafkaError: d.kafkaError ?? null, level: d.level ?? null,
        };
      })),
      /** Replays every record with the core's inspector; call once index() returned true. */
      summarize: () => call(() => log.summarize()),
      summary: () => call(() => taken(log.summary(), (s) => ({
        records: s.records, nullKeyRecords: s.nullKeyRecords, keyedRecords: s.keyedRecords,
        tombstones: s.tombstones, undecodable: s.undecodable, fatalToOldBrokers: s.fatalToOldBrokers,
        liveSegments: s.liveSegments, orphans: s.orphans, keptByCompaction: s.keptByCompaction,
        lostByCompaction: s.lostByCompaction,
        level: s.level === -1 ? null : s.level === -2 ? 'invalid' : s.level,
        levelOffset: s.level === -1 ? null : str(s.levelOffset),
      }))),
      /** The index's counts: records read and records in or after the first corrupt batch. */
      counts: () => call(() => taken(log.counts(), (n) => ({
        records: n.records, unread: n.unread, unlisted: n.unlisted, nullKeyRecords: n.nullKeyRecords, keyedRecords: n.keyedRecords,
        tombstones: n.tombstones, levelRecords: n.levelRecords, lastNullKeyTimestamp: str(n.lastNullKeyTimestamp) ?? null,
        corrupt: Array.from(n.corruptFiles, (file, i) => ({
          file, position: n.corruptPositions[i], baseOffset: str(n.corruptBaseOffsets[i]), row: n.corruptRows[i],
        })),
      }))),
      lifecycles: () => call(() => {
        const t = log.lifecyclePartitionTable();
        const partitionTable = [];
        for (let i = 0; i < t.length; i += 3) partitionTable.push({ topicId: t[i], topic: t[i + 1], partition: Number(t[i + 2]) });
        return {
          ids: split(log.lifecycleIds()), partitionTable, partitions: log.lifecyclePartitions(), ranges: log.lifecycleRanges(),
          hasRange: log.lifecycleHasRange(), now: log.lifecycleNow(), marks: log.lifecycleMarks(),
          steps: { lifecycle: log.stepLifecycles(), offset: log.stepOffsets(), state: log.stepStates() },
        };
      }),
      /** What retention and the cleaner keep at `nowMs` under `config`. */
      preview(config, nowMs) {
        const c = check.object('config', config);
        const policy = POLICY[c.cleanupPolicy];
        if (policy === undefined) throw new TypeError(`config.cleanupPolicy must be one of ${Object.keys(POLICY).join(', ')}`);
        const args = [policy, check.int64('retentionMs', c.retentionMs ?? -1), check.int64('minCompactionLagMs', c.minCompactionLagMs ?? 0),
          check.int64('deleteRetentionMs', c.deleteRetentionMs ?? 86400000), check.int64('segmentMs', c.segmentMs ?? 604800000),
          check.uint32('segmentRecords', c.segmentRecords ?? 0), check.int64('nowMs', nowMs)];
        return call(() => taken(log.preview(...args), (p) => ({
          recordsBefore: p.recordsBefore, bytesBefore: p.bytesBefore, recordsAfter: p.recordsAfter,
          bytesAfter: p.bytesAfter, nullKeysDropped: p.nullKeysDropped, liveBefore: p.liveBefore,
          lost: p.lost, kept: p.kept,
        })));
      },
      /** The level-2 migration check; the estimate uses level 1's `segment.ms` and `retention.ms`. */
      readiness: (segmentMs, retentionMs) => {
        const args = [check.int64('segmentMs', segmentMs), check.int64('retentionMs', retentionMs)];
        return call(() => taken(log.readiness(...args), (r) => ({
          ready: r.ready, nullKeyRecords: r.nullKeyRecords, lastNullKeyTimestamp: str(r.lastNullKeyTimestamp) ?? null,
          estimatedCleanupMs: str(r.estimatedCleanupMs) ?? null,
        })));
      },
      /** The same under the level-1 configs the KIP's tool sets by default. */
      readinessAtLevel1: () => call(() => taken(log.readinessAtLevel1(), (r) => ({
        ready: r.ready, nullKeyRecords: r.nullKeyRecords, lastNullKeyTimestamp: str(r.lastNullKeyTimestamp) ?? null,
        estimatedCleanupMs: str(r.estimatedCleanupMs) ?? null,
      }))),
      free: () => log.free(),
    });
  }

  const openCheckpoint = (bytes) => call(() => taken(native.openCheckpoint(check.bytes('bytes', bytes)), (c) => ({
    features: c.featureNames.map((name, i) => ({ name, level: c.featureLevels[i], offset: str(c.featureOffsets[i]) })),
    kraftVersion: c.kraftVersion ?? null, metadataVersion: c.metadataVersion ?? null,
    remoteLogMetadataVersion: c.remoteLogMetadataVersion ?? null, voters: c.voters ?? null,
    batches: c.batches, records: c.records, complete: c.complete,
    lastContainedLogTimestamp: str(c.lastContainedLogTimestamp) ?? null,
  })));

  return { openSegmentLog, openCheckpoint };
}
