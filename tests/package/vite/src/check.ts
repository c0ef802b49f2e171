// Type-checked with moduleResolution "bundler" (what Vite projects use): the default condition's
// declarations, web.d.mts, where the default export instantiates the module.
import init, { RlmetaError, type Rlmeta, type Value } from 'rlmeta';

const api: Promise<Rlmeta> = init();
api.then((r: Rlmeta) => {
  const value: Value = r.decodeValue(new Uint8Array([1, 0]));
  const isError: boolean = new Error() instanceof RlmetaError;
  void [value, isError];
});
