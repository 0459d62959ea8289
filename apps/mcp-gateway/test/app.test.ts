import { testBackends } from '@agentgw/db/testing';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

describe.each(testBackends())('mcp-gateway app (%s)', (backend) => {
  let deps: TestDeps;
  beforeAll(async () => {
    deps = await createTestDeps({ backend });
  });
  afterAll(async () => {
    await deps.close();
  });

  it('answers /health with its name', async () => {
    const res = await createApp(deps).request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'mcp-gateway', checks: { database: 'ok', redis: 'in-process' } });
  });

  it('answers unknown routes with the JSON 404 body', async () => {
    const res = await createApp(deps).request('/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
