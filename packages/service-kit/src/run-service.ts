import { ConfigError, loadConfig } from '@agentgw/core';
import type { Env, Hono, Schema } from 'hono';
import { buildDeps, type BuiltDeps } from './build-deps.js';
import { healthRoute } from './health.js';
import { serve } from './serve.js';
import { createServiceApp } from './service-app.js';

export interface RunServiceOptions<E extends Env, S extends Schema, P extends string> {
  service: string;
  /** Used when PORT is unset. */
  defaultPort: number;
  createApp: (deps: BuiltDeps) => Hono<E, S, P> | Promise<Hono<E, S, P>>;
}

/**
 * The whole of a distributed service's main.ts: configuration (a bad one is one readable
 * message and exit 1), PostgreSQL + Redis deps, `/health`, the service's routes, listen,
 * graceful shutdown.
 */
export async function runService<E extends Env, S extends Schema, P extends string>(
  options: RunServiceOptions<E, S, P>,
): Promise<void> {
  let deps: BuiltDeps;
  try {
    deps = await buildDeps(loadConfig(), { service: options.service, mode: 'distributed' });
  } catch (err) {
    exitWithStartupError(err);
  }
  try {
    const app = createServiceApp({ logger: deps.logger });
    app.route('/', healthRoute(options.service, deps));
    app.route('/', await options.createApp(deps));
    await serve(app, { port: deps.config.PORT ?? options.defaultPort, deps, logger: deps.logger });
  } catch (err) {
    await deps.close();
    exitWithStartupError(err);
  }
}

/** One line on stderr, no stack: a start-up failure is an operator's problem, not a bug report. */
export function exitWithStartupError(err: unknown): never {
  console.error(err instanceof ConfigError ? err.message : `Failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
