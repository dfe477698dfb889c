// The console's build: `vite build console` (see build.sh) writes console/dist, which the server serves at `/`
// (src/api/console-static.ts). `npx vite console` serves it with hot reload and passes /api to a server on
// 127.0.0.1:8080, as if the page came from that server (its Origin), so the CSRF check of changes passes.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Hashed names under assets/ are served with a year-long cache; index.html with no-store.
    assetsDir: 'assets',
    chunkSizeWarningLimit: 800,
  },
  server: { proxy: { '/api': { target: 'http://127.0.0.1:8080', ws: true, headers: { origin: 'http://127.0.0.1:8080' } } } },
});
