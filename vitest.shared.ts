import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One vitest configuration for every package (each vitest.config.ts re-exports it).
// Embedded PostgreSQL (PGlite) boots and scrypt hashing take seconds when CI runs every
// package's suite at once on two cores (a test that spawns a process with a new embedded
// database passed 60 s there); these bounds catch hangs, not slowness. For the same
// reason expect.poll and vi.waitFor (vitest.setup.ts) wait up to 30 s, not vitest's 1 s.
// With VITEST_REPORT_DIR set (CI), each package also writes a JSON report there, which
// scripts/test-summary.mjs adds up into one closing line.
const reportDir = process.env.VITEST_REPORT_DIR;

export default defineConfig({
  test: {
    testTimeout: 180_000,
    hookTimeout: 240_000,
    expect: { poll: { timeout: 30_000 } },
    setupFiles: [fileURLToPath(new URL('./vitest.setup.ts', import.meta.url))],
    reporters: reportDir ? ['default', 'json'] : ['default'],
    outputFile: reportDir ? { json: `${reportDir}/${basename(process.cwd())}.json` } : undefined,
  },
});
