import type { McpResult } from '../mcp-context.js';

/** Every requestState the gateway mints for a bridged call starts so (an upstream's own may not: it passes on verbatim). */
export const BRIDGE_STATE_PREFIX = 'agentgw-bridge-';

/** Whether a request's params (or a result) carry a requestState of the gateway's own. */
export const carriesBridgeState = (value: McpResult): boolean =>
  typeof value.requestState === 'string' && value.requestState.startsWith(BRIDGE_STATE_PREFIX);
