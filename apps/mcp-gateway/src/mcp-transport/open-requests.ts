import { JSON_RPC, type JsonRpcRequest } from '@agentgw/mcp-client';
import type { McpAnswer } from '../mcp-context.js';
import { rpcError } from './replies.js';

/** `data.code` of the answer an open request gets when the gateway shuts down. */
export const SHUTTING_DOWN = 'SHUTTING_DOWN';
/** A request that had not run (a held call, a listen) when the shutdown began. */
export const NOT_RUN_MESSAGE = 'The gateway is shutting down; the call was not run.';
/** A request still running upstream when the shutdown's bound ran out: its outcome is unknown. */
export const CUT_OFF_MESSAGE = 'The gateway is shutting down; the request did not finish in time and was abandoned.';

/** Requests that never finish on their own: at shutdown they are answered at once. */
const OPEN_ENDED: ReadonlySet<string> = new Set(['subscriptions/listen']);

interface Entry {
  method: string;
  answer(message: string): void;
}

/**
 * The MCP requests this replica is answering, so a shutdown answers every one of them before
 * its stream ends: a JSON-RPC error with the request's id (-32000, `data.code: SHUTTING_DOWN`,
 * HTTP 503 on a JSON answer) instead of a stream cut off with no answer.
 * `beginStopping` answers open-ended requests (listens) at once and turns a request that ends
 * with nobody to answer (a held call let go by the closing gate) into that error;
 * `finish` waits for the rest up to a bound, then answers what is left.
 */
export class OpenRequests {
  private readonly open = new Set<Entry>();
  private stopping = false;
  private idle: (() => void) | null = null;

  /** What the client gets for `request`: its own answer, or the shutdown error. */
  track(request: JsonRpcRequest, handling: Promise<McpAnswer | null>): Promise<McpAnswer | null> {
    return new Promise((resolve, reject) => {
      const close = () => {
        this.open.delete(entry);
        if (this.open.size === 0) this.idle?.();
      };
      const entry: Entry = {
        method: request.method,
        answer: (message) => {
          close();
          resolve(shutdownAnswer(request, message));
        },
      };
      this.open.add(entry);
      if (this.stopping && OPEN_ENDED.has(request.method)) entry.answer(NOT_RUN_MESSAGE);
      handling
        .then((answer) => resolve(answer === null && this.stopping ? shutdownAnswer(request, NOT_RUN_MESSAGE) : answer))
        .catch(reject)
        .finally(close);
    });
  }

  /** How many requests are being answered. */
  get size(): number {
    return this.open.size;
  }

  /** The shutdown has begun: listens are answered now, and a request left without an answer gets the error. */
  beginStopping(): void {
    this.stopping = true;
    for (const entry of [...this.open]) if (OPEN_ENDED.has(entry.method)) entry.answer(NOT_RUN_MESSAGE);
  }

  /** Waits up to `withinMs` for the open requests to finish, then answers those still open. */
  async finish(withinMs: number): Promise<void> {
    if (this.open.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        timer = setTimeout(resolve, withinMs);
      });
      clearTimeout(timer);
      this.idle = null;
    }
    for (const entry of [...this.open]) entry.answer(CUT_OFF_MESSAGE);
  }
}

function shutdownAnswer(request: JsonRpcRequest, message: string): McpAnswer {
  return { response: rpcError(request.id, JSON_RPC.SERVER_ERROR, message, { code: SHUTTING_DOWN }), status: 503 };
}
