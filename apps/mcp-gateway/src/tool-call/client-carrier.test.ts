import type { Principal } from '@agentgw/auth';
import type { ClientAnswer, HeldCall } from '@agentgw/core';
import type { JsonRpcNotification, JsonRpcRequest } from '@agentgw/mcp-client';
import { beforeEach, describe, expect, it } from 'vitest';
import type { McpRequestContext } from '../mcp-context.js';
import type { AskOutcome } from '../relay/relay-contract.js';
import { ClientCarrier } from './client-carrier.js';
import type { AllowedCall } from './tool-call.command.js';
import { bareAgentOf, oauthPersonOf, personOf, principalOf, providerOf, spyLogger } from './tool-call.fixtures.js';

const ops = providerOf('ops', 'ops_*');
const held: HeldCall = {
  auditId: 'audit-1',
  agentId: null,
  userId: 'u1',
  endUserId: 'u1',
  tenantId: 't1',
  providerId: 'ops',
  toolName: 'ops_drop',
  arguments: { table: 'users', password: 'hunter2' },
  risk: 'critical',
};
const optedIn: AllowedCall = {
  kind: 'allowed',
  auditId: 'audit-1',
  risk: 'critical',
  provider: ops,
  hold: true,
  carriers: ['console', 'client', 'push'],
};

let asked: {
  origin: { principal: Principal; call: unknown };
  request: JsonRpcRequest | { method: string; params?: unknown };
  signal: AbortSignal;
}[];
let sent: JsonRpcRequest[];
let notified: JsonRpcNotification[];
let answers: { id: string; call: HeldCall; answer: ClientAnswer }[];
/** What the client's answer comes to; pending until the test resolves it. */
let reply: (outcome: AskOutcome) => void;

beforeEach(() => {
  asked = [];
  sent = [];
  notified = [];
  answers = [];
});

function carrierUnderTest(consolePage: string | null = 'https://gw.test/confirmations') {
  return new ClientCarrier({
    relay: {
      ask: (origin, request, signal) => {
        origin.channel.send({ jsonrpc: '2.0', id: 'agentgw-relay-1', ...request });
        asked.push({ origin, request, signal });
        return new Promise<AskOutcome>((resolve) => {
          reply = resolve;
          signal.addEventListener('abort', () => resolve({ kind: 'gone' }));
        });
      },
    },
    answers: {
      answerFromClient: async (id, call, answer) => {
        answers.push({ id, call, answer });
        return 'applied';
      },
    },
    consolePage,
    logger: spyLogger(),
  });
}

function contextOf(over: Partial<McpRequestContext> = {}): McpRequestContext {
  return {
    principal: oauthPersonOf(),
    requestId: 'r1',
    endpoint: { kind: 'unified', providerFilter: null, toolsParam: null },
    protocolVersion: '2025-11-25',
    session: null,
    signal: new AbortController().signal,
    notify: (n) => void notified.push(n),
    confirmationToken: null,
    progressToken: null,
    reauthenticate: async () => oauthPersonOf(),
    clientCapabilities: { elicitation: {} },
    channel: { owner: 'p:u1', send: (r) => void sent.push(r) },
    headers: new Headers(),
    ...over,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const answered = (result: Record<string, unknown>): AskOutcome => ({
  kind: 'answered',
  response: { jsonrpc: '2.0', id: 'agentgw-relay-1', result },
});

describe('ClientCarrier: who is asked', () => {
  it.each([
    ['an agent runtime token', { principal: bareAgentOf() }],
    ['a session token (an agent acting for the user)', { principal: principalOf() }],
    ['a person’s own JWT (not signed in through an MCP client)', { principal: personOf() }],
    ['an OAuth client an admin bound to an agent', { principal: { ...oauthPersonOf(), agentId: 'a1' } }],
    ['a client that cannot take a request on this call (2026-07-28, JSON answer)', { channel: null }],
    ['a client without elicitation', { clientCapabilities: { sampling: {} } }],
  ] as const)('never asks %s', (_who, over) => {
    expect(carrierUnderTest().forCall(contextOf(over as Partial<McpRequestContext>), optedIn)).toBeNull();
  });

  it('never asks when the rule did not opt in to the client carrier (the default: console and push)', () => {
    expect(carrierUnderTest().forCall(contextOf(), { ...optedIn, carriers: ['console', 'push'] })).toBeNull();
  });

  it('asks a URL-only client only when there is a console page to send it to', () => {
    const urlOnly = contextOf({ clientCapabilities: { elicitation: { url: {} } } });
    expect(carrierUnderTest(null).forCall(urlOnly, optedIn)).toBeNull();
    expect(carrierUnderTest().forCall(urlOnly, optedIn)).not.toBeNull();
  });
});

describe('ClientCarrier: the form question', () => {
  it('asks with tool, provider, risk and the masked arguments; an approval goes to the hub as this person and client', async () => {
    const close = carrierUnderTest().forCall(contextOf(), optedIn)!.open('c1', held);
    const [question] = sent;
    expect(question).toMatchObject({
      method: 'elicitation/create',
      params: { requestedSchema: { required: ['decision'] } },
    });
    const message = String((question!.params as { message: string }).message);
    expect(message).toContain('ops_drop on ops (critical risk)');
    expect(message).toContain('"table": "users"');
    expect(message).not.toContain('hunter2');
    expect(asked[0]!.origin.call).toEqual({ auditId: 'audit-1', toolName: 'ops_drop' });
    reply(answered({ action: 'accept', content: { decision: 'approve' } }));
    await settle();
    expect(answers).toEqual([
      { id: 'c1', call: held, answer: { confirmed: true, userId: 'u1', clientId: 'client-1' } },
    ]);
    close();
    expect(notified).toEqual([]);
  });

  it.each([
    ['reject', { action: 'accept', content: { decision: 'reject' } }, [false]],
    ['decline', { action: 'decline' }, [false]],
    ['cancel (left to the console)', { action: 'cancel' }, []],
  ] as const)('%s', async (_name, result, decisions) => {
    carrierUnderTest().forCall(contextOf(), optedIn)!.open('c1', held);
    reply(answered(result));
    await settle();
    expect(answers.map((a) => a.answer.confirmed)).toEqual(decisions);
  });

  it('a decision elsewhere cancels the unanswered question on the client (notifications/cancelled with its id)', async () => {
    const close = carrierUnderTest().forCall(contextOf(), optedIn)!.open('c1', held);
    close();
    await settle();
    expect(asked[0]!.signal.aborted).toBe(true);
    expect(notified).toMatchObject([{ method: 'notifications/cancelled', params: { requestId: 'agentgw-relay-1' } }]);
    expect(answers).toEqual([]);
  });
});

describe('ClientCarrier: the console page by URL', () => {
  it('sends the console page, never decides from the client, and says the elicitation is complete when the hold ends', async () => {
    const ctx = contextOf({ clientCapabilities: { elicitation: { url: {} } } });
    const close = carrierUnderTest().forCall(ctx, optedIn)!.open('c1', held);
    expect(sent[0]).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: 'https://gw.test/confirmations', elicitationId: 'c1' },
    });
    reply(answered({ action: 'accept' }));
    await settle();
    close();
    expect(answers).toEqual([]);
    expect(notified).toEqual([
      { jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId: 'c1' } },
    ]);
  });
});
