import type { McpRequestContext } from '../mcp-context.js';
import type { HoldCallOptions, HoldCarrier } from './tool-call.usecase.js';

/**
 * How an MCP tools/call waits while held: with the request's signal, reporting its status on the
 * response stream (progress when the client gave a token, and a log message), and asking in the
 * caller's own client too when `carrier` is given (tool-call/client-carrier.ts).
 */
export function holdOptions(ctx: McpRequestContext, carrier: HoldCarrier | null): HoldCallOptions {
  const { progressToken, notify } = ctx;
  return {
    signal: ctx.signal,
    confirmationToken: ctx.confirmationToken,
    reauthenticate: ctx.reauthenticate,
    carrier,
    onStatus: ({ confirmationId, message, elapsedMs }) => {
      if (!notify) return;
      if (progressToken !== null)
        notify({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken, progress: elapsedMs, message },
        });
      notify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', logger: 'agentgw/confirmation', data: { confirmationId, message, elapsedMs } },
      });
    },
  };
}
