import { sql, type Kysely } from 'kysely';

/**
 * Tool search (issue 24.2): what the unified MCP endpoint lists for an agent, every tool it may
 * call (`all`) or only the search meta-tools (`search`). Existing agents keep the whole list.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('agents')
    .addColumn('tool_surface', 'text', (col) => col.notNull().defaultTo('all'))
    .execute();
  // The values as they were when this shipped (a later surface gets its own migration).
  await db.schema
    .alterTable('agents')
    .addCheckConstraint('agents_tool_surface_check', sql`tool_surface in ('all', 'search')`)
    .execute();
}
