import type { AuditTrail } from '@agentgw/audit';
import type { Principal } from '@agentgw/auth';
import { createCatalogAdmin, type CatalogAdmin } from '@agentgw/catalog';
import type { ConfirmationGate } from '@agentgw/core';
import { createHost, defineService, serve, type Host, type RunningServer } from '@agentgw/service-kit';
import { createTestDeps, type TestDeps } from '@agentgw/service-kit/testing';
import { createUser, tokenFor } from '@agentgw/testkit';
import { createMcpGateway } from './service.js';
import type { SessionStore } from './session-store.js';

/** mcp-gateway on a real HTTP port (for the SDK clients) with an admin and a catalog to set up providers, agents and rules. */
export interface GatewayUnderTest {
  deps: TestDeps;
  host: Host;
  server: RunningServer;
  url: string;
  catalog: CatalogAdmin;
  admin: Principal;
  adminToken: string;
  close(): Promise<void>;
}

/** Starts the service the way a host does (createHost + serve) on the embedded database and in-process adapters. */
export async function startGatewayUnderTest(
  options: {
    gate?: ConfirmationGate;
    audit?: (deps: TestDeps) => AuditTrail;
    env?: Record<string, string>;
    sessions?: (deps: TestDeps) => SessionStore;
  } = {},
): Promise<GatewayUnderTest> {
  // A list gets 10 s: at 1 s, CI's busy cores left a live fixture's tools unlisted (-32010).
  const deps = await createTestDeps({
    env: { EGRESS_POLICY: 'allow-private', MCP_LIST_TIMEOUT_MS: '10000', ...options.env },
  });
  const definition = defineService({
    name: 'mcp-gateway',
    defaultPort: 0,
    create: (d) =>
      createMcpGateway(d, {
        confirmationGate: options.gate,
        audit: options.audit?.(deps),
        sessions: options.sessions?.(deps),
      }),
  });
  const host = await createHost([definition], deps, { name: 'mcp-gateway' });
  await host.start();
  const server = await serve(host.app, {
    port: 0,
    hostname: '127.0.0.1',
    deps,
    logger: deps.logger,
    stopServices: (o) => host.stop(o),
    shutdownTimeoutMs: 2_000,
  });
  const adminUser = await createUser(deps, { email: `admin-${Date.now()}@example.com`, roles: ['admin'] });
  const adminToken = await tokenFor(deps, adminUser);
  const admin = await deps.auth.authenticate(new Headers({ authorization: `Bearer ${adminToken}` }), 'jwt');
  const catalog = createCatalogAdmin(deps);
  return {
    deps,
    host,
    server,
    url: `http://127.0.0.1:${server.port}`,
    catalog,
    admin,
    adminToken,
    close: () => server.shutdown(),
  };
}

/** An agent allowed every tool of one provider (an allow rule on `*`): its id and runtime token. */
export async function allowedAgent(
  gw: GatewayUnderTest,
  providerId: string,
  name: string,
  tenantId?: string,
): Promise<{ id: string; token: string }> {
  const created = await gw.catalog.agents.create(gw.admin, {
    name,
    upstreamUrl: 'http://127.0.0.1:9/agent',
    ...(tenantId === undefined ? {} : { tenantId }),
  });
  await gw.catalog.rules.create(gw.admin, {
    subjectType: 'agent',
    subjectId: created.agent.id,
    providerId,
    action: 'allow',
    toolPattern: '*',
    ...(tenantId === undefined ? {} : { tenantId }),
  });
  return { id: created.agent.id, token: created.runtimeToken };
}
