import { notFoundHandler, UnauthorizedError } from '@agentgw/core';
import { timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { onUpstreamResponse } from './upstream-channel.js';

/** Where Prometheus scrapes; also what the router must not route publicly. */
export const METRICS_PATH = '/metrics';

/** Latency buckets (seconds) wide enough for a held confirmation and tight enough for a health probe. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600];

/**
 * One process's Prometheus registry and the series every service shares. Services add their own
 * gauges (held confirmations, SSE clients) through `gauge`, read at scrape time, so nothing is
 * counted on the hot path that a scrape can read instead.
 */
export interface ServiceMetrics {
  registry: Registry;
  /** Requests by method, route pattern and status: the route pattern, never the raw path (ids stay out). */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Outbound HTTP (invoke upstreams, MCP upstreams, vault) to response headers, by origin. */
  upstreamDuration: Histogram<'origin' | 'status'>;
  /** A gauge read at scrape time; labelled values come back as `[labels, value]` pairs. The same name again replaces it. */
  gauge(
    name: string,
    help: string,
    read: () => Promise<number | GaugeSample[]> | number | GaugeSample[],
    labelNames?: string[],
  ): void;
}

export type GaugeSample = [labels: Record<string, string>, value: number];

/** A fresh registry (one per process; tests make their own) with Node's default process metrics. */
export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  return {
    registry,
    httpRequests: new Counter({
      name: 'agentgw_http_requests_total',
      help: 'HTTP requests answered, by route pattern',
      labelNames,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'agentgw_http_request_duration_seconds',
      help: 'Time to the response head (streams: until the stream opens), by route pattern',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'agentgw_upstream_request_duration_seconds',
      help: 'Outbound HTTP calls to their response headers, by origin',
      labelNames: ['origin', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    gauge(name, help, read, gaugeLabels = []) {
      registry.removeSingleMetric(name); // a second host on the same deps (tests) replaces the reader
      new Gauge({
        name,
        help,
        labelNames: gaugeLabels,
        registers: [registry],
        async collect() {
          const value = await read();
          this.reset();
          if (typeof value === 'number') this.set(value);
          else for (const [labels, v] of value) this.set(labels, v);
        },
      });
    },
  };
}

/** Records every request by its matched route pattern (`/api/v1/agents/:id`), or `unmatched` for a 404 no route took. */
export function httpMetrics(metrics: ServiceMetrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const status = String(c.res.status);
      // After next(), routePath is the pattern of the last handler that ran: the one that answered.
      const pattern = c.req.routePath;
      const route = c.res.status === 404 && pattern.endsWith('*') ? 'unmatched' : pattern;
      const labels = { method: c.req.method, route, status };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    }
  };
}

/** Feeds outbound call latency into `metrics` until the returned function is called (host start/stop). */
export function observeUpstreams(metrics: ServiceMetrics): () => void {
  return onUpstreamResponse(({ origin, status, seconds }) =>
    metrics.upstreamDuration.observe({ origin, status: String(status) }, seconds),
  );
}

const scrape = (metrics: ServiceMetrics) => async (c: Context) => {
  c.header('Content-Type', metrics.registry.contentType);
  return c.body(await metrics.registry.metrics());
};

/** `GET /metrics` in Prometheus' text format, to whoever reaches it: the loopback-only `METRICS_PORT` listener. */
export function metricsApp(metrics: ServiceMetrics): Hono {
  return new Hono().get(METRICS_PATH, scrape(metrics));
}

/**
 * `GET /metrics` on the public listener. The series name every tenant's upstream origins, so
 * without `token` it answers the JSON 404 of any unknown path (scrape `METRICS_PORT` on
 * loopback instead); with it, only `Authorization: Bearer <token>` (401 otherwise).
 */
export function metricsRoute(metrics: ServiceMetrics, token: string | undefined): Hono {
  const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
  const answer = scrape(metrics);
  return new Hono().get(METRICS_PATH, async (c) => {
    if (!expected) return notFoundHandler(c);
    const given = Buffer.from(c.req.header('authorization') ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new UnauthorizedError('A valid metrics token is required');
    }
    return answer(c);
  });
}
