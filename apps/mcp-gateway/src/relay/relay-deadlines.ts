import type { McpUpstreamClient, UpstreamTarget } from '@agentgw/mcp-client';
import type { RelayAudit } from './relay-audit.js';
import { REQUEST_TIMEOUT, refusal, type UpstreamRelayed } from './relay-contract.js';
import type { RelayStore } from './relay-store.js';

interface DeadlineDeps {
  store: Pick<RelayStore, 'take'>;
  client: Pick<McpUpstreamClient, 'respond'>;
  audit: RelayAudit;
  /** Logs a failure to answer the upstream (a timer has nobody to throw to). */
  failed(providerId: string, method: string, err: unknown): void;
}

/**
 * This replica's timers on the requests it relayed to a client: one unanswered in time is
 * answered upstream with MCP's request-timeout error, unless another replica delivered the
 * client's answer first (the store's entry is gone then).
 */
export class RelayDeadlines {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly deps: DeadlineDeps,
    private readonly timeoutMs: number,
  ) {}

  /** Starts the clock of a request just sent to the client. */
  arm(id: string, entry: UpstreamRelayed, target: UpstreamTarget): void {
    const timer = setTimeout(() => {
      this.timers.delete(id);
      void this.expire(id, entry, target).catch((err: unknown) =>
        this.deps.failed(entry.providerId, entry.method, err),
      );
    }, this.timeoutMs);
    timer.unref();
    this.timers.set(id, timer);
  }

  /** The client answered (on this replica): no timeout error. */
  disarm(id: string): void {
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
  }

  /** Shutdown: the upstreams time their requests out on their own. */
  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private async expire(id: string, entry: UpstreamRelayed, target: UpstreamTarget): Promise<void> {
    if (!(await this.deps.store.take(entry.owner, id))) return;
    const message = 'The client did not answer in time';
    await Promise.all([
      this.deps.client.respond(target, entry.upstream, refusal(entry.upstreamId, REQUEST_TIMEOUT, message)),
      this.deps.audit.finished(entry.auditId, { status: 'failed', error: message }),
    ]);
  }
}
