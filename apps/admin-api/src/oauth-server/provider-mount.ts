import { oauthIssuerOf } from '@agentgw/auth';
import type { IncomingHttpHeaders } from 'node:http';
import { nodeIncoming, nodeOutgoing, peerAddress, type ServiceDeps } from '@agentgw/service-kit';
import type { Context } from 'hono';
import type Provider from 'oidc-provider';
import type { AskingBrowser } from './interactions.js';

/** The Node request and response of `c`, whose cookies say which browser asks (undefined outside the Node server). */
export function askingBrowserOf(c: Context): AskingBrowser {
  const req = nodeIncoming(c);
  const res = nodeOutgoing(c);
  return req && res ? { req, res } : undefined;
}

/** Tells the node adapter the answer went out on Node's response already. */
const ALREADY_SENT = () => new Response(null, { headers: { 'x-hono-already-sent': 'true' } });

/** RFC 6749 section 5.2 shaped error, for what is answered before the provider runs. */
const oauthError = (status: number, error: string, description: string, headers: Record<string, string> = {}) =>
  Response.json(
    { error, error_description: description },
    { status, headers: { 'cache-control': 'no-store', ...headers } },
  );

/**
 * oidc-provider builds every URL it answers (metadata endpoints, redirects) from the request's
 * host and scheme; behind a router those are its own (nginx passes `Host` without the port), so
 * the request is made to name the public URL, the issuer, whatever replica or hop it came by.
 */
function pinToIssuer(headers: IncomingHttpHeaders, issuer: string | undefined): void {
  if (issuer === undefined) return;
  const url = new URL(issuer);
  headers.host = url.host;
  headers['x-forwarded-host'] = url.host;
  headers['x-forwarded-proto'] = url.protocol.slice(0, -1);
}

/**
 * Hands a request to oidc-provider's Node callback on the raw Node request and response (the
 * host has read the body already: it is passed on as `req.body`, which the provider reads when
 * the stream is drained). Every address is throttled first (OAUTH_MAX_PER_ADDRESS a minute).
 * `path` rewrites the URL the provider sees (the RFC 8414 metadata path serves its discovery).
 */
export async function toProvider(
  deps: ServiceDeps,
  provider: Provider | null,
  c: Context,
  path?: string,
): Promise<Response> {
  const req = nodeIncoming(c);
  const res = nodeOutgoing(c);
  if (provider === null)
    return oauthError(404, 'invalid_request', 'The OAuth authorization server is off: GATEWAY_PUBLIC_URL is not set');
  if (!req || !res)
    return oauthError(501, 'server_error', 'The OAuth authorization server runs only on the Node server');
  const limit = await deps.rateLimiter.hit(`oauth:${peerAddress(c) ?? 'unknown'}`, {
    limit: deps.config.OAUTH_MAX_PER_ADDRESS,
    windowMs: 60_000,
  });
  if (!limit.allowed)
    return oauthError(429, 'temporarily_unavailable', 'Too many requests', {
      'retry-after': String(limit.retryAfterSeconds),
    });
  if (req.rawBody !== undefined) (req as { body?: unknown }).body = req.rawBody;
  if (path !== undefined) req.url = path;
  pinToIssuer(req.headers, oauthIssuerOf(deps.config));
  await new Promise<void>((resolve) => {
    res.once('close', resolve);
    res.once('finish', resolve);
    void provider.callback()(req, res);
  });
  return ALREADY_SENT();
}
