import { defineConfig } from 'vitest/config';

// PGlite start-up and scrypt both slow down a lot on a busy machine.
export default defineConfig({ test: { hookTimeout: 60_000, testTimeout: 20_000 } });
