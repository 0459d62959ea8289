import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_API_TYPES_FILE, generateDashboardApiTypes } from './dashboard-api-types.js';

describe('apps/dashboard/src/api-types.gen.ts', () => {
  it('is what the current OpenAPI document generates (else regenerate it)', async () => {
    const committed = await readFile(DASHBOARD_API_TYPES_FILE, 'utf8');
    // A plain boolean, so a stale file fails with the fix in the message rather than a 6,000-line diff.
    expect(
      committed === (await generateDashboardApiTypes()),
      'api-types.gen.ts is stale: run `pnpm --filter @agentgw/dashboard generate:api-types`',
    ).toBe(true);
    // It boots the whole API and formats 6,000 lines: over a minute when CI's cores are busy.
  }, 180_000);
});
