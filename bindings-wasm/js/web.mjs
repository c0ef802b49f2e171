// rlmeta for browsers (and any ES module host): the API over the wasm-bindgen web build.
//
//   import init, { RlmetaError } from './web.mjs';
//   const rlmeta = await init();          // fetches rlmeta_wasm_bg.wasm next to this file
//   rlmeta.decodeValue(bytes);

import initWasm, * as native from './rlmeta_wasm.js';
import { createApi } from './api.mjs';

export * from './errors.mjs';
export { KIND, KIND_NAMES, FLAG, SEGMENT_STATES, PARTITION_DELETE_STATES, MARK, POLICY } from './files.mjs';

/**
 * Instantiates the module and returns the API. `input`: what wasm-bindgen's init takes (a URL,
 * a Response, bytes or a compiled WebAssembly.Module); by default the .wasm next to this file.
 */
export default async function init(input) {
  await initWasm(input === undefined ? undefined : { module_or_path: input });
  return createApi(native);
}
