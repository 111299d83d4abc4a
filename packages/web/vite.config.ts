// The web app is built into dist/ by `npm ci` (the root's prepare script) and
// served by the platform (and the console by the gateway) at its root: nothing
// is loaded from elsewhere.
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
    // Three pages: the platform's signed-in app, its public share page with only
    // what that needs, and the gateway's console.
    rollupOptions: {
      input: {
        index: resolve(import.meta.dirname, 'index.html'),
        share: resolve(import.meta.dirname, 'share.html'),
        console: resolve(import.meta.dirname, 'console.html'),
      },
    },
  },
});
