import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkBase from '@opentelemetry/sdk-trace-base';
import type * as SdkNode from '@opentelemetry/sdk-trace-node';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { createRequire } from 'node:module';
import { onUpstreamStart } from './upstream-channel.js';

const TRACER_NAME = '@agentgw/service-kit';

/** Set once tracing is on in this process; while unset the middleware is a bare `next()`. */
let tracer: Tracer | undefined;

export interface TracingOptions {
  /** `service.name` of every span this process exports. */
  serviceName: string;
  /** The environment to read `OTEL_*` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Processors to use instead of the OTLP exporter (tests: an in-memory exporter). */
  spanProcessors?: SdkBase.SpanProcessor[];
}

export interface Tracing {
  enabled: boolean;
  /** Flushes and stops exporting; called after the deps are closed on shutdown. */
  shutdown(): Promise<void>;
}

/** Whether `initTracing` turned tracing on in this process (deps wrap the bus and queue only then). */
export function tracingActive(): boolean {
  return tracer !== undefined;
}

/** Tracing is configured the standard way: an OTLP endpoint, unless the SDK is disabled. */
export function tracingConfigured(env: Record<string, string | undefined>): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Turns tracing on for this process when configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; the exporter reads the rest of `OTEL_EXPORTER_OTLP_*`):
 * W3C trace context in and out, spans for inbound requests and outbound HTTP. Otherwise nothing
 * is installed and the request path pays one `undefined` check.
 */
export function initTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  if (tracer || (!options.spanProcessors && !tracingConfigured(env)))
    return { enabled: Boolean(tracer), shutdown: async () => {} };
  const { BatchSpanProcessor, NodeTracerProvider, OTLPTraceExporter, resourceFromAttributes } = loadSdk();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? `agentgw-${options.serviceName}` }),
    spanProcessors: options.spanProcessors ?? [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register(); // AsyncLocalStorage context + W3C traceparent/baggage propagator
  tracer = trace.getTracer(TRACER_NAME);
  const stopOutbound = onUpstreamStart(startClientSpan);
  return {
    enabled: true,
    async shutdown() {
      stopOutbound();
      tracer = undefined;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * The SDK and exporter hold ~13 MB resident once loaded, so a process without tracing never
 * loads them. `require` keeps `initTracing` synchronous (deps check `tracingActive()` right
 * after it); the api package they register with keeps one global registry for every copy.
 */
function loadSdk() {
  const load = createRequire(import.meta.url);
  return {
    ...(load('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp),
    ...(load('@opentelemetry/resources') as typeof Resources),
    ...(load('@opentelemetry/sdk-trace-base') as typeof SdkBase),
    ...(load('@opentelemetry/sdk-trace-node') as typeof SdkNode),
  };
}

/** A client span per outbound request, its context sent as `traceparent` to the upstream or peer service. */
function startClientSpan(request: {
  origin: string | URL;
  method: string;
  path: string;
  addHeader(name: string, value: string): unknown;
}) {
  if (!tracer) return undefined;
  const origin = String(request.origin);
  const span = tracer.startSpan(`${request.method} ${new URL(origin).host}`, {
    kind: SpanKind.CLIENT,
    // The path can hold ids and secrets in query strings: only the origin is recorded.
    attributes: {
      'http.request.method': request.method,
      'server.address': new URL(origin).hostname,
      'url.scheme': new URL(origin).protocol.slice(0, -1),
    },
  });
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  for (const [name, value] of Object.entries(carrier)) request.addHeader(name, value);
  return ({ status, error }: { status?: number; error?: unknown }) => {
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (error !== undefined || (status ?? 0) >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
}

/** The trace context of the current span as W3C headers, for carriers that are not HTTP (event and job metadata). */
export function currentTraceHeaders(): Record<string, string> | undefined {
  if (!tracer) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** Runs `fn` in a span continuing the trace in `headers` (a consumed event or job); plain `fn()` when tracing is off. */
export async function withTraceHeaders<T>(
  name: string,
  headers: Record<string, string> | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  const parent = headers ? propagation.extract(context.active(), headers) : context.active();
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER }, parent, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A server span per inbound request, continuing the caller's `traceparent`, named by the route pattern. */
export function tracingMiddleware(serviceName: string): MiddlewareHandler {
  // Not async itself: with tracing off, a request costs one check, not one more promise and frame.
  return (c, next) => (tracer ? traced(tracer, serviceName, c, next) : next());
}

/** The request's server span, continuing the caller's `traceparent`. */
async function traced(active: Tracer, serviceName: string, c: Context, next: Next): Promise<void> {
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, key) => (headers[key] = value));
  const parent = propagation.extract(context.active(), headers);
  await active.startActiveSpan(
    `${c.req.method}`,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'agentgw.service': serviceName } },
    parent,
    async (span) => {
      try {
        await next();
      } finally {
        span.updateName(`${c.req.method} ${c.req.routePath}`);
        span.setAttribute('http.route', c.req.routePath);
        span.setAttribute('http.response.status_code', c.res.status);
        if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    },
  );
}
