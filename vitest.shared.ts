import { basename } from 'node:path';
import { defineConfig } from 'vitest/config';

// One vitest configuration for every package (each vitest.config.ts re-exports it).
// Embedded PostgreSQL (PGlite) boots and scrypt hashing take seconds when CI runs every
// package's suite at once on two cores; these bounds catch hangs, not slowness.
// With VITEST_REPORT_DIR set (CI), each package also writes a JSON report there, which
// scripts/test-summary.mjs adds up into one closing line.
const reportDir = process.env.VITEST_REPORT_DIR;

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: reportDir ? ['default', 'json'] : ['default'],
    outputFile: reportDir ? { json: `${reportDir}/${basename(process.cwd())}.json` } : undefined,
  },
});
