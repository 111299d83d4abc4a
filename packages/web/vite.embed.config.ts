// The embed script (src/embed/, GET /embed.js on the platform): one classic
// script for other sites' pages, built after the app into the same dist/
// (emptyOutDir false keeps the app's files), with no imports and no chunks.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  // The app's public/ is copied by its own build.
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    sourcemap: false,
    // Sites' visitors have older browsers than the app's users.
    target: 'es2019',
    lib: {
      entry: fileURLToPath(new URL('src/embed/embed.ts', import.meta.url)),
      formats: ['iife'],
      name: 'kbchatEmbed',
      fileName: () => 'embed.js',
    },
  },
});
