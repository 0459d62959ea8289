import { RateLimitedError, type Config, type HeldCall } from '@agentgw/core';
import type { ConfirmationRow, Database } from '@agentgw/db';
import { sql, type Kysely } from 'kysely';
import { insertPending } from './confirmation-records.js';

/** How many confirmations may wait at once (CONFIRMATION_MAX_PENDING_PER_AGENT / _PER_USER). */
export interface PendingCaps {
  perAgent: number;
  /** Per confirmer: the end user, or the caller when there is none. */
  perUser: number;
}

/** The caps as configured, for the places that create a gate. */
export const maxPendingOf = (
  config: Pick<Config, 'CONFIRMATION_MAX_PENDING_PER_AGENT' | 'CONFIRMATION_MAX_PENDING_PER_USER'>,
): PendingCaps => ({
  perAgent: config.CONFIRMATION_MAX_PENDING_PER_AGENT,
  perUser: config.CONFIRMATION_MAX_PENDING_PER_USER,
});

/** Seconds a refused caller is told to wait: pending ones end within the hold time, usually much sooner. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Stores a new pending confirmation unless its agent or its confirmer already has as many
 * waiting as the caps allow (then 429 RATE_LIMITED, nothing stored). Holds for one agent or
 * confirmer are serialised by transaction-scoped advisory locks (agent first, then confirmer,
 * so two holds never wait on each other in a cycle): concurrent holds on any replicas can
 * never together pass a cap.
 */
export async function insertPendingWithinCaps(
  db: Kysely<Database>,
  input: { id: string; call: HeldCall; createdAt: Date; expiresAt: Date },
  caps: PendingCaps,
): Promise<ConfirmationRow> {
  const { call, createdAt } = input;
  const confirmer = call.endUserId ?? call.userId;
  return db.transaction().execute(async (trx) => {
    const live = trx
      .selectFrom('confirmations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', '=', 'pending')
      .where('expires_at', '>', createdAt);
    if (call.agentId !== null) {
      await sql`select pg_advisory_xact_lock(hashtext(${`confirmations:agent:${call.agentId}`}))`.execute(trx);
      const { n } = await live.where('agent_id', '=', call.agentId).executeTakeFirstOrThrow();
      if (Number(n) >= caps.perAgent) throw refused(`this agent (${caps.perAgent})`);
    }
    if (confirmer !== null) {
      await sql`select pg_advisory_xact_lock(hashtext(${`confirmations:user:${confirmer}`}))`.execute(trx);
      const { n } = await live
        .where((eb) => eb(eb.fn.coalesce('end_user_id', 'user_id'), '=', confirmer))
        .executeTakeFirstOrThrow();
      if (Number(n) >= caps.perUser) throw refused(`this user (${caps.perUser})`);
    }
    return insertPending(trx, input);
  });
}

const refused = (whose: string) =>
  new RateLimitedError(
    `Too many calls waiting for confirmation for ${whose}; answer or wait for some first`,
    RETRY_AFTER_SECONDS,
  );
