import { describeError, type ApiClient } from './api.js';
import { SseParser } from './sse.js';
import type { RiskLevel } from './types.js';

/** A held tool call as the console shows it, from an SSE payload or a pending/list entry. */
export interface PendingConfirmation {
  id: string;
  toolName: string;
  risk: RiskLevel | string;
  arguments: unknown;
  timestamp: string | null;
  status: string;
  agentId: string | null;
  providerId: string | null;
  /** Who made the call (the agent owner or a signed-in person); the end user, when set, is who it acts for. */
  userId: string | null;
  endUserId: string | null;
  /** When the held call is rejected as timed out (5 minutes after it was asked). */
  expiresAt: string | null;
  reason: string | null;
  decidedBy: string | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * Reads a confirmation from the hub's payloads. The spec fixes `id`, `tool.name`, `risk.level`
 * and `timestamp` and says the arguments are carried too; flat spellings are accepted as well.
 */
export function toConfirmation(payload: unknown): PendingConfirmation | null {
  const p = obj(payload);
  const id = str(p.id) ?? str(p.requestId);
  if (!id) return null;
  const tool = obj(p.tool);
  const risk = obj(p.risk);
  const args = tool.arguments ?? p.arguments ?? p.params ?? tool.params ?? null;
  return {
    id,
    toolName: str(tool.name) ?? str(p.toolName) ?? '(unknown tool)',
    risk: str(risk.level) ?? str(p.riskLevel) ?? str(p.risk) ?? 'medium',
    arguments: args,
    timestamp: str(p.timestamp) ?? str(p.createdAt),
    status: str(p.status) ?? 'pending',
    agentId: str(p.agentId) ?? str(obj(p.agent).id),
    providerId: str(p.providerId) ?? str(obj(p.provider).id) ?? str(tool.providerId),
    userId: str(p.userId),
    endUserId: str(p.endUserId),
    expiresAt: str(p.expiresAt),
    reason: str(p.reason),
    decidedBy: str(p.decidedBy),
  };
}

export type StreamStatus =
  { state: 'connecting' } | { state: 'live'; since: string } | { state: 'retrying'; reason: string; inSeconds: number };

export interface StreamHandlers {
  onRequired(confirmation: PendingConfirmation): void;
  onResolved(id: string, confirmed: boolean): void;
  onStatus(status: StreamStatus): void;
  /** After every (re)connection: the pending list to resynchronise from. */
  onConnected(): void;
}

/**
 * Keeps `GET /api/v1/stream` open with the session cookie (fetch streaming, so a failure's error
 * body and status reach the page, which EventSource hides), reconnecting with backoff. Returns
 * the function that stops it.
 */
export function openConfirmationStream(api: ApiClient, handlers: StreamHandlers): () => void {
  const controller = new AbortController();
  let attempt = 0;

  const dispatch = (event: string, data: string) => {
    let payload: unknown;
    try {
      payload = data ? JSON.parse(data) : {};
    } catch {
      return;
    }
    if (event === 'connected') {
      attempt = 0;
      handlers.onStatus({ state: 'live', since: new Date().toISOString() });
      handlers.onConnected();
    } else if (event === 'CONFIRMATION_REQUIRED') {
      const c = toConfirmation(payload);
      if (c) handlers.onRequired(c);
    } else if (event === 'CONFIRMATION_RESOLVED') {
      const p = obj(payload);
      if (typeof p.id === 'string') handlers.onResolved(p.id, p.confirmed === true);
    }
  };

  const run = async () => {
    while (!controller.signal.aborted) {
      handlers.onStatus({ state: 'connecting' });
      let reason = 'The live stream closed.';
      try {
        const response = await api.raw('/stream', {
          headers: { accept: 'text/event-stream' },
          signal: controller.signal,
        });
        if (!response.body) throw new Error('The live stream has no body.');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const parser = new SseParser();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          for (const e of parser.push(value)) dispatch(e.event, e.data);
        }
      } catch (err) {
        if (controller.signal.aborted) return;
        reason = describeError(err);
      }
      const inSeconds = Math.min(30, 2 ** Math.min(attempt, 5));
      attempt += 1;
      handlers.onStatus({ state: 'retrying', reason, inSeconds });
      await new Promise((resolve) => setTimeout(resolve, inSeconds * 1000));
    }
  };
  void run();
  return () => controller.abort();
}
