import { tenantScope, type Principal } from '@agentgw/auth';
import { RateLimitedError, requestHeader } from '@agentgw/core';
import { annotateAccessLog, clientGoneSignal } from '@agentgw/service-kit';
import type { Context } from 'hono';
import { GATEWAY_RPC } from '../rpc-errors.js';
import { endpointOf } from './endpoint.js';
import { initialize } from './initialize.js';
import {
  negotiateRevision,
  parsePost,
  sessionRevision,
  type Invalid,
  type ParsedPost,
  type RequestItem,
} from './parse-and-negotiate.js';
import { NO_HEADERS, replyResponse, rpcError, SESSION_HEADER, type Reply } from './replies.js';
import { deliverAnswers } from '../relay/client-answers.js';
import { respond, type Exchange } from './respond.js';
import { resolveSession, type Session } from './session-resolution.js';
import type { McpTransportDeps } from './transport-deps.js';

/**
 * POST: JSON-RPC in, JSON or SSE out. Parse, name the method in the access log, settle the
 * revision (and the session), take the quota, then answer (see `respond`).
 */
export async function post(deps: McpTransportDeps, c: Context): Promise<Response> {
  const headerVersion = requestHeader(c, 'mcp-protocol-version') ?? null;
  const parsed = parsePost(await c.req.text());
  if (isReply(parsed)) return replyResponse(parsed);
  annotate(c, parsed);
  const principal: Principal = c.get('principal');
  const endpoint = endpointOf(c);
  const sessionHeader = requestHeader(c, SESSION_HEADER) ?? null;
  const negotiated = negotiateRevision(parsed, headerVersion, sessionHeader, (name) => requestHeader(c, name) ?? null);
  if (negotiated.kind === 'reply') return replyResponse(negotiated.reply);
  if (negotiated.kind === 'initialize') return initialize(deps, c, principal, endpoint, negotiated.request);
  let protocolVersion: string;
  let session: Session | null = null;
  if (negotiated.kind === 'stateless') protocolVersion = negotiated.protocolVersion;
  else {
    const resolved = await resolveSession(deps, principal, endpoint, negotiated.id);
    if (!resolved.ok) return replyResponse(resolved.reply);
    session = resolved.session;
    protocolVersion = session.claims.protocolVersion;
    const refused = sessionRevision(parsed.batch, protocolVersion, headerVersion);
    if (refused) return replyResponse(refused);
  }
  const sessionHeaders = session ? { [SESSION_HEADER]: sessionHeader! } : NO_HEADERS;
  const requests = parsed.items.filter((i): i is RequestItem => i.kind === 'request');
  const invalid = parsed.items.filter((i): i is Invalid => i.kind === 'invalid');
  const refusedAnswer = await deliverAnswers(deps, c, principal, session, parsed);
  if (refusedAnswer) return replyResponse({ ...refusedAnswer, headers: sessionHeaders });
  if (requests.length === 0 && invalid.length === 0)
    return new Response(null, { status: 202, headers: sessionHeaders });
  const limited = await overQuota(deps, principal, requests.length);
  if (limited)
    return replyResponse(rateLimited(limited, parsed.batch ? null : (requests[0]?.message.id ?? null), sessionHeaders));
  // Its AbortSignal is made only if a call going upstream reads it; a cached tools/list never does.
  const exchange: Exchange = {
    c,
    principal,
    endpoint,
    protocolVersion,
    session,
    batch: parsed.batch,
    requests,
    invalid,
    sessionHeaders,
    connection: clientGoneSignal(c),
  };
  return respond(deps, exchange);
}

const isReply = (parsed: ParsedPost | Reply): parsed is Reply => 'status' in parsed;

/** The access-log line names the method and tool (a batch: its first, and its length); only built when the line is written. */
function annotate(c: Context, { first, batch, items }: ParsedPost): void {
  if (!first || !c.var.accessLog) return;
  const tool = first.message.method === 'tools/call' ? first.message.params?.name : undefined;
  annotateAccessLog(c, {
    rpcMethod: first.message.method,
    ...(typeof tool === 'string' ? { toolName: tool } : {}),
    ...(batch ? { rpcBatch: items.length } : {}),
  });
}

/** The refusal when `count` more calls would exceed the principal's quotas (agent's and tenant's), else null. */
async function overQuota(
  deps: Pick<McpTransportDeps, 'quota'>,
  principal: Principal,
  count: number,
): Promise<RateLimitedError | null> {
  try {
    for (let i = 0; i < count; i++)
      await deps.quota.take({ agentId: principal.agentId, tenant: tenantScope(principal) });
    return null;
  } catch (err) {
    if (err instanceof RateLimitedError) return err;
    throw err;
  }
}

/** Past a quota the POST is refused as a whole: HTTP 429, Retry-After, and a JSON-RPC error carrying the error body. */
function rateLimited(
  limited: RateLimitedError,
  id: string | number | null,
  sessionHeaders: Readonly<Record<string, string>>,
): Reply {
  const data = { ...limited.toBody(), retryAfter: limited.retryAfterSeconds };
  return {
    body: rpcError(id, GATEWAY_RPC.RATE_LIMITED, limited.message, data),
    status: 429,
    headers: { ...sessionHeaders, 'retry-after': String(limited.retryAfterSeconds) },
  };
}
