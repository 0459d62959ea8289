import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../../vitest.shared.js';

// The browser tests: one file, one gateway process and one Chromium, steps in order. With
// VITEST_REPORT_DIR (CI) they report under their own name, beside the unit tests' report.
const reportDir = process.env.VITEST_REPORT_DIR;

export default mergeConfig(
  shared,
  defineConfig({
    root: new URL('..', import.meta.url).pathname,
    test: {
      include: ['e2e/**/*.e2e.test.ts'],
      fileParallelism: false,
      testTimeout: 120_000,
      hookTimeout: 420_000,
      globalSetup: ['e2e/console-build.global-setup.ts'],
      outputFile: reportDir ? { json: `${reportDir}/dashboard-e2e.json` } : undefined,
    },
  }),
);
