export * from './protocol.js';
export * from './errors.js';
export { parseSse, type SseEvent } from './sse.js';
export * from './upstream-client.js';
export { clientCapabilitiesKey, NO_CLIENT_CAPABILITIES, relayableCapabilities } from './client-capabilities.js';
