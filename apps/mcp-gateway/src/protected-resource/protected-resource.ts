import {
  bearerToken,
  isMcpEndpointPath,
  isOAuthAccessToken,
  MCP_SCOPE,
  mcpProxyProviderOf,
  oauthIssuerOf,
  type AuthService,
  type Principal,
} from '@agentgw/auth';
import { ForbiddenError, requestHeader, requestHeaders, UnauthorizedError } from '@agentgw/core';
import type { Context, MiddlewareHandler } from 'hono';

/** Where RFC 9728 metadata lives for a resource path: the well-known prefix before the resource's own path. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The RFC 9728 metadata document of one MCP endpoint. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
  resource_name: string;
}

/**
 * The MCP endpoints as OAuth protected resources (RFC 9728): their identifiers under
 * GATEWAY_PUBLIC_URL, their metadata, and the challenge a 401 or 403 carries. Without
 * GATEWAY_PUBLIC_URL there is no authorization server: no metadata, plain challenges.
 */
export class ProtectedResources {
  readonly issuer: string | undefined;

  constructor(config: { GATEWAY_PUBLIC_URL?: string | undefined }) {
    this.issuer = oauthIssuerOf(config);
  }

  /** The resource identifier of an MCP endpoint path (what a token's audience must name), or null without a public URL. */
  resourceOf(path: string): string | null {
    return this.issuer === undefined ? null : `${this.issuer}${path}`;
  }

  /** The metadata document for an endpoint path; null when OAuth is off or the path is not an MCP endpoint. */
  metadataOf(path: string): ProtectedResourceMetadata | null {
    const resource = this.resourceOf(path);
    if (resource === null || this.issuer === undefined || !isMcpEndpointPath(path)) return null;
    const provider = mcpProxyProviderOf(path);
    return {
      resource,
      authorization_servers: [this.issuer],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: provider === undefined ? 'Agent Gateway: all tools' : `Agent Gateway: tool provider ${provider}`,
    };
  }

  /** The `WWW-Authenticate` value for a refusal at `path` (RFC 6750 section 3, RFC 9728 section 5.1). */
  challenge(path: string, error: 'invalid_token' | 'insufficient_scope' | null): string {
    const params: string[] = [];
    if (this.issuer !== undefined)
      params.push(`resource_metadata="${this.issuer}${PROTECTED_RESOURCE_WELL_KNOWN}${path}"`);
    params.push(`scope="${MCP_SCOPE}"`);
    if (error !== null) params.push(`error="${error}"`);
    return `Bearer ${params.join(', ')}`;
  }
}

/** The headers besides `Authorization` that carry a credential; an OAuth token stands alone. */
const OTHER_CREDENTIALS = ['x-api-key', 'x-gateway-session-token', 'x-agent-id', 'x-user-id'] as const;

/**
 * Who calls an MCP endpoint: an OAuth access token (issued for this very endpoint, with the
 * `mcp` scope) or any flexible-auth form, session tokens included, never the console cookie.
 */
export async function authenticateMcpCaller(
  auth: Pick<AuthService, 'authenticate' | 'authenticateOAuth'>,
  resources: ProtectedResources,
  c: Context,
): Promise<Principal> {
  const headers = requestHeaders(c);
  const bearer = bearerToken(headers.get('authorization'));
  if (bearer === null || !isOAuthAccessToken(bearer)) return auth.authenticate(headers, 'flexible');
  if (OTHER_CREDENTIALS.some((name) => headers.has(name)))
    throw new UnauthorizedError(
      'An OAuth access token is sent alone, without other credential headers',
      'INVALID_TOKEN',
    );
  const resource = resources.resourceOf(c.req.path);
  if (resource === null) throw new UnauthorizedError('OAuth access tokens are not accepted here', 'INVALID_TOKEN');
  const principal = await auth.authenticateOAuth(bearer, resource);
  if (!principal.oauth.scopes.includes(MCP_SCOPE))
    throw new ForbiddenError(`The access token lacks the ${MCP_SCOPE} scope`, 'INSUFFICIENT_SCOPE', {
      required: MCP_SCOPE,
    });
  return principal;
}

/**
 * The MCP endpoints' authentication: sets `principal`, or answers 401 with the OAuth challenge
 * that points MCP clients at the resource metadata (and 403 `insufficient_scope` for a step-up).
 */
export function mcpCallerAuth(auth: AuthService, resources: ProtectedResources): MiddlewareHandler {
  return async (c, next) => {
    let principal: Principal;
    try {
      principal = await authenticateMcpCaller(auth, resources, c);
    } catch (err) {
      if (err instanceof UnauthorizedError) {
        const error = requestHeader(c, 'authorization') === undefined ? null : 'invalid_token';
        return c.json(err.toBody(), 401, { 'WWW-Authenticate': resources.challenge(c.req.path, error) });
      }
      if (err instanceof ForbiddenError && err.code === 'INSUFFICIENT_SCOPE') {
        return c.json(err.toBody(), 403, { 'WWW-Authenticate': resources.challenge(c.req.path, 'insufficient_scope') });
      }
      throw err;
    }
    c.set('principal', principal);
    await next();
  };
}
