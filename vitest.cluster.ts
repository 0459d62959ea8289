import { fileURLToPath } from 'node:url';
import { mergeConfig } from 'vitest/config';
import shared from './vitest.shared.js';

// The shared configuration plus one local Redis Cluster per run (with TEST_REDIS_URL set and
// redis-server installed), for the packages whose Redis users are also tested on a cluster.
export default mergeConfig(shared, {
  test: {
    globalSetup: [
      fileURLToPath(new URL('./packages/core/src/redis/local-redis-cluster.global-setup.ts', import.meta.url)),
    ],
  },
});
