import { mergeConfig } from 'vitest/config';
import shared from '../../vitest.shared.js';

// The two targets run one after the other: each boots a whole gateway, and two at once on a
// two-core machine would only slow both down.
export default mergeConfig(shared, { test: { fileParallelism: false, testTimeout: 90_000, hookTimeout: 180_000 } });
