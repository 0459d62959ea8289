import type { Database } from '@agentgw/db';
import type { Logger } from '@agentgw/core';
import type { Kysely } from 'kysely';

/** How often each replica deletes expired OAuth rows (every replica may: the delete is idempotent). */
export const OAUTH_SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes every `oauth_models` row expired at `now` (interactions, codes, tokens, sessions, grants,
 * unclaimed clients, pending external logins): readers already ignore them, so only the table's
 * size changes. Answers how many went.
 */
export async function sweepExpiredOAuthRows(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('oauth_models').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Sweeps now and every OAUTH_SWEEP_INTERVAL_MS until stopped; a failed sweep is logged and the next one tries again. */
export function startOAuthRowSweeper(deps: { db: Kysely<Database>; logger: Logger }): { stop(): void } {
  const sweep = () =>
    void sweepExpiredOAuthRows(deps.db, new Date()).catch((err: unknown) =>
      deps.logger.warn({ reason: err instanceof Error ? err.message : String(err) }, 'OAuth row sweep failed'),
    );
  sweep();
  const timer = setInterval(sweep, OAUTH_SWEEP_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
