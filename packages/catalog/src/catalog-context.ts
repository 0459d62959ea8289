import type { SecretBox } from '@agentgw/auth';
import type { Clock, EventBus, Logger } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';

/** What the catalog's writes and reads share; built once by `createCatalog`. */
export interface CatalogContext {
  db: Kysely<Database>;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** Seals agents' upstreamSecret and providers' authSecret, bound to the owner row's id. */
  secrets: SecretBox;
}
