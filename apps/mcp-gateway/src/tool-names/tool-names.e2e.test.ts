import { createAuditTrail, type AuditOpenEntry } from '@agentgw/audit';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from '../gateway-under-test.js';
import { ALLOW_EVERY_TOOL, createRuleBoundAgent } from '../testing/rule-bound-agents.js';

// Issue 24.1 through the real HTTP interface: two providers offering the same tool name are both
// reachable, under names chosen once; adding and removing a third leaves every name as it was;
// rules written on the upstream name keep deciding the disambiguated one.
let gw: GatewayUnderTest;
let alpha: McpFixture;
let beta: McpFixture;
let gamma: McpFixture;
let prefixed: McpFixture;
let runtimeToken: string;
let ids: { alpha: string; beta: string };
const audits: AuditOpenEntry[] = [];

/** A plain sessionless JSON-RPC POST (legacy revision, no session), as the spec's examples send it. */
async function rpc(
  method: string,
  params: Record<string, unknown> = {},
): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: { code: number; message: string } } }> {
  const res = await fetch(`${gw.url}/api/v1/mcp/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${runtimeToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

/** tools/list as the client sees it: names in the order given. */
const listed = async (): Promise<string[]> =>
  ((await rpc('tools/list')).body.result?.tools as { name: string }[]).map((t) => t.name);
const callText = async (name: string): Promise<unknown> =>
  (await rpc('tools/call', { name, arguments: {} })).body.result?.content;
const fixture = (name: string, tools: string[]) =>
  startMcpServer({
    name,
    tools: tools.map((tool) => ({ name: tool, description: `${name}'s ${tool}`, handler: () => `${name}:${tool}` })),
  });

beforeAll(async () => {
  [alpha, beta, gamma, prefixed] = await Promise.all([
    fixture('alpha', ['search', 'delete_all', 'alpha_only']),
    fixture('beta', ['search', 'delete_all', 'read']),
    fixture('gamma', ['search']),
    fixture('hub', ['search']),
  ]);
  gw = await startGatewayUnderTest({
    audit: (deps) => {
      const real = createAuditTrail({ queue: deps.queue, clock: deps.clock });
      return {
        open: async (entry) => (audits.push(entry), real.open(entry)),
        update: (id, patch) => real.update(id, patch),
      };
    },
  });
  const { catalog, admin } = gw;
  const a = await catalog.providers.create(admin, {
    name: 'alpha',
    pattern: '*',
    endpoint: alpha.url,
    authType: 'none',
    priority: 0,
  });
  const b = await catalog.providers.create(admin, {
    name: 'beta',
    pattern: '*',
    endpoint: beta.url,
    authType: 'none',
    priority: 0,
  });
  ids = { alpha: a.id, beta: b.id };
  // A rule written on the upstream name, for beta only: it must keep deciding beta's tool under any exposed name.
  runtimeToken = (
    await createRuleBoundAgent(gw, {
      rules: [ALLOW_EVERY_TOOL, { providerId: b.id, action: 'deny', toolPattern: 'delete_all' }],
    })
  ).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([alpha, beta, gamma, prefixed].map((f) => f?.close()));
});

describe('stable, collision-safe tool names', () => {
  let before: string[];

  it('lists both colliding tools (the first in routing order keeps the bare name), sorted, denied ones left out', async () => {
    before = await listed();
    expect(before).toEqual(['alpha_only', 'beta__search', 'delete_all', 'read', 'search']);
  });

  it('calls each under its exposed name; the upstream receives its own name', async () => {
    expect(await callText('search')).toEqual([{ type: 'text', text: 'alpha:search' }]);
    expect(await callText('beta__search')).toEqual([{ type: 'text', text: 'beta:search' }]);
    expect(beta.calls.at(-1)?.tool).toBe('search');
    expect(await callText('read')).toEqual([{ type: 'text', text: 'beta:read' }]);
  });

  it('keeps a rule on the upstream name deciding the disambiguated name: denied, audited under the upstream name and provider', async () => {
    const denied = await rpc('tools/call', { name: 'beta__delete_all', arguments: {} });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: -32003, message: 'Denied by an access rule' });
    expect(beta.calls.some((c) => c.tool === 'delete_all')).toBe(false);
    expect(audits.at(-1)).toMatchObject({ providerId: ids.beta, toolName: 'delete_all', status: 'rejected' });
    // Alpha's tool of the same upstream name is not touched by beta's rule.
    expect(await callText('delete_all')).toEqual([{ type: 'text', text: 'alpha:delete_all' }]);
    expect(audits.at(-1)).toMatchObject({ providerId: ids.alpha, toolName: 'delete_all' });
  });

  it('answers an unknown exposed name as an unknown tool, and never reaches an upstream with it', async () => {
    const unknown = await rpc('tools/call', { name: 'gamma__search', arguments: {} });
    expect(unknown.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: gamma__search' });
  });

  it('adding a third colliding provider first in routing order renames nothing; removing it leaves every name as it was', async () => {
    const { catalog, admin } = gw;
    const g = await catalog.providers.create(admin, {
      name: 'gamma',
      pattern: '*',
      endpoint: gamma.url,
      authType: 'none',
      priority: 100,
    });
    await expect.poll(listed).toContain('gamma__search');
    const withGamma = await listed();
    expect(withGamma).toEqual(['alpha_only', 'beta__search', 'delete_all', 'gamma__search', 'read', 'search']);
    expect(await callText('search')).toEqual([{ type: 'text', text: 'alpha:search' }]);
    expect(await callText('gamma__search')).toEqual([{ type: 'text', text: 'gamma:search' }]);

    await catalog.providers.delete(admin, g.id);
    await expect.poll(listed).not.toContain('gamma__search');
    expect(await listed()).toEqual(before);
    expect(await callText('beta__search')).toEqual([{ type: 'text', text: 'beta:search' }]);
  });

  it("exposes a prefixed provider's tools as <prefix>__<name>", async () => {
    const { catalog, admin } = gw;
    await catalog.providers.create(admin, {
      name: 'hub',
      pattern: '*',
      endpoint: prefixed.url,
      authType: 'none',
      priority: 50,
      namePrefix: 'hub',
    });
    await expect.poll(listed).toContain('hub__search');
    expect(await callText('hub__search')).toEqual([{ type: 'text', text: 'hub:search' }]);
    expect(await callText('search')).toEqual([{ type: 'text', text: 'alpha:search' }]);
  });

  it('reports each colliding name with what it maps to (GET /api/v1/mcp/tool-collisions)', async () => {
    const res = await fetch(`${gw.url}/api/v1/mcp/tool-collisions`, {
      headers: { authorization: `Bearer ${gw.adminToken}` },
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { toolName: string; exposedName: string; providerName: string }[] };
    expect(data.map((c) => `${c.toolName} ${c.exposedName} ${c.providerName}`)).toEqual([
      'delete_all beta__delete_all beta',
      'delete_all delete_all alpha',
      'search beta__search beta',
      'search hub__search hub',
      'search search alpha',
    ]);
  });

  it('lists every tool under the name clients call, by provider (GET /api/v1/mcp/exposed-tools, documented)', async () => {
    const res = await fetch(`${gw.url}/api/v1/mcp/exposed-tools`, {
      headers: { authorization: `Bearer ${gw.adminToken}` },
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { toolName: string; exposedName: string; providerName: string }[] };
    const of = (provider: string) =>
      data.filter((t) => t.providerName === provider).map((t) => `${t.exposedName}=${t.toolName}`);
    expect(of('beta')).toEqual(expect.arrayContaining(['beta__delete_all=delete_all', 'beta__search=search']));
    expect(of('hub')).toContain('hub__search=search');
    expect(of('alpha')).toEqual(expect.arrayContaining(['delete_all=delete_all', 'search=search']));
    expect(data.map((t) => t.providerName)).toEqual([...data.map((t) => t.providerName)].sort());
    const doc = (await (await fetch(`${gw.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(doc.paths['/api/v1/mcp/exposed-tools']).toHaveProperty('get');
  });
});
