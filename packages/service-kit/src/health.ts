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

/** Probes the database and Redis (each bounded), the body of `/health`. */
export async function checkHealth(
  service: string,
  deps: Pick<ServiceDeps, 'dbHandle' | 'pingRedis'>,
): Promise<HealthBody> {
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

/** What `/health/ready` answers: ready only while the dependencies answer and the process is not draining. */
export interface ReadinessBody extends HealthBody {
  ready: boolean;
  draining: boolean;
}

/**
 * Kubernetes probes. `GET /health/live`: the process answers (no dependency is checked, so an
 * outage of PostgreSQL or Redis never restarts every pod). `GET /health/ready`: 200 while the
 * database and Redis answer and no shutdown has begun, 503 otherwise, so traffic drains first.
 */
export function probeRoutes(
  service: string,
  deps: Pick<ServiceDeps, 'dbHandle' | 'pingRedis'>,
  isDraining: () => boolean,
): Hono {
  return new Hono()
    .get('/health/live', (c) => c.json({ status: 'ok', service }, 200))
    .get('/health/ready', async (c) => {
      const draining = isDraining();
      const health = await checkHealth(service, deps);
      const ready = !draining && health.status === 'ok';
      const body: ReadinessBody = { ...health, ready, draining };
      return c.json(body, ready ? 200 : 503);
    });
}
