// Types of index.mjs, rlmeta for Node.js (hand-written).

import type { Rlmeta } from './api.mjs';

export * from './errors.mjs';
export * from './files.mjs';
export type {
  Int64, Int64Input, UnknownTaggedField, TopicIdPartition, RemoteLogSegmentId, LeaderEpochEntry,
  SegmentMetadataRecord, SegmentMetadataUpdateRecord, PartitionDeleteMetadataRecord,
  SegmentMetadataSnapshotRecord, Value, ValueInput, KeyFields, KeyFieldsInput, Rlmeta,
} from './api.mjs';

export declare const version: Rlmeta['version'];
export declare const errorCodes: Rlmeta['errorCodes'];
export declare const decodeValue: Rlmeta['decodeValue'];
export declare const encodeValue: Rlmeta['encodeValue'];
export declare const keyFormat: Rlmeta['keyFormat'];
export declare const keyParse: Rlmeta['keyParse'];
export declare const keyForValue: Rlmeta['keyForValue'];
export declare const metadataPartition: Rlmeta['metadataPartition'];
export declare const errorKindForKafkaMessage: Rlmeta['errorKindForKafkaMessage'];
export declare const openSegmentLog: Rlmeta['openSegmentLog'];
export declare const openCheckpoint: Rlmeta['openCheckpoint'];

declare const api: Rlmeta;
export default api;
