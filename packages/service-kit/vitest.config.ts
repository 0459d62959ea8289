import { defineConfig } from 'vitest/config';

// PGlite start-up and migrations can take a while on a busy machine.
export default defineConfig({ test: { hookTimeout: 60_000, testTimeout: 30_000 } });
