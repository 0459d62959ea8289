// Every name is exported explicitly, so the package's surface is visible here and a module's internals stay internal.
export { ConfigError, configSchema, DEFAULT_JWT_ISSUER, loadConfig } from './config.js';
export type { Config, ExternalIssuer } from './config.js';
export {
  AppError,
  ConflictError,
  CredentialsRequiredError,
  DependencyUnavailableError,
  EgressRefusedError,
  ForbiddenError,
  isAppError,
  NotFoundError,
  NotImplementedError,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
} from './errors.js';
export type { ErrorBody } from './errors.js';
export { globSpecificity, matchGlob, MAX_GLOB_PATTERN_LENGTH, MAX_TOOL_NAME_LENGTH } from './glob.js';
export { newId, newRequestId, newTimeOrderedId } from './ids.js';
export { settleWithin } from './settle-within.js';
export { epochMs, ManualClock, systemClock } from './clock.js';
export type { Clock } from './clock.js';
export { CREDENTIAL_STATUSES, type CredentialStatus } from './enums.js';
export {
  AUDIT_STATUSES,
  CONFIRMATION_OUTCOMES,
  CONFIRMATION_STATUSES,
  POLICY_ACTIONS,
  PRINCIPAL_VIAS,
  RISK_LEVELS,
  TOOL_PIN_CHANGES,
  TOOL_PIN_STATUSES,
  TOOL_PINNING_MODES,
} from './enums.js';
export type {
  AuditStatus,
  ConfirmationOutcome,
  ConfirmationStatus,
  PolicyAction,
  PrincipalVia,
  RiskLevel,
  ToolPinChange,
  ToolPinningMode,
  ToolPinStatus,
} from './enums.js';
export { TOOL_SURFACES, type ToolSurface } from './enums.js';
export { CONFIRMATION_CARRIERS, type ConfirmationCarrier } from './enums.js';
export { canonicalJson } from './canonical-json.js';
export { definitionHashes, definitionOf } from './tool-definitions.js';
export type { DefinitionHashes, ToolDefinition } from './tool-definitions.js';
export { riskLevelSchema } from './enum-schemas.js';
export type {
  ConfirmationPayload,
  ConfirmationResolution,
  ConfirmationResolved,
  EventName,
  GatewayEvents,
  ToolPinEvent,
} from './events.js';
export { auditRecordJobSchema, jobCatalog } from './job-catalog.js';
export type { AuditRecordJob, GatewayJobs, JobName } from './jobs.js';
export { createLogger, resolveLogFormat, silentLogger } from './logger.js';
export type { LogFormat, Logger, LoggerOptions } from './logger.js';
export {
  assertJsonDepth,
  errorHandler,
  jsonDepthLimit,
  MAX_JSON_DEPTH,
  notFoundHandler,
  parseJson,
  parseQuery,
  requestHeader,
  requestHeaders,
  requestId,
  validationErrorFrom,
  zodIssues,
  type RequestHeaders,
} from './http/index.js';
export { MemoryEventBus, RedisEventBus } from './bus/index.js';
export type { EventBus, EventHandler, Unsubscribe } from './bus/index.js';
export { BullJobQueue, bullKeyPrefix, JobBatchFailures, MemoryJobQueue } from './queue/index.js';
export { connectRedis, isCluster, redisTargetFrom } from './redis/redis-target.js';
export type { ClusterSeed, RedisConnection, RedisTarget } from './redis/redis-target.js';
export type { ConsumeOptions, Consumer, EnqueueOptions, JobHandler, JobQueue } from './queue/index.js';
export { MemoryCache } from './cache/index.js';
export { trimOldest } from './cache/trim-oldest.js';
export { RecencyMap } from './cache/recency-map.js';
export type { MemoryCacheOptions } from './cache/index.js';
export { CallQuota, callQuotaLimitsFrom, MemoryRateLimiter, RedisRateLimiter } from './rate-limit/index.js';
export type { CallQuotaLimits, CallSubject, RateLimit, RateLimiter, RateLimitState } from './rate-limit/index.js';
export { compareRouting, DEFAULT_RISK, evaluatePolicy, resolveProvider, toolNameProblem } from './policy.js';
export type { PolicyDecision, PolicyInput, PolicyRule, RoutableProvider } from './policy.js';
export type {
  ClientAnswer,
  ClientAnswerOutcome,
  ClientConfirmations,
  ConfirmationGate,
  HeldCall,
  HoldOptions,
  HoldOutcome,
  RoundOutcome,
} from './confirmation-gate.js';
export {
  assertStoredUrlAllowed,
  assertUrlEgressAllowed,
  checkAddress,
  checkHostName,
  classifyIp,
  createEgressDispatcher,
  defaultEgressMode,
  egressFetch,
  egressPolicyFromConfig,
  egressRefusalOf,
  embeddedIpv4,
  EndpointSplits,
  exchange,
  inCidr,
  isHostAllowed,
  isHostName,
  LINK_LOCAL,
  METADATA_ADDRESSES,
  METADATA_HOSTNAMES,
  NON_PUBLIC,
  parseCidr,
  parseEgressAllow,
  parseIp,
  withAllowedHosts,
} from './egress/index.js';
export type {
  AddressClass,
  Cidr,
  EgressDispatcherOptions,
  EgressMode,
  EgressPolicy,
  EgressResolver,
  ExchangeOptions,
  ExchangeRequest,
  Exchanged,
  BodyMode,
  IpBytes,
} from './egress/index.js';
