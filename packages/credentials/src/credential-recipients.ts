import { isSameResource, mcpTokenResourceOf, type CredentialProviderRow, type UserCredentialRow } from '@agentgw/db';
import { isOAuthRow, oauthMetadataOf } from './oauth/oauth-tokens.js';

/**
 * Who receives a resolved credential, so the vault releases it only where it may go: the user
 * themself (their own credentials API), or an upstream the gateway calls for them — a per-user
 * tool provider or an agent's runtime, each of a tenant (or global) and at an endpoint.
 */
export type CredentialRecipient =
  | { kind: 'owner' }
  | { kind: 'tool_provider'; tenantId: string | null; endpoint: string }
  | { kind: 'agent'; tenantId: string | null; endpoint: string };

/** An upstream the gateway calls for a user: what invoke-proxy and mcp-gateway resolve for (the internal API's `recipient`). */
export type UpstreamRecipient = Exclude<CredentialRecipient, { kind: 'owner' }>;

/** The facts a release is decided on: the row, the user's tenant, and the credential provider governing the type there. */
export interface ReleaseCase {
  row: UserCredentialRow;
  userTenantId: string | null;
  /** The user's tenant's own credential provider of the type, else the global one (the one a connection starts with). */
  governing: CredentialProviderRow | undefined;
  recipient: CredentialRecipient;
}

/**
 * Whether a stored credential may go to the recipient (a refused one reads as missing, so the
 * caller gets the usual "connect your account" answer):
 * - a tenant's upstream receives only its own tenant's users' credentials;
 * - a tenant's tool provider only those of a type its tenant declared (the rule admin-api checks
 *   on writing it, again here for providers written before it or around it);
 * - an OAuth token only while the provider it was obtained through governs the type for the user
 *   (a tenant re-declaring a global type does not inherit the tokens connected through the global one);
 * - an `mcp_oauth` token only to the MCP server it was issued for (RFC 8707).
 * The owner receives all of theirs.
 */
export function mayRelease({ row, userTenantId, governing, recipient }: ReleaseCase): boolean {
  if (recipient.kind === 'owner') return true;
  if (recipient.tenantId !== null && recipient.tenantId !== userTenantId) return false;
  if (recipient.kind === 'tool_provider' && recipient.tenantId !== null && governing?.tenant_id !== recipient.tenantId)
    return false;
  if (isOAuthRow(row) && oauthMetadataOf(row)?.providerId !== governing?.id) return false;
  const resource = governing ? mcpTokenResourceOf(governing) : null;
  return resource === null || isSameResource(resource, recipient.endpoint);
}
