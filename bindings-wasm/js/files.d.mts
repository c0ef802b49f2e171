// Types of files.mjs (hand-written): segment files and checkpoints opened whole.

import type { POLICY } from './tables.mjs';
export { FLAG, KIND, KIND_NAMES, MARK, PARTITION_DELETE_STATES, POLICY, SEGMENT_STATES } from './tables.mjs';

/** A fault found in a file (bad CRC, truncated tail, undecodable value, ...). */
export interface FileFault {
  file: string;
  code: number;
  kind: string;
  /** The whole text: kind, code, byte position and what is wrong. */
  message: string;
  /** Byte position in the file. */
  position: number | undefined;
  /** The record's offset (or the batch's base offset), exact. */
  recordOffset: string | undefined;
  /** The record's row in the columns, when it concerns one record. */
  row: number | undefined;
}

/** Per-record columns, rows [from, to). */
export interface Columns {
  offsets: BigInt64Array;
  timestamps: BigInt64Array;
  /** See KIND. */
  kinds: Uint8Array;
  /** Segment or partition-delete state id, -1 for none. */
  states: Int8Array;
  /** See FLAG. */
  flags: Uint8Array;
  /** -1 for null. */
  keySizes: Int32Array;
  valueSizes: Int32Array;
  sizes: Uint32Array;
  batchOf: Uint32Array;
  /** Index into tables().partitions, -1 for none. */
  partitionOf: Int32Array;
  /** Index into tables().segmentIds, -1 for none. */
  segmentOf: Int32Array;
}

export interface Tables {
  files: string[];
  partitions: { topicId: string; topic: string; partition: number }[];
  /** null when tables() was asked to leave them out. */
  segmentIds: string[] | null;
  batches: {
    file: Uint32Array; position: Float64Array; baseOffset: BigInt64Array; lastOffset: BigInt64Array;
    count: Int32Array; codec: string[]; crcValid: Uint8Array; size: Uint32Array;
  };
}

export interface RecordDetails {
  file: string;
  offset: string;
  timestamp: string;
  timestampType: string;
  sequence: number;
  batchPosition: number;
  batchBaseOffset: string;
  compression: string;
  crcValid: boolean;
  producerId: string;
  producerEpoch: number;
  partitionLeaderEpoch: number;
  transactional: boolean;
  control: boolean;
  key: string | null;
  keyHex: string | null;
  keyFields: { topicId: string; topic: string; partition: number; endOffset: string; brokerLeaderEpoch: number; update: boolean } | null;
  headers: { key: string; valueHex: string | null }[];
  valueHex: string | null;
  /** Kafka's toString of the value (kafka-dump-log's payload). */
  kafkaText: string | null;
  /** The decoded value {apiKey, version, record}, 64-bit integers as decimal strings. */
  value: unknown;
  error: string | null;
  /** What Kafka's decoder throws for this value. */
  kafkaError: string | null;
  level: number | null;
}

export interface InspectionSummary {
  records: number;
  nullKeyRecords: number;
  keyedRecords: number;
  tombstones: number;
  undecodable: number;
  fatalToOldBrokers: number;
  liveSegments: number;
  orphans: number;
  keptByCompaction: number;
  lostByCompaction: number;
  /** The last level record's level; null: none; 'invalid'. */
  level: number | 'invalid' | null;
  levelOffset: string | null;
}

/** The index's counts: every record is read or lies in or after the partition's first corrupt
 * batch (records + unread = rows + unlisted); the others count read records. */
export interface IndexCounts {
  records: number;
  unread: number;
  /** Unread records a batch header counts that have no row (their batch does not decode). */
  unlisted: number;
  nullKeyRecords: number;
  keyedRecords: number;
  tombstones: number;
  levelRecords: number;
  lastNullKeyTimestamp: string | null;
  /** The first corrupt batch, if any: its file's index, its byte, base offset and first row. */
  corrupt: { file: number; position: number; baseOffset: string; row: number }[];
}

export interface Lifecycles {
  ids: string[];
  /** The user partitions of the lifecycles. */
  partitionTable: { topicId: string; topic: string; partition: number }[];
  /** Index into partitionTable. */
  partitions: Uint32Array;
  /** start, end per lifecycle (-1 when hasRange is 0). */
  ranges: BigInt64Array;
  hasRange: Uint8Array;
  /** The state now, -1 gone. */
  now: Int8Array;
  /** See MARK. */
  marks: Uint8Array;
  /** Every state step: its lifecycle, record offset and state id. */
  steps: { lifecycle: Uint32Array; offset: BigInt64Array; state: Int8Array };
}

export interface TopicConfigInput {
  cleanupPolicy: keyof typeof POLICY;
  retentionMs?: string | bigint | number;
  minCompactionLagMs?: string | bigint | number;
  deleteRetentionMs?: string | bigint | number;
  segmentMs?: string | bigint | number;
  /** Records per segment, standing in for segment.bytes; 0: no limit. */
  segmentRecords?: number;
}

export interface CompactionPreview {
  recordsBefore: number;
  bytesBefore: number;
  recordsAfter: number;
  bytesAfter: number;
  nullKeysDropped: number;
  liveBefore: number;
  lost: string[];
  /** 1 per row kept. */
  kept: Uint8Array;
}

export interface MigrationReadiness {
  ready: boolean;
  nullKeyRecords: number;
  lastNullKeyTimestamp: string | null;
  estimatedCleanupMs: string | null;
}

export interface SegmentLog {
  addFile(name: string, bytes: Uint8Array): void;
  index(budget?: number): boolean;
  /** A streamed file (not with addFile/index on the same log): its bytes come with push(). */
  beginFile(name: string): void;
  push(chunk: Uint8Array): void;
  endFile(): void;
  /** Forgets the columns of the rows so far: columns() then answers for later rows only. */
  forgetColumns(): void;
  /** Byte ranges, flat [file, start, end, ...], holding these rows' batches. */
  rowRanges(rows: ArrayLike<number>, maxBytes: number): Float64Array;
  allRanges(maxBytes: number): Float64Array;
  /** Bytes of a streamed file from byte `start`, for record/keyTexts/keysContaining/preview. */
  addWindow(file: number, start: number, bytes: Uint8Array): void;
  clearWindows(): void;
  /** A replay fed in chunks; lean: counts, live segments and level only. */
  beginReplay(lean: boolean, totalBytes: number): void;
  replayFile(len: number): void;
  replayPush(chunk: Uint8Array): void;
  endReplay(): void;
  rows(): number;
  columns(from: number, to: number): Columns;
  /** segmentIds: false leaves tables().segmentIds null. */
  tables(options?: { segmentIds?: boolean }): Tables;
  /** Indexes into tables().segmentIds of the ids containing `needle`. */
  segmentsContaining(needle: string): Uint32Array;
  faults(): FileFault[];
  keysContaining(needle: string): Uint32Array;
  keyTexts(rows: ArrayLike<number>): string[];
  record(row: number): RecordDetails;
  summarize(): void;
  summary(): InspectionSummary;
  counts(): IndexCounts;
  lifecycles(): Lifecycles;
  preview(config: TopicConfigInput, nowMs: string | bigint | number): CompactionPreview;
  readiness(segmentMs: string | bigint | number, retentionMs: string | bigint | number): MigrationReadiness;
  readinessAtLevel1(): MigrationReadiness;
  free(): void;
}

export interface CheckpointInfo {
  features: { name: string; level: number; offset: string }[];
  kraftVersion: number | null;
  metadataVersion: number | null;
  /** Absent on stock Kafka 4.4.0: the level is then each metadata partition's level record. */
  remoteLogMetadataVersion: number | null;
  voters: number[] | null;
  batches: number;
  records: number;
  complete: boolean;
  lastContainedLogTimestamp: string | null;
}

export interface FileApi {
  openSegmentLog(): SegmentLog;
  openCheckpoint(bytes: Uint8Array): CheckpointInfo;
}
