// rlmeta for Node.js: the API over the wasm-bindgen nodejs build, loaded synchronously on import.
//
//   import { decodeValue, keyFormat, RlmetaError } from './index.mjs';

import native from './rlmeta_wasm.js';
import { createApi } from './api.mjs';

export * from './errors.mjs';

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
} = api;

export default api;
