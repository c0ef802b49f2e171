// Compiled by tsc only (make wasm-types): the web entry's declarations describe a usable API.

import init, { RlmetaError, type Rlmeta } from '../../../build/pkg/web.mjs';

export async function load(url: URL, bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const fromUrl: Rlmeta = await init(url);
  const fromBytes: Rlmeta = await init(bytes);
  const fromDefault: Rlmeta = await init();
  try {
    return fromUrl.keyForValue(fromBytes.encodeValue(fromDefault.decodeValue(bytes)));
  } catch (e) {
    if (e instanceof RlmetaError) return `${e.code} ${e.kind}`;
    throw e;
  }
}
