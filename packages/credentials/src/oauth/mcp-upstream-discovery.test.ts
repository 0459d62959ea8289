import { silentLogger, systemClock } from '@agentgw/core';
import {
  freePort,
  startOidcServer,
  startProtectedMcpServer,
  type OidcServer,
  type ProtectedMcpServer,
} from '@agentgw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthorizationServers } from './authorization-server.js';
import {
  discoverMcpUpstream,
  registerGatewayClient,
  resourceMetadataUrlOf,
  upstreamProviderConfig,
} from './mcp-upstream-discovery.js';
import { OAuthClient } from './oauth-client.js';

const CALLBACK = 'http://127.0.0.1:1/api/v1/credentials/oauth/mcp-protected/callback';

// A real OpenID provider (oidc-provider, open registration) and an MCP server (official SDK) that
// accepts only its tokens for its own URL as resource, publishing RFC 9728 metadata.
describe('MCP upstream authorization: discovery, registration, a user connects, the call goes out as that user', () => {
  let oidc: OidcServer;
  let upstream: ProtectedMcpServer;
  let resource = '';
  beforeAll(async () => {
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    oidc = await startOidcServer({ clients: [], resource, registration: true });
    upstream = await startProtectedMcpServer({ issuer: oidc.issuer, jwksUri: oidc.jwksUri, resource, port });
  });
  afterAll(async () => {
    await upstream.close();
    await oidc.close();
  });

  it('reads the 401 challenge, registers the gateway and lets alice call whoami with her own token', async () => {
    const servers = new AuthorizationServers(fetch, systemClock);
    const discovered = await discoverMcpUpstream(fetch, servers, upstream.url);
    expect(discovered).toMatchObject({ resource, issuer: oidc.issuer });

    const client = await registerGatewayClient(fetch, discovered, {
      redirectUri: CALLBACK,
      clientName: 'Agent Gateway',
    });
    expect(client.kind).toBe('registered');
    if (client.kind !== 'registered') return;
    const stored = upstreamProviderConfig(discovered, client);
    expect(stored).toMatchObject({
      issuer: oidc.issuer,
      resource,
      clientId: client.clientId,
      clientRegistration: 'dynamic_registration',
    });

    // The vault's own OAuth client, with the provider as oauthConfigOf would read it back.
    const oauthClient = new OAuthClient(fetch, systemClock, silentLogger());
    const cfg = {
      providerId: 'p-mcp',
      serviceType: 'mcp-protected',
      clientId: stored.clientId,
      clientSecret: stored.clientSecret ?? null,
      clientAuthMethod: stored.clientAuthMethod,
      scopes: ['openid', 'offline_access'],
      server: { kind: 'issuer' as const, issuer: stored.issuer },
      authorizationParams: { login_hint: 'alice', prompt: 'consent' },
      resource: stored.resource,
    };
    const flow = { state: 'state-1', codeVerifier: 'v'.repeat(64), redirectUri: CALLBACK };
    const callback = await oidc.authorize(await oauthClient.authorizationUrl(cfg, flow), CALLBACK);
    const tokens = await oauthClient.exchangeCode(cfg, { ...flow, callback });

    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${tokens.accessToken}`,
    };
    const rpc = (sessionId: string | null, method: string, params: object) =>
      fetch(upstream.url, {
        method: 'POST',
        headers: { ...headers, ...(sessionId && { 'mcp-session-id': sessionId }) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const init = await rpc(null, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'test', version: '1' },
    });
    await init.body?.cancel();
    const call = await rpc(init.headers.get('mcp-session-id'), 'tools/call', { name: 'whoami', arguments: {} });
    expect(call.status).toBe(200);
    expect(await call.text()).toContain('you are alice');
    expect(upstream.identities).toEqual(['alice']);
  });

  it('asks for an admin-entered client id when the authorization server offers no registration', async () => {
    const closed = await startOidcServer({ clients: [], resource });
    try {
      const servers = new AuthorizationServers(fetch, systemClock);
      const discovered = {
        ...(await discoverMcpUpstream(fetch, servers, upstream.url)),
        server: await servers.resolve({ kind: 'issuer', issuer: closed.issuer }),
      };
      expect(
        await registerGatewayClient(fetch, discovered, { redirectUri: CALLBACK, clientName: 'Agent Gateway' }),
      ).toEqual({
        kind: 'client_id_required',
        reason: 'the authorization server offers no dynamic client registration',
      });
    } finally {
      await closed.close();
    }
  });

  it('refuses metadata about another resource, and an upstream without any (502)', async () => {
    const servers = new AuthorizationServers(fetch, systemClock);
    const impostor = await startProtectedMcpServer({
      issuer: oidc.issuer,
      jwksUri: oidc.jwksUri,
      resource: 'https://elsewhere.example/mcp',
    });
    try {
      await expect(discoverMcpUpstream(fetch, servers, impostor.url)).rejects.toMatchObject({
        status: 502,
        code: 'UPSTREAM_AUTH_DISCOVERY_FAILED',
      });
    } finally {
      await impostor.close();
    }
    await expect(discoverMcpUpstream(fetch, servers, `${oidc.issuer}/mcp`)).rejects.toMatchObject({
      status: 502,
      code: 'UPSTREAM_AUTH_DISCOVERY_FAILED',
    });
    await expect(discoverMcpUpstream(fetch, servers, 'http://mcp.example/mcp')).rejects.toMatchObject({ status: 502 });
  });

  it('reads resource_metadata only from a Bearer challenge', () => {
    expect(
      resourceMetadataUrlOf(
        'Bearer error="invalid_token", resource_metadata="https://a.example/.well-known/oauth-protected-resource"',
      ),
    ).toBe('https://a.example/.well-known/oauth-protected-resource');
    expect(resourceMetadataUrlOf('Basic realm="x", resource_metadata="https://a.example/m"')).toBeNull();
    expect(resourceMetadataUrlOf(null)).toBeNull();
  });
});
