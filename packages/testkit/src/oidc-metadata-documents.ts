import type { Adapter, AdapterPayload } from 'oidc-provider';

/** The documents the fixture fetched, by URL in order, so a test can prove a client's document was read. */
export type FetchedDocuments = string[];

/** The client a metadata document describes: public (PKCE, no secret), exactly its redirect URIs; null when it does not describe `url`. */
function clientOf(url: string, doc: unknown): AdapterPayload | null {
  if (typeof doc !== 'object' || doc === null) return null;
  const d = doc as Record<string, unknown>;
  const redirectUris = d.redirect_uris;
  if (d.client_id !== url || !Array.isArray(redirectUris) || !redirectUris.every((u) => typeof u === 'string'))
    return null;
  return {
    client_id: url,
    ...(typeof d.client_name === 'string' && { client_name: d.client_name }),
    redirect_uris: redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

async function fetchClient(url: string, fetched: FetchedDocuments): Promise<AdapterPayload | null> {
  if (!/^https?:\/\/[^/]+\/./.test(url)) return null;
  fetched.push(url);
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(5_000),
  }).catch(() => null);
  if (response?.status !== 200) return null;
  return clientOf(url, await response.json().catch(() => null));
}

/**
 * oidc-provider's models in memory, where a Client it does not know and whose id is an http(s)
 * URL is that URL's client ID metadata document, fetched on every lookup (no cache: each use is
 * recorded). What the fixture's `clientMetadataDocuments` option runs on.
 */
export function metadataDocumentAdapter(fetched: FetchedDocuments): (model: string) => Adapter {
  const store = new Map<string, AdapterPayload>();
  const key = (model: string, id: string) => `${model}:${id}`;
  return (model) => ({
    async upsert(id, payload) {
      store.set(key(model, id), payload);
    },
    async find(id) {
      return (
        store.get(key(model, id)) ?? (model === 'Client' ? ((await fetchClient(id, fetched)) ?? undefined) : undefined)
      );
    },
    async findByUserCode(userCode) {
      return [...store.values()].find((p) => p.userCode === userCode);
    },
    async findByUid(uid) {
      return [...store.entries()].find(([k, p]) => k.startsWith(`${model}:`) && p.uid === uid)?.[1];
    },
    async consume(id) {
      const payload = store.get(key(model, id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    },
    async destroy(id) {
      store.delete(key(model, id));
    },
    async revokeByGrantId(grantId) {
      for (const [k, p] of store) if (p.grantId === grantId) store.delete(k);
    },
  });
}
