import { ensureBootstrapAdmin } from '@agentgw/admin-api';
import type { Config } from '@agentgw/core';
import { migrateToLatest } from '@agentgw/db';
import { buildDeps, serve, type BuiltDeps, type RunningServer } from '@agentgw/service-kit';
import { createGatewayApp } from './all-in-one.js';
import { DEFAULT_PORT } from './environment.js';

export interface GatewayOptions {
  dataDir: string;
  hostname?: string;
  /** Install SIGTERM/SIGINT handlers (default true; tests drive shutdown themselves). */
  handleSignals?: boolean;
}

export type RunningGateway = RunningServer & { deps: BuiltDeps };

/** Boots the all-in-one: deps (embedded database unless DATABASE_URL says otherwise), migrations, first admin, listen. */
export async function startGateway(config: Config, options: GatewayOptions): Promise<RunningGateway> {
  const deps = await buildDeps(config, { service: 'gateway', mode: 'embedded', dataDir: options.dataDir });
  try {
    await migrateToLatest(deps.db);
    await ensureBootstrapAdmin(deps);
    const running = await serve(createGatewayApp(deps), {
      port: config.PORT ?? DEFAULT_PORT,
      hostname: options.hostname,
      deps,
      logger: deps.logger,
      handleSignals: options.handleSignals,
    });
    return { ...running, deps };
  } catch (err) {
    await deps.close();
    throw err;
  }
}
