import { defineConfig } from 'vitest/config';

// Embedded PostgreSQL (PGlite) boots and scrypt hashing take seconds when CI runs every
// package's suite at once on two cores; these bounds catch hangs, not slowness.
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 120_000 } });
