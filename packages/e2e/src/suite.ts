import {
  replyJson,
  replySse,
  SseEventReader,
  startMcpServer,
  startMcpV2Server,
  startRecordingUpstream,
  type McpFixture,
  type McpFixtureTool,
  type RecordingUpstream,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { GatewayApi, type Json } from './gateway-api.js';
import { connectV1, connectV2, rawToolsCall, textOf } from './mcp-clients.js';
import { ADMIN, type GatewayTarget } from './targets.js';

/** What the spec suite leaves behind for later tests on the same target (the fault runs). */
export interface SuiteContext {
  target: GatewayTarget;
  api: GatewayApi;
  adminToken: string;
  alpha: McpFixture;
  alphaId: string;
  /** Lines for the closing summary. */
  summary: string[];
  /** Creates an agent (upstream: the recording runtime) allowed on the alpha provider. */
  agentOnAlpha(name: string, requireConfirmation: boolean): Promise<{ id: string; token: string }>;
  /** The pending confirmation whose arguments carry `marker`, as the hub lists it. */
  pendingWith(marker: string, timeoutMs?: number): Promise<{ id: string }>;
  /** Every audit row of an agent, page by page through the audit API. */
  auditRowsOf(agentId: string): Promise<Json[]>;
}

const SLOW_MS = 400;

/**
 * The spec end to end over HTTP against one running target: every area in order, with the
 * SDK's real MCP clients and real SDK upstream servers. `more` adds tests that run on the same
 * target afterwards (the distributed fault runs).
 */
export function describeGatewaySuite(
  name: string,
  start: () => Promise<GatewayTarget>,
  skipReason: string | null,
  more?: (ctx: () => SuiteContext) => void,
): void {
  if (skipReason) {
    describe.skip(`${name} (${skipReason})`, () => {
      it('is skipped', () => undefined);
    });
    console.warn(`[e2e] ${skipReason}`);
    return;
  }

  describe(`gateway end to end: ${name}`, () => {
    const startedAt = Date.now();
    const areas: string[] = [];
    let ctx: SuiteContext;
    let api: GatewayApi;
    let target: GatewayTarget;
    let adminToken: string;
    let adminId: string;
    let alpha: McpFixture;
    let beta: McpFixture;
    let runtime: RecordingUpstream;
    let alphaId: string;
    let betaId: string;
    let agent: { id: string; token: string };
    let apiKey: string;
    let bootMs = 0;
    const passed = (area: string) => areas.push(area);

    beforeAll(async () => {
      target = await start();
      bootMs = Date.now() - startedAt;
      api = new GatewayApi(target.baseUrl);
      const tools: McpFixtureTool[] = [
        {
          name: 'a_echo',
          inputSchema: { n: z.union([z.string(), z.number()]).optional() },
          handler: (args: Record<string, unknown>) => `echo:${JSON.stringify(args)}`,
        },
        {
          name: 'a_transfer',
          inputSchema: { marker: z.string() },
          handler: (args: Record<string, unknown>) => `sent:${args.marker as string}`,
        },
        { name: 'a_secret', handler: () => 'should never be reached' },
        {
          name: 'a_slow',
          inputSchema: { n: z.string() },
          handler: async (args: Record<string, unknown>) => {
            await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
            return `slow:${args.n as string}`;
          },
        },
      ];
      alpha = await startMcpServer({ name: 'alpha', tools });
      beta = await startMcpV2Server({ name: 'beta', tools: [{ name: 'b_ping', handler: () => 'pong' }] });
      runtime = await startRecordingUpstream((req, res) => {
        const body = req.body as { message?: string } | undefined;
        if (body?.message === 'stream')
          return replySse(
            res,
            [
              { event: 'token', data: { text: 'hel' } },
              { event: 'token', data: { text: 'lo' } },
              { event: 'done', data: {} },
            ],
            10,
          );
        replyJson(res, 200, { reply: `got ${body?.message ?? ''}` });
      });
      const login = await api.login(ADMIN.email, ADMIN.password);
      adminToken = login.token;
      adminId = login.userId;
      ctx = {
        target,
        api,
        adminToken,
        alpha,
        alphaId: '',
        summary: [],
        agentOnAlpha: async (agentName, requireConfirmation) => {
          const created = await api.must(201, 'POST', '/api/v1/admin/agents', {
            token: adminToken,
            body: { name: agentName, upstreamUrl: runtime.url, requireConfirmation },
          });
          await api.must(201, 'POST', '/api/v1/admin/provider-access', {
            token: adminToken,
            body: { subjectType: 'agent', subjectId: created.agent.id, providerId: alphaId, action: 'allow' },
          });
          return { id: created.agent.id, token: created.runtime_token };
        },
        pendingWith: (marker, timeoutMs = 15_000) =>
          vi.waitFor(
            async () => {
              const answer = await api.get('/api/v1/confirmation/pending', { token: adminToken });
              const found = (answer.body?.data ?? []).find((c: Json) =>
                JSON.stringify(c.tool?.arguments ?? c.arguments ?? {}).includes(marker),
              );
              if (!found) throw new Error(`no pending confirmation for ${marker} (${answer.status})`);
              return found as { id: string };
            },
            { timeout: timeoutMs, interval: 50 },
          ),
        auditRowsOf: async (agentId) => {
          const rows: Json[] = [];
          for (;;) {
            const answer = await api.get(`/api/v1/audit/logs?agent_id=${agentId}&limit=1000&offset=${rows.length}`, {
              token: adminToken,
            });
            if (answer.status !== 200) throw new Error(`audit logs answered ${answer.status}`);
            rows.push(...(answer.body.data as Json[]));
            if (answer.body.data.length === 0 || rows.length >= answer.body.pagination.total) return rows;
          }
        },
      };
    }, 300_000);

    afterAll(async () => {
      const lines = [
        `[e2e] ${name}: ${areas.length} areas passed (${areas.join(', ')}); boot ${bootMs} ms, total ${Date.now() - startedAt} ms`,
        ...(target ? target.describe().map((line) => `[e2e]   ${line}`) : []),
        ...(ctx?.summary ?? []).map((line) => `[e2e] ${name} ${line}`),
      ];
      // Printed straight to stdout (not through vitest's console capture) so CI logs carry it as is.
      process.stdout.write(`\n${lines.join('\n')}\n`);
      await target?.stop();
      await Promise.all([alpha?.close(), beta?.close(), runtime?.close()]);
    }, 60_000);

    it('health and accounts: register, login, duplicate and wrong password refused', async () => {
      expect((await api.get('/health')).status).toBe(200);
      const email = `self-${Date.now()}@example.com`;
      const registered = await api.post('/api/v1/auth/register', {
        body: { email, password: 'self-password-1', name: 'Self' },
      });
      expect(registered.status).toBe(201);
      expect(registered.body.user).toMatchObject({ email, roles: ['agent_creator'] });
      expect(
        (await api.post('/api/v1/auth/register', { body: { email, password: 'self-password-1', name: 'Self' } }))
          .status,
      ).toBe(409);
      const login = await api.post('/api/v1/auth/login', { body: { email, password: 'self-password-1' } });
      expect(login.status).toBe(200);
      expect(login.body.user.id).toBe(registered.body.user.id);
      expect(typeof login.body.token).toBe('string');
      const wrong = await api.post('/api/v1/auth/login', { body: { email, password: 'not-the-password' } });
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
      // A self-registered agent_creator is no admin.
      expect((await api.get('/api/v1/admin/users', { token: login.body.token })).status).toBe(403);
      passed('accounts');
    });

    it('users: create, list, get, update, roles, delete', async () => {
      const created = await api.post('/api/v1/admin/users', {
        token: adminToken,
        body: {
          email: `u-${Date.now()}@example.com`,
          password: 'user-password-1',
          name: 'U',
          roles: ['agent_creator'],
        },
      });
      expect(created.status).toBe(201);
      const id = created.body.user.id as string;
      expect(created.body.user).not.toHaveProperty('password');
      expect((await api.get('/api/v1/admin/users', { token: adminToken })).body.users.map((u: Json) => u.id)).toContain(
        id,
      );
      expect((await api.get(`/api/v1/admin/users/${id}`, { token: adminToken })).body.user.name).toBe('U');
      expect(
        (await api.put(`/api/v1/admin/users/${id}`, { token: adminToken, body: { name: 'U2' } })).body.user.name,
      ).toBe('U2');
      expect(
        (await api.post(`/api/v1/admin/users/${id}/roles`, { token: adminToken, body: { role: 'tenant_admin' } }))
          .status,
      ).toBe(200);
      expect((await api.get(`/api/v1/admin/users/${id}`, { token: adminToken })).body.user.roles).toEqual(
        expect.arrayContaining(['agent_creator', 'tenant_admin']),
      );
      expect((await api.delete(`/api/v1/admin/users/${id}/roles/tenant_admin`, { token: adminToken })).status).toBe(
        200,
      );
      expect((await api.get(`/api/v1/admin/users/${id}`, { token: adminToken })).body.user.roles).toEqual([
        'agent_creator',
      ]);
      expect(
        (await api.post(`/api/v1/admin/users/${id}/roles`, { token: adminToken, body: { role: 'emperor' } })).status,
      ).toBe(400);
      expect((await api.delete(`/api/v1/admin/users/${id}`, { token: adminToken })).status).toBe(200);
      expect((await api.get(`/api/v1/admin/users/${id}`, { token: adminToken })).status).toBe(404);
      passed('users');
    });

    it('tool providers: create, list, get, update, upstream tools (1.x and 2.x SDK servers)', async () => {
      const a = await api.post('/api/v1/admin/tool-providers', {
        token: adminToken,
        body: { name: 'alpha', pattern: 'a_*', endpoint: alpha.url, priority: 1 },
      });
      expect(a.status).toBe(201);
      alphaId = a.body.provider.id;
      ctx.alphaId = alphaId;
      betaId = (
        await api.must(201, 'POST', '/api/v1/admin/tool-providers', {
          token: adminToken,
          body: { name: 'beta', pattern: 'b_*', endpoint: beta.url },
        })
      ).provider.id;
      expect(
        (await api.get('/api/v1/admin/tool-providers', { token: adminToken })).body.providers.map((p: Json) => p.id),
      ).toEqual(expect.arrayContaining([alphaId, betaId]));
      expect(
        (await api.get(`/api/v1/admin/tool-providers/${alphaId}`, { token: adminToken })).body.provider,
      ).toMatchObject({ name: 'alpha', pattern: 'a_*', authType: 'none', priority: 1 });
      expect(
        (
          await api.put(`/api/v1/admin/tool-providers/${alphaId}`, {
            token: adminToken,
            body: { description: 'the 1.x SDK server' },
          })
        ).body.provider.description,
      ).toBe('the 1.x SDK server');
      const alphaTools = await api.get(`/api/v1/admin/tool-providers/${alphaId}/tools`, { token: adminToken });
      expect(alphaTools.status).toBe(200);
      expect(alphaTools.body.tools.map((t: Json) => t.name).sort()).toEqual([
        'a_echo',
        'a_secret',
        'a_slow',
        'a_transfer',
      ]);
      const betaTools = await api.get(`/api/v1/admin/tool-providers/${betaId}/tools`, { token: adminToken });
      expect(betaTools.body.tools.map((t: Json) => t.name)).toEqual(['b_ping']);
      const doomed = (
        await api.must(201, 'POST', '/api/v1/admin/tool-providers', {
          token: adminToken,
          body: { name: 'doomed', pattern: 'zz_*', endpoint: beta.url },
        })
      ).provider.id;
      expect((await api.delete(`/api/v1/admin/tool-providers/${doomed}`, { token: adminToken })).status).toBe(200);
      expect((await api.get(`/api/v1/admin/tool-providers/${doomed}`, { token: adminToken })).status).toBe(404);
      passed('tool providers');
    });

    it('agents: create (token once), list, get, update, disable/enable (kill switch), regenerate, delete', async () => {
      const created = await api.post('/api/v1/admin/agents', {
        token: adminToken,
        body: {
          name: 'e2e-bot',
          upstreamUrl: runtime.url,
          upstreamSecret: 'runtime-secret-1',
          requiredCredentials: [{ serviceType: 'erp', description: 'ERP key' }],
        },
      });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body.agent).sort()).toEqual([
        'createdAt',
        'hasUpstreamSecret',
        'id',
        'isActive',
        'name',
        'requireConfirmation',
        'requiredCredentials',
        'runtimeTokenPrefix',
        'upstreamUrl',
      ]);
      expect(created.body.agent).toMatchObject({ hasUpstreamSecret: true, isActive: true, requireConfirmation: false });
      expect(created.body.runtime_token).toMatch(/^art_/);
      agent = { id: created.body.agent.id, token: created.body.runtime_token };
      expect(JSON.stringify((await api.get('/api/v1/admin/agents', { token: adminToken })).body)).not.toContain(
        agent.token,
      );
      expect(
        (await api.get('/api/v1/admin/agents', { token: adminToken })).body.agents.map((a: Json) => a.id),
      ).toContain(agent.id);
      const got = await api.get(`/api/v1/admin/agents/${agent.id}`, { token: adminToken });
      expect(got.body.agent).toMatchObject({ id: agent.id, name: 'e2e-bot' });
      expect(got.body.agent).not.toHaveProperty('upstreamSecret');
      expect(
        (await api.put(`/api/v1/admin/agents/${agent.id}`, { token: adminToken, body: { description: 'updated' } }))
          .body.agent.description,
      ).toBe('updated');
      await api.must(201, 'POST', '/api/v1/admin/provider-access', {
        token: adminToken,
        body: { subjectType: 'agent', subjectId: agent.id, providerId: alphaId, action: 'allow' },
      });

      // Kill switch: disabled answers 403 on MCP at once, enabled serves again.
      const mcp = `${target.baseUrl}/api/v1/mcp/mcp`;
      expect(
        (await rawToolsCall(mcp, { authorization: `Bearer ${agent.token}` }, 'a_echo', { n: 'before' })) as Json,
      ).toMatchObject({ status: 200 });
      expect((await api.post(`/api/v1/admin/agents/${agent.id}/disable`, { token: adminToken })).status).toBe(200);
      expect((await api.get(`/api/v1/admin/agents/${agent.id}`, { token: adminToken })).body.agent.isActive).toBe(
        false,
      );
      await vi.waitFor(
        async () =>
          expect(
            (await rawToolsCall(mcp, { authorization: `Bearer ${agent.token}` }, 'a_echo', { n: 'off' })) as Json,
          ).toMatchObject({ status: 403 }),
        {
          timeout: 3_000,
          interval: 25,
        },
      );
      expect(
        (await api.post(`/api/v1/agents/${agent.id}/invoke`, { token: adminToken, body: { message: 'hi' } })).status,
      ).toBe(403);
      expect((await api.post(`/api/v1/admin/agents/${agent.id}/enable`, { token: adminToken })).status).toBe(200);
      await vi.waitFor(
        async () =>
          expect(
            (await rawToolsCall(mcp, { authorization: `Bearer ${agent.token}` }, 'a_echo', { n: 'on' })) as Json,
          ).toMatchObject({ status: 200 }),
        {
          timeout: 3_000,
          interval: 25,
        },
      );

      // Regenerate: the new token works, the old one fails at once.
      const rotated = await api.post(`/api/v1/admin/agents/${agent.id}/regenerate-token`, { token: adminToken });
      expect(rotated.status).toBe(200);
      expect(rotated.body.runtime_token).toMatch(/^art_/);
      const old = agent.token;
      agent.token = rotated.body.runtime_token;
      await vi.waitFor(
        async () =>
          expect(
            (await rawToolsCall(mcp, { authorization: `Bearer ${old}` }, 'a_echo', { n: 'old' })) as Json,
          ).toMatchObject({ status: 401 }),
        {
          timeout: 3_000,
          interval: 25,
        },
      );
      expect(
        (await rawToolsCall(mcp, { authorization: `Bearer ${agent.token}` }, 'a_echo', { n: 'new' })) as Json,
      ).toMatchObject({ status: 200 });

      const doomed = (
        await api.must(201, 'POST', '/api/v1/admin/agents', {
          token: adminToken,
          body: { name: 'doomed', upstreamUrl: runtime.url },
        })
      ).agent.id;
      expect((await api.delete(`/api/v1/admin/agents/${doomed}`, { token: adminToken })).status).toBe(200);
      expect((await api.get(`/api/v1/admin/agents/${doomed}`, { token: adminToken })).status).toBe(404);
      passed('agents');
    });

    it('vault: store, list, resolve, check, delete; OAuth auth without a server 501, a callback without state 400', async () => {
      expect(
        (
          await api.post('/api/v1/credentials/apikey', {
            token: adminToken,
            body: { serviceType: 'scratch', apiKey: 'scratch-key-1' },
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await api.post('/api/v1/credentials/jwt', {
            token: adminToken,
            body: {
              serviceType: 'jwtsvc',
              token: 'eyJ.jwt.value',
              expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
            },
          })
        ).status,
      ).toBe(201);
      const listed = await api.get('/api/v1/credentials', { token: adminToken });
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain('scratch-key-1');
      const scratch = listed.body.credentials.find((c: Json) => c.serviceType === 'scratch');
      expect(scratch).toBeDefined();
      const resolved = await api.post('/api/v1/credentials/resolve', {
        token: adminToken,
        body: { serviceTypes: ['scratch', 'jwtsvc', 'absent'] },
      });
      expect(resolved.status).toBe(200);
      expect(resolved.body.credentials).toEqual({ scratch: 'scratch-key-1', jwtsvc: 'eyJ.jwt.value' });
      expect(resolved.body.missing).toEqual(['absent']);
      expect(typeof resolved.body.authUrls.absent).toBe('string');
      expect((await api.get('/api/v1/credentials/check/scratch', { token: adminToken })).body.hasCredential).toBe(true);
      expect((await api.delete(`/api/v1/credentials/${scratch.id}`, { token: adminToken })).status).toBe(200);
      const gone = await api.get('/api/v1/credentials/check/scratch', { token: adminToken });
      expect(gone.body.hasCredential).toBe(false);
      expect(typeof gone.body.authUrl).toBe('string');
      expect((await api.get('/api/v1/credentials/oauth/scratch/auth', { token: adminToken })).status).toBe(501);
      // Since OAuth connect is real (vault e0529af): a callback without a state is refused, not a placeholder.
      const callback = await api.get('/api/v1/credentials/oauth/scratch/callback', { token: adminToken });
      expect([callback.status, callback.body.code]).toEqual([400, 'OAUTH_STATE_INVALID']);
      passed('vault');
    });

    it('invoke: CREDENTIALS_REQUIRED, then identity/credential headers at the upstream, and SSE passed through', async () => {
      const missing = await api.post(`/api/v1/agents/${agent.id}/invoke`, {
        token: adminToken,
        body: { message: 'hi' },
      });
      expect(missing.status).toBe(401);
      expect(missing.body).toMatchObject({ code: 'CREDENTIALS_REQUIRED', missing: ['erp'] });
      expect(typeof missing.body.authUrls.erp).toBe('string');
      expect(typeof missing.body.message).toBe('string');
      expect((await api.get(`/api/v1/agents/${agent.id}/credentials-check`, { token: adminToken })).status).toBe(401);
      await api.must(201, 'POST', '/api/v1/credentials/apikey', {
        token: adminToken,
        body: { serviceType: 'erp', apiKey: 'erp-key-42' },
      });
      expect((await api.get(`/api/v1/agents/${agent.id}/credentials-check`, { token: adminToken })).status).toBe(200);

      const before = runtime.requests.length;
      const invoked = await api.post(`/api/v1/agents/${agent.id}/invoke`, {
        token: adminToken,
        body: { message: 'hello', extra: 1 },
      });
      expect(invoked.status).toBe(200);
      expect(invoked.body).toMatchObject({ success: true, data: { reply: 'got hello' } });
      expect(typeof invoked.body.request_id).toBe('string');
      const seen = runtime.requests[before]!;
      expect(seen.body).toMatchObject({ message: 'hello', extra: 1 });
      expect(seen.headers).toMatchObject({
        'x-user-id': adminId,
        'x-end-user-id': adminId,
        'x-end-user-email': ADMIN.email,
        'x-gateway-agent-id': agent.id,
        'x-credential-erp': 'erp-key-42',
        authorization: 'Bearer runtime-secret-1',
      });
      expect(seen.headers['x-end-user-roles']).toContain('admin');
      expect(seen.headers['x-gateway-request-id']).toBe(invoked.body.request_id);

      const stream = await fetch(`${target.baseUrl}/api/v1/agents/${agent.id}/invoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'stream' }),
      });
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      const reader = new SseEventReader(stream);
      expect((await reader.nextOf('token')).data).toEqual({ text: 'hel' });
      expect((await reader.nextOf('token')).data).toEqual({ text: 'lo' });
      await reader.nextOf('done');
      await reader.close();
      expect((await api.get(`/api/v1/agents/${agent.id}`, { token: adminToken })).status).toBe(200);
      passed('invoke');
    });

    it('API keys: key shown once, resolve/check as a user with X-User-Id, revoked key refused', async () => {
      const created = await api.post('/api/v1/admin/api-keys', {
        token: adminToken,
        body: { name: 'runtime key', scopes: ['credentials:resolve'] },
      });
      expect(created.status).toBe(201);
      expect(created.body.key).toMatch(/^gk_/);
      apiKey = created.body.key;
      const listed = await api.get('/api/v1/admin/api-keys', { token: adminToken });
      expect(JSON.stringify(listed.body)).not.toContain(apiKey);
      expect(listed.body.apiKeys.find((k: Json) => k.id === created.body.apiKey.id).keyPrefix).toBe(
        apiKey.slice(0, created.body.apiKey.keyPrefix.length),
      );
      const asUser = { 'x-api-key': apiKey, 'x-user-id': adminId };
      const resolved = await api.post('/api/v1/credentials/resolve', {
        headers: asUser,
        body: { serviceTypes: ['erp'] },
      });
      expect(resolved.status).toBe(200);
      expect(resolved.body.credentials).toEqual({ erp: 'erp-key-42' });
      expect((await api.get('/api/v1/credentials/check/erp', { headers: asUser })).body.hasCredential).toBe(true);
      const doomed = await api.must(201, 'POST', '/api/v1/admin/api-keys', {
        token: adminToken,
        body: { name: 'doomed' },
      });
      expect((await api.delete(`/api/v1/admin/api-keys/${doomed.apiKey.id}`, { token: adminToken })).status).toBe(200);
      await vi.waitFor(
        async () =>
          expect(
            (
              await api.post('/api/v1/credentials/resolve', {
                headers: { 'x-api-key': doomed.key, 'x-user-id': adminId },
                body: { serviceTypes: ['erp'] },
              })
            ).status,
          ).toBe(401),
        { timeout: 3_000, interval: 25 },
      );
      passed('API keys');
    });

    it('credential providers: secrets masked on read, the mask keeps the stored secret, by-service lookup', async () => {
      const created = await api.post('/api/v1/credential-providers', {
        token: adminToken,
        body: {
          name: 'ERP OAuth',
          serviceType: 'erp_oauth',
          authType: 'oauth2',
          config: { clientId: 'client-1', clientSecret: 'very-secret-value', scopes: ['read'] },
        },
      });
      expect(created.status).toBe(201);
      const id = created.body.provider?.id ?? created.body.credentialProvider?.id;
      expect(JSON.stringify(created.body)).not.toContain('very-secret-value');
      const read = await api.get(`/api/v1/credential-providers/${id}`, { token: adminToken });
      expect(JSON.stringify(read.body)).not.toContain('very-secret-value');
      expect(JSON.stringify(read.body)).toContain('********');
      const updated = await api.put(`/api/v1/credential-providers/${id}`, {
        token: adminToken,
        body: {
          name: 'ERP OAuth 2',
          config: { clientId: 'client-2', clientSecret: '********', scopes: ['read', 'write'] },
        },
      });
      expect(updated.status).toBe(200);
      const byService = await api.get('/api/v1/credential-providers/by-service/erp_oauth', { token: adminToken });
      expect(byService.status).toBe(200);
      expect(JSON.stringify(byService.body)).toContain('client-2');
      expect(JSON.stringify(byService.body)).toContain('********');
      expect((await api.get('/api/v1/credential-providers', { token: adminToken })).status).toBe(200);
      expect(
        (
          await api.post('/api/v1/credential-providers', {
            token: adminToken,
            body: { name: 'bad', serviceType: 'Bad-Type', authType: 'api_key' },
          })
        ).status,
      ).toBe(400);
      expect((await api.delete(`/api/v1/credential-providers/${id}`, { token: adminToken })).status).toBe(200);
      expect((await api.get(`/api/v1/credential-providers/${id}`, { token: adminToken })).status).toBe(404);
      passed('credential providers');
    });

    it('provider access rules: create, get, list, by-provider, update, evaluate, agent rules replaced atomically', async () => {
      const deny = await api.post('/api/v1/admin/provider-access', {
        token: adminToken,
        body: {
          subjectType: 'agent',
          subjectId: agent.id,
          providerId: alphaId,
          action: 'deny',
          toolPattern: 'a_secret',
          riskLevel: 'high',
        },
      });
      expect(deny.status).toBe(201);
      const denyId = deny.body.rule.id;
      expect((await api.get(`/api/v1/admin/provider-access/${denyId}`, { token: adminToken })).body.rule).toMatchObject(
        { action: 'deny', toolPattern: 'a_secret' },
      );
      expect((await api.get('/api/v1/admin/provider-access', { token: adminToken })).status).toBe(200);
      expect(
        (await api.get(`/api/v1/admin/provider-access/by-provider/${alphaId}`, { token: adminToken })).status,
      ).toBe(200);
      expect(
        (
          await api.put(`/api/v1/admin/provider-access/${denyId}`, {
            token: adminToken,
            body: { description: 'never' },
          })
        ).status,
      ).toBe(200);
      const evaluated = await api.post('/api/v1/admin/provider-access/evaluate', {
        token: adminToken,
        body: { userId: adminId, providerId: alphaId, toolName: 'a_secret', agentId: agent.id },
      });
      expect(evaluated.status).toBe(200);
      expect(evaluated.body).toMatchObject({ action: 'deny', matchedRule: { id: denyId } });
      expect(
        (
          await api.post('/api/v1/admin/provider-access/evaluate', {
            token: adminToken,
            body: { userId: adminId, providerId: alphaId, toolName: 'a_echo', agentId: agent.id },
          })
        ).body.action,
      ).toBe('allow');

      const replaced = await api.put(`/api/v1/admin/provider-access/agent/${agent.id}`, {
        token: adminToken,
        body: {
          rules: [
            { providerId: alphaId, action: 'allow' },
            { providerId: alphaId, action: 'deny', toolPattern: 'a_secret', riskLevel: 'high' },
            { providerId: betaId, action: 'allow' },
          ],
        },
      });
      expect(replaced.status).toBe(200);
      const agentRules = (await api.get(`/api/v1/admin/provider-access/agent/${agent.id}`, { token: adminToken })).body
        .rules as Json[];
      expect(agentRules.map((r) => `${r.providerId}:${r.action}:${r.toolPattern}`).sort()).toEqual(
        [`${alphaId}:allow:*`, `${alphaId}:deny:a_secret`, `${betaId}:allow:*`].sort(),
      );
      expect((await api.get(`/api/v1/admin/provider-access/${denyId}`, { token: adminToken })).status).toBe(404);
      passed('provider access rules');
    });

    it('MCP unified: both SDK clients list the merged tools (denied removed), call, deny is 403, providers= narrows', async () => {
      const headers = { authorization: `Bearer ${agent.token}` };
      const v1 = await connectV1(`${target.baseUrl}/api/v1/mcp/mcp`, headers);
      await vi.waitFor(
        async () =>
          expect((await v1.listTools()).tools.map((t) => t.name).sort()).toEqual([
            'a_echo',
            'a_slow',
            'a_transfer',
            'b_ping',
          ]),
        { timeout: 5_000, interval: 100 },
      );
      const before = alpha.calls.length;
      expect(textOf(await v1.callTool({ name: 'a_echo', arguments: { n: 'v1' } }))).toBe('echo:{"n":"v1"}');
      expect(alpha.calls[before]!.headers['x-gateway-agent-id'] ?? alpha.calls[before]!.headers['x-agent-id']).toBe(
        agent.id,
      );
      expect(textOf(await v1.callTool({ name: 'b_ping', arguments: {} }))).toBe('pong');
      await v1.close();

      const v2 = await connectV2(`${target.baseUrl}/api/v1/mcp/mcp`, headers);
      expect((await v2.listTools()).tools.map((t) => t.name).sort()).toEqual([
        'a_echo',
        'a_slow',
        'a_transfer',
        'b_ping',
      ]);
      expect(textOf(await v2.callTool({ name: 'a_echo', arguments: { n: 'v2' } }))).toBe('echo:{"n":"v2"}');
      await v2.close();

      const denied = (await rawToolsCall(`${target.baseUrl}/api/v1/mcp/mcp`, headers, 'a_secret', {})) as {
        status: number;
        body: Json;
      };
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe(-32003);
      expect(alpha.calls.some((c) => c.tool === 'a_secret')).toBe(false);

      const narrowed = await connectV2(`${target.baseUrl}/api/v1/mcp/mcp?providers=${betaId}`, headers);
      expect((await narrowed.listTools()).tools.map((t) => t.name)).toEqual(['b_ping']);
      await narrowed.close();
      passed('MCP unified');
    });

    it('MCP proxy: one provider through the same policy', async () => {
      const headers = { authorization: `Bearer ${agent.token}` };
      const proxy = await connectV1(`${target.baseUrl}/api/v1/mcp-proxy/${alphaId}/mcp`, headers);
      expect((await proxy.listTools()).tools.map((t) => t.name).sort()).toEqual(['a_echo', 'a_slow', 'a_transfer']);
      expect(textOf(await proxy.callTool({ name: 'a_echo', arguments: { n: 'proxy' } }))).toBe('echo:{"n":"proxy"}');
      await expect(proxy.callTool({ name: 'a_secret', arguments: {} })).rejects.toThrow();
      await proxy.close();
      const v2 = await connectV2(`${target.baseUrl}/api/v1/mcp-proxy/${betaId}/mcp`, headers);
      expect(textOf(await v2.callTool({ name: 'b_ping', arguments: {} }))).toBe('pong');
      await v2.close();
      passed('MCP proxy');
    });

    it('tool gate: evaluate (allow, denied) and audit completes the record', async () => {
      const headers = { 'x-api-key': apiKey, 'x-agent-id': agent.id, 'x-user-id': adminId };
      const allowed = await api.post('/api/v1/tool-gate/evaluate', {
        headers,
        body: { toolName: 'a_lookup', providerId: alphaId, params: { q: 1 } },
      });
      expect(allowed.status).toBe(200);
      expect(allowed.body).toMatchObject({ decision: 'allow' });
      expect(typeof allowed.body.auditId).toBe('string');
      expect(typeof allowed.body.risk).toBe('string');
      const denied = await api.post('/api/v1/tool-gate/evaluate', {
        headers,
        body: { toolName: 'a_secret', providerId: alphaId, params: {} },
      });
      expect(denied.body).toMatchObject({ decision: 'denied' });
      expect(
        (
          await api.post('/api/v1/tool-gate/audit', {
            headers: { 'x-api-key': apiKey, 'x-user-id': adminId },
            body: { auditId: allowed.body.auditId, result: { ok: true }, durationMs: 12 },
          })
        ).status,
      ).toBe(200);
      await vi.waitFor(
        async () => {
          const row = await api.get(`/api/v1/audit/logs/${allowed.body.auditId}`, { token: adminToken });
          expect(row.body.data).toMatchObject({
            toolName: 'a_lookup',
            status: 'completed',
            duration: 12,
            result: { ok: true },
          });
        },
        { timeout: 10_000, interval: 100 },
      );
      passed('tool gate');
    });

    it('confirmations with SSE: a held call, CONFIRMATION_REQUIRED on /api/v1/stream, confirm → result; reject → error', async () => {
      const careful = await ctx.agentOnAlpha('careful-bot', true);
      const stream = await fetch(`${target.baseUrl}/api/v1/stream`, {
        headers: { authorization: `Bearer ${adminToken}`, accept: 'text/event-stream' },
      });
      expect(stream.status).toBe(200);
      const events = new SseEventReader(stream);
      expect((await events.nextOf('connected')).data).toMatchObject({ userId: adminId });

      const client = await connectV2(`${target.baseUrl}/api/v1/mcp/mcp`, { authorization: `Bearer ${careful.token}` });
      const held = client.callTool({ name: 'a_transfer', arguments: { marker: 'confirm-me' } });
      const required = await events.nextOf('CONFIRMATION_REQUIRED', 15_000, (d) =>
        JSON.stringify(d).includes('confirm-me'),
      );
      const payload = required.data as Json;
      expect(payload).toMatchObject({ tool: { name: 'a_transfer' } });
      expect(typeof payload.id).toBe('string');
      expect(typeof payload.risk.level).toBe('string');
      expect(typeof payload.timestamp).toBe('string');
      expect((await api.get(`/api/v1/confirmation/${payload.id}`, { token: adminToken })).status).toBe(200);
      expect(
        (await api.get('/api/v1/stream/pending', { token: adminToken })).body.data.map((c: Json) => c.id),
      ).toContain(payload.id);
      expect(alpha.calls.some((c) => c.arguments.marker === 'confirm-me')).toBe(false);
      expect((await api.post(`/api/v1/confirmation/${payload.id}/confirm`, { token: adminToken })).status).toBe(200);
      expect(textOf(await held)).toBe('sent:confirm-me');
      expect(
        (await events.nextOf('CONFIRMATION_RESOLVED', 10_000, (d) => (d as Json).id === payload.id)).data,
      ).toMatchObject({ confirmed: true });

      const rejected = client.callTool({ name: 'a_transfer', arguments: { marker: 'reject-me' } });
      const rejectedSettled = rejected.then(
        () => 'resolved',
        (error: Error) => `error: ${error.message}`,
      );
      const pending = await ctx.pendingWith('reject-me');
      expect(
        (
          await api.post(`/api/v1/confirmation/${pending.id}/respond`, {
            token: adminToken,
            body: { confirmed: false, reason: 'not today' },
          })
        ).status,
      ).toBe(200);
      expect(await rejectedSettled).toMatch(/^error: /);
      expect(alpha.calls.some((c) => c.arguments.marker === 'reject-me')).toBe(false);
      expect(
        (await events.nextOf('CONFIRMATION_RESOLVED', 10_000, (d) => (d as Json).id === pending.id)).data,
      ).toMatchObject({ confirmed: false });
      // The tool gate holds the same way: its evaluate answers `confirmed` with the confirmer.
      const gate = api.post('/api/v1/tool-gate/evaluate', {
        headers: { 'x-api-key': apiKey, 'x-agent-id': careful.id, 'x-user-id': adminId },
        body: { toolName: 'a_transfer', providerId: alphaId, params: { marker: 'gate-hold' } },
      });
      const gatePending = await ctx.pendingWith('gate-hold');
      expect((await api.post(`/api/v1/confirmation/${gatePending.id}/confirm`, { token: adminToken })).status).toBe(
        200,
      );
      expect((await gate).body).toMatchObject({ decision: 'confirmed', confirmedBy: adminId });
      const rejectedList = await api.get('/api/v1/confirmation/list?status=rejected', { token: adminToken });
      expect(JSON.stringify(rejectedList.body)).toContain(pending.id);
      await events.close();
      await client.close();
      passed('confirmations + SSE');
    });

    it('audit: one row per call with filters, exact totals and admin-only stats', async () => {
      const audited = await ctx.agentOnAlpha('audited-bot', false);
      await api.must(201, 'POST', '/api/v1/admin/provider-access', {
        token: adminToken,
        body: {
          subjectType: 'agent',
          subjectId: audited.id,
          providerId: alphaId,
          action: 'deny',
          toolPattern: 'a_secret',
        },
      });
      const headers = { authorization: `Bearer ${audited.token}` };
      for (let i = 0; i < 5; i++)
        expect(
          (await rawToolsCall(`${target.baseUrl}/api/v1/mcp/mcp`, headers, 'a_echo', { n: i })) as Json,
        ).toMatchObject({ status: 200 });
      expect((await rawToolsCall(`${target.baseUrl}/api/v1/mcp/mcp`, headers, 'a_secret', {})) as Json).toMatchObject({
        status: 403,
      });
      await vi.waitFor(
        async () =>
          expect(
            (await api.get(`/api/v1/audit/logs?agent_id=${audited.id}`, { token: adminToken })).body.pagination.total,
          ).toBe(6),
        { timeout: 15_000, interval: 100 },
      );
      const completed = await api.get(
        `/api/v1/audit/logs?agent_id=${audited.id}&tool_name=a_echo&status=completed&limit=2`,
        { token: adminToken },
      );
      expect(completed.body.pagination).toEqual({ limit: 2, offset: 0, total: 5 });
      expect(completed.body.data).toHaveLength(2);
      expect(completed.body.data[0]).toMatchObject({
        agentId: audited.id,
        providerId: alphaId,
        toolName: 'a_echo',
        status: 'completed',
      });
      const one = await api.get(`/api/v1/audit/logs/${completed.body.data[0].id}`, { token: adminToken });
      expect(one.body.data.id).toBe(completed.body.data[0].id);
      const today = new Date().toISOString().slice(0, 10);
      expect(
        (
          await api.get(`/api/v1/audit/logs?agent_id=${audited.id}&start_date=${today}&end_date=${today}`, {
            token: adminToken,
          })
        ).body.pagination.total,
      ).toBe(6);
      expect(
        (await api.get(`/api/v1/audit/logs?agent_id=${audited.id}&tool_name=a_secret`, { token: adminToken })).body
          .data[0].status,
      ).not.toBe('completed');
      const stats = await api.get('/api/v1/audit/stats', { token: adminToken });
      expect(stats.status).toBe(200);
      expect(stats.body.data.total).toBeGreaterThanOrEqual(6);
      expect(stats.body.data.byStatus.completed).toBeGreaterThanOrEqual(5);
      expect(typeof stats.body.data.avgDuration).toBe('number');
      expect((await api.get('/api/v1/audit/logs?status=bogus', { token: adminToken })).status).toBe(400);
      passed('audit');
    });

    it('tenancy: two tenants cannot see each other’s agents, providers or audit rows', async () => {
      const stamp = Date.now();
      const users = await Promise.all(
        ['ta', 'tb'].map(async (tenant) => {
          const email = `${tenant}-${stamp}@example.com`;
          await api.must(201, 'POST', '/api/v1/admin/users', {
            token: adminToken,
            body: {
              email,
              password: 'tenant-password-1',
              name: tenant,
              tenantId: `tenant-${tenant}-${stamp}`,
              roles: ['tenant_admin'],
            },
          });
          return api.login(email, 'tenant-password-1');
        }),
      );
      const [a, b] = users as [{ token: string; userId: string }, { token: string; userId: string }];
      const agentA = (
        await api.must(201, 'POST', '/api/v1/admin/agents', {
          token: a.token,
          body: { name: 'tenant-a-bot', upstreamUrl: runtime.url },
        })
      ).agent.id;
      const providerA = (
        await api.must(201, 'POST', '/api/v1/admin/tool-providers', {
          token: a.token,
          body: { name: 'tenant-a-tools', pattern: 'ta_*', endpoint: beta.url },
        })
      ).provider.id;
      expect((await api.get(`/api/v1/admin/agents/${agentA}`, { token: b.token })).status).toBe(404);
      expect(
        (await api.get('/api/v1/admin/agents', { token: b.token })).body.agents.map((x: Json) => x.id),
      ).not.toContain(agentA);
      expect((await api.get(`/api/v1/admin/tool-providers/${providerA}`, { token: b.token })).status).toBe(404);
      expect(
        (await api.get('/api/v1/admin/tool-providers', { token: b.token })).body.providers.map((x: Json) => x.id),
      ).not.toContain(providerA);
      expect(
        (await api.put(`/api/v1/admin/agents/${agentA}`, { token: b.token, body: { name: 'stolen' } })).status,
      ).toBe(404);
      expect((await api.post(`/api/v1/admin/agents/${agentA}/disable`, { token: b.token })).status).toBe(404);
      expect((await api.get(`/api/v1/admin/agents/${agentA}`, { token: a.token })).status).toBe(200);
      expect((await api.get(`/api/v1/audit/logs?agent_id=${agent.id}`, { token: b.token })).body.pagination.total).toBe(
        0,
      );
      expect((await api.get('/api/v1/audit/stats', { token: b.token })).status).toBe(403);
      passed('tenancy');
    });

    it('devices: register, re-register reactivates, list, delete; a bad platform is 400', async () => {
      const body = { platform: 'ios', pushToken: `push-token-${Date.now()}-abcdef`, deviceName: 'Phone' };
      const registered = await api.post('/api/v1/notifications/devices', { token: adminToken, body });
      expect(registered.status).toBe(201);
      expect(JSON.stringify(registered.body)).not.toContain(body.pushToken);
      expect(
        (
          await api.post('/api/v1/notifications/devices', {
            token: adminToken,
            body: { ...body, deviceName: 'Phone 2' },
          })
        ).status,
      ).toBe(200);
      const listed = await api.get('/api/v1/notifications/devices', { token: adminToken });
      expect(listed.body.devices.map((d: Json) => d.id)).toContain(registered.body.device.id);
      expect(
        (await api.post('/api/v1/notifications/devices', { token: adminToken, body: { ...body, platform: 'windows' } }))
          .status,
      ).toBe(400);
      expect(
        (await api.delete(`/api/v1/notifications/devices/${registered.body.device.id}`, { token: adminToken })).status,
      ).toBe(200);
      expect(
        (await api.get('/api/v1/notifications/devices', { token: adminToken })).body.devices.map((d: Json) => d.id),
      ).not.toContain(registered.body.device.id);
      passed('devices');
    });

    it('bad input anywhere is a clear 4xx with the one error body, never a 5xx', async () => {
      for (const [method, path] of [
        ['POST', '/api/v1/admin/agents'],
        ['POST', '/api/v1/admin/tool-providers'],
        ['POST', '/api/v1/credentials/apikey'],
        ['POST', '/api/v1/confirmation/nope/respond'],
        ['POST', '/api/v1/tool-gate/evaluate'],
      ] as const) {
        const answer = await api.call(method, path, { token: adminToken, body: { unexpected: [1, 2, { x: null }] } });
        expect(answer.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `${method} ${path}`).toBeLessThan(500);
        expect(typeof answer.body.code, `${method} ${path}`).toBe('string');
      }
      expect((await api.get('/api/v1/no-such-route', { token: adminToken })).status).toBe(404);
      expect((await api.get('/api/v1/admin/agents')).status).toBe(401);
      passed('bad input');
    });

    more?.(() => ctx);
  });
}
