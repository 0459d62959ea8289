import { Hono } from 'hono';
import type { ServiceDeps } from './deps.js';

export type HealthState = 'ok' | 'down';

export interface HealthBody {
  status: 'ok' | 'degraded';
  service: string;
  checks: { database: HealthState; redis: HealthState | 'in-process' };
}

/** A probe that hangs counts as down: a health check must answer quickly. */
const PROBE_TIMEOUT_MS = 2_000;

async function probe(check: () => Promise<boolean>): Promise<HealthState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return (await Promise.race([check(), timeout])) ? 'ok' : 'down';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth(service: string, deps: Pick<ServiceDeps, 'dbHandle' | 'pingRedis'>): Promise<HealthBody> {
  const [database, redis] = await Promise.all([
    probe(() => deps.dbHandle.ping()),
    deps.pingRedis ? probe(deps.pingRedis) : Promise.resolve('in-process' as const),
  ]);
  const status = database === 'ok' && redis !== 'down' ? 'ok' : 'degraded';
  return { status, service, checks: { database, redis } };
}

/** `GET /health`: 200 when every dependency answers, 503 (`degraded`) otherwise. */
export function healthRoute(service: string, deps: Pick<ServiceDeps, 'dbHandle' | 'pingRedis'>): Hono {
  return new Hono().get('/health', async (c) => {
    const body = await checkHealth(service, deps);
    return c.json(body, body.status === 'ok' ? 200 : 503);
  });
}
