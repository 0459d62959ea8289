import type { SecretBox } from '@agentgw/auth';
import { DependencyUnavailableError } from '@agentgw/core';
import type { CredentialProviderRow } from '@agentgw/db';
import { z } from 'zod';

/** Where the authorization server's endpoints come from: discovery (RFC 8414 / OIDC) or the provider's own list. */
export type AuthorizationServerSource =
  | { kind: 'issuer'; issuer: string }
  | {
      kind: 'endpoints';
      issuer: string | null;
      authorizationUrl: string;
      tokenUrl: string;
      revocationUrl: string | null;
    };

/** An `oauth2` credential provider ready for the connect flow, its client secret opened. */
export interface OAuthProviderConfig {
  providerId: string;
  serviceType: string;
  clientId: string;
  /** Null for a public client (`clientAuthMethod: none`, e.g. the gateway's client ID metadata document). */
  clientSecret: string | null;
  clientAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  scopes: string[];
  server: AuthorizationServerSource;
  /** Extra authorization request parameters (e.g. `prompt`, `access_type`); never the protocol's own. */
  authorizationParams: Record<string, string>;
  /** RFC 8707 resource indicator sent in the authorization and token requests, when the server wants one. */
  resource: string | null;
}

/** Parameters the flow sets itself; a provider's `authorizationParams` cannot replace them. */
export const RESERVED_AUTHORIZATION_PARAMS: ReadonlySet<string> = new Set([
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
]);

// The stored shape, as admin-api validated it (unknown keys kept there are ignored here).
const stored = z.object({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1).optional(),
  clientAuthMethod: z.enum(['client_secret_basic', 'client_secret_post', 'none']).optional(),
  scopes: z.array(z.string()).default([]),
  issuer: z.string().optional(),
  authorizeUrl: z.string().optional(),
  tokenUrl: z.string().optional(),
  revocationUrl: z.string().optional(),
  authorizationParams: z.record(z.string(), z.string()).optional(),
  resource: z.string().optional(),
});

/**
 * The provider's OAuth configuration, or null when it names no authorization server (no
 * `issuer`, nor both `authorizeUrl` and `tokenUrl`): the connect routes then answer 501 as the
 * spec's placeholder does. A client secret no configured key opens is a 503.
 */
export function oauthConfigOf(row: CredentialProviderRow, secrets: SecretBox): OAuthProviderConfig | null {
  if (row.auth_type !== 'oauth2') return null;
  const parsed = stored.safeParse(row.config);
  if (!parsed.success) return null;
  const c = parsed.data;
  // Only a public client goes without a secret.
  if (c.clientSecret === undefined && c.clientAuthMethod !== 'none') return null;
  let server: AuthorizationServerSource;
  if (c.authorizeUrl && c.tokenUrl) {
    server = {
      kind: 'endpoints',
      issuer: c.issuer ?? null,
      authorizationUrl: c.authorizeUrl,
      tokenUrl: c.tokenUrl,
      revocationUrl: c.revocationUrl ?? null,
    };
  } else if (c.issuer) {
    server = { kind: 'issuer', issuer: c.issuer };
  } else {
    return null;
  }
  const clientSecret = c.clientSecret === undefined ? null : secrets.open(c.clientSecret, row.id);
  if (c.clientSecret !== undefined && clientSecret === null)
    throw new DependencyUnavailableError("The credential provider's client secret cannot be decrypted; set it again");
  const authorizationParams = Object.fromEntries(
    Object.entries(c.authorizationParams ?? {}).filter(([key]) => !RESERVED_AUTHORIZATION_PARAMS.has(key)),
  );
  return {
    providerId: row.id,
    serviceType: row.service_type,
    clientId: c.clientId,
    clientSecret,
    clientAuthMethod: c.clientAuthMethod ?? 'client_secret_basic',
    scopes: c.scopes,
    server,
    authorizationParams,
    resource: c.resource ?? null,
  };
}
