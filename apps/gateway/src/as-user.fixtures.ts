import { secretBoxFor } from '@agentgw/auth';
import { newId } from '@agentgw/core';
import { json } from '@agentgw/db';
import type { TestBackend } from '@agentgw/db/testing';
import { serve, type Host, type RunningServer } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import {
  createUser,
  freePort,
  startOidcServer,
  startProtectedMcpServer,
  tokenFor,
  type OidcServer,
  type ProtectedMcpServer,
} from '@agentgw/testkit';
import { afterAll, beforeAll, expect } from 'vitest';
import { createGatewayHost } from './all-in-one.js';
import { hostJsonApi, type Json } from './host-json-api.js';

/** A JSON answer the tests read freely. */
export type { Json } from './host-json-api.js';

/** The gateway's public URL in these suites (requests go to the app in process, never to it), unless it listens. */
export const PUBLIC = 'http://gateway.test';
/** The upstream's resource, for which the OpenID provider issues the user's tokens (user_oauth). */
export const RESOURCE = 'https://tools.acme.test/mcp';
/** The gateway as the OpenID provider's client (user_oauth). */
const CLIENT = { clientId: 'agentgw', clientSecret: 'client-secret-of-the-gateway' };

/** Where the user connects their upstream account for `serviceType`. */
export const connectUrl = (serviceType: string) => `${PUBLIC}/api/v1/credentials/oauth/${serviceType}/auth`;
const callbackUrl = (serviceType: string) => `${PUBLIC}/api/v1/credentials/oauth/${serviceType}/callback`;

/** What the suite's gateway is started with. */
export interface AsUserGatewayOptions {
  backend?: TestBackend;
  /** The tools each subject sees at the upstream beside whoami. */
  toolsOf?: (subject: string) => string[];
  /**
   * user_oauth: an oauth2 credential provider of this service type and name, the OpenID provider
   * knowing the gateway as its client, and the tool provider `acme` created on it. Without it
   * (mcp_oauth): the OpenID provider opens registration, the resource is the upstream's own URL,
   * and the suite creates its provider itself.
   */
  credentialProvider?: { serviceType: string; name: string };
  /**
   * mcp_oauth: the OpenID provider also takes client ID metadata documents, which it fetches from
   * the gateway; so the gateway listens on a loopback port too, and that address is its public URL.
   */
  clientMetadataDocuments?: boolean;
}

/**
 * The all-in-one in process (listening too with `clientMetadataDocuments`) with an MCP upstream
 * (official SDK) that takes only the OpenID provider's tokens for its resource, an admin, and the
 * requests the as-user suites send (arrow properties, so a suite may take them out of the object;
 * the servers are there once started).
 */
export class AsUserGateway {
  deps!: TestDeps;
  host!: Host;
  oidc!: OidcServer;
  upstream!: ProtectedMcpServer;
  adminToken = '';
  /** The gateway's public URL: PUBLIC, or its loopback address with `clientMetadataDocuments`. */
  publicUrl = PUBLIC;
  private server: RunningServer | undefined;
  /** The user_oauth tool provider's id (empty without `credentialProvider`). */
  providerId = '';

  constructor(private readonly options: AsUserGatewayOptions) {}

  /** Starts the OpenID provider, the upstream and the gateway; creates the admin and, for user_oauth, the providers. */
  start = async (): Promise<void> => {
    const service = this.options.credentialProvider;
    const port = service ? undefined : await freePort();
    const resource = service ? RESOURCE : `http://127.0.0.1:${port}/mcp`;
    const clientMetadataDocuments = this.options.clientMetadataDocuments === true;
    const gatewayPort = clientMetadataDocuments ? await freePort() : undefined;
    if (gatewayPort) this.publicUrl = `http://127.0.0.1:${gatewayPort}`;
    this.oidc = await startOidcServer(
      service
        ? { clients: [{ ...CLIENT, redirectUris: [callbackUrl(service.serviceType)] }], resource }
        : { clients: [], resource, registration: true, clientMetadataDocuments },
    );
    this.upstream = await startProtectedMcpServer({
      issuer: this.oidc.issuer,
      jwksUri: this.oidc.jwksUri,
      resource,
      port,
      toolsOf: this.options.toolsOf,
    });
    this.deps = await createTestDeps({
      backend: this.options.backend,
      env: { GATEWAY_PUBLIC_URL: this.publicUrl, EGRESS_POLICY: 'allow-private' },
    });
    this.host = await createGatewayHost(this.deps);
    await this.host.start();
    if (gatewayPort)
      this.server = await serve(this.host.app, {
        port: gatewayPort,
        hostname: '127.0.0.1',
        deps: { close: async () => {} },
        logger: this.deps.logger,
      });
    this.adminToken = await tokenFor(
      this.deps,
      await createUser(this.deps, { email: `admin-${newId()}@example.com`, roles: ['admin'] }),
    );
    if (service) this.providerId = await this.createUserOauthProvider(service);
  };

  /** Stops what start() started, whatever it got to. */
  stop = async (): Promise<void> => {
    await this.server?.shutdown();
    await this.host?.stop({ deadlineMs: 1_000 });
    await this.upstream?.close();
    await this.oidc?.close();
    await this.deps?.close();
  };

  private async createUserOauthProvider({ serviceType, name }: { serviceType: string; name: string }): Promise<string> {
    const id = newId();
    await this.deps.db
      .insertInto('credential_providers')
      .values({
        id,
        name,
        service_type: serviceType,
        auth_type: 'oauth2',
        description: null,
        config: json({
          ...CLIENT,
          clientSecret: secretBoxFor(this.deps.config).seal(CLIENT.clientSecret, id),
          scopes: ['openid', 'offline_access'],
          issuer: this.oidc.issuer,
          resource: RESOURCE,
        }),
        tenant_id: null,
      })
      .execute();
    const created = await this.api('POST', '/api/v1/admin/tool-providers', this.adminToken, {
      name: 'acme',
      pattern: '*',
      endpoint: this.upstream.url,
      authType: 'user_oauth',
      credentialServiceType: serviceType,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.provider).toMatchObject({ authType: 'user_oauth', credentialServiceType: serviceType });
    return created.body.provider.id as string;
  }

  /** One request to the gateway as `token`; `path` may be a full URL of the gateway's (a callback). */
  api = hostJsonApi(() => this.host);

  /** A JSON-RPC request to the unified endpoint. */
  unified = (token: string, method: string, params: Json = {}) =>
    this.api('POST', '/api/v1/mcp/mcp', token, { jsonrpc: '2.0', id: 1, method, params });
  /** A JSON-RPC request to the user_oauth provider's own proxy endpoint. */
  proxied = (token: string, method: string, params: Json = {}) =>
    this.api('POST', `/api/v1/mcp-proxy/${this.providerId}/mcp`, token, { jsonrpc: '2.0', id: 1, method, params });
  /** tools/call of the upstream's whoami on the unified endpoint. */
  whoami = (token: string) => this.unified(token, 'tools/call', { name: 'whoami', arguments: {} });

  /** A new user allowed every tool of the provider (the user_oauth one unless named). */
  user = async (providerId = this.providerId): Promise<string> => {
    const created = await createUser(this.deps, { email: `${newId()}@example.com`, roles: [] });
    const token = await tokenFor(this.deps, created);
    const rule = await this.api('POST', '/api/v1/admin/provider-access', this.adminToken, {
      subjectType: 'user',
      subjectId: created.id,
      providerId,
      action: 'allow',
      toolPattern: '*',
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    return token;
  };

  /** The user connects their upstream account for `serviceType` (the OpenID provider's login as `account`). */
  connect = async (
    token: string,
    account: string,
    serviceType = this.options.credentialProvider?.serviceType ?? '',
  ): Promise<void> => {
    const { authUrl } = (await this.api('GET', `/api/v1/credentials/oauth/${serviceType}/auth`, token)).body as {
      authUrl: string;
    };
    const callback = await this.oidc.authorize(`${authUrl}&login_hint=${account}`, callbackUrl(serviceType));
    expect((await this.api('GET', callback.href, token)).status).toBe(200);
  };

  /** A request of the 2025-11-25 wire (a session's era) to the unified endpoint, in `session` when given. */
  legacy = (token: string, method: 'POST' | 'DELETE', body?: unknown, session?: string) =>
    this.host.app.request('/api/v1/mcp/mcp', {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-11-25',
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  /** Opens a client session as `token` (initialize with `capabilities`); its id. */
  openSession = async (token: string, capabilities: Json = {}): Promise<string> => {
    const init = await this.legacy(token, 'POST', {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 't', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).not.toBe('');
    return session;
  };

  /** The audit row `id` once the audit writer has stored it (undefined after 5 s). */
  waitForAudit = async (id: string): Promise<Json | undefined> => {
    for (let i = 0; i < 100; i++) {
      const row = await this.deps.db.selectFrom('audit_logs').selectAll().where('id', '=', id).executeTakeFirst();
      if (row) return row;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  };
}

/** Starts an AsUserGateway before the enclosing describe's tests and stops it after them. */
export function asUserGateway(options: AsUserGatewayOptions = {}): AsUserGateway {
  const gateway = new AsUserGateway(options);
  beforeAll(() => gateway.start());
  afterAll(() => gateway.stop());
  return gateway;
}
