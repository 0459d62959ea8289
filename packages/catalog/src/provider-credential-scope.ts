import { isAdmin, type Principal } from '@agentgw/auth';
import { ForbiddenError } from '@agentgw/core';
import { isSameResource, mcpTokenResourceOf, type Database, type ProviderAuthType } from '@agentgw/db';
import type { Kysely } from 'kysely';
import { invalidField } from './invalid-field.js';

/** What a per-user tool provider would send and where: its scope, auth type, credential service type and endpoint. */
export interface PerUserTarget {
  tenantId: string | null;
  authType: ProviderAuthType;
  credentialServiceType: string | null;
  endpoint: string;
}

/** Whether the auth type sends the calling user's own credential (from the vault) rather than the provider's secret. */
export const isPerUserAuth = (authType: ProviderAuthType): authType is 'user_oauth' | 'user_key' | 'mcp_oauth' =>
  authType === 'user_oauth' || authType === 'user_key' || authType === 'mcp_oauth';

/**
 * A per-user provider (`user_oauth`, `user_key`, `mcp_oauth`) receives every calling user's
 * credential of its service type, so it may name only a type of its own scope: a tenant's
 * provider a type its tenant declared (a credential provider of that tenant), a global provider a
 * global type (or one nobody declared). And an `mcp_oauth` type is bound to the MCP server its
 * tokens are issued for (RFC 8707): a token meant for upstream A is never sent to a provider B
 * naming the same type. Checked on
 * every create and on every update that changes the type, the auth type or the endpoint.
 */
export async function assertCredentialTypeInScope(db: Kysely<Database>, target: PerUserTarget): Promise<void> {
  const serviceType = target.credentialServiceType;
  if (serviceType === null || !isPerUserAuth(target.authType)) return;
  const declared = await db
    .selectFrom('credential_providers')
    .select(['tenant_id', 'auth_type', 'config'])
    .where('service_type', '=', serviceType)
    .execute();
  const own = declared.find((row) => row.tenant_id === target.tenantId);
  if (own === undefined && (target.tenantId !== null || declared.length > 0))
    throw invalidField(
      'credentialServiceType',
      target.tenantId === null
        ? `${serviceType} is a tenant's service type: a global provider uses only global service types`
        : `${serviceType} is not a service type of this provider's tenant: create its credential provider in the tenant first (a global service type serves only global providers)`,
    );
  // An `mcp_oauth` type holds tokens issued for that MCP server alone (the vault checks it again on every resolve).
  const resource = own ? mcpTokenResourceOf(own) : null;
  if (resource !== null && !isSameResource(resource, target.endpoint))
    throw invalidField(
      'endpoint',
      `the OAuth tokens of service type ${serviceType} are issued for the MCP server ${resource} (RFC 8707) and are never sent to another endpoint: give this provider a service type of its own`,
    );
}

/**
 * Which security token service receives the gateway's signed assertions about its users is a
 * platform decision: only a platform admin configures a `token_exchange` provider (its STS,
 * client, target) or moves one to another endpoint.
 */
export function assertExchangeConfigurable(principal: Principal, authType: ProviderAuthType): void {
  if (authType === 'token_exchange' && !isAdmin(principal))
    throw new ForbiddenError(
      'Only a platform admin can configure a token exchange provider: the gateway signs an assertion of each caller for its authorization server',
      'TOKEN_EXCHANGE_ADMIN_ONLY',
    );
}
