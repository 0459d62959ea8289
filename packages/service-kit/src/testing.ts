import { createAuth } from '@agentgw/auth';
import { createCatalog, type CatalogOptions } from '@agentgw/catalog';
import { loadConfig, silentLogger, systemClock, type Clock, type Config, type EventBus } from '@agentgw/core';
import { openTestDatabase } from '@agentgw/db/testing';
import type { Router } from 'hono/router';
import type { ServiceDeps } from './deps.js';
import { createHost, type Host, type HostOptions } from './host.js';
import type { ServiceDefinition } from './service-definition.js';
import { inProcessAdapters } from './in-process-adapters.js';
import { createMetrics } from './metrics.js';
import { serve } from './serve.js';

/** A fixed, valid configuration for tests; override single variables through `env`. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    JWT_SECRET: 'test-jwt-secret-that-is-long-enough-0123456789',
    CREDENTIAL_ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
    PLATFORM_SECRETS_KEY: '8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

export interface TestDepsOptions {
  backend?: 'pglite' | 'postgres';
  env?: Record<string, string>;
  clock?: Clock;
}

export type TestDeps = ServiceDeps & { close(): Promise<void> };

/**
 * Real deps for `app.request(...)` tests: a fresh migrated database of the given backend,
 * in-process bus, queue and rate limiter (on the given clock), a silent logger, the started
 * catalog reader and real auth reading its agents through it.
 * `close()` drops the database.
 */
export async function createTestDeps(options: TestDepsOptions = {}): Promise<TestDeps> {
  const config = testConfig(options.env);
  const dbHandle = await openTestDatabase(options.backend ?? 'pglite');
  const logger = silentLogger();
  const clock = options.clock ?? systemClock;
  const { bus, queue, rateLimiter } = inProcessAdapters({ logger, clock });
  const catalog = createCatalog({ config, db: dbHandle.db, bus, clock, logger });
  try {
    await catalog.start();
    const auth = await createAuth({ config, db: dbHandle.db, bus, agents: catalog.agents, clock, logger });
    return {
      config,
      db: dbHandle.db,
      dbHandle,
      bus,
      queue,
      rateLimiter,
      clock,
      logger,
      auth,
      catalog,
      metrics: createMetrics(),
      async close() {
        await catalog.stop();
        await rateLimiter.close();
        await queue.close();
        await bus.close();
        await dbHandle.close();
      },
    };
  } catch (err) {
    await catalog.stop();
    await dbHandle.close();
    throw err;
  }
}

/**
 * Another replica of a service process on the same database: its own bus (a Redis bus of the
 * test), with its own started catalog reader and auth hearing that bus. `close()` stops them.
 */
export async function replicaDeps(
  deps: ServiceDeps,
  bus: EventBus,
  catalogOptions: CatalogOptions = {},
): Promise<ServiceDeps & { close(): Promise<void> }> {
  const catalog = createCatalog({ ...deps, bus }, catalogOptions);
  await catalog.start();
  const auth = await createAuth({
    config: deps.config,
    db: deps.db,
    bus,
    agents: catalog.agents,
    clock: deps.clock,
    logger: deps.logger,
  });
  return {
    ...deps,
    bus,
    catalog,
    auth,
    async close() {
      await auth.close();
      await catalog.stop();
    },
  };
}

/** A started host for `app.request(...)` tests; `request` is the app's. */
export type TestHost = Host & { request: Host['app']['request'] };

/**
 * The production shell (request id, body limit, error body, `/health`, OpenAPI) around one or
 * more definitions on the given deps, already started. Call `stop` (or close the deps) when done.
 */
export async function testHost(
  definitions: ServiceDefinition | readonly ServiceDefinition[],
  deps: ServiceDeps,
  options: Partial<HostOptions> = {},
): Promise<TestHost> {
  const list = Array.isArray(definitions)
    ? (definitions as readonly ServiceDefinition[])
    : [definitions as ServiceDefinition];
  const host = await createHost(list, deps, {
    name: options.name ?? list.map((d) => d.name).join('+'),
    maxBodyBytes: options.maxBodyBytes,
  });
  await host.start();
  return { ...host, request: host.app.request };
}

/** Requests to an app, the way a test sends them. */
export interface Transport {
  request(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The app on a real Node listener (127.0.0.1, an ephemeral port): what only Node's server path
 * does (the body read from the socket, headers set on the Node response) is exercised, unlike
 * under `app.request`.
 */
export async function listening(app: { fetch(request: Request): Response | Promise<Response> }): Promise<Transport> {
  const running = await serveOnLoopback(app);
  const base = `http://127.0.0.1:${running.port}`;
  return { request: (path, init) => fetch(`${base}${path}`, init), close: () => running.shutdown() };
}

/** The app served on 127.0.0.1 at an ephemeral port, quietly, for a test that speaks to the port itself (raw header lines, say). */
export function serveOnLoopback(app: { fetch(request: Request): Response | Promise<Response> }) {
  return serve(app, {
    port: 0,
    hostname: '127.0.0.1',
    deps: { close: async () => {} },
    logger: silentLogger(),
    handleSignals: false,
  });
}

/** Both ways a test can reach an app: `app.request` and a real socket; each case runs over both. */
export const TRANSPORTS = {
  'app.request': async (app: {
    request(path: string, init?: RequestInit): Response | Promise<Response>;
  }): Promise<Transport> => ({
    request: async (path, init) => app.request(path, init),
    close: async () => {},
  }),
  socket: (app: { fetch(request: Request): Response | Promise<Response> }): Promise<Transport> => listening(app),
} as const;

/**
 * What a Hono router matched for `method path`, in one form whichever router it is (RegExpRouter
 * answers indexes into a stash, TrieRouter the parameters): the handlers in order, each with its
 * parameters. Tests compare routers with it.
 */
export function routeMatches<T>(router: Router<T>, method: string, path: string): [T, Record<string, string>][] {
  const [entries, stash] = router.match(method, path) as [[T, Record<string, string | number>][], string[]?];
  return entries.map(([handler, params]) => [
    handler,
    Object.fromEntries(
      Object.entries(params).map(([name, at]) => [name, stash ? String(stash[at as number]) : String(at)]),
    ),
  ]);
}
