import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Booting PGlite (WASM + initdb) takes seconds on a busy machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
