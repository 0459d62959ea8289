import { mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.js';

// The longest suite in the repository (each file boots whole gateways, several spawn processes):
// two files at a time, so it is not a half-hour chain of one file after another on CI's two cores.
// The bundle the process tests spawn is built once, first (src/gateway-bundle.global-setup.ts).
export default mergeConfig(shared, {
  test: { maxWorkers: 2, globalSetup: ['src/gateway-bundle.global-setup.ts'] },
});
