import { openDatabase } from '@agentgw/db';
import { testBackends } from '@agentgw/db/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { healthRoute } from './health.js';
import { createTestDeps, testHost, type TestDeps } from './testing.js';

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
    expect(await res.json()).toEqual({
      status: 'ok',
      service: 'vault',
      checks: { database: 'ok', redis: 'in-process' },
    });
  });

  it('is degraded (503) when Redis does not answer', async () => {
    deps = await createTestDeps({ backend });
    const app = healthRoute('audit-writer', {
      ...deps,
      pingRedis: async () => {
        throw new Error('ECONNREFUSED');
      },
    });
    const res = await app.request('/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'degraded',
      service: 'audit-writer',
      checks: { database: 'ok', redis: 'down' },
    });
  });
});

describe('healthRoute with an unreachable database', () => {
  it('is degraded (503) and says which check failed', async () => {
    const dbHandle = await openDatabase({ url: 'postgres://agentgw@127.0.0.1:1/nowhere' });
    try {
      const res = await healthRoute('admin-api', { dbHandle }).request('/health');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        status: 'degraded',
        service: 'admin-api',
        checks: { database: 'down', redis: 'in-process' },
      });
    } finally {
      await dbHandle.close();
    }
  });
});

describe('probe routes on the host', () => {
  it('live answers without checking dependencies; ready turns 503 once draining, and when Redis is down', async () => {
    const deps = await createTestDeps();
    try {
      const host = await testHost([], deps, { name: 'vault' });
      expect((await host.request('/health/live')).status).toBe(200);
      const ready = await host.request('/health/ready');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        status: 'ok',
        ready: true,
        draining: false,
        checks: { database: 'ok' },
      });

      const redisDown = await testHost([], { ...deps, pingRedis: async () => false }, { name: 'vault' });
      expect((await redisDown.request('/health/ready')).status).toBe(503);
      expect((await redisDown.request('/health/live')).status).toBe(200);

      host.drain();
      const drained = await host.request('/health/ready');
      expect(drained.status).toBe(503);
      expect(await drained.json()).toMatchObject({ ready: false, draining: true, checks: { database: 'ok' } });
      expect((await host.request('/health')).status).toBe(200); // /health keeps its meaning
      expect((await host.request('/health/live')).status).toBe(200);
    } finally {
      await deps.close();
    }
  });
});
