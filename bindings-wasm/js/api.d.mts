// Types of api.mjs (hand-written). Records follow tests/vectors' JSON form: the schema's field
// names in lowerCamelCase, uuids in Kafka's 22-character form, bytes as lowercase hex.

import type { ErrorKindName } from './errors.mjs';
import type { FileApi } from './files.mjs';

/** A 64-bit integer (offset, timestamp) as it comes out: an exact decimal string. */
export type Int64 = string;
/** A 64-bit integer as it may go in: a decimal string, a bigint, or a safe-integer number. */
export type Int64Input = string | bigint | number;

/** A tagged field the record's schema does not know, kept so re-encoding is byte-identical. */
export interface UnknownTaggedField {
  tag: number;
  hex: string;
}

interface Tagged {
  /** Present only when the record carries tags its schema does not know. */
  unknownTaggedFields?: UnknownTaggedField[];
}

export interface TopicIdPartition extends Tagged {
  name: string;
  id: string;
  partition: number;
}

export interface RemoteLogSegmentId extends Tagged {
  topicIdPartition: TopicIdPartition;
  id: string;
}

export interface LeaderEpochEntry<I64 = Int64> extends Tagged {
  leaderEpoch: number;
  offset: I64;
}

interface SegmentFields<I64> extends Tagged {
  startOffset: I64;
  endOffset: I64;
  brokerId: number;
  maxTimestampMs: I64;
  eventTimestampMs: I64;
  segmentLeaderEpochs: LeaderEpochEntry<I64>[];
  segmentSizeInBytes: number;
  /** Hex, or null. */
  customMetadata: string | null;
  remoteLogSegmentState: number;
  txnIndexEmpty: boolean;
  /** Version 1 and later. */
  brokerLeaderEpoch?: number;
}

/** Api key 0. */
export interface SegmentMetadataRecord<I64 = Int64> extends SegmentFields<I64> {
  remoteLogSegmentId: RemoteLogSegmentId;
}

/** Api key 1. */
export interface SegmentMetadataUpdateRecord<I64 = Int64> extends Tagged {
  remoteLogSegmentId: RemoteLogSegmentId;
  brokerId: number;
  eventTimestampMs: I64;
  customMetadata: string | null;
  remoteLogSegmentState: number;
  /** Version 1 and later. */
  brokerLeaderEpoch?: number;
  /** Version 1 and later. */
  endOffset?: I64;
}

/** Api key 2. */
export interface PartitionDeleteMetadataRecord<I64 = Int64> extends Tagged {
  topicIdPartition: TopicIdPartition;
  brokerId: number;
  eventTimestampMs: I64;
  remotePartitionDeleteState: number;
  /** Version 1 and later. */
  brokerLeaderEpoch?: number;
  /** Version 1 and later. */
  endOffset?: I64;
}

/** Api key 3. */
export interface SegmentMetadataSnapshotRecord<I64 = Int64> extends SegmentFields<I64> {
  segmentId: string;
}

/** A `__remote_log_metadata` record value: `{apiKey, version, record}`. */
export type Value<I64 = Int64> =
  | { apiKey: 0; version: number; record: SegmentMetadataRecord<I64> }
  | { apiKey: 1; version: number; record: SegmentMetadataUpdateRecord<I64> }
  | { apiKey: 2; version: number; record: PartitionDeleteMetadataRecord<I64> }
  | { apiKey: 3; version: number; record: SegmentMetadataSnapshotRecord<I64> };

/** What encodeValue takes: a Value whose 64-bit integers may also be bigints or safe numbers. */
export type ValueInput = Value<Int64Input>;

/** The fields of a KIP-1266 record key (`<topicId>:<topic>:<partition>:<endOffset>:<epoch>[:UPDATE]`). */
export interface KeyFields {
  topicId: string;
  topic: string;
  partition: number;
  endOffset: Int64;
  brokerLeaderEpoch: number;
  update: boolean;
}

export interface KeyFieldsInput extends Omit<KeyFields, 'endOffset'> {
  endOffset: Int64Input;
}

/** The rlmeta API. Failures throw RlmetaError subclasses; arguments of the wrong JS type throw
 * TypeError, integers outside their Rust type RangeError. */
export interface Rlmeta extends FileApi {
  /** The rlmeta version. */
  version(): string;
  /** Every error kind's code, by name (the same numbers in every binding). */
  errorCodes(): Readonly<Record<ErrorKindName, number>>;
  /** Decodes a record value (the bytes of a `__remote_log_metadata` record's value). */
  decodeValue(value: Uint8Array): Value;
  /** Encodes a value to record value bytes, byte for byte as Kafka does. */
  encodeValue(value: ValueInput): Uint8Array;
  /** The KIP-1266 key text of these fields. */
  keyFormat(fields: KeyFieldsInput): string;
  /** Parses key text, or a record's key bytes (UTF-8). Only the text Kafka writes parses. */
  keyParse(key: string | Uint8Array): KeyFields;
  /** The key text KIP-1266 writes for a record value. */
  keyForValue(value: Uint8Array): string;
  /** The partition of `__remote_log_metadata` (0..numPartitions) holding a user partition. */
  metadataPartition(topicId: string, partition: number, numPartitions: number): number;
  /** The code of the kind of fault a Kafka exception text names, or undefined. */
  errorKindForKafkaMessage(message: string): number | undefined;
}

/** The API over one loaded wasm-bindgen module (index.mjs and web.mjs call it). */
export declare function createApi(native: unknown): Rlmeta;
