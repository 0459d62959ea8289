import { createHash, randomBytes } from 'node:crypto';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  UnauthorizedError as V2UnauthorizedError,
  type OAuthClientInformationMixed as V2ClientInformation,
  type OAuthClientProvider as V2OAuthClientProvider,
  type OAuthTokens as V2Tokens,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { startMcpServer, type McpFixture } from '@agentgw/testkit';
import { expect } from 'vitest';
import * as z from 'zod';

// The MCP client apps of the OAuth suites (the official SDKs' and hand-driven ones) and the tools they call.

/** Where every test client's authorization ends (a loopback redirect URI, never listened on). */
export const REDIRECT = 'http://127.0.0.1:53682/callback';

/** What a test client registers beside its name (RFC 7591 fields). */
type ExtraMetadata = { grant_types?: string[]; response_types?: string[] };

/**
 * An OAuth client provider as an MCP client app keeps one, for either SDK (1.x and 2.x differ only
 * in their stored types): in memory, the browser step left to the test. With `clientMetadataUrl`
 * it never registers: its client id is that document's URL.
 */
export class TestOAuthClient implements OAuthClientProvider, V2OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata: {
    client_name: string;
    redirect_uris: string[];
    token_endpoint_auth_method: string;
  } & ExtraMetadata;
  constructor(
    clientName: string,
    extra: ExtraMetadata = {},
    readonly clientMetadataUrl?: string,
  ) {
    this.clientMetadata = {
      client_name: clientName,
      redirect_uris: [REDIRECT],
      ...extra,
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation = () => this.client;
  saveClientInformation = (info: OAuthClientInformationMixed | V2ClientInformation) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens | V2Tokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

/** What the tests ask of a connected SDK client. */
interface SdkClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/** One official SDK as the tests drive it, so a flow is written once for 1.x and 2.x. */
export interface McpSdk {
  UnauthorizedError: typeof UnauthorizedError | typeof V2UnauthorizedError;
  /** A client named `name` connected to `endpoint` with `provider` (rejects with UnauthorizedError until it holds tokens). */
  connect(endpoint: URL, provider: TestOAuthClient, name: string): Promise<SdkClient>;
  /** The redirect URI's parameters handed back to the SDK, which exchanges the code and saves the tokens. */
  finishAuth(endpoint: URL, provider: TestOAuthClient, callback: URLSearchParams): Promise<void>;
}

/** `@modelcontextprotocol/sdk` 1.x: finishAuth takes the code. */
export const SDK_1: McpSdk = {
  UnauthorizedError,
  async connect(endpoint, provider, name) {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    return client;
  },
  finishAuth: (endpoint, provider, callback) =>
    new StreamableHTTPClientTransport(endpoint, { authProvider: provider }).finishAuth(callback.get('code')!),
};

/** `@modelcontextprotocol/client` 2.x: finishAuth takes the redirect's parameters. */
export const SDK_2: McpSdk = {
  UnauthorizedError: V2UnauthorizedError,
  async connect(endpoint, provider, name) {
    const client = new V2Client({ name, version: '1.0.0' });
    await client.connect(new V2Transport(endpoint, { authProvider: provider }));
    return client;
  },
  finishAuth: (endpoint, provider, callback) =>
    new V2Transport(endpoint, { authProvider: provider }).finishAuth(callback),
};

/** The first connection of a client without tokens: refused with the SDK's UnauthorizedError, the provider left with the authorization URL. */
export async function firstConnectionRefused(
  sdk: McpSdk,
  endpoint: URL,
  provider: TestOAuthClient,
  name: string,
): Promise<URL> {
  const first = await sdk.connect(endpoint, provider, name).catch((err: unknown) => err);
  expect(first, String(first)).toBeInstanceOf(sdk.UnauthorizedError);
  expect(provider.authorizationUrl).not.toBeNull();
  return provider.authorizationUrl!;
}

/** Connects, lists the tools (echo only) and calls echo with `text`: the connected client. */
export async function listsAndCallsEcho(
  sdk: McpSdk,
  endpoint: URL,
  provider: TestOAuthClient,
  name: string,
  text: string,
): Promise<SdkClient> {
  const client = await sdk.connect(endpoint, provider, name);
  expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
  expect(await client.callTool({ name: 'echo', arguments: { text } })).toMatchObject({
    content: [{ type: 'text', text: `echo:${text}` }],
  });
  return client;
}

/** A PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A public client (no secret) registered dynamically at `origin` as `name`: its client id. */
export async function registerClient(origin: string, name: string, redirectUris = [REDIRECT]): Promise<string> {
  const res = await fetch(`${origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

/** An authorization code exchanged at `origin`'s token endpoint with its PKCE verifier: the tokens. */
export async function exchangeCode(
  origin: string,
  flow: { clientId: string; code: string; verifier: string; resource: string },
): Promise<{ access_token: string; refresh_token: string }> {
  const res = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: flow.clientId,
      code: flow.code,
      code_verifier: flow.verifier,
      redirect_uri: REDIRECT,
      resource: flow.resource,
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

/** tools/list on the gateway's unified endpoint with a bearer token, by hand. */
export const listToolsWith = (base: string, token: string, path = '/api/v1/mcp/mcp') =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/** The upstream the signed-in clients reach: echo, and secret, which its users are not allowed. */
export const startToolsUpstream = (): Promise<McpFixture> =>
  startMcpServer({
    name: 'tools',
    tools: [
      { name: 'echo', inputSchema: { text: z.string() }, handler: (args) => `echo:${String(args.text)}` },
      { name: 'secret', inputSchema: {}, handler: () => 'not for this user' },
    ],
  });

/** The admin (`adminToken`) adds `upstream` to the gateway at `base` as the provider `name` and allows `userId` its echo tool only: the provider's id. */
export async function offerEcho(
  base: string,
  adminToken: string,
  upstream: McpFixture,
  userId: string,
  name = 'tools',
): Promise<string> {
  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const created = await post('/api/v1/admin/tool-providers', { name, pattern: '*', endpoint: upstream.url });
  expect(created.status).toBe(201);
  const providerId = ((await created.json()) as { provider: { id: string } }).provider.id;
  expect(
    (
      await post('/api/v1/admin/provider-access', {
        subjectType: 'user',
        subjectId: userId,
        providerId,
        action: 'allow',
        toolPattern: 'echo',
      })
    ).status,
  ).toBe(201);
  return providerId;
}
