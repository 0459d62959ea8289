import { newId } from '@agentgw/core';
import type { Host } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, startMcpServer, tokenFor, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGatewayHost } from './all-in-one.js';

// Response bodies are whatever JSON the API answered.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

// A call held for confirmation to a provider called as the user (`user_key`): the user's
// credential is read again when a human releases the call, so a token that was replaced (a
// refresh) while it waited is the one sent, and one that was deleted (disconnected) refuses the
// released call with the connect URL, recorded once as rejected with that reason.
describe('a held call to a provider called as the user, all-in-one', () => {
  let deps: TestDeps;
  let host: Host;
  let upstream: McpFixture;
  let adminToken = '';
  let userToken = '';
  let providerId = '';

  async function api(
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await host.app.request(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  const storeKey = (apiKey: string) =>
    api('POST', '/api/v1/credentials/apikey', userToken, { serviceType: 'acme_keys', apiKey });
  const callRisky = (n: number) =>
    api('POST', '/api/v1/mcp/mcp', userToken, {
      jsonrpc: '2.0',
      id: n,
      method: 'tools/call',
      params: { name: 'risky', arguments: { n } },
    });

  /** The pending confirmation of the call with argument `n`, once it is held. */
  const heldCall = (n: number) =>
    vi.waitFor(
      async () => {
        const list = await api('GET', '/api/v1/confirmation/pending', adminToken);
        const found = list.body.data?.find((r: Json) => r.tool.name === 'risky' && r.tool.arguments.n === n);
        if (!found) throw new Error('not held yet');
        return found as { id: string; auditId?: string };
      },
      { timeout: 10_000, interval: 50 },
    );

  beforeAll(async () => {
    deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private' } });
    host = await createGatewayHost(deps);
    await host.start();
    upstream = await startMcpServer({ name: 'keyed', tools: [{ name: 'risky', handler: () => 'risky done' }] });
    adminToken = await tokenFor(
      deps,
      await createUser(deps, { email: `held-admin-${newId()}@example.com`, roles: ['admin'] }),
    );
    const created = await api('POST', '/api/v1/admin/tool-providers', adminToken, {
      name: 'keyed',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'user_key',
      credentialServiceType: 'acme_keys',
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    providerId = created.body.provider.id;
    const user = await createUser(deps, { email: `held-user-${newId()}@example.com`, roles: [] });
    userToken = await tokenFor(deps, user);
    for (const [action, toolPattern] of [
      ['allow', '*'],
      ['require_confirmation', 'risky'],
    ] as const) {
      const rule = await api('POST', '/api/v1/admin/provider-access', adminToken, {
        subjectType: 'user',
        subjectId: user.id,
        providerId,
        action,
        toolPattern,
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    }
  });
  afterAll(async () => {
    await host?.stop({ deadlineMs: 1_000 });
    await upstream?.close();
    await deps?.close();
  });

  it('sends the key that holds when the call is released, not the one read before the hold', async () => {
    expect((await storeKey('key-before-the-hold')).status).toBe(201);
    const call = callRisky(1);
    const pending = await heldCall(1);
    // While the call waits, the user's credential is replaced (as a refresh replaces a token).
    expect((await storeKey('key-after-the-hold')).status).toBe(201);
    expect((await api('POST', `/api/v1/confirmation/${pending.id}/confirm`, adminToken)).status).toBe(200);
    const res = await call;
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.result.content[0].text).toBe('risky done');
    expect(upstream.calls.at(-1)!.headers['x-api-key']).toBe('key-after-the-hold');
  });

  it('refuses a released call whose user disconnected meanwhile, with the connect URL, recorded once as rejected', async () => {
    expect((await storeKey('key-soon-deleted')).status).toBe(201);
    const before = upstream.calls.length;
    const call = callRisky(2);
    const pending = await heldCall(2);
    const stored = (await api('GET', '/api/v1/credentials', userToken)).body;
    const credential = (stored.data ?? stored.credentials ?? stored).find((c: Json) => c.serviceType === 'acme_keys');
    expect((await api('DELETE', `/api/v1/credentials/${credential.id}`, userToken)).status).toBeLessThan(300);
    expect((await api('POST', `/api/v1/confirmation/${pending.id}/confirm`, adminToken)).status).toBe(200);
    const res = await call;
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.error.data).toMatchObject({ code: 'CREDENTIALS_REQUIRED', missing: ['acme_keys'] });
    expect(upstream.calls.length).toBe(before);
    const auditId = res.body.error.data.auditId as string;
    await vi.waitFor(
      async () => {
        const row = await deps.db
          .selectFrom('audit_logs')
          .select(['status', 'error'])
          .where('id', '=', auditId)
          .executeTakeFirst();
        expect(row).toMatchObject({ status: 'rejected', error: expect.stringContaining('Connect acme_keys first') });
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});
