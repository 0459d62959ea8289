/**
 * Headers sent to an agent's upstream runtime. The identity and credential headers are the
 * gateway's word about who is calling, so a caller can never supply them: only an allow-list of
 * harmless caller headers travels on, and the gateway's values are added after them.
 */
export interface InjectedIdentity {
  userId: string;
  endUserId: string;
  email: string | null;
  roles: readonly string[];
  tenantId: string | null;
  agentId: string;
  requestId: string;
  sessionToken: string;
  credentials: Record<string, string>;
  upstreamSecret: string | null;
}

/**
 * The only caller headers that travel upstream: content negotiation, the client's name and
 * trace context. Everything else (cookies, keys, `Metadata-Flavor`, `X-Forwarded-*`, identity
 * look-alikes, hop-by-hop) stays at the gateway: an allow-list, so a new header name can never
 * slip through to a runtime (or to a metadata service) by default.
 */
export const FORWARDED_CALLER_HEADERS: readonly string[] = [
  'accept-language',
  'user-agent',
  'traceparent',
  'tracestate',
  'x-request-id',
  'x-correlation-id',
];

/** The caller's headers that may travel on: the allow-listed ones. */
function forwardableCallerHeaders(incoming: Pick<Headers, 'get'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED_CALLER_HEADERS) {
    const value = incoming.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

/** Every header the runtime receives: the allow-listed caller headers, then the gateway's own. */
export function upstreamHeaders(incoming: Pick<Headers, 'get'>, identity: InjectedIdentity): Record<string, string> {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    ...forwardableCallerHeaders(incoming),
    'content-type': 'application/json',
    'x-user-id': identity.userId,
    'x-end-user-id': identity.endUserId,
    'x-end-user-roles': identity.roles.join(','),
    'x-gateway-agent-id': identity.agentId,
    'x-gateway-request-id': identity.requestId,
    'x-gateway-session-token': identity.sessionToken,
  };
  if (identity.email) headers['x-end-user-email'] = identity.email;
  if (identity.tenantId) headers['x-tenant-id'] = identity.tenantId;
  for (const [serviceType, value] of Object.entries(identity.credentials)) {
    headers[`x-credential-${serviceType}`] = value;
  }
  if (identity.upstreamSecret) headers.authorization = `Bearer ${identity.upstreamSecret}`;
  return headers;
}
