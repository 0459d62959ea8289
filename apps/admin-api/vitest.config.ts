import { defineConfig } from 'vitest/config';

// PGlite start-up, migrations and scrypt all slow down a lot on a busy machine.
export default defineConfig({ test: { hookTimeout: 120_000, testTimeout: 60_000 } });
