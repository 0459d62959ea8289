import type { AuditTrail } from '@agentgw/audit';
import { abandonConfirmation, timeOutConfirmation, timeoutJobId, type ConfirmationDeps } from '@agentgw/confirmations';
import type { ServiceDeps } from '@agentgw/service-kit';

/** The `error` of an audit record whose call a stopped or crashed gateway left unfinished. */
export const LEFT_OPEN_REASON = 'The gateway stopped before the call finished; its outcome is unknown.';
/** Slack on top of the longest a call may legitimately stay open, for clocks and queues. */
const MARGIN_MS = 60_000;
/** Rows handled per kind and start: a backlog larger than this is finished by the next starts. */
const BATCH = 1_000;

/** What counts as left open: held before `heldBefore` (nobody holds it now), or recorded pending before `auditBefore`. */
export interface SweepCutoffs {
  heldBefore: Date;
  auditBefore: Date;
}

/**
 * Where the line is. The only process of its deployment (in-process bus and queue: the
 * all-in-one) holds nothing yet when it starts, so everything open before now was left by an
 * earlier run. A replica among others only trusts age: past the longest a held call and its
 * upstream answer may take, nobody is still at work on it.
 */
export function sweepCutoffs(deps: Pick<ServiceDeps, 'config' | 'clock' | 'redis'>): SweepCutoffs {
  const now = deps.clock.now().getTime();
  if (!deps.redis) return { heldBefore: new Date(now), auditBefore: new Date(now) };
  const { CONFIRMATION_TIMEOUT_MS, MCP_UPSTREAM_TIMEOUT_MS, SHUTDOWN_TIMEOUT_MS } = deps.config;
  const held = CONFIRMATION_TIMEOUT_MS + MARGIN_MS;
  return {
    heldBefore: new Date(now - held),
    auditBefore: new Date(now - held - MCP_UPSTREAM_TIMEOUT_MS - (SHUTDOWN_TIMEOUT_MS ?? 10_000)),
  };
}

/** What one sweep closed. */
export interface SweepOutcome {
  timedOut: number;
  abandoned: number;
  audits: number;
}

/**
 * Closes what a crash (or a stop that ran out of time) left open, on start: pending
 * confirmations past their deadline are timed out as the deadline job would have (rejected,
 * `Request timed out.`); held ones whose holder is gone expire (the call was not run); the
 * others get their deadline job again (an in-process queue lost it; on BullMQ the job id makes
 * it a no-op); and pending audit records of calls nobody runs any more end `failed`. Each step is
 * a conditional transition or an idempotent record, so replicas starting together do no harm.
 */
export async function sweepLeftOpen(
  deps: ConfirmationDeps & { audit: AuditTrail },
  cutoffs: SweepCutoffs,
): Promise<SweepOutcome> {
  const outcome: SweepOutcome = { timedOut: 0, abandoned: 0, audits: 0 };
  const now = deps.clock.now();
  const closedAudits = new Set<string>();
  const pending = await deps.db
    .selectFrom('confirmations')
    .select(['id', 'audit_id', 'reason', 'created_at', 'expires_at'])
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(BATCH)
    .execute();
  for (const row of pending) {
    if (row.audit_id !== null) closedAudits.add(row.audit_id);
    if (row.expires_at <= now) {
      if (await timeOutConfirmation(deps, row.id)) outcome.timedOut += 1;
    } else if (row.reason === null && row.created_at < cutoffs.heldBefore) {
      if (await abandonConfirmation(deps, row.id)) outcome.abandoned += 1;
    } else {
      const delayMs = row.expires_at.getTime() - now.getTime();
      await deps.queue.enqueue(
        'confirmation-timeout',
        { confirmationId: row.id },
        { delayMs, jobId: timeoutJobId(row.id) },
      );
    }
  }
  outcome.audits = await failStaleAudits(deps, cutoffs.auditBefore, closedAudits);
  if (outcome.timedOut + outcome.abandoned + outcome.audits > 0)
    deps.logger.warn(outcome, 'closed what an earlier run left open (confirmations, audit records)');
  return outcome;
}

/**
 * Pending audit records older than the cutoff, of calls with no confirmation left to decide them
 * (those are recorded by the confirmation's transition), end `failed` with LEFT_OPEN_REASON. A
 * tool-gate runtime that still reports its result later overrides it (the newer update wins).
 */
async function failStaleAudits(
  deps: ConfirmationDeps & { audit: AuditTrail },
  before: Date,
  skip: ReadonlySet<string>,
): Promise<number> {
  const stale = await deps.db
    .selectFrom('audit_logs')
    .select('id')
    .where('status', '=', 'pending')
    .where('tool_name', 'is not', null)
    .where('created_at', '<', before)
    .where(({ exists, not, selectFrom }) =>
      not(
        exists(
          selectFrom('confirmations')
            .select('confirmations.id')
            .whereRef('confirmations.audit_id', '=', 'audit_logs.id')
            .where('confirmations.status', '=', 'pending'),
        ),
      ),
    )
    .orderBy('created_at')
    .limit(BATCH)
    .execute();
  const ids = stale.map((r) => r.id).filter((id) => !skip.has(id));
  await Promise.all(ids.map((id) => deps.audit.update(id, { status: 'failed', error: LEFT_OPEN_REASON })));
  return ids.length;
}
