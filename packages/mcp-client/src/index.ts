export * from './protocol.js';
export * from './errors.js';
export { parseSse, formatSseMessage, type SseEvent } from './sse.js';
export * from './upstream-client.js';
