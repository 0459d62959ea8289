export * from './protocol.js';
export * from './errors.js';
export { parseSse, type SseEvent } from './sse.js';
export * from './upstream-client.js';
