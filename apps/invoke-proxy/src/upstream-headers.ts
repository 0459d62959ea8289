/**
 * Headers sent to an agent's upstream runtime. The identity and credential headers are the
 * gateway's word about who is calling, so a caller can never supply them: every caller header
 * that could be mistaken for one (and anything carrying the caller's own secrets, plus
 * hop-by-hop headers) is dropped before the gateway's values are added.
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

const HOP_BY_HOP = [
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection',
  'te', 'trailer', 'transfer-encoding', 'upgrade',
];

const DROPPED = new Set([
  ...HOP_BY_HOP,
  // The caller's own credentials: for the gateway, not for the runtime.
  'authorization', 'cookie', 'x-api-key', 'x-agent-id',
  // Names the gateway sets itself.
  'x-user-id', 'x-end-user-id', 'x-end-user-email', 'x-end-user-roles', 'x-tenant-id',
  // Describe the caller's message, not the one sent upstream (undici computes them again).
  'host', 'content-length', 'content-type', 'content-encoding', 'expect',
  // The answer is relayed byte for byte (SSE) or parsed (JSON), so ask for it uncompressed.
  'accept-encoding',
]);
const DROPPED_PREFIXES = ['x-credential-', 'x-gateway-'];

/** The caller's headers that may travel on: everything not listed above. */
function forwardableCallerHeaders(incoming: Headers): Record<string, string> {
  const named = new Set(
    (incoming.get('connection') ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
  );
  const out: Record<string, string> = {};
  incoming.forEach((value, name) => {
    if (DROPPED.has(name) || named.has(name) || DROPPED_PREFIXES.some((p) => name.startsWith(p))) return;
    out[name] = value;
  });
  return out;
}

export function upstreamHeaders(incoming: Headers, identity: InjectedIdentity): Record<string, string> {
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
