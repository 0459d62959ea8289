import type { AdapterPayload } from 'oidc-provider';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

const isLoopbackHttp = (uri: unknown): boolean => {
  if (typeof uri !== 'string') return false;
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
};

/**
 * A client whose every redirect URI is an http loopback one is a native app (RFC 8252 section
 * 7.3): oidc-provider then matches its redirect URIs exactly except for the port, which the
 * app picks at run time. Any other client keeps exact matching.
 */
export function withLoopbackAsNative(client: AdapterPayload): AdapterPayload {
  const uris = client.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every(isLoopbackHttp)) return client;
  return { ...client, application_type: 'native' };
}
