import { randomBytes, randomUUID } from 'node:crypto';
import { RateLimitedError, type HeldCall } from '@agentgw/core';
import { migrateToLatest, openDatabase, type DbHandle } from '@agentgw/db';
import { pgbouncerUnavailable, startLocalPgBouncer, type LocalPgBouncer } from '@agentgw/db/local-pgbouncer';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertPendingWithinCaps } from './pending-caps.js';

const serverUrl = process.env.TEST_DATABASE_URL;
const missing = serverUrl ? pgbouncerUnavailable() : 'TEST_DATABASE_URL unset';
if (missing) console.warn(`PgBouncer tests skipped: ${missing}`);

const held = (agentId: string): HeldCall => ({
  auditId: randomUUID(),
  agentId,
  userId: null,
  endUserId: null,
  tenantId: null,
  providerId: 'p',
  toolName: 'delete_repo',
  arguments: {},
  risk: 'high',
});

/**
 * The confirmation caps' transaction-scoped advisory locks through a real PgBouncer in transaction
 * pooling (two server connections shared by every client): migrations on a direct connection,
 * everything else through the pooler, as infra deploys it.
 */
describe.skipIf(missing)('pending caps through PgBouncer (transaction pooling)', () => {
  const name = `agentgw_pgb_${randomBytes(6).toString('hex')}`;
  let direct: DbHandle;
  let pooled: DbHandle;
  let pooler: LocalPgBouncer;
  beforeAll(async () => {
    const admin = await openDatabase({ url: serverUrl! });
    await sql.raw(`create database ${name}`).execute(admin.db);
    await admin.close();
    const url = new URL(serverUrl!);
    url.pathname = `/${name}`;
    direct = await openDatabase({ url: url.toString() });
    await migrateToLatest(direct.db);
    pooler = await startLocalPgBouncer(serverUrl!, 2);
    pooled = await openDatabase({ url: pooler.urlFor(url.toString()) });
  });
  afterAll(async () => {
    await pooled?.close();
    await pooler?.stop();
    await direct?.close();
    const admin = await openDatabase({ url: serverUrl! });
    await sql.raw(`drop database if exists ${name} with (force)`).execute(admin.db);
    await admin.close();
  });

  it('lets exactly the cap of 24 concurrent holds for one agent through, over two shared server connections', async () => {
    const agentId = `agent-${randomUUID()}`;
    const now = new Date();
    const results = await Promise.allSettled(
      Array.from({ length: 24 }, () =>
        insertPendingWithinCaps(
          pooled.db,
          { id: randomUUID(), call: held(agentId), createdAt: now, expiresAt: new Date(now.getTime() + 60_000) },
          { perAgent: 3, perUser: 100 },
        ),
      ),
    );
    const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(rejected).toHaveLength(21);
    for (const reason of rejected) expect(reason).toBeInstanceOf(RateLimitedError);
    const { n } = await direct.db
      .selectFrom('confirmations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    expect(n).toBe(3);
  });

  it('holds no session state: the pooler shares its two server connections among 40 concurrent clients', async () => {
    const pids = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const { rows } = await sql<{
          pid: number;
          echo: number;
        }>`select pg_backend_pid() as pid, ${i}::int as echo`.execute(pooled.db);
        expect(rows[0]!.echo).toBe(i);
        return rows[0]!.pid;
      }),
    );
    expect(new Set(pids).size).toBeLessThanOrEqual(2);
  });
});
