import { secretBoxFor, type SecretBox } from '@agentgw/auth';
import type { Clock, Config, EventBus, Logger } from '@agentgw/core';
import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';

/** What the catalog needs from a service's deps (a `ServiceDeps` fits). */
export interface CatalogDeps {
  config: Config;
  db: Kysely<Database>;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
}

/** What the catalog's writes and reads share; built by `catalogContext`. */
export interface CatalogContext {
  db: Kysely<Database>;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** Seals agents' upstreamSecret and providers' authSecret, bound to the owner row's id. */
  secrets: SecretBox;
}

/** The context of a reader or an admin over the given deps. */
export function catalogContext(deps: CatalogDeps): CatalogContext {
  return { db: deps.db, bus: deps.bus, clock: deps.clock, logger: deps.logger, secrets: secretBoxFor(deps.config) };
}
