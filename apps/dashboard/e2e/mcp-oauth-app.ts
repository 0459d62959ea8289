import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect } from 'vitest';

// What the MCP sign-in browser tests share: the MCP app's side of the OAuth flow and the tool
// provider its person may use (moved out of mcp-client-sign-in.e2e.test.ts for the external-login test).

/** The MCP app's side: an OAuthClientProvider kept in memory; the browser step is the test's. */
export class AppOAuthClient implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;

  constructor(
    private readonly clientName: string,
    readonly redirectUrl: string,
  ) {}

  get clientMetadata() {
    return { client_name: this.clientName, redirect_uris: [this.redirectUrl], token_endpoint_auth_method: 'none' };
  }
  clientInformation = () => this.client;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

/** Registers the MCP server at `endpoint` as tool provider `name` and allows `userId` all its tools, as the admin `jwt`. */
export async function allowToolProvider(
  gatewayUrl: string,
  jwt: string,
  provider: { name: string; endpoint: string; userId: string },
): Promise<void> {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${jwt}` };
  const created = await fetch(`${gatewayUrl}/api/v1/admin/tool-providers`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: provider.name, pattern: '*', endpoint: provider.endpoint }),
  });
  expect(created.status).toBe(201);
  const providerId = ((await created.json()) as { provider: { id: string } }).provider.id;
  const access = await fetch(`${gatewayUrl}/api/v1/admin/provider-access`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      subjectType: 'user',
      subjectId: provider.userId,
      providerId,
      action: 'allow',
      toolPattern: '*',
    }),
  });
  expect(access.status).toBe(201);
}
