import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Host, RunningServer } from '@agentgw/service-kit';
import { serve } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, freePort, startMcpServer, tokenFor, type McpFixture, type TestUser } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createGatewayHost } from './all-in-one.js';
import { TestBrowser } from './oauth-test-browser.js';
import { firstConnectionRefused, REDIRECT, SDK_1, SDK_2, TestOAuthClient, type McpSdk } from './oauth-test-clients.js';

// Issue 34: a held call confirmed in the person's own MCP client (form elicitation), signed in
// through the gateway's OAuth, with the official SDK clients 1.x and 2.x, on the all-in-one.

let deps: TestDeps;
let host: Host;
let server: RunningServer;
let base: string;
let upstream: McpFixture;
let user: TestUser;
let adminToken: string;
let userToken: string;
/** How many times the upstream ran `drop`: a held call runs at most once. */
let drops = 0;
const endpoint = () => new URL(`${base}/api/v1/mcp/mcp`);

/** What the test's elicitation handler answers; `asked` keeps every question. */
type Answer = (params: { message: string }, requestId: string | number) => Promise<Record<string, unknown>>;
let answer: Answer;
let asked: { message: string }[] = [];

/**
 * A POST with a bearer token, sent again once when a kept-alive socket the server had closed
 * resets it (ECONNRESET under a loaded CI): a request that did arrive answers 409 the second time.
 */
const post = async (path: string, token: string, body?: unknown): Promise<Response> => {
  const send = () =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return send().catch((err: unknown) => {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
    return send();
  });
};

/** The confirmation of the latest held `drop` call, as stored. */
const latestConfirmation = () =>
  deps.db
    .selectFrom('confirmations')
    .selectAll()
    .where('tool_name', '=', 'drop')
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();

/** Waits until a `drop` confirmation newer than `after` is stored (the call is held), without a timed assertion. */
async function heldConfirmation(after: Date): Promise<string> {
  for (;;) {
    const row = await latestConfirmation().catch(() => null);
    if (row && row.created_at > after && row.status === 'pending') return row.id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An SDK's client that declares form elicitation and answers it with `answer`. */
const CLIENTS: Record<'1.x' | '2.x', { sdk: McpSdk; connect(provider: TestOAuthClient): Promise<SdkClient> }> = {
  '1.x': {
    sdk: SDK_1,
    async connect(provider) {
      const client = new Client({ name: 'approver-1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        asked.push({ message: request.params.message });
        return await answer({ message: request.params.message }, extra.requestId);
      });
      const transport = new StreamableHTTPClientTransport(endpoint(), { authProvider: provider });
      await client.connect(transport);
      return { client, sessionId: () => transport.sessionId };
    },
  },
  '2.x': {
    sdk: SDK_2,
    async connect(provider) {
      const client = new V2Client({ name: 'approver-2', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler('elicitation/create', async (request) => {
        const { message } = request.params as { message: string };
        asked.push({ message });
        return (await answer({ message }, '')) as never;
      });
      const transport = new V2Transport(endpoint(), { authProvider: provider });
      await client.connect(transport);
      return { client, sessionId: () => transport.sessionId };
    },
  },
};

interface SdkClient {
  client: {
    callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    close(): Promise<void>;
  };
  sessionId(): string | undefined;
}

/** Signs the user in through `sdk` (consent in a browser) and connects a client that answers elicitations. */
async function signedInClient(version: '1.x' | '2.x'): Promise<SdkClient & { provider: TestOAuthClient }> {
  const { sdk, connect } = CLIENTS[version];
  const provider = new TestOAuthClient(`approver ${version}`);
  const authorizationUrl = await firstConnectionRefused(sdk, endpoint(), provider, `approver ${version}`);
  const browser = new TestBrowser();
  const uid = await browser.openAuthorization(authorizationUrl.href);
  await browser.signIn(base, user);
  await sdk.finishAuth(endpoint(), provider, await browser.approve(base, uid, REDIRECT));
  return { ...(await connect(provider)), provider };
}

const approve: Answer = async () => ({ action: 'accept', content: { decision: 'approve' } });
const reject: Answer = async () => ({ action: 'accept', content: { decision: 'reject' } });
const callDrop = (client: SdkClient['client']) =>
  client.callTool({ name: 'drop', arguments: { table: 'users', password: 'hunter2' } });

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  deps = await createTestDeps({ env: { EGRESS_POLICY: 'allow-private', GATEWAY_PUBLIC_URL: base } });
  host = await createGatewayHost(deps);
  await host.start();
  server = await serve(host.app, { port, hostname: '127.0.0.1', deps: { close: async () => {} }, logger: deps.logger });
  upstream = await startMcpServer({
    name: 'db',
    tools: [
      { name: 'drop', inputSchema: { table: z.string(), password: z.string() }, handler: () => `dropped ${++drops}` },
    ],
  });
  const admin = await createUser(deps, { email: `cc-admin-${Date.now()}@example.com`, roles: ['admin'] });
  adminToken = await tokenFor(deps, admin);
  user = await createUser(deps, { email: `cc-user-${Date.now()}@example.com` });
  userToken = await tokenFor(deps, user);
  const created = await post('/api/v1/admin/tool-providers', adminToken, {
    name: 'db',
    pattern: '*',
    endpoint: upstream.url,
  });
  expect(created.status).toBe(201);
  const providerId = ((await created.json()) as { provider: { id: string } }).provider.id;
  const rule = await post('/api/v1/admin/provider-access', adminToken, {
    subjectType: 'user',
    subjectId: user.id,
    providerId,
    action: 'require_confirmation',
    toolPattern: 'drop',
    confirmCarriers: ['client'],
  });
  expect(rule.status).toBe(201);
  // The console is always a carrier; push stays out when the rule lists only the client.
  expect(((await rule.json()) as { rule: { confirmCarriers: string[] } }).rule.confirmCarriers).toEqual([
    'console',
    'client',
  ]);
}, 600_000);

afterAll(async () => {
  await server?.shutdown();
  await host?.stop({ deadlineMs: 5_000 });
  await upstream?.close();
  await deps?.close();
});

describe.each(['1.x', '2.x'] as const)('a held call confirmed in the MCP client (SDK %s, OAuth)', (version) => {
  let connected: Awaited<ReturnType<typeof signedInClient>>;

  beforeAll(async () => {
    connected = await signedInClient(version);
  }, 300_000);

  afterAll(async () => {
    await connected?.client.close();
  });

  it('approved in the client: the tool’s result, run once; a console decision after it is refused', async () => {
    asked = [];
    answer = approve;
    const before = drops;
    const result = await callDrop(connected.client);
    expect(result).toMatchObject({ content: [{ type: 'text', text: `dropped ${before + 1}` }] });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toContain('drop on db');
    expect(asked[0]!.message).toContain('"table": "users"');
    expect(asked[0]!.message).not.toContain('hunter2');
    const row = await latestConfirmation();
    expect(row).toMatchObject({
      status: 'consumed',
      decided_by: user.id,
      decided_via: 'client',
      decided_client_id: connected.provider.client?.client_id,
    });
    const late = await post(`/api/v1/confirmation/${row.id}/confirm`, userToken, {});
    expect(late.status).toBe(409);
    expect(drops).toBe(before + 1);
  });

  it('rejected in the client: the refusal, the tool not run', async () => {
    answer = reject;
    const before = drops;
    const refused = await callDrop(connected.client).then(
      () => null,
      (err: unknown) => err as { code?: number; message: string },
    );
    expect(refused?.message).toContain('Rejected');
    expect(await latestConfirmation()).toMatchObject({ status: 'rejected', decided_via: 'client' });
    expect(drops).toBe(before);
  });

  it('decided on the console first: the call runs once, the client’s question is cancelled', async () => {
    const since = new Date();
    let questioned!: () => void;
    const question = new Promise<void>((resolve) => (questioned = resolve));
    // The person does not answer in the client; the console decides.
    answer = () => (questioned(), new Promise(() => undefined));
    const before = drops;
    const call = callDrop(connected.client);
    const id = await heldConfirmation(since);
    await question;
    expect((await post(`/api/v1/confirmation/${id}/confirm`, userToken, {})).status).toBe(200);
    expect(await call).toMatchObject({ content: [{ type: 'text', text: `dropped ${before + 1}` }] });
    expect(await latestConfirmation()).toMatchObject({ status: 'consumed', decided_via: 'console' });
    expect(drops).toBe(before + 1);
  });
});

describe('a second answer from the client (SDK 1.x)', () => {
  it('an answer to a question the console already closed is refused (400), and the call ran once', async () => {
    const connected = await signedInClient('1.x');
    const since = new Date();
    let relayId: string | number | null = null;
    answer = (_params, requestId) => ((relayId = requestId), new Promise(() => undefined));
    const before = drops;
    const call = callDrop(connected.client);
    const id = await heldConfirmation(since);
    while (relayId === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await post(`/api/v1/confirmation/${id}/confirm`, userToken, {})).status).toBe(200);
    await call;
    const tokens = connected.provider.tokens();
    const second = await fetch(endpoint(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': connected.sessionId()!,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: relayId,
        result: { action: 'accept', content: { decision: 'approve' } },
      }),
    });
    expect(second.status).toBe(400);
    expect(drops).toBe(before + 1);
    await connected.client.close();
  }, 300_000);
});

describe('an agent runtime’s held call', () => {
  it('is never asked in its client, even with a rule that lets the client confirm', async () => {
    const created = await post('/api/v1/admin/agents', adminToken, {
      name: `cc-bot-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/a',
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { agent: { id: string }; runtime_token: string };
    const providerId = await latestProviderId();
    const rule = await post('/api/v1/admin/provider-access', adminToken, {
      subjectType: 'agent',
      subjectId: agent.agent.id,
      providerId,
      action: 'require_confirmation',
      toolPattern: 'drop',
      confirmCarriers: ['console', 'client'],
    });
    expect(rule.status).toBe(201);
    asked = [];
    const client = new Client({ name: 'bot', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push({ message: request.params.message });
      return { action: 'accept', content: { decision: 'approve' } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(endpoint(), {
        requestInit: { headers: { authorization: `Bearer ${agent.runtime_token}` } },
      }),
    );
    const since = new Date();
    const before = drops;
    const call = callDrop(client).then(
      () => 'ran',
      () => 'refused',
    );
    const id = await heldConfirmation(since);
    expect((await post(`/api/v1/confirmation/${id}/reject`, adminToken, {})).status).toBe(200);
    expect(await call).toBe('refused');
    expect(asked).toEqual([]);
    expect(drops).toBe(before);
    await client.close();
  }, 60_000);
});

const latestProviderId = async () =>
  (await deps.db.selectFrom('tool_providers').select('id').where('name', '=', 'db').executeTakeFirstOrThrow()).id;
