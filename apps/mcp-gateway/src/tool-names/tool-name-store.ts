import type { Database } from '@agentgw/db';
import type { Kysely } from 'kysely';
import type { ToolNameAssignment } from './exposed-name-rule.js';

/** Where chosen names are kept, shared by every replica. `scope` is the tenant calls act in ('' for none). */
export interface ToolNameStore {
  /** Every name chosen in the scope. */
  load(scope: string): Promise<ToolNameAssignment[]>;
  /** Keeps new names; one that clashes with a stored one (the same tool, or the same exposed name), or whose provider is gone, is skipped. */
  add(scope: string, names: readonly ToolNameAssignment[]): Promise<void>;
}

/** SQLSTATE 23503: the provider was deleted while its tools were being named. */
const isForeignKeyViolation = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23503';

/** The `tool_names` table (Postgres, or the all-in-one's embedded database). */
export class KyselyToolNameStore implements ToolNameStore {
  constructor(private readonly db: Kysely<Database>) {}

  async load(scope: string): Promise<ToolNameAssignment[]> {
    const rows = await this.db
      .selectFrom('tool_names')
      .select(['provider_id', 'upstream_name', 'exposed_name'])
      .where('scope', '=', scope)
      .execute();
    return rows.map((r) => ({ providerId: r.provider_id, upstreamName: r.upstream_name, exposedName: r.exposed_name }));
  }

  async add(scope: string, names: readonly ToolNameAssignment[]): Promise<void> {
    if (names.length === 0) return;
    const rows = names.map((n) => ({
      scope,
      provider_id: n.providerId,
      upstream_name: n.upstreamName,
      exposed_name: n.exposedName,
    }));
    try {
      // Another replica may have named the same tools at the same moment: its names stand.
      await this.db
        .insertInto('tool_names')
        .values(rows)
        .onConflict((oc) => oc.doNothing())
        .execute();
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      // A deleted provider's tools need no names; the others are kept one by one.
      for (const row of rows) {
        await this.db
          .insertInto('tool_names')
          .values(row)
          .onConflict((oc) => oc.doNothing())
          .execute()
          .catch((e: unknown) => {
            if (!isForeignKeyViolation(e)) throw e;
          });
      }
    }
  }
}
