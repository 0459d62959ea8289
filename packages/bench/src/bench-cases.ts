/**
 * The bench's cases: each one request to the direct upstream and the same through the gateway
 * (invoke with and without a credential, unified and proxy `tools/call`, unified `tools/call` with a
 * 2 KB body each way, unified `tools/list`),
 * over what the run seeded through the admin API.
 */
import type { GatewayUnderTest } from './gateway-under-test.js';

/** What the run seeded: the tokens and ids the cases call with. */
export interface Seeded {
  userToken: string;
  runtimeToken: string;
  agentId: string;
  agentWithCredentialId: string;
  providerId: string;
}

/** One request: where, with which headers and body. */
export interface Target {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** One case: its name, the direct request and the same through a gateway. */
export interface Case {
  name: string;
  direct: Target;
  gateway: (g: Pick<GatewayUnderTest, 'base'>) => Target;
}

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const rpc = (method: string, params: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } });
const mcpHeaders = (method: string, name?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

/** Every case, in the order the tables print them. */
export function allCases(agentUrl: string, mcpUrl: string, seeded: Seeded): Case[] {
  const invokeBody = JSON.stringify({ message: 'benchmark', context: { n: 1 } });
  const json = { 'content-type': 'application/json' };
  const user = { ...json, authorization: `Bearer ${seeded.userToken}` };
  const runtime = { authorization: `Bearer ${seeded.runtimeToken}` };
  const call = rpc('tools/call', { name: 'echo', arguments: { x: 1 } });
  // Bodies as real tools carry them: ~2 KB of records in, the upstream's answer their JSON as text (quotes escaped).
  const records = Array.from({ length: 48 }, (_, i) => ({ id: i, name: `item ${i}`, done: i % 2 === 0 }));
  const callKb = rpc('tools/call', { name: 'echo', arguments: { records } });
  const list = rpc('tools/list', {});
  /** An MCP case: the same request to the upstream and, with the runtime token, to `path` on the gateway. */
  const mcp = (name: string, path: string, method: string, body: string, tool?: string): Case => ({
    name,
    direct: { url: mcpUrl, headers: mcpHeaders(method, tool), body },
    gateway: (g) => ({ url: `${g.base}${path}`, headers: { ...mcpHeaders(method, tool), ...runtime }, body }),
  });
  return [
    {
      name: 'invoke',
      direct: { url: agentUrl, headers: json, body: invokeBody },
      gateway: (g) => ({ url: `${g.base}/api/v1/agents/${seeded.agentId}/invoke`, headers: user, body: invokeBody }),
    },
    {
      name: 'invoke + 1 credential',
      direct: { url: agentUrl, headers: json, body: invokeBody },
      gateway: (g) => ({
        url: `${g.base}/api/v1/agents/${seeded.agentWithCredentialId}/invoke`,
        headers: user,
        body: invokeBody,
      }),
    },
    mcp('unified tools/call', '/api/v1/mcp/mcp', 'tools/call', call, 'echo'),
    mcp('unified tools/call, 2 KB', '/api/v1/mcp/mcp', 'tools/call', callKb, 'echo'),
    mcp('proxy tools/call', `/api/v1/mcp-proxy/${seeded.providerId}/mcp`, 'tools/call', call, 'echo'),
    mcp('unified tools/list', '/api/v1/mcp/mcp', 'tools/list', list),
  ];
}
