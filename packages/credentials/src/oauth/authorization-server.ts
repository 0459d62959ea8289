import { MemoryCache, type Clock } from '@agentgw/core';
import * as oauth from 'oauth4webapi';
import { oauthErrors } from './oauth-errors.js';
import type { AuthorizationServerSource } from './oauth-provider-config.js';

/** How long discovered metadata is reused before it is fetched again. */
const METADATA_TTL_MS = 5 * 60_000;
/** Every call to an authorization server gives up after this long. */
const REQUEST_TIMEOUT_MS = 10_000;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** HTTPS, or plain HTTP to this machine only (development and tests): tokens never cross a network in clear. */
export function assertSecureUrl(url: string, what: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw oauthErrors.serverUnreachable(`${what} is not a URL`);
  }
  if (parsed.protocol === 'https:' || (parsed.protocol === 'http:' && LOOPBACK.has(parsed.hostname))) return parsed;
  throw oauthErrors.serverUnreachable(`${what} must be an https URL`);
}

/**
 * The options every oauth4webapi request of the vault carries: the egress-checked fetch (no
 * redirects followed, private addresses as the policy says), a time bound, and plain HTTP allowed
 * only because every URL was checked by `assertSecureUrl` first.
 */
export const requestOptions = (fetch: typeof globalThis.fetch) => ({
  [oauth.customFetch]: fetch,
  [oauth.allowInsecureRequests]: true,
  signal: () => AbortSignal.timeout(REQUEST_TIMEOUT_MS),
});

/** Resolves (and caches) authorization server metadata: RFC 8414 / OIDC discovery, or the provider's explicit endpoints. */
export class AuthorizationServers {
  private readonly discovered: MemoryCache<oauth.AuthorizationServer>;

  constructor(
    private readonly fetch: typeof globalThis.fetch,
    clock: Clock,
  ) {
    this.discovered = new MemoryCache({ ttlMs: METADATA_TTL_MS, max: 500, clock });
  }

  /** The server's metadata; a discovery failure is a 502 naming what went wrong, never a 500. */
  async resolve(source: AuthorizationServerSource): Promise<oauth.AuthorizationServer> {
    if (source.kind === 'endpoints') {
      const authorizationUrl = assertSecureUrl(source.authorizationUrl, 'authorizeUrl');
      assertSecureUrl(source.tokenUrl, 'tokenUrl');
      if (source.revocationUrl) assertSecureUrl(source.revocationUrl, 'revocationUrl');
      return {
        // Without a configured issuer, the authorization endpoint's origin stands in (a response naming any other is refused).
        issuer: source.issuer ?? authorizationUrl.origin,
        authorization_endpoint: source.authorizationUrl,
        token_endpoint: source.tokenUrl,
        ...(source.revocationUrl && { revocation_endpoint: source.revocationUrl }),
        ...(source.issuer && { authorization_response_iss_parameter_supported: true }),
      };
    }
    return this.discovered.getOrLoad(source.issuer, () => this.discover(source.issuer));
  }

  /** OIDC discovery first, then RFC 8414 (`/.well-known/oauth-authorization-server`). */
  private async discover(issuer: string): Promise<oauth.AuthorizationServer> {
    const issuerUrl = assertSecureUrl(issuer, 'issuer');
    let lastError: unknown;
    for (const algorithm of ['oidc', 'oauth2'] as const) {
      try {
        const response = await oauth.discoveryRequest(issuerUrl, { algorithm, ...requestOptions(this.fetch) });
        const metadata = await oauth.processDiscoveryResponse(issuerUrl, response);
        for (const key of ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint'] as const) {
          const url = metadata[key];
          if (typeof url === 'string') assertSecureUrl(url, key);
        }
        if (!metadata.authorization_endpoint || !metadata.token_endpoint)
          throw new Error('metadata lacks the authorization or token endpoint');
        return metadata;
      } catch (err) {
        lastError = err;
      }
    }
    throw oauthErrors.serverUnreachable(
      `discovery of ${issuerUrl.href} failed (${lastError instanceof Error ? lastError.message : 'unknown error'})`,
    );
  }
}
