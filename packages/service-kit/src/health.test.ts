import { openDatabase } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { healthRoute } from './health.js';
import { createTestDeps, type TestDeps } from './testing.js';

describe.each(testBackends())('healthRoute (%s)', (backend) => {
  let deps: TestDeps | undefined;
  afterEach(async () => {
    await deps?.close();
    deps = undefined;
  });

  it('is ok with a live database and in-process bus', async () => {
    deps = await createTestDeps({ backend });
    const res = await healthRoute('vault', deps).request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'vault', checks: { database: 'ok', redis: 'in-process' } });
  });

  it('is degraded (503) when Redis does not answer', async () => {
    deps = await createTestDeps({ backend });
    const app = healthRoute('audit-writer', { ...deps, pingRedis: async () => { throw new Error('ECONNREFUSED'); } });
    const res = await app.request('/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'degraded', service: 'audit-writer', checks: { database: 'ok', redis: 'down' } });
  });
});

describe('healthRoute with an unreachable database', () => {
  it('is degraded (503) and says which check failed', async () => {
    const dbHandle = await openDatabase({ url: 'postgres://agentgw@127.0.0.1:1/nowhere' });
    try {
      const res = await healthRoute('admin-api', { dbHandle }).request('/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'degraded', service: 'admin-api', checks: { database: 'down', redis: 'in-process' } });
    } finally {
      await dbHandle.close();
    }
  });
});
