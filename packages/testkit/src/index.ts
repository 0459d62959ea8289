export { startMcpServer } from './mcp-server.js';
export { startMcpV2Server } from './mcp-server-v2.js';
export type { McpV2FixtureOptions } from './mcp-server-v2.js';
export type { McpFixture, McpFixtureOptions, McpFixtureRequest, McpFixtureTool, McpToolCall } from './mcp-server.js';
export { replyJson, replySse, startRecordingUpstream } from './recording-upstream.js';
export type { RecordedRequest, RecordingUpstream, UpstreamHandler } from './recording-upstream.js';
export { authHeaders, createUser, tokenFor } from './users.js';
export type { TestUser } from './users.js';
