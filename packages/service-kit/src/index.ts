export type { ServiceDeps } from './deps.js';
export { bodyLimit, defaultBodyLimit, DEFAULT_MAX_BODY_BYTES } from './body-limit.js';
export { checkHealth, healthRoute } from './health.js';
export type { HealthBody, HealthState } from './health.js';
export { buildDeps } from './build-deps.js';
export type { BuildDepsOptions, BuiltDeps } from './build-deps.js';
export { serve } from './serve.js';
export type { RunningServer, ServeOptions } from './serve.js';
export { exitWithStartupError, runService } from './run-service.js';
export type { RunServiceOptions } from './run-service.js';
export { defineService } from './service-definition.js';
export type { ServiceDefinition, ServiceRuntime } from './service-definition.js';
export { createHost } from './host.js';
export type { Host, HostOptions } from './host.js';
export { DOCS_PATH, mountOpenApi, OPENAPI_PATH } from './openapi.js';
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
