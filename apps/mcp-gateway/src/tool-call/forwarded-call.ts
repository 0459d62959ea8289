import type { ProviderRecord } from '@agentgw/catalog';
import type { Clock } from '@agentgw/core';
import type { McpRequestContext, McpResult } from '../mcp-context.js';
import { UpstreamAnswer, type ForwardedCall } from '../upstream-forwarding.js';
import type { ToolCallUseCase } from './tool-call.usecase.js';

/** What forwarding a released call needs: where it is recorded, the clock it is timed with, and the forwarding itself. */
export interface ForwardedCallDeps {
  calls: Pick<ToolCallUseCase, 'record'>;
  clock: Clock;
  /** Sends the call upstream as the caller (upstream-forwarding.ts). */
  forward(provider: ProviderRecord, params: McpResult, ctx: McpRequestContext, call: ForwardedCall): Promise<McpResult>;
}

/**
 * Forwards an allowed or released call and records its outcome: `completed`, or `failed` when the
 * upstream's result says `isError`; an upstream's error (or no answer) is recorded as failed and
 * thrown on. The outcome is recorded when the upstream gives it: for a call bridged to a
 * 2026-07-28 client (relay/legacy-request-bridge.ts) after its last input_required round, not at
 * its first. `opened` (the pending record) is awaited before the answer: an acknowledged call is
 * always audited.
 */
export async function forwardAndRecord(
  deps: ForwardedCallDeps,
  provider: ProviderRecord,
  params: McpResult,
  ctx: McpRequestContext,
  call: Omit<ForwardedCall, 'recorded'>,
  opened: Promise<void>,
): Promise<McpResult> {
  const { calls, clock } = deps;
  const { auditId } = call;
  const started = clock.now().getTime();
  const recorded = async (outcome: Promise<McpResult>): Promise<McpResult> => {
    try {
      const result = await outcome;
      const status = result.isError === true ? 'failed' : 'completed';
      await Promise.all([
        opened,
        calls.record.finished(auditId, { status, result, duration: clock.now().getTime() - started }),
      ]);
      return result;
    } catch (err) {
      const error =
        err instanceof UpstreamAnswer && 'error' in err.response
          ? err.response.error.message
          : err instanceof Error
            ? err.message
            : 'failed';
      await Promise.all([
        opened,
        calls.record.finished(auditId, { status: 'failed', error, duration: clock.now().getTime() - started }),
      ]);
      throw err;
    }
  };
  const forwarded: ForwardedCall = { auditId, toolName: call.toolName, paramHeaders: call.paramHeaders, recorded };
  const result = await deps.forward(provider, params, ctx, forwarded);
  await opened;
  return result;
}
