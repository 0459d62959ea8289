import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHeldCallGateway, type HeldCallGateway } from './held-call.fixtures.js';
import { SDK_1, SDK_2, type McpSdk, type TestOAuthClient } from './oauth-test-clients.js';

// Issue 34: a held call confirmed in the person's own MCP client (form elicitation), signed in
// through the gateway's OAuth, with the official SDK clients 1.x and 2.x, on the all-in-one.

let gw: HeldCallGateway;
const endpoint = () => gw.endpoint();
const post = (path: string, token: string, body?: unknown) => gw.post(path, token, body);
const latestConfirmation = () => gw.latestConfirmation();

/** What the test's elicitation handler answers; `asked` keeps every question. */
type Answer = (params: { message: string }, requestId: string | number) => Promise<Record<string, unknown>>;
let answer: Answer;
let asked: { message: string }[] = [];

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
  const provider = await gw.signIn(sdk, `approver ${version}`);
  return { ...(await connect(provider)), provider };
}

const approve: Answer = async () => ({ action: 'accept', content: { decision: 'approve' } });
const reject: Answer = async () => ({ action: 'accept', content: { decision: 'reject' } });
const callDrop = (client: SdkClient['client']) =>
  client.callTool({ name: 'drop', arguments: { table: 'users', password: 'hunter2' } });

beforeAll(async () => {
  gw = await startHeldCallGateway();
}, 600_000);

afterAll(async () => {
  await gw?.close();
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
    const before = gw.drops();
    const result = await callDrop(connected.client);
    expect(result).toMatchObject({ content: [{ type: 'text', text: `dropped ${before + 1}` }] });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.message).toContain('drop on db');
    expect(asked[0]!.message).toContain('"table": "users"');
    expect(asked[0]!.message).not.toContain('hunter2');
    const row = await latestConfirmation();
    expect(row).toMatchObject({
      status: 'consumed',
      decided_by: gw.user.id,
      decided_via: 'client',
      decided_client_id: connected.provider.client?.client_id,
    });
    const late = await post(`/api/v1/confirmation/${row.id}/confirm`, gw.userToken, {});
    expect(late.status).toBe(409);
    expect(gw.drops()).toBe(before + 1);
  });

  it('rejected in the client: the refusal, the tool not run', async () => {
    answer = reject;
    const before = gw.drops();
    const refused = await callDrop(connected.client).then(
      () => null,
      (err: unknown) => err as { code?: number; message: string },
    );
    expect(refused?.message).toContain('Rejected');
    expect(await latestConfirmation()).toMatchObject({ status: 'rejected', decided_via: 'client' });
    expect(gw.drops()).toBe(before);
  });

  it('decided on the console first: the call runs once, the client’s question is cancelled', async () => {
    const since = new Date();
    let questioned!: () => void;
    const question = new Promise<void>((resolve) => (questioned = resolve));
    // The person does not answer in the client; the console decides.
    answer = () => (questioned(), new Promise(() => undefined));
    const before = gw.drops();
    const call = callDrop(connected.client);
    const id = await gw.heldConfirmation(since);
    await question;
    expect((await post(`/api/v1/confirmation/${id}/confirm`, gw.userToken, {})).status).toBe(200);
    expect(await call).toMatchObject({ content: [{ type: 'text', text: `dropped ${before + 1}` }] });
    expect(await latestConfirmation()).toMatchObject({ status: 'consumed', decided_via: 'console' });
    expect(gw.drops()).toBe(before + 1);
  });
});

describe('a second answer from the client (SDK 1.x)', () => {
  it('an answer to a question the console already closed is refused (400), and the call ran once', async () => {
    const connected = await signedInClient('1.x');
    const since = new Date();
    let relayId: string | number | null = null;
    answer = (_params, requestId) => ((relayId = requestId), new Promise(() => undefined));
    const before = gw.drops();
    const call = callDrop(connected.client);
    const id = await gw.heldConfirmation(since);
    while (relayId === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await post(`/api/v1/confirmation/${id}/confirm`, gw.userToken, {})).status).toBe(200);
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
    expect(gw.drops()).toBe(before + 1);
    await connected.client.close();
  }, 300_000);
});

describe('an agent runtime’s held call', () => {
  it('is never asked in its client, even with a rule that lets the client confirm', async () => {
    const created = await post('/api/v1/admin/agents', gw.adminToken, {
      name: `cc-bot-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/a',
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { agent: { id: string }; runtime_token: string };
    const { providerId } = gw;
    const rule = await post('/api/v1/admin/provider-access', gw.adminToken, {
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
    const before = gw.drops();
    const call = callDrop(client).then(
      () => 'ran',
      () => 'refused',
    );
    const id = await gw.heldConfirmation(since);
    expect((await post(`/api/v1/confirmation/${id}/reject`, gw.adminToken, {})).status).toBe(200);
    expect(await call).toBe('refused');
    expect(asked).toEqual([]);
    expect(gw.drops()).toBe(before);
    await client.close();
  }, 60_000);
});
