export type { ServiceDeps } from './deps.js';
export { bodyLimit, DEFAULT_MAX_BODY_BYTES } from './body-limit.js';
export { annotateAccessLog } from './access-log.js';
export type { AccessLogFields } from './access-log.js';
export { checkHealth, healthRoute, probeRoutes } from './health.js';
export type { HealthBody, HealthState, ReadinessBody } from './health.js';
export { createMetrics, httpMetrics, METRICS_PATH, metricsRoute } from './metrics.js';
export type { GaugeSample, ServiceMetrics } from './metrics.js';
export { currentTraceHeaders, initTracing, tracingActive, tracingConfigured, withTraceHeaders } from './tracing.js';
export { TRACE_FIELD, tracedBus, tracedQueue } from './trace-carriers.js';
export type { Tracing, TracingOptions } from './tracing.js';
export { buildDeps } from './build-deps.js';
export type { BuildDepsOptions, BuiltDeps } from './build-deps.js';
export { serve } from './serve.js';
export type { RunningServer, ServeOptions } from './serve.js';
export { exitWithStartupError, runService } from './run-service.js';
export type { RunServiceOptions } from './run-service.js';
export { ALL_KEYS, loadConfigWithKeys, loadServiceConfig, SERVICE_KEYS } from './service-keys.js';
export type { KeyVariable } from './service-keys.js';
export { defineService } from './service-definition.js';
export type { ServiceDefinition, ServiceRuntime } from './service-definition.js';
export { clientGoneSignal } from './client-connection.js';
export { answerHeader, nodeIncoming, nodeOutgoing, peerAddress } from './hono-internals.js';
export type { AbortEvents, ClientConnection, ClientGone } from './client-connection.js';
export { DEFAULT_MAX_BUFFERED_BYTES, SSE_HEADERS, sseComment, sseFrame, SseStream, sseText } from './sse.js';
export type { SseEnd, SseEvent, SseStreamOptions } from './sse.js';
export { createHost } from './host.js';
export type { Host, HostOptions } from './host.js';
export { DOCS_PATH, mountOpenApi, OPENAPI_PATH } from './openapi.js';
export { LaneRouter } from './lane-router.js';
export {
  documentedJsonBody,
  ErrorBody,
  errorResponses,
  flexibleSecurity,
  HttpUrl,
  IdParams,
  jsonBody,
  jsonResponse,
  jwtSecurity,
  openApiApp,
  serviceSecurity,
  SuccessBody,
} from './route-kit.js';
