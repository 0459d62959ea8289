import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In development the API is proxied to a running gateway (GATEWAY_URL, default the all-in-one
// on 7521), so the app uses the same relative URLs as when the gateway serves the build.
const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:7521';

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '/api': { target: gateway, changeOrigin: true },
      '/health': { target: gateway, changeOrigin: true },
    },
  },
  build: { outDir: 'dist', sourcemap: true },
});
