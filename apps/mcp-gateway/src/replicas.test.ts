import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { openTestDatabase } from '@agentgw/db/testing';
import type { DbHandle } from '@agentgw/db';
import {
  freePort,
  registerClientFeatureTools,
  SseEventReader,
  startMcpServer,
  type McpFixture,
} from '@agentgw/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { mintOAuthAccessToken } from './held-call.replicas.fixtures.js';
import { statelessRequest } from './stateless-rpc.js';

/**
 * Two mcp-gateway processes and an admin-api process on one PostgreSQL and one Redis, as
 * distributed mode runs them: a session started on one replica continues on the other, and the
 * kill switch flipped through admin-api stops both at once; a held call's task and input_required
 * round continue on the other replica, decided through confirmation-hub. Needs TEST_DATABASE_URL and TEST_REDIS_URL.
 */
const databaseUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const run = databaseUrl && redisUrl ? describe : describe.skip;

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const children: ChildProcess[] = [];

async function startServiceUnderTest(app: string, env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', `apps/${app}/src/main.ts`], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while ((await fetch(`${url}/health`).catch(() => null))?.status !== 200) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${app} did not start`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return url;
}

run('two mcp-gateway replicas on one PostgreSQL and Redis', () => {
  let db: DbHandle;
  let upstream: McpFixture;
  let replicas: [string, string];
  let admin: string;
  let adminToken: string;
  let agent: { id: string; token: string };
  let call: (path: string, body: unknown) => Promise<Record<string, unknown>>;
  let twin: McpFixture;
  let asker: McpFixture;
  let dropper: McpFixture;
  let drops = 0;
  let eager: McpFixture;
  /** The roots each of `eager`'s sessions got back, by the time they came. */
  const eagerRoots: string[] = [];
  let hub: string;
  /** The provider of the held `drop` (its name is kept apart from the exposed-names test's). */
  let heldProvider: string;
  let person: { id: string; oauthToken: string };
  let publicUrl: string;

  beforeAll(async () => {
    db = await openTestDatabase('postgres');
    publicUrl = `http://127.0.0.1:${await freePort()}`;
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db.db);
    const url = new URL(databaseUrl!);
    url.pathname = `/${rows[0]!.name}`;
    twin = await startMcpServer({ name: 'twin-upstream', tools: [{ name: 'echo', handler: () => 'twin echo' }] });
    asker = await startMcpServer({ name: 'asks-back', tools: [], setup: registerClientFeatureTools });
    // As server-everything does: asks for roots on its own stream soon after the handshake, once.
    eager = await startMcpServer({
      name: 'eager-roots',
      tools: [{ name: 'noop', handler: () => 'ok' }],
      setup: (server) => {
        server.server.oninitialized = () =>
          void setTimeout(
            () =>
              void server.server
                .listRoots()
                .then(({ roots }) => eagerRoots.push(roots.map((root) => root.uri).join(',')))
                .catch(() => undefined),
            300,
          );
      },
    });
    dropper = await startMcpServer({
      name: 'held-upstream',
      tools: [{ name: 'drop', inputSchema: { table: z.string() }, handler: () => `dropped ${++drops}` }],
    });
    upstream = await startMcpServer({
      name: 'shared-upstream',
      tools: [
        { name: 'echo', inputSchema: { on: z.string().optional() }, handler: (args) => `echo:${JSON.stringify(args)}` },
      ],
    });
    const env = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: url.toString(),
      REDIS_URL: redisUrl!,
      JWT_SECRET: 'replica-test-jwt-secret-that-is-long-enough-0123',
      // The platform key alone: neither admin-api nor mcp-gateway holds the credential key.
      PLATFORM_SECRETS_KEY: 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100',
      EGRESS_POLICY: 'allow-private',
      ADMIN_EMAIL: 'replica-admin@example.com',
      ADMIN_PASSWORD: 'replica-admin-password',
    };
    // The replicas accept OAuth access tokens of GATEWAY_PUBLIC_URL (minted below): a person who may confirm in the client.
    const gatewayEnv = { ...env, GATEWAY_PUBLIC_URL: publicUrl };
    const started = await Promise.all([
      startServiceUnderTest('admin-api', env),
      startServiceUnderTest('mcp-gateway', gatewayEnv),
      startServiceUnderTest('mcp-gateway', gatewayEnv),
      startServiceUnderTest('confirmation-hub', env),
    ]);
    admin = started[0];
    replicas = [started[1], started[2]];
    hub = started[3];
    const login = await fetch(`${admin}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: env.ADMIN_EMAIL, password: env.ADMIN_PASSWORD }),
    });
    const signedIn = (await login.json()) as { token: string; user: { id: string } };
    adminToken = signedIn.token;
    call = async (path: string, body: unknown) => {
      const res = await fetch(`${admin}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const provider = (await call('/admin/tool-providers', { name: 'shared', pattern: '*', endpoint: upstream.url }))
      .provider as { id: string };
    const created = await call('/admin/agents', { name: 'replica-bot', upstreamUrl: 'http://127.0.0.1:9/agent' });
    agent = { id: (created.agent as { id: string }).id, token: created.runtime_token as string };
    await call('/admin/provider-access', {
      subjectType: 'agent',
      subjectId: agent.id,
      providerId: provider.id,
      action: 'allow',
    });
    // The admin, as a person, confirms their own `drop` on the console or in their client.
    const held = (await call('/admin/tool-providers', { name: 'held', pattern: 'drop', endpoint: dropper.url }))
      .provider as { id: string };
    heldProvider = held.id;
    await call('/admin/provider-access', {
      subjectType: 'user',
      subjectId: signedIn.user.id,
      providerId: held.id,
      action: 'require_confirmation',
      toolPattern: 'drop',
      confirmCarriers: ['client'],
    });
    person = {
      id: signedIn.user.id,
      oauthToken: await mintOAuthAccessToken(db.db, {
        issuer: publicUrl,
        resource: `${publicUrl}/api/v1/mcp/mcp`,
        userId: signedIn.user.id,
        clientId: `replica-client-${randomUUID()}`,
      }),
    };
  }, 180_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
    await upstream?.close();
    await twin?.close();
    await asker?.close();
    await dropper?.close();
    await eager?.close();
    await db?.close();
  });

  /** A provider added through admin-api that the agent may call. */
  const allowedProvider = async (name: string, endpoint: string): Promise<{ id: string }> => {
    const provider = (await call('/admin/tool-providers', { name, pattern: '*', endpoint })).provider as { id: string };
    await call('/admin/provider-access', {
      subjectType: 'agent',
      subjectId: agent.id,
      providerId: provider.id,
      action: 'allow',
    });
    return provider;
  };

  const post = (base: string, body: unknown, session?: string) =>
    fetch(`${base}/api/v1/mcp/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agent.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
      },
      body: JSON.stringify(body),
    });

  it('continues a session started on one replica on the other, with the same upstream session', async () => {
    const init = await post(replicas[0], {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'r', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    const first = await post(
      replicas[0],
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { on: 'a' } } },
      session,
    );
    expect(await first.json()).toMatchObject({ result: { content: [{ text: 'echo:{"on":"a"}' }] } });
    const second = await post(
      replicas[1],
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { on: 'b' } } },
      session,
    );
    expect(await second.json()).toMatchObject({ result: { content: [{ text: 'echo:{"on":"b"}' }] } });
    // Both calls reached the upstream on the one upstream session the gateway session opened.
    const upstreamSessions = upstream.requests
      .filter((r) => (r.body as { method?: string })?.method === 'tools/call')
      .map((r) => r.headers['mcp-session-id']);
    expect(upstreamSessions).toHaveLength(2);
    expect(new Set(upstreamSessions).size).toBe(1);
    // Ended on the second replica, unknown to the first.
    expect(
      (
        await fetch(`${replicas[1]}/api/v1/mcp/mcp`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${agent.token}`, 'mcp-session-id': session },
        })
      ).status,
    ).toBe(204);
    expect(
      upstream.requests.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === upstreamSessions[0]),
    ).toBe(true);
    expect((await post(replicas[0], { jsonrpc: '2.0', id: 3, method: 'tools/list' }, session)).status).toBe(404);
  });

  it('agrees on exposed names across replicas: a colliding provider added through admin-api is named once, both replicas list and route alike', async () => {
    const rpc = async (base: string, method: string, params: Record<string, unknown> = {}) =>
      (await (await post(base, { jsonrpc: '2.0', id: 1, method, params })).json()) as {
        result?: { tools?: { name: string }[]; content?: { text: string }[] };
      };
    const names = async (base: string) => (await rpc(base, 'tools/list')).result?.tools?.map((t) => t.name);
    expect(await names(replicas[0])).toEqual(['echo']);
    const other = await allowedProvider('Twin Server', twin.url);
    // Both replicas list at once; whichever names first, they answer the same names.
    await expect
      .poll(() => Promise.all(replicas.map(names)))
      .toEqual([
        ['echo', 'twin_server__echo'],
        ['echo', 'twin_server__echo'],
      ]);
    for (const base of replicas) {
      expect(
        (await rpc(base, 'tools/call', { name: 'twin_server__echo', arguments: {} })).result?.content?.[0]?.text,
      ).toBe('twin echo');
      expect((await rpc(base, 'tools/call', { name: 'echo', arguments: {} })).result?.content?.[0]?.text).toBe(
        'echo:{}',
      );
    }
    expect(
      await db.db
        .selectFrom('tool_names')
        .select(['exposed_name', 'provider_id'])
        .where('provider_id', '!=', heldProvider)
        .orderBy('exposed_name')
        .execute(),
    ).toEqual([
      { exposed_name: 'echo', provider_id: expect.any(String) },
      { exposed_name: 'twin_server__echo', provider_id: other.id },
    ]);
  });

  it('bridges a legacy upstream’s sampling for a 2026-07-28 client across replicas: the round from one, the retry on the other', async () => {
    const provider = await allowedProvider('asks-back', asker.url);
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
    };
    const rpc = async (base: string, params: Record<string, unknown>) => {
      const res = await fetch(`${base}/api/v1/mcp-proxy/${provider.id}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${agent.token}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'mcp-protocol-version': '2026-07-28',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: meta } }),
      });
      return ((await res.json()) as { result: Record<string, unknown> }).result;
    };
    const ask = { name: 'ask_model', arguments: { prompt: 'which replica?' } };
    const round = await rpc(replicas[0], ask);
    expect(round).toMatchObject({
      resultType: 'input_required',
      requestState: expect.stringMatching(/^agentgw-bridge-/),
    });
    const [key] = Object.keys(round.inputRequests as object);
    const sampled = { role: 'assistant', model: 'm', content: { type: 'text', text: 'the other one' } };
    const final = await rpc(replicas[1], {
      ...ask,
      inputResponses: { [key!]: sampled },
      requestState: round.requestState,
    });
    expect(final).toMatchObject({ content: [{ type: 'text', text: 'model said: the other one' }] });
  });

  it("relays an upstream's roots request sent on its own stream right after its handshake, opened on one replica, to the client's stream held on the other", async () => {
    const provider = await allowedProvider('eager', eager.url);
    const proxied = (base: string, body: unknown, session?: string) =>
      fetch(`${base}/api/v1/mcp-proxy/${provider.id}/mcp`, {
        method: body === null ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${agent.token}`,
          accept: body === null ? 'text/event-stream' : 'application/json, text/event-stream',
          ...(body === null ? {} : { 'content-type': 'application/json' }),
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        ...(body === null ? {} : { body: JSON.stringify(body) }),
      });
    const init = await proxied(replicas[0], {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { roots: {} }, clientInfo: { name: 'r', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id')!;
    await proxied(replicas[0], { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    const stream = new SseEventReader(await proxied(replicas[0], null, session));
    try {
      // The client's upstream session opens on the other replica (a call; lists come from the catalog's own session); the upstream asks 300 ms later, once, and
      // drops the request if the gateway holds no stream of it by then (no replica re-reads that soon).
      const noop = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'noop', arguments: {} } };
      expect((await proxied(replicas[1], noop, session)).status).toBe(200);
      const asked = await stream.nextOf(
        'message',
        5_000,
        (data) => (data as { method?: string }).method === 'roots/list',
      );
      const { id } = asked.data as { id: string };
      const answered = await proxied(
        replicas[1],
        { jsonrpc: '2.0', id, result: { roots: [{ uri: 'file:///replica-root' }] } },
        session,
      );
      expect(answered.status).toBe(202);
      await expect.poll(() => eagerRoots).toContain('file:///replica-root');
    } finally {
      await stream.close();
    }
  });

  it('stops the agent on both replicas at once when the kill switch is flipped through admin-api', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const call = (base: string) =>
      fetch(`${base}/api/v1/mcp/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${agent.token}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'mcp-protocol-version': '2026-07-28',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo', arguments: {}, _meta: meta },
        }),
      });
    expect((await call(replicas[0])).status).toBe(200);
    expect((await call(replicas[1])).status).toBe(200);
    const disabled = await fetch(`${admin}/api/v1/admin/agents/${agent.id}/disable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(disabled.status).toBe(200);
    const flippedAt = Date.now();
    await expect
      .poll(async () => [(await call(replicas[0])).status, (await call(replicas[1])).status], { interval: 20 })
      .toEqual([403, 403]);
    console.log(`kill switch effective on both replicas within ${Date.now() - flippedAt} ms`);
  });

  /** A stateless 2026-07-28 request of the person (their OAuth token), declaring form elicitation and, when told, the tasks extension; its response unread. */
  const personRequest = (base: string, method: string, params: Record<string, unknown>, tasks: boolean) =>
    statelessRequest(`${base}/api/v1/mcp/mcp`, { authorization: `Bearer ${person.oauthToken}` }, method, params, {
      elicitation: {},
      ...(tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {}),
    });
  /** The person's request, answered: its result (a JSON-RPC error thrown). */
  const personRpc = async (base: string, method: string, params: Record<string, unknown>, tasks: boolean) => {
    const res = await personRequest(base, method, params, tasks);
    const body = (await res.json()) as { result?: Record<string, unknown>; error?: { code: number } };
    if (!body.result) throw new Error(`${method} answered ${res.status}: ${JSON.stringify(body)}`);
    return body.result;
  };
  const latestDrop = () =>
    db.db
      .selectFrom('confirmations')
      .select(['id', 'status'])
      .where('tool_name', '=', 'drop')
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
  const confirmOnConsole = async (id: string) => {
    const res = await fetch(`${hub}/api/v1/confirmation/${id}/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
  };

  it('a held call as a task: created on one replica, polled on the other while pending, approved on the console, run once under polls on both', async () => {
    const before = drops;
    const created = await personRpc(replicas[0], 'tools/call', { name: 'drop', arguments: { table: 't' } }, true);
    expect(created).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = created.taskId as string;
    expect(await personRpc(replicas[1], 'tasks/get', { taskId }, true)).toMatchObject({
      taskId,
      status: 'input_required',
      inputRequests: { 'agentgw-confirmation': { method: 'elicitation/create' } },
    });
    const confirmation = await latestDrop();
    expect(confirmation.status).toBe('pending');
    await confirmOnConsole(confirmation.id);
    const polls = await Promise.all(
      [0, 1, 0, 1].map((i) => personRpc(replicas[i as 0 | 1], 'tasks/get', { taskId }, true)),
    );
    expect(polls.every((p) => p.status === 'completed' || p.status === 'working')).toBe(true);
    await expect
      .poll(async () => (await personRpc(replicas[1], 'tasks/get', { taskId }, true)).status)
      .toBe('completed');
    for (const base of replicas)
      expect(await personRpc(base, 'tasks/get', { taskId }, true)).toMatchObject({
        status: 'completed',
        result: { content: [{ type: 'text', text: `dropped ${before + 1}` }] },
      });
    expect(drops).toBe(before + 1);
    expect((await latestDrop()).status).toBe('consumed');
  });

  it('a held call’s task pushed on a listen on the other replica: created on one, listened for on the other, approved on the console → working there, run by the next tasks/get', async () => {
    const before = drops;
    const created = await personRpc(replicas[0], 'tools/call', { name: 'drop', arguments: { table: 'n' } }, true);
    const taskId = created.taskId as string;
    const reader = new SseEventReader(
      await personRequest(replicas[1], 'subscriptions/listen', { notifications: { taskIds: [taskId] } }, true),
    );
    try {
      expect((await reader.nextOf('message', 10_000)).data).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: [taskId] } },
      });
      await confirmOnConsole((await latestDrop()).id);
      const isTaskNotice = (data: unknown) => (data as { method: string }).method === 'notifications/tasks';
      expect((await reader.nextOf('message', 10_000, isTaskNotice)).data).toMatchObject({
        params: { taskId, status: 'working', statusMessage: expect.stringContaining('approved') },
      });
      expect(drops).toBe(before);
      await expect
        .poll(async () => (await personRpc(replicas[0], 'tasks/get', { taskId }, true)).status)
        .toBe('completed');
      expect(drops).toBe(before + 1);
    } finally {
      await reader.close();
    }
  });

  it('a held call’s input_required round across replicas: first round on one, the retry with the answer on the other, run once', async () => {
    const before = drops;
    const drop = { name: 'drop', arguments: { table: 'r' } };
    const round = await personRpc(replicas[0], 'tools/call', drop, false);
    expect(round).toMatchObject({
      resultType: 'input_required',
      requestState: expect.stringMatching(/^agentgw-held:/),
    });
    const answer = { 'agentgw-confirmation': { action: 'accept', content: { decision: 'approve' } } };
    const retry = { ...drop, requestState: round.requestState, inputResponses: answer };
    expect(await personRpc(replicas[1], 'tools/call', retry, false)).toMatchObject({
      content: [{ type: 'text', text: `dropped ${before + 1}` }],
    });
    // The same retry again, on the first replica: the approval is spent.
    await expect(personRpc(replicas[0], 'tools/call', retry, false)).rejects.toThrow(/403/);
    expect(drops).toBe(before + 1);
  });
});
