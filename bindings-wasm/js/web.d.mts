// Types of web.mjs, rlmeta for browsers (hand-written).

import type { Rlmeta } from './api.mjs';

export * from './errors.mjs';
export * from './files.mjs';
export type {
  Int64, Int64Input, UnknownTaggedField, TopicIdPartition, RemoteLogSegmentId, LeaderEpochEntry,
  SegmentMetadataRecord, SegmentMetadataUpdateRecord, PartitionDeleteMetadataRecord,
  SegmentMetadataSnapshotRecord, Value, ValueInput, KeyFields, KeyFieldsInput, Rlmeta,
} from './api.mjs';

/** What the module can be loaded from: a URL, a fetch Response, bytes or a compiled module. */
export type WasmSource = string | URL | Request | Response | BufferSource | WebAssembly.Module
  | Promise<Response | BufferSource | WebAssembly.Module>;

/** Instantiates the module (by default the .wasm next to web.mjs, fetched) and returns the API. */
export default function init(input?: WasmSource): Promise<Rlmeta>;
