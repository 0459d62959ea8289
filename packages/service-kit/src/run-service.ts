import { ConfigError } from '@agentgw/core';
import { buildDeps, type BuiltDeps } from './build-deps.js';
import { createHost } from './host.js';
import { serve } from './serve.js';
import type { ServiceDefinition } from './service-definition.js';
import { loadServiceConfig } from './service-keys.js';
import { initTracing } from './tracing.js';

export interface RunServiceOptions {
  /** Runs on the deps before the service starts (admin-api: the bootstrap admin). */
  prepare?(deps: BuiltDeps): Promise<unknown>;
}

/**
 * The whole of a distributed service's main.ts: configuration with the sealing keys this service
 * holds (`SERVICE_KEYS`; a bad one is one readable message and exit 1), PostgreSQL + Redis
 * deps, the host's shell around the definition, its `start()`, listen, and on SIGTERM/SIGINT a graceful shutdown (stop accepting, the service's
 * `stop()`, in-flight requests within the bound, deps closed).
 */
export async function runService(definition: ServiceDefinition, options: RunServiceOptions = {}): Promise<void> {
  const tracing = initTracing({ serviceName: definition.name });
  let deps: BuiltDeps;
  try {
    deps = await buildDeps(loadServiceConfig(definition.name), { service: definition.name, mode: 'distributed' });
  } catch (err) {
    exitWithStartupError(err);
  }
  try {
    await options.prepare?.(deps);
    const host = await createHost([definition], deps, { name: definition.name });
    await host.start();
    try {
      await serve(host.app, {
        port: deps.config.PORT ?? definition.defaultPort,
        hostname: deps.config.HOST,
        deps: {
          close: async (bound: { deadlineMs: number }) => {
            await deps.close(bound);
            await tracing.shutdown();
          },
        },
        logger: deps.logger,
        shutdownTimeoutMs: deps.config.SHUTDOWN_TIMEOUT_MS,
        onDrain: host.drain,
        stopServices: host.stop,
        metrics: { app: host.metricsApp, port: deps.config.METRICS_PORT },
      });
    } catch (err) {
      await host.stop({ deadlineMs: 5_000 });
      throw err;
    }
  } catch (err) {
    await deps.close();
    exitWithStartupError(err);
  }
}

/** One line on stderr, no stack: a start-up failure is an operator's problem, not a bug report. */
export function exitWithStartupError(err: unknown): never {
  console.error(
    err instanceof ConfigError
      ? configMessage(err)
      : `Failed to start: ${err instanceof Error ? err.message : String(err)}`,
  );
  process.exit(1);
}

/** A single problem on one line (a service missing its key), several as ConfigError's list. */
function configMessage(err: ConfigError): string {
  const [only, ...more] = err.problems;
  return only && more.length === 0 ? `Invalid configuration: ${only.variable} ${only.message}` : err.message;
}
