export { createApp, DEFAULT_UPSTREAM_TIMEOUT_MS } from './app.js';
export type { InvokeProxyDeps, InvokeProxyOptions } from './app.js';
