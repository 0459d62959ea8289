import type { Principal } from '@agentgw/auth';
import type { ProviderRecord } from '@agentgw/catalog';
import { upstreamEraFor, type UpstreamTarget } from '@agentgw/mcp-client';

/** RFC 9110 field-value characters: visible ASCII, space, tab and obs-text; no CR, LF or NUL. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Who a forwarded call is made for, as the invoke table's identity headers carry it. */
export interface CallIdentity {
  principal: Principal;
  requestId: string;
  /** The revision the client speaks: a legacy client is served by the upstream's session era where it has one (README: "Protocol eras"). Absent: the upstream's newest. */
  clientVersion?: string;
}

/**
 * The target for a provider: its endpoint, its configured auth (`bearer` → Authorization,
 * `api_key` → X-Api-Key) and, for calls made for someone, the identity headers of the invoke
 * table (user, end user, email, roles, tenant, agent, request id) and that principal's key. Nothing of the caller's own
 * request travels on: the gateway's word is the only identity upstreams see.
 */
export function upstreamTarget(
  provider: ProviderRecord,
  secret: string | null,
  identity: CallIdentity | null,
): UpstreamTarget {
  const headers: Record<string, string> = {};
  let principalKey: string | undefined;
  if (secret !== null && provider.authType === 'bearer') headers.authorization = `Bearer ${secret}`;
  if (secret !== null && provider.authType === 'api_key') headers['x-api-key'] = secret;
  if (identity) {
    const { principal, requestId } = identity;
    if (principal.userId) headers['x-user-id'] = principal.userId;
    if (principal.endUserId) headers['x-end-user-id'] = principal.endUserId;
    if (principal.email) headers['x-end-user-email'] = principal.email;
    if (principal.roles.length > 0) headers['x-end-user-roles'] = principal.roles.join(',');
    if (principal.tenantId) headers['x-tenant-id'] = principal.tenantId;
    if (principal.agentId) headers['x-gateway-agent-id'] = principal.agentId;
    headers['x-gateway-request-id'] = requestId;
    // An identity value that is no valid header value (CR/LF from an external IdP's email claim,
    // say) is left out: undici would refuse the whole call, and nothing may be injected upstream.
    for (const [name, value] of Object.entries(headers)) if (!HEADER_VALUE.test(value)) delete headers[name];
    principalKey = JSON.stringify([
      principal.userId,
      principal.endUserId,
      principal.agentId,
      principal.tenantId,
      principal.email,
      principal.roles,
    ]);
  }
  // The key names the credentials too, so a shared upstream session never crosses an auth change;
  // the principal keeps a stateless caller's shared upstream session its own (never another's).
  // A legacy client's conversations have their own key: the era chosen for them is remembered apart.
  const legacy = identity?.clientVersion !== undefined && upstreamEraFor(identity.clientVersion) === 'legacy';
  const key = `${provider.id}|${provider.endpoint}|${provider.authType}|${secret ?? ''}${legacy ? '|legacy' : ''}`;
  const target: UpstreamTarget =
    principalKey === undefined
      ? { endpoint: provider.endpoint, key, headers }
      : { endpoint: provider.endpoint, key, headers, principal: principalKey };
  if (legacy) target.era = 'legacy';
  return target;
}
