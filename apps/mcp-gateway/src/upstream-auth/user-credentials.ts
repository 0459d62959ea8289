import type { Principal } from '@agentgw/auth';
import { isPerUserAuth, type ProviderRecord } from '@agentgw/catalog';
import { DependencyUnavailableError, egressPolicyFromConfig } from '@agentgw/core';
import {
  createVault,
  createVaultOAuth,
  directCredentialResolver,
  httpCredentialResolver,
  type CredentialResolver,
} from '@agentgw/credentials';
import type { ServiceDeps } from '@agentgw/service-kit';

/** What a call to a provider carries for its user: nothing of theirs, their credential, or a connection they must make first. */
export type UserAuth =
  | { kind: 'none' }
  | { kind: 'headers'; headers: Record<string, string> }
  | { kind: 'missing'; serviceType: string; authUrl: string }
  | { kind: 'no_user'; serviceType: string };

/** RFC 9110 field-value characters: a stored value with CR/LF (or worse) is never sent. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]+$/;

/** Whose credentials a call uses: the end user a session token speaks for, else the caller itself; an agent alone has none. */
export function credentialUserOf(principal: Principal): string | null {
  const userId = principal.endUserId ?? principal.userId;
  return userId ? userId : null;
}

/**
 * Per-user upstream auth (tool providers with `user_oauth` / `mcp_oauth` / `user_key`): the calling
 * user's own credential of the provider's service type, resolved through the vault (which refreshes
 * OAuth tokens first), sent as `Authorization: Bearer` (OAuth) or `X-Api-Key` (a key).
 */
export class UserCredentials {
  constructor(private readonly resolver: () => CredentialResolver) {}

  async forCall(provider: ProviderRecord, principal: Principal): Promise<UserAuth> {
    if (!isPerUserAuth(provider.authType) || provider.credentialServiceType === null) return { kind: 'none' };
    const serviceType = provider.credentialServiceType;
    const userId = credentialUserOf(principal);
    if (userId === null) return { kind: 'no_user', serviceType };
    const { credentials, authUrls } = await this.resolver().resolve({
      userId,
      tenantId: principal.tenantId,
      serviceTypes: [serviceType],
      recipient: { kind: 'tool_provider', tenantId: provider.tenantId, endpoint: provider.endpoint },
    });
    const value = credentials[serviceType];
    if (value === undefined || !HEADER_VALUE.test(value))
      return { kind: 'missing', serviceType, authUrl: authUrls[serviceType] ?? '' };
    return {
      kind: 'headers',
      headers: provider.authType === 'user_key' ? { 'x-api-key': value } : { authorization: `Bearer ${value}` },
    };
  }
}

/**
 * Where mcp-gateway reads users' credentials: the vault's internal API when VAULT_URL is set
 * (distributed: only the vault opens them), the vault's code in this process when this process
 * holds the credential key (the all-in-one), otherwise nowhere (a per-user call answers 503).
 * Built at first use, so a gateway without per-user providers needs neither.
 */
export function userCredentialsFor(deps: ServiceDeps): UserCredentials {
  let resolver: CredentialResolver | null = null;
  return new UserCredentials(() => {
    resolver ??= resolverFor(deps);
    return resolver;
  });
}

function resolverFor(deps: ServiceDeps): CredentialResolver {
  const { config } = deps;
  if (config.VAULT_URL)
    return httpCredentialResolver({
      baseUrl: config.VAULT_URL,
      auth: deps.auth,
      service: 'mcp-gateway',
      egress: egressPolicyFromConfig(config),
    });
  if (config.CREDENTIAL_ENCRYPTION_KEY)
    return directCredentialResolver(createVault({ ...deps, oauth: createVaultOAuth(deps) }));
  return {
    resolve: () =>
      Promise.reject(
        new DependencyUnavailableError(
          'Tool providers that call as the user need the vault: set VAULT_URL for mcp-gateway',
        ),
      ),
  };
}
