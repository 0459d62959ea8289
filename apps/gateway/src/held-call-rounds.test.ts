import { statelessRequest } from '@agentgw/mcp-gateway/stateless-rpc';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHeldCallGateway, type HeldCallGateway } from './held-call.fixtures.js';
import { SDK_2 } from './oauth-test-clients.js';

// Issue 34: a 2026-07-28 client holds no stream, so a held call it may confirm itself is answered
// at once with an input_required round (SEP-2322); its retry carries the person's answer, goes
// through the hub, and runs the call once under the one audit record the first round opened.

let gw: HeldCallGateway;
/** The person's OAuth access token, from a client signed in through the gateway's OAuth. */
let accessToken: string;
let clientId: string;

const MODERN = '2026-07-28';
const QUESTION = 'agentgw-confirmation';
const ARGS = { table: 'users', password: 'hunter2' };
const approve = { action: 'accept', content: { decision: 'approve' } };
const reject = { action: 'accept', content: { decision: 'reject' } };

interface Reply {
  status: number;
  body: {
    result?: Record<string, unknown> & {
      resultType?: string;
      requestState?: string;
      inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
      content?: { text: string }[];
    };
    error?: { code: number; message: string; data?: Record<string, unknown> };
  };
}

/** One stateless 2026-07-28 tools/call of `drop`, declaring form elicitation unless told otherwise. */
async function callDrop(token: string, extra: Record<string, unknown> = {}, elicitation: object = {}): Promise<Reply> {
  const params = { name: 'drop', arguments: ARGS, ...extra };
  const res = await statelessRequest(gw.endpoint().href, { authorization: `Bearer ${token}` }, 'tools/call', params, {
    elicitation,
  });
  return { status: res.status, body: answerIn(res.headers.get('content-type') ?? '', await res.text()) };
}

/** The JSON-RPC answer of a plain JSON body, or of an SSE answer (a held call's: notifications first, the answer last). */
function answerIn(contentType: string, body: string): Reply['body'] {
  if (!contentType.startsWith('text/event-stream')) return JSON.parse(body) as Reply['body'];
  const messages = body
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)) as Reply['body'] & { id?: unknown });
  return messages.find((message) => message.id !== undefined) ?? {};
}

/** The retry of a round: the same call with the answer under the round's key and its requestState byte for byte. */
const retry = (token: string, requestState: string, answer?: unknown, args: Record<string, unknown> = ARGS) =>
  callDrop(token, {
    arguments: args,
    requestState,
    ...(answer === undefined ? {} : { inputResponses: { [QUESTION]: answer } }),
  });

/** A first round: input_required with the question and a state of the gateway's; nothing ran. */
async function firstRound(): Promise<{ requestState: string; confirmationId: string; auditId: string }> {
  const before = gw.drops();
  const first = await callDrop(accessToken);
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body.result).toMatchObject({ resultType: 'input_required' });
  expect(gw.drops()).toBe(before);
  const row = await gw.latestConfirmation();
  expect(row.status).toBe('pending');
  return { requestState: first.body.result!.requestState!, confirmationId: row.id, auditId: row.audit_id! };
}

/** The call's audit record once it has its final status (written through the queue). */
async function auditRecord(auditId: string, status: string) {
  return vi.waitFor(
    async () => {
      const row = await gw.deps.db.selectFrom('audit_logs').selectAll().where('id', '=', auditId).executeTakeFirst();
      expect(row?.status).toBe(status);
      return row!;
    },
    { timeout: 10_000, interval: 50 },
  );
}

const text = (reply: Reply) => reply.body.result?.content?.[0]?.text;

beforeAll(async () => {
  gw = await startHeldCallGateway();
  const provider = await gw.signIn(SDK_2, 'approver 2026');
  accessToken = provider.tokens()!.access_token;
  clientId = provider.client!.client_id;
}, 600_000);

afterAll(async () => {
  await gw?.close();
});

describe('a held call of a 2026-07-28 client signed in by OAuth: the input_required round', () => {
  it('asks at once with the masked question and a sealed, prefixed requestState; approved on retry → the result, run once', async () => {
    const since = new Date();
    const before = gw.drops();
    const first = await callDrop(accessToken);
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        [QUESTION]: { method: 'elicitation/create', params: { requestedSchema: { required: ['decision'] } } },
      },
    });
    const { requestState, inputRequests } = first.body.result!;
    expect(requestState).toMatch(/^agentgw-held:/);
    const message = String(inputRequests![QUESTION]!.params.message);
    expect(message).toContain('drop on db');
    expect(message).toContain('"table": "users"');
    expect(message).not.toContain('hunter2');
    expect(requestState).not.toContain((await gw.latestConfirmation()).id);

    const done = await retry(accessToken, requestState!, approve);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(text(done)).toBe(`dropped ${before + 1}`);
    expect(done.body.result!.resultType).toBe('complete');
    const row = await gw.latestConfirmation();
    expect(row).toMatchObject({
      status: 'consumed',
      decided_by: gw.user.id,
      decided_via: 'client',
      decided_client_id: clientId,
    });
    // One record for the call: opened by the first round, finished by the retry; it names the carrier and client that answered.
    expect(await auditRecord(row.audit_id!, 'completed')).toMatchObject({
      confirmed_by: gw.user.id,
      decided_via: 'client',
      decided_client_id: clientId,
    });
    const records = await gw.deps.db
      .selectFrom('audit_logs')
      .select('id')
      .where('tool_name', '=', 'drop')
      .where('created_at', '>=', since)
      .execute();
    expect(records.map((r) => r.id)).toEqual([row.audit_id]);

    // The same retry again, and a console decision after it: refused, and the call ran once.
    const replay = await retry(accessToken, requestState!, approve);
    expect(replay.status).toBe(403);
    expect(replay.body.error?.data).toMatchObject({ decision: 'rejected', reason: 'The approval was already used.' });
    expect((await gw.post(`/api/v1/confirmation/${row.id}/confirm`, gw.userToken, {})).status).toBe(409);
    expect(gw.drops()).toBe(before + 1);
    await auditRecord(row.audit_id!, 'completed');
  });

  it('rejected in the client: the refusal, not run, recorded rejected', async () => {
    const before = gw.drops();
    const { requestState, auditId } = await firstRound();
    const refused = await retry(accessToken, requestState, reject);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: -32004, data: { decision: 'rejected' } });
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'rejected', decided_via: 'client' });
    await auditRecord(auditId, 'rejected');
    expect(gw.drops()).toBe(before);
  });

  it('no answer yet: asked again with the same state; decided on the console meanwhile → the retry runs it once', async () => {
    const before = gw.drops();
    const { requestState, confirmationId } = await firstRound();
    const cancelled = await retry(accessToken, requestState, { action: 'cancel' });
    expect(cancelled.body.result).toMatchObject({ resultType: 'input_required', requestState });
    expect((await gw.post(`/api/v1/confirmation/${confirmationId}/confirm`, gw.userToken, {})).status).toBe(200);
    const done = await retry(accessToken, requestState);
    expect(text(done)).toBe(`dropped ${before + 1}`);
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'consumed', decided_via: 'console' });
    // The client's late answer changes nothing and runs nothing.
    const late = await retry(accessToken, requestState, approve);
    expect(late.status).toBe(403);
    expect(gw.drops()).toBe(before + 1);
  });

  it('refuses a retry by another principal or with other arguments; the person’s own retry still decides it, once', async () => {
    const before = gw.drops();
    const { requestState } = await firstRound();
    // Another principal (the admin), and the same person outside the OAuth client (their own JWT).
    for (const token of [gw.adminToken, gw.userToken]) {
      const foreign = await retry(token, requestState, approve);
      expect(foreign.status, JSON.stringify(foreign.body)).toBe(403);
      expect(foreign.body.error?.data).toMatchObject({ decision: 'denied' });
    }
    const otherArgs = await retry(accessToken, requestState, approve, { table: 'orders', password: 'x' });
    expect(otherArgs.status).toBe(403);
    const forged = await retry(accessToken, `${requestState.slice(0, -4)}AAAA`, approve);
    expect(forged.status).toBe(403);
    expect(await gw.latestConfirmation()).toMatchObject({ status: 'pending' });
    expect(gw.drops()).toBe(before);
    const done = await retry(accessToken, requestState, approve);
    expect(text(done)).toBe(`dropped ${before + 1}`);
    expect(gw.drops()).toBe(before + 1);
  });

  it('a URL-only client is sent the console page (2026-07-28 shape: no elicitationId)', async () => {
    const first = await callDrop(accessToken, {}, { url: {} });
    const question = first.body.result?.inputRequests?.[QUESTION];
    expect(question).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: `${gw.base}/confirmations` },
    });
    expect(question!.params).not.toHaveProperty('elicitationId');
    const { id } = await gw.latestConfirmation();
    expect((await gw.post(`/api/v1/confirmation/${id}/reject`, gw.userToken, {})).status).toBe(200);
    // A URL answer decides nothing: the retry finds the console's rejection.
    const refused = await retry(accessToken, first.body.result!.requestState!, { action: 'accept' });
    expect(refused.body.error).toMatchObject({ code: -32004 });
  });
});

describe('a held call of a 2026-07-28 agent runtime', () => {
  it('is held as before and never answered with an input_required question', async () => {
    const created = await gw.post('/api/v1/admin/agents', gw.adminToken, {
      name: `round-bot-${Date.now()}`,
      upstreamUrl: 'http://127.0.0.1:9/a',
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { agent: { id: string }; runtime_token: string };
    const rule = await gw.post('/api/v1/admin/provider-access', gw.adminToken, {
      subjectType: 'agent',
      subjectId: agent.agent.id,
      providerId: gw.providerId,
      action: 'require_confirmation',
      toolPattern: 'drop',
      confirmCarriers: ['console', 'client'],
    });
    expect(rule.status).toBe(201);
    const since = new Date();
    const before = gw.drops();
    const call = callDrop(agent.runtime_token);
    const id = await gw.heldConfirmation(since);
    expect((await gw.post(`/api/v1/confirmation/${id}/reject`, gw.adminToken, {})).status).toBe(200);
    const reply = await call;
    expect(reply.body.result).toBeUndefined();
    expect(reply.body.error).toMatchObject({ code: -32004 });
    expect(gw.drops()).toBe(before);
  }, 60_000);
});

describe('the 2.x SDK client (2026-07-28, signed in by OAuth) answering the round', () => {
  it('its elicitation handler is asked once; approve → the tool’s result; reject → the refusal', async () => {
    const provider = await gw.signIn(SDK_2, 'approver 2026 sdk');
    const asked: string[] = [];
    let answer: Record<string, unknown> = approve;
    const client = new V2Client(
      { name: 'approver-2026', version: '1.0.0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: MODERN } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String((request.params as { message: string }).message));
      return answer as never;
    });
    await client.connect(new V2Transport(gw.endpoint(), { authProvider: provider }));
    const before = gw.drops();
    const result = await client.callTool({ name: 'drop', arguments: ARGS });
    expect(result).toMatchObject({ content: [{ type: 'text', text: `dropped ${before + 1}` }] });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('drop on db');
    expect(await gw.latestConfirmation()).toMatchObject({
      status: 'consumed',
      decided_via: 'client',
      decided_client_id: provider.client!.client_id,
    });
    answer = reject;
    const refused = await client.callTool({ name: 'drop', arguments: ARGS }).then(
      () => null,
      (err: unknown) => err as { message: string },
    );
    expect(refused?.message).toContain('Rejected');
    expect(gw.drops()).toBe(before + 1);
    await client.close();
  }, 300_000);
});
