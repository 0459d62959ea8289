export { createInvokeProxyService, DEFAULT_UPSTREAM_TIMEOUT_MS, invokeProxyService } from './service.js';
export type { InvokeProxyOptions } from './service.js';
