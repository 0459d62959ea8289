import { createAuth, type AuthService } from '@agentgw/auth';
import { loadConfig, MemoryEventBus } from '@agentgw/core';
import { createUser, SseEventReader, startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import {
  createScratchDatabase,
  isolatedRedisUrl,
  startHub,
  startServiceUnderTest,
  TEST_SECRETS,
  type ReplicaProcess,
  type ScratchDatabase,
} from './replica-processes.js';

// Response bodies are whatever JSON the processes answered; tests assert on their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pgUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

/**
 * Distributed mode end to end through the real MCP endpoint: admin-api, two mcp-gateway
 * replicas and two confirmation-hub replicas (each its own main.ts) on one PostgreSQL and one
 * Redis, a real MCP SDK upstream. A `tools/call` held on gateway 1 is answered through hub B.
 */
describe.skipIf(!pgUrl || !redisUrl)('MCP tools/call held across replicas (PostgreSQL + Redis)', () => {
  let database: ScratchDatabase;
  let upstream: McpFixture;
  let auth: AuthService;
  let adminToken: string;
  let agentToken: string;
  let providerId: string;
  let adminId: string;
  let gateways: [ReplicaProcess, ReplicaProcess];
  let adminUrl: string;
  /** POST to admin-api as the admin. */
  let post: (path: string, body: unknown) => Promise<Json>;
  let shortDeadlineGateway: ReplicaProcess;
  let hubs: [ReplicaProcess, ReplicaProcess];
  const processes: ReplicaProcess[] = [];
  let sequence = 0;

  beforeAll(async () => {
    database = await createScratchDatabase(pgUrl!);
    upstream = await startMcpServer({
      name: 'confirm-upstream',
      tools: [
        { name: 'transfer', inputSchema: { amount: z.number() }, handler: (args) => `sent:${JSON.stringify(args)}` },
      ],
    });
    const env = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      REDIS_URL: isolatedRedisUrl(redisUrl!, 12),
      EGRESS_POLICY: 'allow-private',
      CONFIRMATION_TIMEOUT_MS: '60000',
    };
    const started = await Promise.all([
      startServiceUnderTest('admin-api', env),
      startServiceUnderTest('mcp-gateway', env),
      startServiceUnderTest('mcp-gateway', env),
      startServiceUnderTest('mcp-gateway', { ...env, CONFIRMATION_TIMEOUT_MS: '1500' }),
      startHub(env),
      startHub(env),
    ]);
    processes.push(...started);
    const [admin, g1, g2, g3, h1, h2] = started;
    gateways = [g1, g2];
    shortDeadlineGateway = g3!;
    hubs = [h1, h2];
    adminUrl = admin.url;

    auth = await createAuth({
      config: loadConfig({ ...TEST_SECRETS, LOG_LEVEL: 'silent' }),
      db: database.handle.db,
      bus: new MemoryEventBus(),
    });
    const adminUser = await createUser(
      { db: database.handle.db },
      { email: `admin-${Date.now()}@example.test`, roles: ['admin'] },
    );
    adminToken = await auth.signUserToken(adminUser);
    adminId = adminUser.id;
    post = async (path: string, body: unknown) => {
      const res = await fetch(`${admin.url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Json;
    };
    const provider = (await post('/admin/tool-providers', { name: 'bank', pattern: '*', endpoint: upstream.url }))
      .provider;
    providerId = provider.id;
    const created = await post('/admin/agents', {
      name: 'careful-bot',
      upstreamUrl: 'http://127.0.0.1:9/agent',
      requireConfirmation: true,
    });
    agentToken = created.runtime_token;
    await post('/admin/provider-access', {
      subjectType: 'agent',
      subjectId: created.agent.id,
      providerId: provider.id,
      action: 'allow',
    });
  }, 240_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    await upstream?.close();
    await auth?.close();
    await database?.drop();
  });

  /** A stateless (2026-07-28) tools/call; resolves with the JSON-RPC answer once the gateway answers. */
  const toolsCall = async (
    gateway: ReplicaProcess,
    args: Record<string, unknown>,
    { token, signal, bearer = agentToken }: { token?: string; signal?: AbortSignal; bearer?: string } = {},
  ) => {
    const res = await fetch(`${gateway.url}/api/v1/mcp/mcp`, {
      signal,
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': '2026-07-28',
        ...(token ? { 'x-confirmation-token': token } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++sequence,
        method: 'tools/call',
        params: {
          name: 'transfer',
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Json };
  };

  /** The pending confirmation for a call with these arguments, as the hub lists it. */
  const pendingFor = (hub: ReplicaProcess, args: Record<string, unknown>) =>
    vi.waitFor(
      async () => {
        const res = await fetch(`${hub.url}/api/v1/confirmation/pending`, {
          headers: { authorization: `Bearer ${adminToken}` },
        });
        const found = ((await res.json()) as Json).data.find(
          (c: Json) => JSON.stringify(c.tool.arguments) === JSON.stringify(args),
        );
        if (!found) throw new Error('not pending yet');
        return found as { id: string };
      },
      { timeout: 10_000, interval: 25 },
    );

  const answer = async (hub: ReplicaProcess, id: string, verb: 'confirm' | 'reject', body?: unknown) => {
    const res = await fetch(`${hub.url}/api/v1/confirmation/${id}/${verb}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  /** How many times the upstream ran `transfer` with exactly these arguments. */
  const runs = (args: Record<string, unknown>) =>
    upstream.calls.filter((c) => c.tool === 'transfer' && JSON.stringify(c.arguments) === JSON.stringify(args)).length;

  it('held on gateway 1, confirmed through hub B: the tool result comes back, the call runs once, and no token runs it again', async () => {
    const args = { amount: 100 };
    const call = toolsCall(gateways[0], args);
    const pending = await pendingFor(hubs[0], args);
    const confirmed = await answer(hubs[1], pending.id, 'confirm');
    expect(confirmed.status).toBe(200);
    // The released call is the approval's one run: the answer carries no token.
    expect(confirmed.body.confirmation_token).toBeUndefined();
    const result = await call;
    expect(result.status).toBe(200);
    expect(result.body.result.content[0].text).toBe('sent:{"amount":100}');
    expect(runs(args)).toBe(1);
    await vi.waitFor(async () => {
      const res = await fetch(`${hubs[0].url}/api/v1/confirmation/${pending.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(((await res.json()) as Json).data.status).toBe('consumed');
    });

    // Even a validly signed token of that confirmation does not run it again: it is held anew.
    const forged = (await auth.signConfirmationToken({ confirmationId: pending.id, userId: adminId })).token;
    const replay = toolsCall(gateways[1], args, { token: forged });
    const replayPending = await pendingFor(hubs[0], args);
    expect(replayPending.id).not.toBe(pending.id);
    expect((await answer(hubs[1], replayPending.id, 'reject', { reason: 'replayed' })).status).toBe(200);
    expect((await replay).body.error).toMatchObject({ data: { decision: 'rejected', reason: 'replayed' } });
    expect(runs(args)).toBe(1);
  });

  it('a held call whose client left: the approval returns a token that runs that exact call once', async () => {
    const args = { amount: 300 };
    const client = new AbortController();
    const call = toolsCall(gateways[0], args, { signal: client.signal });
    call.catch(() => undefined);
    const pending = await pendingFor(hubs[0], args);
    client.abort();
    await vi.waitFor(async () => {
      const res = await fetch(`${hubs[1].url}/api/v1/confirmation/${pending.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(((await res.json()) as Json).data).toMatchObject({
        status: 'pending',
        reason: 'The caller went away before a decision.',
      });
    });
    const confirmed = await answer(hubs[1], pending.id, 'confirm');
    expect(confirmed.status).toBe(200);
    const token = confirmed.body.confirmation_token as string;
    expect(token).toEqual(expect.any(String));
    expect(runs(args)).toBe(0);

    // A changed argument is not what was approved: it is held like any other call.
    const changed = toolsCall(gateways[1], { amount: 999 }, { token });
    const changedPending = await pendingFor(hubs[1], { amount: 999 });
    expect((await answer(hubs[0], changedPending.id, 'reject')).status).toBe(200);
    expect((await changed).body.error).toBeDefined();
    // The exact call passes on the other gateway without a new hold, once.
    const exact = await toolsCall(gateways[1], args, { token });
    expect(exact.body.result.content[0].text).toBe('sent:{"amount":300}');
    expect(runs(args)).toBe(1);
    const replay = toolsCall(gateways[0], args, { token });
    const replayPending = await pendingFor(hubs[0], args);
    expect(replayPending.id).not.toBe(pending.id);
    expect((await answer(hubs[1], replayPending.id, 'reject', { reason: 'replayed' })).status).toBe(200);
    expect((await replay).body.error).toMatchObject({ data: { decision: 'rejected', reason: 'replayed' } });
    expect(runs(args)).toBe(1);
  });

  it('a client that accepts SSE hears the hold on its stream (progress for its token), then gets the result', async () => {
    const args = { amount: 42 };
    const res = await fetch(`${gateways[0].url}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'sse-1',
        method: 'tools/call',
        params: {
          name: 'transfer',
          arguments: args,
          _meta: {
            progressToken: 'tok-1',
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = new SseEventReader(res);
    const messages: Json[] = [];
    const pending = await pendingFor(hubs[1], args);
    while (
      !messages.some((m) => m.method === 'notifications/progress') ||
      !messages.some((m) => m.method === 'notifications/message')
    ) {
      messages.push((await stream.next(10_000))!.data);
    }
    expect(messages.find((m) => m.method === 'notifications/progress').params).toMatchObject({
      progressToken: 'tok-1',
      message: 'Waiting for confirmation',
    });
    expect(messages.find((m) => m.method === 'notifications/message').params.data).toMatchObject({
      confirmationId: pending.id,
    });
    expect((await answer(hubs[1], pending.id, 'confirm')).status).toBe(200);
    let final: Json;
    do final = (await stream.next(10_000))!.data;
    while (final.id !== 'sse-1');
    expect(final.result.content[0].text).toBe('sent:{"amount":42}');
  });

  it('the tool gate holds the same way: confirmed through another hub answers confirmed with confirmedBy; a short deadline answers timeout', async () => {
    const evaluate = (gateway: ReplicaProcess, params: Record<string, unknown>) =>
      fetch(`${gateway.url}/api/v1/tool-gate/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ toolName: 'transfer', providerId, params }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
    const held = evaluate(gateways[1], { amount: 11 });
    const pending = await pendingFor(hubs[0], { amount: 11 });
    expect((await answer(hubs[1], pending.id, 'confirm')).status).toBe(200);
    expect(await held).toMatchObject({
      status: 200,
      body: { decision: 'confirmed', confirmedBy: adminId, auditId: expect.any(String) },
    });
    const timedOut = await evaluate(shortDeadlineGateway, { amount: 12 });
    expect(timedOut.body).toMatchObject({ decision: 'timeout', reason: expect.stringMatching(/^Request timed out/) });
  });

  it('the agent disabled through admin-api while its call is held: the call ends with 403, the confirmation is rejected on every hub', async () => {
    const created = await post('/admin/agents', {
      name: `doomed-bot-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/agent',
      requireConfirmation: true,
    });
    await post('/admin/provider-access', {
      subjectType: 'agent',
      subjectId: created.agent.id,
      providerId,
      action: 'allow',
    });
    const args = { amount: 66 };
    const call = toolsCall(gateways[0], args, { bearer: created.runtime_token });
    const pending = await pendingFor(hubs[0], args);
    await post(`/admin/agents/${created.agent.id}/disable`, {});
    const result = await call;
    expect(result.status).toBe(403);
    expect(runs(args)).toBe(0);
    for (const hub of hubs) {
      const res = await fetch(`${hub.url}/api/v1/confirmation/${pending.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(((await res.json()) as Json).data).toMatchObject({
        status: 'rejected',
        reason: 'The agent that made this call is disabled.',
      });
      expect((await answer(hub, pending.id, 'confirm')).status).toBe(409);
    }
  });

  it('a user deleted through admin-api: their streams on both hubs end, and reconnecting is refused', async () => {
    const user = await createUser(
      { db: database.handle.db },
      { email: `doomed-${Date.now()}@example.test`, roles: ['tenant_admin'], tenantId: null },
    );
    const token = await auth.signUserToken(user);
    const open = async (hub: ReplicaProcess) => {
      const reader = new SseEventReader(
        await fetch(`${hub.url}/api/v1/stream`, { headers: { authorization: `Bearer ${token}` } }),
      );
      expect((await reader.next())?.event).toBe('connected');
      return reader;
    };
    const readers = await Promise.all(hubs.map(open));
    const res = await fetch(`${adminUrl}/api/v1/admin/users/${user.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.status).toBe(200);
    for (const reader of readers) {
      let event;
      do event = await reader.next(5_000);
      while (event !== null);
    }
    for (const hub of hubs)
      expect((await fetch(`${hub.url}/api/v1/stream`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        401,
      );
  });

  it('21 concurrent held calls of one agent across both gateways: one is refused with 429, the first 20 stay pending', async () => {
    const created = await post('/admin/agents', {
      name: `busy-bot-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/agent',
      requireConfirmation: true,
    });
    await post('/admin/provider-access', {
      subjectType: 'agent',
      subjectId: created.agent.id,
      providerId,
      action: 'allow',
    });
    const calls = Array.from({ length: 21 }, (_, i) =>
      toolsCall(gateways[i % 2]!, { amount: 5_000 + i }, { bearer: created.runtime_token }),
    );
    const refused = await Promise.race(calls.map((c, i) => c.then((r) => ({ i, r }))));
    expect(refused.r.status).toBe(429);
    // The same JSON-RPC code and Retry-After as the call quotas' 429.
    expect(refused.r.body.error).toMatchObject({ code: -32029, data: { code: 'RATE_LIMITED', retryAfter: 5 } });
    expect(refused.r.retryAfter).toBe('5');
    const ofAgent = async () => {
      const res = await fetch(`${hubs[1].url}/api/v1/confirmation/pending`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      return ((await res.json()) as Json).data.filter((c: Json) => c.agentId === created.agent.id);
    };
    const pending = await vi.waitFor(async () => {
      const found = await ofAgent();
      expect(found).toHaveLength(20);
      return found as { id: string }[];
    });
    for (const c of pending) expect((await answer(hubs[0], c.id, 'reject', { reason: 'cleanup' })).status).toBe(200);
    const answers = await Promise.all(calls);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 403)).toHaveLength(20);
  });

  it('held on gateway 2, rejected through hub A: a JSON-RPC error with HTTP 403', async () => {
    const args = { amount: 5 };
    const call = toolsCall(gateways[1], args);
    const pending = await pendingFor(hubs[1], args);
    expect((await answer(hubs[0], pending.id, 'reject', { reason: 'no transfers today' })).status).toBe(200);
    const result = await call;
    expect(result.status).toBe(403);
    expect(result.body.error).toMatchObject({
      data: { decision: 'rejected', reason: 'no transfers today', confirmationId: pending.id },
    });
  });

  it('a deadline shortened by configuration: the call is answered with a timeout error at that deadline', async () => {
    const result = await toolsCall(shortDeadlineGateway, { amount: 1 });
    expect(result.status).toBe(403);
    expect(result.body.error).toMatchObject({ data: { decision: 'timeout', reason: 'Request timed out.' } });
    const res = await fetch(`${hubs[0].url}/api/v1/confirmation/${result.body.error.data.confirmationId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const decided = ((await res.json()) as Json).data;
    // The gateway's 1.5 s deadline (the others' is 60 s), and the timeout decided no earlier than it: times the code recorded.
    expect(Date.parse(decided.expiresAt) - Date.parse(decided.timestamp)).toBe(1_500);
    expect(Date.parse(decided.decidedAt)).toBeGreaterThanOrEqual(Date.parse(decided.expiresAt));
  });

  it('a hub restart during the hold: the held MCP call is released through the restarted hub', async () => {
    const args = { amount: 7 };
    const call = toolsCall(gateways[0], args);
    const pending = await pendingFor(hubs[0], args);
    await Promise.all(hubs.map((h) => h.stop('SIGKILL')));
    const restarted = await startHub({
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      REDIS_URL: isolatedRedisUrl(redisUrl!, 12),
      CONFIRMATION_TIMEOUT_MS: '60000',
    });
    processes.push(restarted);
    expect((await answer(restarted, pending.id, 'confirm')).status).toBe(200);
    expect((await call).body.result.content[0].text).toBe('sent:{"amount":7}');
  });
});
