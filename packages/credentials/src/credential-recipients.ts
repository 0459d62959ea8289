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

/** The facts a release is decided on: the row, the user's scope, and the credential provider governing the type there. */
export interface ReleaseCase {
  row: UserCredentialRow;
  /** The user's tenant, or for a tenant-less user their private scope (`tenantScope` of `@agentgw/auth`), where their own agents live. */
  userScope: string;
  /** The user's tenant's own credential provider of the type, else the global one (the one a connection starts with). */
  governing: CredentialProviderRow | undefined;
  recipient: CredentialRecipient;
}

/**
 * Whether releasing the row to the recipient depends on the credential provider governing its type
 * (`mayRelease` reads `governing` only then): for an OAuth token, and for anything a tenant's tool
 * provider asks. A key or JWT the user pasted goes to an agent or a global provider without that
 * lookup, which keeps the usual invoke free of it.
 */
export const dependsOnGoverning = (row: UserCredentialRow, recipient: CredentialRecipient): boolean =>
  recipient.kind !== 'owner' &&
  (isOAuthRow(row) || (recipient.kind === 'tool_provider' && recipient.tenantId !== null));

/**
 * Whether a stored credential may go to the recipient (a refused one reads as missing, so the
 * caller gets the usual "connect your account" answer):
 * - a tenant's upstream receives only its own tenant's users' credentials (a private scope's, only its owner's);
 * - a tenant's tool provider only those of a type its tenant declared (the rule admin-api checks
 *   on writing it, again here for providers written before it or around it);
 * - an OAuth token only while the provider it was obtained through governs the type for the user
 *   (a tenant re-declaring a global type does not inherit the tokens connected through the global one),
 *   and an `mcp_oauth` one only to the MCP server it was issued for (RFC 8707).
 * The owner receives all of theirs.
 */
export function mayRelease({ row, userScope, governing, recipient }: ReleaseCase): boolean {
  if (recipient.kind === 'owner') return true;
  if (recipient.tenantId !== null && recipient.tenantId !== userScope) return false;
  if (recipient.kind === 'tool_provider' && recipient.tenantId !== null && governing?.tenant_id !== recipient.tenantId)
    return false;
  if (!isOAuthRow(row)) return true;
  if (oauthMetadataOf(row)?.providerId !== governing?.id) return false;
  const resource = governing ? mcpTokenResourceOf(governing) : null;
  return resource === null || isSameResource(resource, recipient.endpoint);
}
