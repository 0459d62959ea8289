export { startMcpServer } from './mcp-server.js';
export { registerClientFeatureTools } from './client-feature-tools.js';
export { startMcpV2Server } from './mcp-server-v2.js';
export type { McpV2FixtureOptions } from './mcp-server-v2.js';
export type { McpFixture, McpFixtureOptions, McpFixtureRequest, McpFixtureTool, McpToolCall } from './mcp-server.js';
export { replyJson, replySse, startRecordingUpstream } from './recording-upstream.js';
export type { RecordedRequest, RecordingUpstream, UpstreamHandler } from './recording-upstream.js';
export { authHeaders, createUser, tokenFor } from './users.js';
export type { TestUser } from './users.js';
export { freePort, PortTakenError, startOnFreePort, startProcess, waitForHealthy } from './processes.js';
export type { ManagedProcess, StartProcessOptions } from './processes.js';
export { SseEventReader } from './sse-reader.js';
export type { SseEvent } from './sse-reader.js';
export { startConformanceServer } from './conformance-server/http-server.js';
export type { ConformanceServer } from './conformance-server/http-server.js';
export { startOidcServer } from './oidc-server.js';
export type { OidcServer, OidcServerOptions, OidcTestClient } from './oidc-server.js';
export {
  PROTECTED_PROMPT,
  PROTECTED_RESOURCE_URI,
  registerCallerPromptAndResource,
  startProtectedMcpServer,
} from './protected-mcp-server.js';
export type {
  CallerHeaders,
  ProtectedMcpServer,
  ProtectedMcpServerOptions,
  ProtectedRequest,
} from './protected-mcp-server.js';
export { startMutableToolServer } from './mutable-tool-server.js';
export type { MutableToolServer, MutableToolServerOptions } from './mutable-tool-server.js';
export { localClusterUnavailable, startLocalRedisCluster } from '@agentgw/core/local-redis-cluster';
export type { LocalRedisCluster } from '@agentgw/core/local-redis-cluster';
export { startEverything } from './server-everything.js';
