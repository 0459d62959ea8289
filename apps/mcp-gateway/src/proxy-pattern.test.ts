import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayUnderTest, type GatewayUnderTest } from './gateway-under-test.js';
import { statelessRpc, toolNames } from './stateless-rpc.js';
import { recordingAuditTrail, type RecordedAudit } from './testing/recorded-audits.js';
import { createRuleBoundAgent } from './testing/rule-bound-agents.js';

// Issue 19.6: the per-provider proxy answers the policy question the unified endpoint answers:
// a provider with pattern `fs_read*` owns fs_read_file, not fs_wipe_disk, whichever door is used.
let gw: GatewayUnderTest;
let upstream: McpFixture;
let providerId: string;
let runtimeToken: string;
const audits: RecordedAudit[] = [];

const bearer = () => ({ authorization: `Bearer ${runtimeToken}` });
const proxy = () => `${gw.url}/api/v1/mcp-proxy/${providerId}/mcp`;
const unified = () => `${gw.url}/api/v1/mcp/mcp`;

beforeAll(async () => {
  upstream = await startMcpServer({
    name: 'fs',
    tools: [
      { name: 'fs_read_file', handler: () => 'read' },
      { name: 'fs_wipe_disk', handler: () => 'wiped' },
    ],
  });
  gw = await startGatewayUnderTest({ audit: () => recordingAuditTrail(audits) });
  const { catalog, admin } = gw;
  providerId = (
    await catalog.providers.create(admin, {
      name: 'fs',
      pattern: 'fs_read*',
      endpoint: upstream.url,
      authType: 'none',
      priority: 0,
    })
  ).id;
  runtimeToken = (await createRuleBoundAgent(gw)).runtimeToken;
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe("the proxy honours the provider's pattern", () => {
  it('lists only the tools the pattern matches, on the proxy as on the unified endpoint', async () => {
    expect(toolNames(await statelessRpc(proxy(), bearer(), 'tools/list'))).toEqual(['fs_read_file']);
    expect(toolNames(await statelessRpc(unified(), bearer(), 'tools/list'))).toEqual(['fs_read_file']);
  });

  it('refuses a call of a tool outside the pattern with 403 -32003, audited as rejected, never forwarded', async () => {
    const refused = await statelessRpc(proxy(), bearer(), 'tools/call', { name: 'fs_wipe_disk', arguments: {} });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: -32003,
      data: { decision: 'denied', reason: "The tool name is outside the provider's pattern" },
    });
    const auditId = refused.body.error!.data!.auditId as string;
    expect(audits).toContainEqual({
      id: auditId,
      entry: expect.objectContaining({ toolName: 'fs_wipe_disk', providerId, status: 'rejected' }),
    });
    // The unified endpoint has no provider for the name at all.
    const unknown = await statelessRpc(unified(), bearer(), 'tools/call', { name: 'fs_wipe_disk', arguments: {} });
    expect(unknown.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: fs_wipe_disk' });
    expect(upstream.calls.map((c) => c.tool)).not.toContain('fs_wipe_disk');
    // A name the pattern claims still runs through both.
    expect(
      (await statelessRpc(proxy(), bearer(), 'tools/call', { name: 'fs_read_file', arguments: {} })).body.result,
    ).toMatchObject({ content: [{ text: 'read' }] });
    expect(
      (await statelessRpc(unified(), bearer(), 'tools/call', { name: 'fs_read_file', arguments: {} })).body.result,
    ).toMatchObject({ content: [{ text: 'read' }] });
  });

  it('answers the same on the tool gate', async () => {
    const res = await fetch(`${gw.url}/api/v1/tool-gate/evaluate`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ toolName: 'fs_wipe_disk', providerId }),
    });
    expect(await res.json()).toMatchObject({
      decision: 'denied',
      reason: "The tool name is outside the provider's pattern",
    });
  });

  it('forwards no other spelling of a tool method', async () => {
    for (const method of ['Tools/Call', ' tools/call', 'tools/call\n', 'tools/run']) {
      const reply = await statelessRpc(proxy(), bearer(), method, { name: 'fs_wipe_disk', arguments: {} });
      expect(reply.body.error?.code).toBe(-32601);
    }
    expect(upstream.calls.map((c) => c.tool)).not.toContain('fs_wipe_disk');
    expect(upstream.requests.some((r) => String(JSON.stringify(r.body)).toLowerCase().includes('tools/run'))).toBe(
      false,
    );
  });
});
