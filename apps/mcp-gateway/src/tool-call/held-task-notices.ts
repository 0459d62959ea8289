import type { EventBus, GatewayEvents, Logger, Unsubscribe } from '@agentgw/core';
import type { HeldTaskRef } from '../extensions/task-ids.js';
import type { McpResult } from '../mcp-context.js';
import { decidedTask } from './held-task-shapes.js';
import type { HeldTaskStore } from './held-task-store.js';

type Resolved = GatewayEvents['confirmation.resolved'];

/** A held-call task a listen follows: the id its client was given, and what it names (opened for the listener already). */
export interface FollowedHeldTask {
  clientId: string;
  ref: HeldTaskRef;
}

/** One listen's following of its held tasks; `stop` ends it (nothing is told after). */
export interface HeldTaskFollowing {
  stop(): void;
}

/** What the notices need: the bus the hub announces decisions on (any replica), and the tasks' entries. */
export interface HeldTaskNoticesDeps {
  bus: Pick<EventBus, 'subscribe'>;
  store: Pick<HeldTaskStore, 'get'>;
  logger: Logger;
}

/**
 * Tells open `subscriptions/listen` streams of their held-call tasks' decisions (SEP-2663
 * `notifications/tasks`): one `confirmation.resolved` subscription per process, taken at the first
 * following, hands each decision to the listens following its confirmation, which are told the
 * task as `tasks/get` would show it without running the call (held-task-shapes.ts decidedTask).
 * Pub/sub is at-most-once and a bus that cannot subscribe tells nothing: the client's polls stay
 * the source of truth.
 */
export class HeldTaskNotices {
  private readonly followers = new Map<string, Set<(event: Resolved) => void>>();
  private subscription: Promise<Unsubscribe | null> | null = null;

  constructor(private readonly deps: HeldTaskNoticesDeps) {}

  /** Follows `tasks` for one listen, `tell` given each decided task; resolves once the subscription is up (a decision after it is told). */
  async follow(tasks: readonly FollowedHeldTask[], tell: (task: McpResult) => void): Promise<HeldTaskFollowing> {
    let stopped = false;
    const added = tasks.map((task) => {
      const follower = (event: Resolved) =>
        void this.taskOf(task, event).then((shown) => {
          if (shown !== null && !stopped) tell(shown);
        });
      const id = task.ref.confirmationId;
      this.followers.set(id, (this.followers.get(id) ?? new Set()).add(follower));
      return { id, follower };
    });
    if (tasks.length > 0) await (this.subscription ??= this.subscribe());
    return {
      stop: () => {
        stopped = true;
        for (const { id, follower } of added) {
          const set = this.followers.get(id);
          set?.delete(follower);
          if (set?.size === 0) this.followers.delete(id);
        }
      },
    };
  }

  /** Ends the subscription (shutdown). */
  async stop(): Promise<void> {
    const unsubscribe = await this.subscription;
    this.subscription = Promise.resolve(null);
    await unsubscribe?.();
  }

  /** The task a decision makes of it; null when its entry is gone (expired, purged) or unreadable. */
  private async taskOf(task: FollowedHeldTask, event: Resolved): Promise<McpResult | null> {
    const entry = await this.deps.store.get(task.ref.confirmationId).catch((err: unknown) => {
      this.deps.logger.warn({ err }, 'held-call task entry unreadable for its notification');
      return null;
    });
    return entry && decidedTask(task.clientId, task.ref, entry, event);
  }

  private subscribe(): Promise<Unsubscribe | null> {
    return this.deps.bus
      .subscribe('confirmation.resolved', (event) => {
        for (const follower of this.followers.get(event.id) ?? []) follower(event);
      })
      .catch(() => {
        // The next following tries again; until then its client learns the decision by polling.
        this.subscription = null;
        return null;
      });
  }
}
