import { randomBytes } from 'node:crypto';
import { isModernVersion, type JsonRpcResponse } from '@agentgw/mcp-client';
import { MAX_FINAL_EVENT_BYTES, type ResumptionStore } from './resumption-store.js';
import { eventId, primingFrame } from './resumption-ids.js';

/** The first revision whose clients take a priming event (an id with empty data) and `retry` (SEP-1699). */
export const PRIMING_PROTOCOL_VERSION = '2025-11-25';
/** The reconnection delay asked of the client when the upstream gave none smaller. */
const MAX_RETRY_MS = 1_000;

/** The client's SSE answer as the pause sees it: opened on demand, primed and closed once. */
export interface LiveAnswer {
  /** Sends a message on the open answer (opening it, which commits the answer to SSE). */
  send(message: unknown): void;
  /** Writes an already framed event (the priming event) on the answer, opening it if need be. */
  write(frame: Uint8Array): void;
  /** Ends the client's answer stream; the call goes on without it. */
  close(): void;
}

/** Whether a POST's answer may be paused: one request of a 2025-11-25 (or later legacy) session. */
export function pausable(protocolVersion: string, sessionId: string | null, batch: boolean): sessionId is string {
  return (
    sessionId !== null && !batch && !isModernVersion(protocolVersion) && protocolVersion >= PRIMING_PROTOCOL_VERSION
  );
}

/**
 * Mirrors an upstream's SEP-1699 pause on the client's answer: when the upstream closes its stream
 * before the response, the client's answer gets a priming event (an unguessable id bound to the
 * session, empty data, `retry`) and is closed; what the call sends afterwards is kept in the
 * resumption store for the client's GET with `Last-Event-ID` (any replica). Until then, and when
 * the store keeps nothing, the answer stays live.
 */
export class PausableAnswer {
  private state: 'live' | 'pausing' | 'paused' = 'live';
  private readonly token = randomBytes(16).toString('base64url');
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ResumptionStore,
    private readonly owner: string,
    private readonly live: LiveAnswer,
  ) {}

  /** The upstream paused its stream (asking for `retryMs`): pause the client's once, after the store has room. */
  pause(retryMs: number): void {
    if (this.state !== 'live') return;
    this.state = 'pausing';
    this.chain = this.chain.then(async () => {
      const kept = await this.store.open(this.token, this.owner).catch(() => false);
      if (!kept) {
        this.state = 'live';
        return;
      }
      this.live.write(primingFrame(eventId(this.token, 0), Math.min(Math.max(retryMs, 0), MAX_RETRY_MS)));
      this.live.close();
      this.state = 'paused';
    });
  }

  /** Takes a message once pausing began (kept, in order, for the resume); false while live, so the caller sends it on the answer. */
  emit(message: unknown, final: boolean): boolean {
    if (this.state === 'live') return false;
    this.chain = this.chain.then(async () => {
      if (this.state !== 'paused') return this.live.send(message);
      await this.store.append(this.token, keptData(message, final), final).catch(() => undefined);
    });
    return true;
  }

  /** Settles once everything emitted so far is sent or kept. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Whether the client's answer was paused (it is closed already). */
  get paused(): boolean {
    return this.state === 'paused';
  }
}

/** A message as kept; a final response larger than MAX_FINAL_EVENT_BYTES becomes an error saying so (the store stays bounded). */
function keptData(message: unknown, final: boolean): string {
  const data = JSON.stringify(message);
  if (!final || data.length <= MAX_FINAL_EVENT_BYTES) return data;
  const id = (message as JsonRpcResponse).id;
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32603,
      message: `The answer exceeds ${MAX_FINAL_EVENT_BYTES} bytes, more than a resumed stream keeps`,
    },
  });
}
