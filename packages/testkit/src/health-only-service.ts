import { testBackends } from '@agentgw/db/testing';
import type { ServiceDeps } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The whole suite of a skeleton service that so far serves only `/health`: its health body names
 * it, and unknown routes get the JSON 404. Runs once per test backend.
 */
export function describeHealthOnlyService(name: string, createApp: (deps: ServiceDeps) => Hono): void {
  describe.each(testBackends())(`${name} app (%s)`, (backend) => {
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
      expect(await res.json()).toEqual({ status: 'ok', service: name, checks: { database: 'ok', redis: 'in-process' } });
    });

    it('answers unknown routes with the JSON 404 body', async () => {
      const res = await createApp(deps).request('/api/v1/nothing-here');
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
    });
  });
}
