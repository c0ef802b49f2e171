// The inspector page: one self-contained HTML file (JS, CSS, the worker and the WASM module
// inlined), so that it opens from disk with no server and no network.
import { resolve } from 'node:path';
import { defineConfig } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';

const root = resolve(import.meta.dirname, '../..');

export default defineConfig({
  root: import.meta.dirname,
  base: './',
  logLevel: 'warn',
  resolve: {
    // build/inspector-pkg: a copy of the package (build/pkg), made by `make inspector-build` (see rules.mk).
    alias: { 'rlmeta-pkg': resolve(root, 'build/inspector-pkg') },
  },
  worker: { format: 'iife' },
  build: {
    outDir: resolve(root, 'build/inspector'),
    emptyOutDir: true,
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    chunkSizeWarningLimit: 100000,
    reportCompressedSize: false,
  },
  plugins: [viteSingleFile()],
});
