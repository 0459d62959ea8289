import type { JsonRpcRequest } from '@agentgw/mcp-client';
import { beforeEach, describe, expect, it } from 'vitest';
import type { McpEndpoint, McpRequestContext, McpResult } from './mcp-context.js';
import {
  McpMethodRouter,
  type McpMethodTable,
  type MethodHandler,
  type ProxyMethodHandler,
} from './mcp-method-router.js';
import { ClientGone, invalidParams } from './rpc-errors.js';
import { FakeCatalog, principalOf, providerOf, spyLogger } from './tool-call/tool-call.fixtures.js';
import { UpstreamAnswer } from './upstream-forwarding.js';

const ops = providerOf('ops', 'ops_*');
let catalog: FakeCatalog;
/** Which handler answered, in order. */
let answered: string[];

beforeEach(() => {
  catalog = new FakeCatalog();
  catalog.providerList = [ops];
  catalog.agentStates.set('a1', { isActive: true, requireConfirmation: false });
  catalog.reach.add('a1:ops');
  answered = [];
});

const unifiedHandler =
  (name: string): MethodHandler =>
  async () => (answered.push(name), { by: name });
const proxyHandler =
  (name: string): ProxyMethodHandler =>
  async ({ provider }) => (answered.push(`${name}@${provider.id}`), { by: name });

/** The router over a table of fake handlers that say who answered. */
function routerUnderTest(over: Partial<McpMethodTable> = {}) {
  const table: McpMethodTable = {
    open: new Map([['ping', async () => (answered.push('ping'), {})]]),
    unified: new Map([
      ['tools/list', unifiedHandler('tools/list')],
      ['explodes', async () => Promise.reject(new Error('secret detail'))],
      ['invalid', async () => Promise.reject(invalidParams('bad'))],
      ['gone', async () => Promise.reject(new ClientGone())],
      [
        'upstream-error',
        async () =>
          Promise.reject(new UpstreamAnswer({ jsonrpc: '2.0', id: 9, error: { code: -1, message: 'no' } }, 404)),
      ],
    ]),
    searchSurface: async ({ request }) =>
      request.method === 'search-owned' ? (answered.push('search'), { by: 'search' }) : null,
    proxy: new Map([['tools/call', proxyHandler('tools/call')]]),
    proxyOther: proxyHandler('forward'),
    resume: unifiedHandler('resume'),
    ...over,
  };
  return new McpMethodRouter({ catalog, logger: spyLogger(), table });
}

function contextOf(endpoint: McpEndpoint, protocolVersion = '2025-06-18'): McpRequestContext {
  return {
    principal: principalOf(),
    requestId: 'r1',
    endpoint,
    protocolVersion,
    session: null,
    signal: new AbortController().signal,
    notify: null,
    confirmationToken: null,
    progressToken: null,
    reauthenticate: async () => principalOf(),
    clientCapabilities: {},
    channel: null,
    headers: new Headers(),
  };
}

const unified = contextOf({ kind: 'unified', providerFilter: null, toolsParam: null });
const proxied = contextOf({ kind: 'proxy', providerId: 'ops' });
const request = (method: string, params?: McpResult): JsonRpcRequest => ({ jsonrpc: '2.0', id: 1, method, params });

describe('McpMethodRouter', () => {
  it('answers a method from its table entry on each endpoint', async () => {
    const router = routerUnderTest();
    expect(await router.handle(request('tools/list'), unified)).toEqual({
      response: { jsonrpc: '2.0', id: 1, result: { by: 'tools/list' } },
      status: 200,
    });
    await router.handle(request('tools/call'), proxied);
    expect(answered).toEqual(['tools/list', 'tools/call@ops']);
  });

  it('answers ping before the kill switch; anything else is refused once the agent is disabled', async () => {
    catalog.agentStates.set('a1', { isActive: false, requireConfirmation: false });
    const router = routerUnderTest();
    expect((await router.handle(request('ping'), unified))?.status).toBe(200);
    const refused = await router.handle(request('tools/list'), unified);
    expect(refused?.status).toBe(403);
    expect(answered).toEqual(['ping']);
  });

  it('lets the search surface answer first on the unified endpoint, and never on the proxy', async () => {
    const router = routerUnderTest();
    await router.handle(request('search-owned'), unified);
    await router.handle(request('search-owned'), proxied);
    expect(answered).toEqual(['search', 'forward@ops']);
  });

  it('answers an unknown unified method -32601 (404 on the 2026-07-28 wire), and a prototype key is no method', async () => {
    const router = routerUnderTest();
    const legacy = await router.handle(request('nope'), unified);
    expect(legacy).toMatchObject({ status: 200, response: { error: { code: -32601 } } });
    const modern = await router.handle(request('constructor'), contextOf(unified.endpoint, '2026-07-28'));
    expect(modern).toMatchObject({ status: 404, response: { error: { code: -32601 } } });
    expect(answered).toEqual([]);
  });

  it('refuses the proxy before its handlers when the caller may not reach its provider', async () => {
    catalog.reach.clear();
    const router = routerUnderTest();
    expect(await router.handle(request('tools/call'), proxied)).toMatchObject({
      status: 403,
      response: { error: { code: -32003, data: { reason: expect.any(String) } } },
    });
    expect(answered).toEqual([]);
  });

  it('continues the retry of a bridged call (the gateway’s requestState) instead of routing it anew, after the kill switch and the proxy’s access check', async () => {
    const router = routerUnderTest();
    const retry = request('tools/call', { name: 'x', requestState: 'agentgw-bridge-1', inputResponses: {} });
    await router.handle(retry, unified);
    await router.handle(retry, proxied);
    await router.handle(request('tools/call', { name: 'x', requestState: 'an-upstream-state' }), proxied);
    catalog.reach.clear();
    expect((await router.handle(retry, proxied))?.status).toBe(403);
    catalog.agentStates.set('a1', { isActive: false, requireConfirmation: false });
    expect((await router.handle(retry, unified))?.status).toBe(403);
    expect(answered).toEqual(['resume', 'resume', 'tools/call@ops']);
  });

  it('forwards any other proxy method, but never another spelling of a tool method', async () => {
    const router = routerUnderTest();
    await router.handle(request('prompts/get'), proxied);
    expect(await router.handle(request(' Tools/Call'), proxied)).toMatchObject({
      response: { error: { code: -32601 } },
    });
    expect(answered).toEqual(['forward@ops']);
  });

  it('maps what a handler throws: an RpcError as it is, an unexpected error without its detail, an upstream answer with its own status', async () => {
    const router = routerUnderTest();
    expect(await router.handle(request('invalid'), unified)).toMatchObject({
      status: 200,
      response: { error: { code: -32602, message: 'bad' } },
    });
    const unexpected = await router.handle(request('explodes'), unified);
    expect(unexpected?.status).toBe(500);
    expect(JSON.stringify(unexpected)).not.toContain('secret detail');
    expect(await router.handle(request('upstream-error'), unified)).toEqual({
      response: { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } },
      status: 404,
    });
  });

  it('answers nobody when the client went away', async () => {
    expect(await routerUnderTest().handle(request('gone'), unified)).toBeNull();
  });

  it('answers a missing provider as the catalog does (its 404 error), not a 500', async () => {
    const router = routerUnderTest();
    const missing = await router.handle(request('tools/call'), contextOf({ kind: 'proxy', providerId: 'nope' }));
    expect(missing?.status).toBe(404);
  });
});
