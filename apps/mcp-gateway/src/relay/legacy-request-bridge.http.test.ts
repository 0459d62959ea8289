import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { registerClientFeatureTools, startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { statelessRpc, type RpcReply } from '../stateless-rpc.js';
import { recordingRealAuditTrail, type RecordedAuditWrite } from '../testing/recorded-audits.js';
import { createRuleBoundAgent } from '../testing/rule-bound-agents.js';
import { MAX_BRIDGED_ROUNDS } from './mrtr-bridge.js';

/**
 * A legacy (1.x SDK, session) upstream's sampling and elicitation requests bridged for a
 * 2026-07-28 client over HTTP, on both endpoints: the call is answered with an input_required
 * round, the retry with `inputResponses` and the gateway's requestState delivers the answers
 * upstream and gets the final result (or the next round); the call is decided and audited once,
 * and only its owner may continue it.
 */
let gw: GatewayUnderTest;
let upstream: McpFixture;
let providerId: string;
const tokens = { owner: '', other: '' };
const audits: RecordedAuditWrite[] = [];

const CAPABLE = { sampling: {}, elicitation: { form: {} } };

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'asks-back',
    tools: [],
    setup: (server) => {
      registerClientFeatureTools(server);
      // Two questions, one after the other: a model's answer, then the user's confirmation of it.
      server.registerTool('ask_twice', { description: 'samples, then asks the user' }, async (extra) => {
        const sampled = await extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: { messages: [{ role: 'user', content: { type: 'text', text: 'pick' } }], maxTokens: 5 },
          },
          CreateMessageResultSchema,
        );
        const picked = (sampled.content as { text?: string }).text ?? '';
        const confirmed = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: { mode: 'form', message: `Keep ${picked}?`, requestedSchema: { type: 'object', properties: {} } },
          },
          ElicitResultSchema,
        );
        return { content: [{ type: 'text' as const, text: `${picked}: ${confirmed.action}` }] };
      });
      // An upstream that never stops asking.
      server.registerTool('ask_forever', { description: 'samples again and again' }, async (extra) => {
        for (;;)
          await extra.sendRequest(
            { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
            CreateMessageResultSchema,
          );
      });
    },
  });
  gw = await startGatewayUnderTest({ audit: recordingRealAuditTrail(audits) });
  providerId = (
    await gw.catalog.providers.create(gw.admin, {
      name: 'asks-back',
      pattern: '*',
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    })
  ).id;
  const rules = [{ providerId, action: 'allow' as const, toolPattern: '*' }];
  tokens.owner = (await createRuleBoundAgent(gw, { name: 'bridge-bot', rules })).runtimeToken;
  tokens.other = (await createRuleBoundAgent(gw, { name: 'other-bot', rules })).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** One 2026-07-28 request declaring CAPABLE, as `token`, accepting JSON only (a round is the answer, never a stream). */
const rpc = (path: string, method: string, params: Record<string, unknown>, token = tokens.owner) =>
  statelessRpc(
    gw.url + path,
    { authorization: `Bearer ${token}`, accept: 'application/json' },
    method,
    params,
    CAPABLE,
  );

/** The one input request of a round: its key (the gateway's relay id) and the request. */
function onlyRequest(answer: RpcReply): [string, { method: string; params: Record<string, unknown> }] {
  expect(answer.body.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
  const entries = Object.entries(answer.body.result!.inputRequests as Record<string, never>);
  expect(entries).toHaveLength(1);
  return entries[0]!;
}

const SAMPLED = { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'Paris' } };
const textOf = (answer: RpcReply) => (answer.body.result as { content: { text: string }[] }).content[0]!.text;

describe('a legacy upstream’s server requests bridged for a 2026-07-28 client', () => {
  for (const endpoint of ['unified', 'proxy'] as const) {
    const path = () => (endpoint === 'unified' ? '/api/v1/mcp/mcp' : `/api/v1/mcp-proxy/${providerId}/mcp`);

    it(`${endpoint} endpoint: the sampling request is an input_required round; the retry's answer completes the call`, async () => {
      const call = { name: 'ask_model', arguments: { prompt: 'capital of France?' } };
      const first = await rpc(path(), 'tools/call', call);
      const [key, asked] = onlyRequest(first);
      expect(asked).toEqual({
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'capital of France?' } }], maxTokens: 20 },
      });
      expect(key).toMatch(/^agentgw-relay-/);
      expect(first.body.result!.requestState).toMatch(/^agentgw-bridge-/);
      const final = await rpc(path(), 'tools/call', {
        ...call,
        inputResponses: { [key]: SAMPLED },
        requestState: first.body.result!.requestState,
      });
      expect([final.status, textOf(final), final.body.result!.resultType]).toEqual([
        200,
        'model said: Paris',
        'complete',
      ]);
    });
  }

  it('takes two rounds when the upstream asks twice, the second after the first answer', async () => {
    const call = { name: 'ask_twice', arguments: {} };
    const first = await rpc('/api/v1/mcp/mcp', 'tools/call', call);
    const [sampling] = onlyRequest(first);
    const second = await rpc('/api/v1/mcp/mcp', 'tools/call', {
      ...call,
      inputResponses: { [sampling]: SAMPLED },
      requestState: first.body.result!.requestState,
    });
    const [elicitation, asked] = onlyRequest(second);
    expect(asked).toMatchObject({ method: 'elicitation/create', params: { message: 'Keep Paris?' } });
    const final = await rpc('/api/v1/mcp/mcp', 'tools/call', {
      ...call,
      inputResponses: { [elicitation]: { action: 'accept', content: {} } },
      requestState: second.body.result!.requestState,
    });
    expect(textOf(final)).toBe('Paris: accept');
  });

  it('refuses another principal’s retry (-32602) and lets the owner finish after it', async () => {
    const call = { name: 'ask_model', arguments: { prompt: 'mine' } };
    const first = await rpc('/api/v1/mcp/mcp', 'tools/call', call);
    const [key] = onlyRequest(first);
    const retry = { ...call, inputResponses: { [key]: SAMPLED }, requestState: first.body.result!.requestState };
    const foreign = await rpc('/api/v1/mcp/mcp', 'tools/call', retry, tokens.other);
    expect(foreign.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/requestState names no call/),
    });
    expect(textOf(await rpc('/api/v1/mcp/mcp', 'tools/call', retry))).toBe('model said: Paris');
    // Finished: the same state continues nothing any more.
    expect((await rpc('/api/v1/mcp/mcp', 'tools/call', retry)).body.error).toMatchObject({ code: -32602 });
  });

  it('refuses a retry whose inputResponses answer nothing pending, or are not results (-32602)', async () => {
    const call = { name: 'ask_model', arguments: { prompt: 'typo' } };
    const first = await rpc('/api/v1/mcp/mcp', 'tools/call', call);
    const [key] = onlyRequest(first);
    const state = first.body.result!.requestState;
    const made = await rpc('/api/v1/mcp/mcp', 'tools/call', {
      ...call,
      inputResponses: { 'agentgw-relay-made-up': SAMPLED },
      requestState: state,
    });
    expect(made.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/answer no input request/) });
    const odd = await rpc('/api/v1/mcp/mcp', 'tools/call', {
      ...call,
      inputResponses: { [key]: 'Paris' },
      requestState: state,
    });
    expect([odd.status, odd.body.error?.code]).toEqual([200, -32602]);
    const final = await rpc('/api/v1/mcp/mcp', 'tools/call', {
      ...call,
      inputResponses: { [key]: SAMPLED },
      requestState: state,
    });
    expect(textOf(final)).toBe('model said: Paris');
  });

  it('records the call once, finished with the sampled result; the sampling is its own record attributed to it', async () => {
    const before = audits.length;
    const call = { name: 'ask_model', arguments: { prompt: 'audit me' } };
    const first = await rpc('/api/v1/mcp/mcp', 'tools/call', call);
    const [key] = onlyRequest(first);
    await rpc('/api/v1/mcp/mcp', 'tools/call', {
      ...call,
      inputResponses: { [key]: SAMPLED },
      requestState: first.body.result!.requestState,
    });
    const writes = audits.slice(before);
    const calls = writes.filter((w) => w.op === 'create' && w.toolName === 'ask_model');
    expect(calls).toHaveLength(1);
    const callId = calls[0]!.id;
    expect(writes.filter((w) => w.op === 'update' && w.id === callId)).toEqual([
      expect.objectContaining({
        status: 'completed',
        result: expect.objectContaining({ content: [{ type: 'text', text: 'model said: Paris' }] }),
      }),
    ]);
    const sampling = writes.find((w) => w.op === 'create' && w.toolName === 'sampling/createMessage');
    expect(sampling).toMatchObject({ arguments: { relayedFor: callId, tool: 'ask_model' } });
  });

  it(`ends a call whose upstream keeps asking after ${MAX_BRIDGED_ROUNDS} questions, and records why`, async () => {
    const before = audits.length;
    const call = { name: 'ask_forever', arguments: {} };
    let answer = await rpc('/api/v1/mcp/mcp', 'tools/call', call);
    for (let round = 0; round < MAX_BRIDGED_ROUNDS; round++) {
      const [key] = onlyRequest(answer);
      answer = await rpc('/api/v1/mcp/mcp', 'tools/call', {
        ...call,
        inputResponses: { [key]: SAMPLED },
        requestState: answer.body.result!.requestState,
      });
    }
    const why = `The provider asked more than ${MAX_BRIDGED_ROUNDS} questions in one call`;
    expect([answer.status, answer.body.error]).toEqual([502, { code: -32010, message: why }]);
    const record = audits.slice(before).find((w) => w.op === 'create' && w.toolName === 'ask_forever')!;
    expect(audits).toContainEqual(
      expect.objectContaining({ op: 'update', id: record.id, status: 'failed', error: why }),
    );
  });

  it('refuses a requestState of the gateway’s form that it never gave (-32602)', async () => {
    const made = await rpc('/api/v1/mcp/mcp', 'tools/call', {
      name: 'ask_model',
      arguments: { prompt: 'x' },
      requestState: 'agentgw-bridge-made-up',
    });
    expect(made.body.error).toMatchObject({ code: -32602 });
  });
});
