export * from './protocol.js';
export * from './errors.js';
export { parseSse, type SseEvent } from './sse.js';
export type { ServerStreamOutcome } from './server-stream.js';
export * from './upstream-call.js';
export * from './upstream-client.js';
export { DEFAULT_RESUME_DELAY_MS, MAX_STREAM_RESUMPTIONS } from './upstream-stream.js';
export { mcpNameOf } from './modern-envelope.js';
export { clientCapabilitiesKey, NO_CLIENT_CAPABILITIES, relayableCapabilities } from './client-capabilities.js';
