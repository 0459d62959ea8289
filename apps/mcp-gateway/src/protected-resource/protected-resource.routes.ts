import { MCP_UNIFIED_PATH } from '@agentgw/auth';
import { Hono } from 'hono';
import { PROTECTED_RESOURCE_WELL_KNOWN, type ProtectedResources } from './protected-resource.js';

/**
 * RFC 9728 metadata for every MCP endpoint: the path-suffixed form clients derive from the
 * endpoint URL (`/.well-known/oauth-protected-resource/api/v1/mcp/mcp`, one per proxy path), and
 * the bare form, which describes the unified endpoint. 404 for any other path or without
 * GATEWAY_PUBLIC_URL. Public, cacheable, no credentials.
 */
export function protectedResourceRoutes(resources: ProtectedResources): Hono {
  const app = new Hono();
  const answer = (path: string) => {
    const metadata = resources.metadataOf(path);
    return metadata === null
      ? null
      : Response.json(metadata, {
          headers: { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' },
        });
  };
  app.get(PROTECTED_RESOURCE_WELL_KNOWN, (c) => answer(MCP_UNIFIED_PATH) ?? c.notFound());
  app.get(
    `${PROTECTED_RESOURCE_WELL_KNOWN}/*`,
    (c) => answer(c.req.path.slice(PROTECTED_RESOURCE_WELL_KNOWN.length)) ?? c.notFound(),
  );
  return app;
}
