import { MemoryCache } from '@agentgw/core';
import { boundedFetch } from '@agentgw/credentials';
import type { AdapterPayload } from 'oidc-provider';

/** A metadata document larger than this is refused (the draft suggests a few kilobytes). */
const MAX_DOCUMENT_BYTES = 16 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
const CACHE_TTL_MS = 5 * 60_000;
const CACHE_MAX = 500;

/**
 * Whether `id` is a client ID metadata document URL: https with a path, no fragment and no
 * credentials (MCP 2025-11-25). Never plain http, loopback included: a test serves its documents
 * over TLS with its own CA (NODE_EXTRA_CA_CERTS), so no switch exists that could weaken this.
 */
export function isClientMetadataUrl(id: string): boolean {
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return false;
  }
  if (url.hash !== '' || url.username !== '' || url.password !== '' || url.pathname === '/') return false;
  return url.protocol === 'https:';
}

/**
 * Clients identified by the URL of their metadata document (OAuth Client ID Metadata Document
 * draft, MCP 2025-11-25): fetched through the egress policy (every address may point inward),
 * bounded in size and time, its `client_id` must equal the URL, and it becomes a public client
 * (no secret, PKCE) with exactly the redirect URIs it lists. Cached for five minutes.
 */
export class ClientMetadataDocuments {
  private readonly cache = new MemoryCache<AdapterPayload | null>({ max: CACHE_MAX, ttlMs: CACHE_TTL_MS });

  private readonly fetchOut: typeof fetch;

  /** `fetchOut` goes through the egress policy; its answers are read at most MAX_DOCUMENT_BYTES deep (a larger one is refused while streaming, not after). */
  constructor(fetchOut: typeof fetch) {
    this.fetchOut = boundedFetch(fetchOut, MAX_DOCUMENT_BYTES);
  }

  /** The client a metadata URL describes, or null when `id` is no such URL or its document is unusable. */
  async clientOf(id: string): Promise<AdapterPayload | null> {
    if (!isClientMetadataUrl(id)) return null;
    return this.cache.getOrLoad(id, () => this.fetchClient(id));
  }

  private async fetchClient(id: string): Promise<AdapterPayload | null> {
    try {
      const response = await this.fetchOut(id, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (response.status !== 200) return null;
      return toClient(id, JSON.parse(await response.text()) as unknown);
    } catch {
      return null;
    }
  }
}

/** Methods that need a shared secret, which a document anyone can read cannot carry. */
const SECRET_AUTH_METHODS = new Set(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']);

/** The oidc-provider client a document describes, or null when it does not describe `id` well enough. */
function toClient(id: string, doc: unknown): AdapterPayload | null {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
  const d = doc as Record<string, unknown>;
  if (d.client_id !== id) return null;
  // The draft forbids secrets in a public document; such a document is refused rather than half used.
  if ('client_secret' in d || 'client_secret_expires_at' in d) return null;
  if (typeof d.token_endpoint_auth_method === 'string' && SECRET_AUTH_METHODS.has(d.token_endpoint_auth_method))
    return null;
  const redirectUris = d.redirect_uris;
  if (
    !Array.isArray(redirectUris) ||
    redirectUris.length === 0 ||
    redirectUris.length > 20 ||
    !redirectUris.every((u) => typeof u === 'string')
  )
    return null;
  return {
    client_id: id,
    ...(typeof d.client_name === 'string' && { client_name: d.client_name.slice(0, 200) }),
    ...(typeof d.client_uri === 'string' && { client_uri: d.client_uri }),
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}
