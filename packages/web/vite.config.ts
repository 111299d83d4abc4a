// The web app is built into dist/ by `npm ci` (the root's prepare script) and
// served by the platform at its root: nothing is loaded from elsewhere.
import react from '@vitejs/plugin-react';
import { resolve } from 'node:path';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // Two pages: the signed-in app, and the public share page with only what it needs.
    rollupOptions: { input: { index: resolve(import.meta.dirname, 'index.html'), share: resolve(import.meta.dirname, 'share.html') } },
  },
});
