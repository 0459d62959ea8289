import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedAgent, startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';

// Stateless callers (2026-07-28, sessionless legacy requests) have no gateway session, so the
// gateway reaches a session-keeping upstream on a shared session. It used to be one per provider,
// opened with the first caller's identity headers, every later caller of every tenant inside it.

let gw: GatewayUnderTest;
let upstream: McpFixture;
const agents: { id: string; token: string; tenant: string }[] = [];

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'stateful',
    tools: [{ name: 'whoami', handler: (_a, call) => String(call.headers['x-gateway-agent-id']) }],
  });
  gw = await startGatewayUnderTest();
  const provider = await gw.catalog.providers.create(gw.admin, {
    name: 'stateful',
    pattern: '*',
    endpoint: upstream.url,
    authType: 'none',
    priority: 0,
  });
  for (const tenant of ['tenant-a', 'tenant-b'])
    agents.push({ ...(await allowedAgent(gw, provider.id, `bot-${tenant}`, tenant)), tenant });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

async function whoami(token: string, modern: boolean): Promise<string> {
  const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
      ...(modern ? { 'mcp-protocol-version': '2026-07-28' } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'whoami', arguments: {}, ...(modern ? { _meta: MODERN_META } : {}) },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { content: { text: string }[] } }).result.content[0]!.text;
}

describe('upstream sessions of stateless callers', () => {
  it('two principals calling statelessly get two upstream sessions, each carrying only its own identity', async () => {
    for (let round = 0; round < 2; round++) {
      for (const agent of agents) {
        expect(await whoami(agent.token, false)).toBe(agent.id);
        expect(await whoami(agent.token, true)).toBe(agent.id);
      }
    }
    // Every upstream session id → the agents and tenants of the requests made on it.
    const identities = new Map<string, Set<string>>();
    for (const r of upstream.requests) {
      const sid = r.headers['mcp-session-id'];
      if (typeof sid !== 'string' || r.headers['x-gateway-agent-id'] === undefined) continue;
      if (!identities.has(sid)) identities.set(sid, new Set());
      identities.get(sid)!.add(`${String(r.headers['x-gateway-agent-id'])}@${String(r.headers['x-tenant-id'])}`);
    }
    const sessionsOf = (agent: (typeof agents)[number]) =>
      [...identities].filter(([, who]) => who.has(`${agent.id}@${agent.tenant}`)).map(([sid]) => sid);
    // One per principal and client era: a legacy caller's conversations are kept apart from a
    // 2026-07-28 caller's (README: "Protocol eras"), so a dual-era upstream serves each in its own era.
    expect(sessionsOf(agents[0]!)).toHaveLength(2);
    expect(sessionsOf(agents[1]!)).toHaveLength(2);
    expect(sessionsOf(agents[0]!).filter((sid) => sessionsOf(agents[1]!).includes(sid))).toEqual([]);
    for (const who of identities.values()) expect(who.size).toBe(1);
    // Each session was opened (initialize) with its own principal's identity headers.
    const opened = upstream.requests.filter(
      (r) => (r.body as { method?: string })?.method === 'initialize' && r.headers['x-gateway-agent-id'] !== undefined,
    );
    expect(opened.map((r) => r.headers['x-gateway-agent-id']).sort()).toEqual(
      agents.flatMap((a) => [a.id, a.id]).sort(),
    );
  });
});
