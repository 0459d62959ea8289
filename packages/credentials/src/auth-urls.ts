import type { Config } from '@agentgw/core';
import type { CredentialProviderRow, Database } from '@agentgw/db';
import type { Kysely } from 'kysely';

type UrlConfig = Pick<Config, 'OAUTH_CALLBACK_BASE_URL' | 'GATEWAY_PUBLIC_URL' | 'PORT'>;

const DEFAULT_PORT = 7521;

const trimSlash = (url: string): string => url.replace(/\/+$/, '');

function publicBase(config: UrlConfig): string {
  return trimSlash(config.GATEWAY_PUBLIC_URL ?? `http://localhost:${config.PORT ?? DEFAULT_PORT}`);
}

function oauthBase(config: UrlConfig): string {
  return config.OAUTH_CALLBACK_BASE_URL ? trimSlash(config.OAUTH_CALLBACK_BASE_URL) : publicBase(config);
}

/** Where the authorization server sends the user back to: the vault's callback for the service type (registered as the client's redirect URI). */
export function oauthCallbackUrl(config: UrlConfig, serviceType: string): string {
  return `${oauthBase(config)}/api/v1/credentials/oauth/${encodeURIComponent(serviceType)}/callback`;
}

/**
 * The vault's one callback for every service type, for clients that cannot list one per type (the
 * gateway's client ID metadata document): the flow started with the state names the service type.
 */
export function sharedOAuthCallbackUrl(config: UrlConfig): string {
  return `${oauthBase(config)}/api/v1/credentials/oauth/callback`;
}

/** The console's credentials page, where a finished connection lands (`?connected=<type>`). */
export function consoleCredentialsUrl(config: UrlConfig, params: Record<string, string>): string {
  return `${publicBase(config)}/credentials?${new URLSearchParams(params).toString()}`;
}

/**
 * Where a user goes to connect a missing credential:
 * - provider `oauth2` → the gateway's OAuth start URL `<oauth base>/api/v1/credentials/oauth/<type>/auth`;
 * - provider with a `config.connectUrl` (jwt, api_key, basic) → that URL;
 * - otherwise (no provider, or none of the above) → the gateway's credentials page
 *   `<public base>/credentials?serviceType=<type>`.
 */
export function authUrlFor(
  config: UrlConfig,
  serviceType: string,
  provider: CredentialProviderRow | undefined,
): string {
  const type = encodeURIComponent(serviceType);
  if (provider?.auth_type === 'oauth2') return `${oauthBase(config)}/api/v1/credentials/oauth/${type}/auth`;
  const connectUrl = provider?.config?.connectUrl;
  if (typeof connectUrl === 'string' && connectUrl.length > 0) return connectUrl;
  return `${publicBase(config)}/credentials?serviceType=${type}`;
}

/** Credential providers for the service types, the tenant's own taking precedence over the global one. */
export async function findCredentialProviders(
  db: Kysely<Database>,
  tenantId: string | null,
  serviceTypes: readonly string[],
): Promise<Map<string, CredentialProviderRow>> {
  const found = new Map<string, CredentialProviderRow>();
  if (serviceTypes.length === 0) return found;
  const rows = await db
    .selectFrom('credential_providers')
    .selectAll()
    .where('service_type', 'in', serviceTypes)
    .where((eb) =>
      tenantId === null
        ? eb('tenant_id', 'is', null)
        : eb.or([eb('tenant_id', 'is', null), eb('tenant_id', '=', tenantId)]),
    )
    .execute();
  for (const row of rows) {
    const existing = found.get(row.service_type);
    if (!existing || (existing.tenant_id === null && row.tenant_id !== null)) found.set(row.service_type, row);
  }
  return found;
}

/** Where to connect each service type, from the credential providers that govern them (`findCredentialProviders`). */
export function authUrlsOf(
  config: UrlConfig,
  serviceTypes: readonly string[],
  providers: ReadonlyMap<string, CredentialProviderRow>,
): Record<string, string> {
  return Object.fromEntries(serviceTypes.map((t) => [t, authUrlFor(config, t, providers.get(t))]));
}
