import { describe, expect, it } from 'vitest';
import { ClientMetadataDocuments, isClientMetadataUrl } from './client-metadata-documents.js';

const URL_ID = 'https://app.example/oauth/client.json';
const REDIRECT = 'http://127.0.0.1:53682/callback';

/** A fetch that answers every URL with `body` (string or JSON) and counts its calls. */
function answering(body: unknown, status = 200) {
  const seen: string[] = [];
  const fetchOut = (async (input: Parameters<typeof fetch>[0]) => {
    seen.push(String(input));
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { documents: new ClientMetadataDocuments(fetchOut), seen };
}

describe('isClientMetadataUrl', () => {
  it('takes https URLs with a path only', () => {
    expect(isClientMetadataUrl(URL_ID)).toBe(true);
    expect(isClientMetadataUrl('https://127.0.0.1:8443/client.json')).toBe(true);
    for (const id of [
      'http://127.0.0.1:8080/client.json',
      'http://localhost/client.json',
      'http://app.example/client.json',
      'https://app.example/',
      'https://app.example',
      'https://app.example/client.json#frag',
      'https://user:pw@app.example/client.json',
      'a3f9c2e1-registered-client',
      'not a url',
    ]) {
      expect(isClientMetadataUrl(id), id).toBe(false);
    }
  });
});

describe('ClientMetadataDocuments', () => {
  it('turns a document naming its own URL into a public client with its redirect URIs, fetched once', async () => {
    const { documents, seen } = answering({
      client_id: URL_ID,
      client_name: 'Desk',
      client_uri: 'https://app.example',
      redirect_uris: [REDIRECT],
    });
    const client = await documents.clientOf(URL_ID);
    expect(client).toEqual({
      client_id: URL_ID,
      client_name: 'Desk',
      client_uri: 'https://app.example',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    await documents.clientOf(URL_ID);
    expect(seen).toEqual([URL_ID]);
  });

  it('never fetches what is no metadata URL (plain http included)', async () => {
    const { documents, seen } = answering({ client_id: 'http://127.0.0.1:1/c.json', redirect_uris: [REDIRECT] });
    expect(await documents.clientOf('http://127.0.0.1:1/c.json')).toBeNull();
    expect(await documents.clientOf('registered-id')).toBeNull();
    expect(seen).toEqual([]);
  });

  it.each([
    ['another client_id', { client_id: 'https://other.example/client.json', redirect_uris: [REDIRECT] }],
    ['no redirect URIs', { client_id: URL_ID }],
    ['redirect URIs that are not strings', { client_id: URL_ID, redirect_uris: [1] }],
    [
      'too many redirect URIs',
      { client_id: URL_ID, redirect_uris: Array.from({ length: 21 }, (_, i) => `${REDIRECT}${i}`) },
    ],
    ['a client secret', { client_id: URL_ID, redirect_uris: [REDIRECT], client_secret: 'shh' }],
    [
      'a secret-based auth method',
      { client_id: URL_ID, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
    ],
    ['an array', [URL_ID]],
    ['no JSON', 'not json'],
  ])('refuses a document with %s', async (_what, body) => {
    expect(await answering(body).documents.clientOf(URL_ID)).toBeNull();
  });

  it('refuses a document that is not a 200, and one over 16 KiB', async () => {
    expect(
      await answering({ client_id: URL_ID, redirect_uris: [REDIRECT] }, 404).documents.clientOf(URL_ID),
    ).toBeNull();
    const big = { client_id: URL_ID, redirect_uris: [REDIRECT], client_name: 'x'.repeat(17 * 1024) };
    expect(await answering(big).documents.clientOf(URL_ID)).toBeNull();
  });

  it('answers null when the fetch fails (refused by the egress policy, unreachable)', async () => {
    const failing = (async () => {
      throw new Error('connect ECONNREFUSED');
    }) as typeof fetch;
    expect(await new ClientMetadataDocuments(failing).clientOf(URL_ID)).toBeNull();
  });
});
