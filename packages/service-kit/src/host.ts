import { errorHandler, notFoundHandler, requestId } from '@agentgw/core';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Hono } from 'hono';
import { accessLog } from './access-log.js';
import { DEFAULT_MAX_BODY_BYTES } from './body-limit.js';
import type { ServiceDeps } from './deps.js';
import { healthRoute, probeRoutes } from './health.js';
import { LaneRouter } from './lane-router.js';
import {
  createMetrics,
  httpMetrics,
  metricsApp,
  metricsRoute,
  observeUpstreams,
  type ServiceMetrics,
} from './metrics.js';
import { mountOpenApi } from './openapi.js';
import { requestBody } from './request-body.js';
import { openApiApp } from './route-kit.js';
import { securityHeaders } from './security-headers.js';
import type { ServiceDefinition, ServiceRuntime } from './service-definition.js';
import { tracingMiddleware } from './tracing.js';

export interface HostOptions {
  /** Names the process: the `service` of `/health` and the title of the OpenAPI document. */
  name: string;
  /** Body limit of every route that declares no `bodyLimit` of its own (default 1 MiB). */
  maxBodyBytes?: number;
}

/** One process's services behind one shell, with their lifecycle. */
export interface Host {
  /** The shell with every service's routes mounted: what `serve` listens with and tests call `request` on. */
  app: OpenAPIHono;
  /** Starts every runtime, in order; if one fails, the ones already started are stopped. */
  start(): Promise<void>;
  /**
   * Settles every started runtime at once, then stops them all at once; both steps together take
   * no longer than `deadlineMs` (each step gets what is left of it).
   */
  stop(options: { deadlineMs: number }): Promise<void>;
  /** Flips `/health/ready` to 503 (draining) so load balancers stop sending before the listener closes. */
  drain(): void;
  /** The registry `/metrics` serves (the deps' own when they carry one). */
  metrics: ServiceMetrics;
  /** `GET /metrics` without a token, for `serve`'s loopback-only `METRICS_PORT` listener. */
  metricsApp: Hono;
}

/**
 * The shell, added once for everything a process runs (a service's own main.ts runs one
 * definition, the all-in-one six): request id, the access log, security headers, the default
 * body limit, the one error body, JSON 404s, `/health`, then each runtime's routes, then the
 * OpenAPI document and reference gathered from every route declared with the route kit.
 */
export async function createHost(
  definitions: readonly ServiceDefinition[],
  deps: ServiceDeps,
  options: HostOptions,
): Promise<Host> {
  const app = openApiApp({ router: new LaneRouter(definitions.flatMap((d) => d.hotPaths ?? [])) });
  const metrics = deps.metrics ?? createMetrics();
  let draining = false;
  app.use(tracingMiddleware(options.name));
  app.use(httpMetrics(metrics));
  app.use(requestId());
  const accessLine = accessLog(deps.logger, {
    enabled: deps.config.ACCESS_LOG === 'on',
    sample: deps.config.ACCESS_LOG_SAMPLE,
  });
  if (accessLine) app.use(accessLine);
  app.use(securityHeaders({ hstsMaxAgeSeconds: deps.config.HSTS_MAX_AGE_SECONDS }));
  // Reads the body once, under the route's own limit or the default, and caps JSON nesting.
  app.use(requestBody({ defaultMaxBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES }));
  app.onError(errorHandler(deps.logger));
  app.notFound(notFoundHandler);
  app.route('/', healthRoute(options.name, deps));
  app.route(
    '/',
    probeRoutes(options.name, deps, () => draining),
  );
  app.route('/', metricsRoute(metrics, deps.config.METRICS_TOKEN));

  const runtimes: { name: string; runtime: ServiceRuntime }[] = [];
  for (const definition of definitions) {
    const runtime = await definition.create(deps);
    app.route('/', runtime.routes);
    runtimes.push({ name: definition.name, runtime });
  }
  mountOpenApi(app, {
    title: definitions.length === 1 ? `Agent Gateway ${options.name} API` : 'Agent Gateway API',
    description: `Routes of ${definitions.map((d) => d.name).join(', ')}.`,
  });

  const started: typeof runtimes = [];
  let stopObserving: (() => void) | undefined;
  /** Runs one step on every runtime at once, waiting no longer than `deadlineMs`; true when all finished in time. */
  const everyRuntime = async (
    runtimes: typeof started,
    step: 'settle' | 'stop',
    deadlineMs: number,
  ): Promise<boolean> => {
    const running = runtimes.map(async ({ name, runtime }) => {
      await runtime[step]?.({ deadlineMs })?.catch((err: unknown) =>
        deps.logger.warn({ err, service: name, step }, 'service did not stop cleanly'),
      );
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), deadlineMs);
    });
    const finished = (await Promise.race([Promise.all(running), late])) !== 'late';
    clearTimeout(timer);
    return finished;
  };

  const stop = async ({ deadlineMs }: { deadlineMs: number }): Promise<void> => {
    draining = true;
    stopObserving?.();
    stopObserving = undefined;
    const stopping = started.splice(0);
    const begun = Date.now();
    // Settle first (answers and records while every consumer still runs), then stop, in one bound.
    const settled = await everyRuntime(stopping, 'settle', deadlineMs);
    const left = Math.max(0, deadlineMs - (Date.now() - begun));
    if (!settled || !(await everyRuntime(stopping, 'stop', left))) {
      deps.logger.warn({ deadlineMs }, 'services did not stop within the deadline; shutting down anyway');
    }
  };

  return {
    app,
    metrics,
    metricsApp: metricsApp(metrics),
    drain: () => void (draining = true),
    async start() {
      stopObserving ??= observeUpstreams(metrics);
      for (const entry of runtimes) {
        if (started.includes(entry)) continue;
        try {
          await entry.runtime.start?.();
        } catch (err) {
          await stop({ deadlineMs: 5_000 });
          throw err;
        }
        started.push(entry);
      }
    },
    stop,
  };
}
