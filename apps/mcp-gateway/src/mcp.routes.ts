import { MCP_PROXY_PREFIX, MCP_UNIFIED_PATH } from '@agentgw/auth';
import { requestHeader } from '@agentgw/core';
import { JSON_RPC } from '@agentgw/mcp-client';
import { Hono, type Context, type Next } from 'hono';
import type { OriginPolicy } from './origins.js';
import { post } from './mcp-transport/post.js';
import { mcpCallerAuth } from './protected-resource/protected-resource.js';
import { rpcError } from './mcp-transport/replies.js';
import { ServerStreamCounts, serverStream } from './mcp-transport/server-stream.js';
import { endSession } from './mcp-transport/session-end.js';
import type { McpTransportDeps } from './mcp-transport/transport-deps.js';

export { MAX_BATCH_MESSAGES } from './mcp-transport/parse-and-negotiate.js';

/** What the MCP transport needs beside the method router: auth, sessions, Origin policy, the bus for server streams. */
export type McpRoutesDeps = McpTransportDeps;

/**
 * MCP Streamable HTTP on `/api/v1/mcp/mcp` (unified) and `/api/v1/mcp-proxy/:providerId/mcp`:
 * POST carries JSON-RPC (JSON or SSE answers by Accept), GET opens a session's server stream,
 * DELETE ends a session and the upstream sessions it opened. Sessions (2024-11-05 … 2025-11-25)
 * are sealed into `Mcp-Session-Id` and kept in the session store; 2026-07-28 is stateless.
 * The pieces live in `mcp-transport/`, plain functions over these deps.
 */
export function mcpRoutes(deps: McpRoutesDeps): Hono {
  const app = new Hono();
  const auth = mcpCallerAuth(deps.auth, deps.resources);
  const checkOrigin = originCheck(deps.origins);
  const counts = new ServerStreamCounts();
  const onPost = (c: Context) => post(deps, c);
  const onGet = (c: Context) => serverStream(deps, counts, c);
  const onDelete = (c: Context) => endSession(deps, c);
  for (const path of [MCP_UNIFIED_PATH, `${MCP_PROXY_PREFIX}/:providerId/mcp`]) {
    app.use(path, checkOrigin, auth);
    app.post(path, onPost);
    app.get(path, onGet);
    app.delete(path, onDelete);
  }
  return app;
}

/** DNS-rebinding protection: a browser's Origin must be allowed, before anything else (authentication included). */
const originCheck = (origins: OriginPolicy) => async (c: Context, next: Next) => {
  if (!origins.allows(requestHeader(c, 'origin')))
    return c.json(rpcError(null, JSON_RPC.INVALID_REQUEST, 'Origin not allowed'), 403);
  await next();
};
