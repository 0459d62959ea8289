import { hasActingUser, type AuthService, type Principal } from '@agentgw/auth';
import type { AgentCatalog, AgentRecord } from '@agentgw/catalog';
import { UnauthorizedError, type CallQuota, type Logger } from '@agentgw/core';
import type { CredentialResolver } from '@agentgw/credentials';
import type { ClientGone } from '@agentgw/service-kit';
import { resolveRequiredCredentials } from './required-credentials.js';
import type { SessionTokens } from './session-tokens.js';
import type { UpstreamAnswer, UpstreamClient } from './upstream-client.js';
import { upstreamHeaders } from './upstream-headers.js';

/** What an invoke needs: the agent catalog, auth (session tokens), the credential resolver, the upstream client, a logger. */
export interface InvokeDeps {
  agents: AgentCatalog;
  auth: AuthService;
  credentials: CredentialResolver;
  upstream: UpstreamClient;
  logger: Logger;
  /** Per-agent and per-tenant invoke quotas (shared with MCP calls). */
  quota: CallQuota;
  /** Session tokens reused per agent and end user while most of their lifetime is left. */
  sessionTokens: SessionTokens;
}

export interface InvokeRequest {
  principal: Principal;
  /** Already checked: visible to the principal and active. */
  agent: AgentRecord;
  requestId: string;
  /** The caller's headers; only the harmless ones travel on. */
  headers: Pick<Headers, 'get'>;
  /** The caller's JSON object, validated, forwarded as sent. */
  body: string;
  /** The caller's going away; it aborts the upstream request. */
  signal: ClientGone;
}

/**
 * The user an agent is invoked for. Credentials and the session token belong to a person, so a
 * bare runtime token (an agent with no user) cannot invoke.
 */
export function actingUser(principal: Principal): { userId: string; endUserId: string; tenantId: string | null } {
  if (!hasActingUser(principal)) {
    throw new UnauthorizedError(
      'Invoking an agent needs a user: a user JWT, a session token, or an API key with X-User-Id',
    );
  }
  return { userId: principal.userId, endUserId: principal.endUserId, tenantId: principal.tenantId };
}

/** Steps 3–6 of invoke: credentials, identity headers, session token, forward. */
export async function invokeAgent(deps: InvokeDeps, req: InvokeRequest): Promise<UpstreamAnswer> {
  const { principal, agent, requestId } = req;
  const user = actingUser(principal);
  const credentials = await resolveRequiredCredentials(deps.credentials, agent, user);
  // Bound to this agent and end user: the runtime presents it (with X-Agent-Id) when it calls
  // the gateway back, so its tool calls run as the real end user.
  const sessionToken = await deps.sessionTokens.tokenFor({
    endUser: { id: user.endUserId, email: principal.email, roles: principal.roles, tenantId: user.tenantId },
    agent,
    requestId,
  });
  const headers = upstreamHeaders(req.headers, {
    userId: user.userId,
    endUserId: user.endUserId,
    email: principal.email,
    roles: principal.roles,
    // A global user (an admin) acting on a tenant's agent acts within that tenant.
    tenantId: user.tenantId ?? agent.tenantId,
    agentId: agent.id,
    requestId,
    sessionToken,
    credentials,
    upstreamSecret: deps.agents.upstreamSecret(agent),
  });
  return deps.upstream.post(agent.upstreamUrl, {
    headers,
    body: req.body,
    signal: req.signal,
    log: () => deps.logger.child({ agentId: agent.id, requestId }),
  });
}

/**
 * The answer as the caller sees it. An event stream passes through unchanged (status included).
 * Anything else is wrapped as `{ success, request_id, data }`: a 2xx is 200 with
 * `success: true`; an upstream 4xx/5xx keeps its status with `success: false` and
 * `upstream_status`; any other status (a redirect, which is not followed) is a 502.
 */
export function invokeResponse(answer: UpstreamAnswer, requestId: string): Response {
  if (answer.kind === 'stream') {
    return new Response(answer.body, {
      status: answer.status,
      headers: {
        'content-type': answer.contentType,
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        'x-gateway-request-id': requestId,
      },
    });
  }
  const ok = answer.status >= 200 && answer.status < 300;
  const status = ok ? 200 : answer.status >= 400 && answer.status < 600 ? answer.status : 502;
  // Built as text: the upstream's JSON is checked by parsing it and then spliced in as it came,
  // instead of being parsed into objects and serialised again.
  const envelope =
    `{"success":${ok},"request_id":${JSON.stringify(requestId)}` +
    `${ok ? '' : `,"upstream_status":${answer.status}`},"data":${dataJson(answer.body, answer.contentType)}}`;
  return new Response(envelope, {
    status,
    headers: { 'content-type': 'application/json', 'x-gateway-request-id': requestId },
  });
}

/** The upstream's answer as JSON text: its own JSON when it says JSON and that parses; otherwise its text as a string; null when empty. */
function dataJson(body: Buffer, contentType: string): string {
  if (body.length === 0) return 'null';
  const text = body.toString('utf8');
  if (/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      JSON.parse(text);
      return text;
    } catch {
      return JSON.stringify(text);
    }
  }
  return JSON.stringify(text);
}
