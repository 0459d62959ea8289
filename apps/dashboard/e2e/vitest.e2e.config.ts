import { defineConfig, mergeConfig } from 'vitest/config';
import shared from '../../../vitest.shared.js';

// The browser tests: one file, one gateway process and one Chromium, steps in order.
export default mergeConfig(
  shared,
  defineConfig({
    root: new URL('..', import.meta.url).pathname,
    test: { include: ['e2e/**/*.e2e.test.ts'], fileParallelism: false, testTimeout: 120_000, hookTimeout: 180_000 },
  }),
);
