import { ensureBootstrapAdmin } from '@agentgw/admin-api';
import type { Config } from '@agentgw/core';
import { checkSealingKeys, migrateToLatest, type HeldKey } from '@agentgw/db';
import { buildDeps, initTracing, serve, type BuiltDeps, type RunningServer } from '@agentgw/service-kit';
import { createGatewayHost } from './all-in-one.js';
import { DEFAULT_PORT } from './environment.js';

export interface GatewayOptions {
  dataDir: string;
  hostname?: string;
  /** Install SIGTERM/SIGINT handlers (default true; tests drive shutdown themselves). */
  handleSignals?: boolean;
}

export type RunningGateway = RunningServer & { deps: BuiltDeps };

/**
 * Boots the all-in-one: deps (embedded database unless DATABASE_URL says otherwise), migrations,
 * the sealing keys checked against the data's, first admin, every service started, listen. Shutdown stops accepting, stops the services
 * (streams ended within the bound), waits for in-flight requests, then closes the deps.
 */
export async function startGateway(config: Config, options: GatewayOptions): Promise<RunningGateway> {
  const tracing = initTracing({ serviceName: 'gateway' }); // a no-op unless OTEL_EXPORTER_OTLP_* is set
  const deps = await buildDeps(config, { service: 'gateway', mode: 'embedded', dataDir: options.dataDir });
  try {
    await migrateToLatest(deps.db);
    // Before anything is sealed: keys that do not open the stored data stop the start.
    await checkSealingKeys(deps.db, heldKeys(config));
    await ensureBootstrapAdmin(deps);
    const host = await createGatewayHost(deps);
    await host.start();
    try {
      const running = await serve(host.app, {
        port: config.PORT ?? DEFAULT_PORT,
        hostname: options.hostname,
        deps: {
          close: async (bound: { deadlineMs: number }) => {
            await deps.close(bound);
            await tracing.shutdown();
          },
        },
        logger: deps.logger,
        handleSignals: options.handleSignals,
        shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
        onDrain: host.drain,
        stopServices: host.stop,
        metrics: { app: host.metricsApp, port: config.METRICS_PORT },
      });
      return { ...running, deps };
    } catch (err) {
      await host.stop({ deadlineMs: 5_000 });
      throw err;
    }
  } catch (err) {
    await deps.close();
    throw err;
  }
}

/** The sealing keys the all-in-one holds (loadConfigWithKeys made both required). */
function heldKeys(config: Config): HeldKey[] {
  const keys: HeldKey[] = [];
  if (config.CREDENTIAL_ENCRYPTION_KEY) {
    const previous = config.CREDENTIAL_ENCRYPTION_PREVIOUS_KEYS;
    keys.push({ name: 'CREDENTIAL_ENCRYPTION_KEY', current: config.CREDENTIAL_ENCRYPTION_KEY, previous });
  }
  if (config.PLATFORM_SECRETS_KEY) {
    const previous = config.PLATFORM_SECRETS_PREVIOUS_KEYS;
    keys.push({ name: 'PLATFORM_SECRETS_KEY', current: config.PLATFORM_SECRETS_KEY, previous });
  }
  return keys;
}
