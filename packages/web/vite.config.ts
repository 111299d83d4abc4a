// The web app is built into dist/ by `npm ci` (the root's prepare script) and
// served by the platform at its root: nothing is loaded from elsewhere.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  base: '/',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
});
