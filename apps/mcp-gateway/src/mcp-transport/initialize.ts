import type { Principal } from '@agentgw/auth';
import {
  JSON_RPC,
  LATEST_LEGACY_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  relayableCapabilities,
  type JsonRpcRequest,
} from '@agentgw/mcp-client';
import { SSE_HEADERS, sseText } from '@agentgw/service-kit';
import type { Context } from 'hono';
import { addressedProvider } from '../addressed-provider.js';
import { capabilitiesFor } from '../advertised-capabilities.js';
import type { McpEndpoint } from '../mcp-context.js';
import { SERVER_INFO } from '../revision-shapes.js';
import { sessionOwner } from '../session-ids.js';
import { scopeOf } from './endpoint.js';
import { jsonResponse, rpcError, SESSION_HEADER } from './replies.js';
import { asCaller, dropEvicted } from './session-end.js';
import type { McpTransportDeps } from './transport-deps.js';

type InitializeDeps = Pick<McpTransportDeps, 'catalog' | 'client' | 'codec' | 'sessions' | 'clock' | 'bus' | 'targets'>;

/**
 * `initialize` opens a session at the client's revision when the gateway speaks it, else at its
 * newest session revision; the id is sealed into `Mcp-Session-Id`. The capabilities are what the
 * caller's upstreams offer plus the gateway's own (advertised-capabilities.ts). Past the caller's cap the
 * least recently used sessions go: their server streams end and their upstream sessions are
 * ended behind the answer, per-user ones as this caller (whose sessions they were).
 */
export async function initialize(
  deps: InitializeDeps,
  c: Context,
  principal: Principal,
  endpoint: McpEndpoint,
  request: JsonRpcRequest,
): Promise<Response> {
  const requested = request.params?.protocolVersion;
  if (
    typeof requested !== 'string' ||
    typeof request.params?.clientInfo !== 'object' ||
    request.params.clientInfo === null
  ) {
    return jsonResponse(
      rpcError(request.id, JSON_RPC.INVALID_PARAMS, 'initialize needs params.protocolVersion and params.clientInfo'),
      200,
    );
  }
  const version = (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LATEST_LEGACY_VERSION;
  if (endpoint.kind === 'proxy') await addressedProvider(deps.catalog.providers, principal, endpoint.providerId);
  const { id, claims } = deps.codec.issue(
    principal,
    version,
    scopeOf(endpoint),
    deps.clock.now(),
    relayableCapabilities(request.params.capabilities),
  );
  const owner = sessionOwner(claims);
  const asUser = asCaller(deps, c, principal, version);
  void dropEvicted(deps, await deps.sessions.create(claims.sid, owner), { owner, asUser });
  const capabilities = await capabilitiesFor({ ...deps, targetOf: asUser }, principal, endpoint);
  const response = {
    jsonrpc: '2.0',
    id: request.id,
    result: { protocolVersion: version, capabilities, serverInfo: SERVER_INFO },
  };
  const accept = c.req.header('accept') ?? '';
  if (accept.includes('text/event-stream') && !accept.includes('application/json')) {
    return new Response(sseText({ event: 'message', data: response }), {
      status: 200,
      headers: { ...SSE_HEADERS, [SESSION_HEADER]: id },
    });
  }
  return jsonResponse(response, 200, { [SESSION_HEADER]: id });
}
