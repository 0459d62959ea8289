import { TrieRouter } from 'hono/router/trie-router';
import { describe, expect, it } from 'vitest';
import { LaneRouter } from './lane-router.js';
import { routeMatches } from './testing.js';

/** A table shaped like the all-in-one's: the shell's middleware, hot endpoints, and admin siblings RegExpRouter refuses. */
const TABLE: [string, string][] = [
  ['ALL', '*'],
  ['ALL', '/*'],
  ['ALL', '/api/v1/mcp/mcp'],
  ['POST', '/api/v1/mcp/mcp'],
  ['GET', '/api/v1/mcp/mcp'],
  ['ALL', '/api/v1/mcp/exposed-tools/*'],
  ['GET', '/api/v1/mcp/exposed-tools'],
  ['ALL', '/api/v1/mcp-proxy/:providerId/mcp'],
  ['POST', '/api/v1/mcp-proxy/:providerId/mcp'],
  ['ALL', '/api/v1/agents/*'],
  ['POST', '/api/v1/agents/:agentId/invoke'],
  ['GET', '/api/v1/agents/:agentId'],
  ['ALL', '/api/v1/admin/provider-access/*'],
  ['GET', '/api/v1/admin/provider-access/:id'],
  ['PUT', '/api/v1/admin/provider-access/agent/:agentId'],
  ['GET', '/api/v1/admin/provider-access/by-provider/:providerId'],
  ['GET', '/*'],
];

/** Patterns that may or may not reach a lane, which the segments alone do not settle. */
const UNSETTLED: [string, string][] = [
  ['ALL', '/api/:version/*'],
  ['GET', '/api/v1/:resource{[a-z-]+}/mcp'],
  ['GET', '/api/v1/agents?'],
  ['POST', '/api/*/invoke'],
  ['POST', '/api/:version/agents/:agentId/invoke'],
];

const PATHS = [
  '/',
  '/api/v1/mcp/mcp',
  '/api/v1/mcp/mcp/',
  '/api/v1/mcp/mcpx',
  '/api/v1/mcp/exposed-tools',
  '/api/v1/mcp-proxy',
  '/api/v1/mcp-proxy/github/mcp',
  '/api/v1/mcp-proxy/github/mcp/extra',
  '/api/v1/mcp-proxyx/github/mcp',
  '/api/v1/agents',
  '/api/v1/agents/',
  '/api/v1/agents/a1',
  '/api/v1/agents/a1/invoke',
  '/api/v1/agentsx/a1/invoke',
  '/api/v2/agents/a1',
  '/api/v2/agents/a1/invoke',
  '/api/v1/admin/provider-access/p1',
  '/api/v1/admin/provider-access/agent/a1',
  '/console/page',
];

const build = <R extends { add(method: string, path: string, handler: number): void }>(
  router: R,
  table: readonly [string, string][] = TABLE,
): R => {
  table.forEach(([method, path], i) => router.add(method, path, i));
  return router;
};

describe('LaneRouter', () => {
  it('matches every path with the same handlers, in the same order and with the same parameters, as one router over the whole table', () => {
    // The unsettled patterns between the shell's middleware and the routes, as a service might mount them.
    for (const table of [TABLE, [...TABLE.slice(0, 2), ...UNSETTLED, ...TABLE.slice(2)]]) {
      const lanes = build(new LaneRouter<number>(['/api/v1/mcp/mcp', '/api/v1/mcp-proxy', '/api/v1/agents']), table);
      const reference = build(new TrieRouter<number>(), table);
      for (const path of PATHS)
        for (const method of ['GET', 'POST', 'PUT', 'DELETE'])
          expect(routeMatches(lanes, method, path), `${method} ${path}`).toEqual(routeMatches(reference, method, path));
    }
  });

  it('matches a lane on Hono’s RegExpRouter while the rest of the table, which RegExpRouter refuses, stays on TrieRouter', () => {
    const lanes = build(new LaneRouter<number>(['/api/v1/mcp/mcp', '/api/v1/mcp-proxy', '/api/v1/agents']));
    for (const path of ['/api/v1/mcp/mcp', '/api/v1/mcp-proxy/github/mcp', '/api/v1/agents/a1/invoke', '/console/page'])
      lanes.match('POST', path);
    expect(lanes.routerFor('/api/v1/mcp/mcp').name).toBe('SmartRouter + RegExpRouter');
    expect(lanes.routerFor('/api/v1/mcp-proxy/github/mcp').name).toBe('SmartRouter + RegExpRouter');
    expect(lanes.routerFor('/api/v1/agents/a1/invoke').name).toBe('SmartRouter + RegExpRouter');
    expect(lanes.routerFor('/console/page').name).toBe('SmartRouter + TrieRouter');
  });

  it('takes a path into a lane only on a segment boundary', () => {
    const lanes = build(new LaneRouter<number>(['/api/v1/mcp-proxy']));
    const lane = lanes.routerFor('/api/v1/mcp-proxy/x/mcp');
    expect(lanes.routerFor('/api/v1/mcp-proxy')).toBe(lane);
    expect(lanes.routerFor('/api/v1/mcp-proxy/')).toBe(lane);
    expect(lanes.routerFor('/api/v1/mcp-proxyx/x/mcp')).not.toBe(lane);
    expect(lanes.routerFor('/api/v1/mcp')).not.toBe(lane);
  });

  it('refuses a lane prefix that is not a literal path', () => {
    for (const prefix of ['/api/:id', '/api/*', 'api', '/api/', '/a{b}'])
      expect(() => new LaneRouter([prefix]), prefix).toThrow(/literal path/);
  });
});
