// rlmeta for Node.js: the API over the wasm-bindgen nodejs build, loaded synchronously on import.
//
//   import { decodeValue, keyFormat, RlmetaError } from './index.mjs';

import native from './rlmeta_wasm.cjs';
import { createApi } from './api.mjs';

export * from './errors.mjs';
export { KIND, KIND_NAMES, FLAG, SEGMENT_STATES, PARTITION_DELETE_STATES, MARK, POLICY } from './files.mjs';

const api = createApi(native);

export const {
  version,
  errorCodes,
  decodeValue,
  encodeValue,
  keyFormat,
  keyParse,
  keyForValue,
  metadataPartition,
  errorKindForKafkaMessage,
  openSegmentLog,
  openCheckpoint,
} = api;

export default api;
