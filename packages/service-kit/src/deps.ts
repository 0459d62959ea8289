import type { AuthService } from '@agentgw/auth';
import type { Clock, Config, EventBus, JobQueue, Logger } from '@agentgw/core';
import type { Database, DbHandle } from '@agentgw/db';
import type { Kysely } from 'kysely';

/**
 * What every service's `createApp(deps)` receives. The all-in-one builds it once with the
 * embedded database and in-process adapters; each service's main.ts builds it with PostgreSQL,
 * Redis pub/sub and BullMQ. Services may take extra deps of their own beside these.
 */
export interface ServiceDeps {
  config: Config;
  db: Kysely<Database>;
  dbHandle: DbHandle;
  bus: EventBus;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
  auth: AuthService;
}
