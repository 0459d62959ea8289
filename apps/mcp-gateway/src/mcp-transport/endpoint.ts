import type { Context } from 'hono';
import type { McpEndpoint } from '../mcp-context.js';

/** The unified endpoint of a URL without a query: one shared value instead of a parse per request. */
const PLAIN_UNIFIED: McpEndpoint = Object.freeze({ kind: 'unified', providerFilter: null, toolsParam: null });

/** Which endpoint a request reached: the per-provider proxy, or the unified one with its `?providers=` filter and `?tools=` surface. */
export function endpointOf(c: Context): McpEndpoint {
  const providerId = c.req.param('providerId');
  if (providerId !== undefined) return { kind: 'proxy', providerId };
  if (!c.req.url.includes('?')) return PLAIN_UNIFIED;
  const raw = c.req.query('providers');
  const ids =
    raw === undefined
      ? []
      : raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  return { kind: 'unified', providerFilter: ids.length > 0 ? ids : null, toolsParam: c.req.query('tools') ?? null };
}

/** The scope sealed into a session id: a session opened on one endpoint is not found on another. */
export const scopeOf = (endpoint: McpEndpoint): string =>
  endpoint.kind === 'proxy' ? `proxy:${endpoint.providerId}` : 'unified';
